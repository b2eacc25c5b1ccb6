"""The book's own modules a piece of code reaches, found statically, and their digests.

Every ``import`` statement counts wherever it stands, with the module's parent packages, and
``from package import name`` reaches ``package.name`` when that file exists. A module's
digest is its file's SHA-256 (:data:`MISSING` when it has none).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from claimbook.cache import file_bytes

FIRST_PARTY = ("trainable_harness", "claimbook")
MISSING = "missing"


@functools.cache
def package_folder(top: str) -> Path | None:
    """The folder of a top-level first-party package, found without importing it."""
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


class _ModuleFiles:
    """The book's module files, each found and read at most once."""

    def __init__(self) -> None:
        self.read = functools.cache(file_bytes)
        self.find = functools.cache(self._find)
        self.reached: dict[tuple[str, ...], list[str]] = {}

    def _find(self, name: str) -> Path | None:
        top, *rest = name.split(".")
        base = package_folder(top) if top in FIRST_PARTY else None
        if base is None:
            return None
        candidates = [base.joinpath(*rest, "__init__.py")]  # a package before a module
        if rest:
            candidates.append(base.joinpath(*rest[:-1], f"{rest[-1]}.py"))
        return next((path for path in candidates if path.is_file()), None)


def _first_party(name: str) -> bool:
    return name.split(".", 1)[0] in FIRST_PARTY


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: index + 1]) for index in range(len(parts))]


def _imported_names(tree: ast.AST, package: str) -> tuple[frozenset[str], frozenset[str]]:
    """The module names ``tree`` imports, and ``module.name`` of each ``from module import
    name`` (a submodule if such a file exists: :func:`_imports`)."""
    found: set[str] = set()
    submodules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not package:
                    continue
                parts = package.split(".")
                if node.level - 1 >= len(parts):
                    continue
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            submodules.update(f"{module}.{a.name}" for a in node.names if a.name != "*")
    return frozenset(found), frozenset(submodules)


def _imports(names: tuple[frozenset[str], frozenset[str]], files: _ModuleFiles) -> set[str]:
    """First-party modules, with their parents, of :func:`_imported_names`'s result (files
    looked up now: a module added since the parse counts)."""
    found, submodules = names
    found = set(found) | {name for name in submodules if files.find(name) is not None}
    return {parent for name in found if _first_party(name) for parent in _with_parents(name)}


@functools.lru_cache(maxsize=1024)
def _names_in_code(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """The parse of ``source``, IPython's ``%`` and ``!`` lines dropped, once per text."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        kept = [
            "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
        ]
        tree = ast.parse("\n".join(kept))
    return _imported_names(tree, "")


def imports_in_code(source: str) -> set[str]:
    """First-party modules (with their parent packages) the code ``source`` imports;
    SyntaxError if it is not Python."""
    return _imports(_names_in_code(source), _reading())


_READINGS: list[_ModuleFiles] = []  # the reading in force (see one_reading), if any


def _reading() -> _ModuleFiles:
    return _READINGS[-1] if _READINGS else _ModuleFiles()


@contextmanager
def one_reading() -> Iterator[None]:
    """Inside, the book's module files are read once (a build's planning and render run no
    book code); outside, every call reads them again."""
    _READINGS.append(_ModuleFiles())
    try:
        yield
    finally:
        _READINGS.pop()


def modules_reached(starts: Iterable[str]) -> list[str]:
    """Every first-party module reached from the modules ``starts`` by imports, sorted (a name
    without a file kept; a module that does not parse reaches nothing further)."""
    files = _reading()
    starts = tuple(sorted(set(starts)))
    if starts in files.reached:
        return list(files.reached[starts])
    seen: set[str] = set()
    waiting = [name for start in starts if _first_party(start) for name in _with_parents(start)]
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        path = files.find(name)
        data = None if path is None else files.read(path)
        if data is not None:
            package = name if path.name == "__init__.py" else name.rpartition(".")[0]
            waiting.extend(_imports(_module_names(package, data), files) - seen)
    files.reached[starts] = sorted(seen)
    return sorted(seen)


@functools.lru_cache(maxsize=1024)
def _module_names(package: str, data: bytes) -> tuple[frozenset[str], frozenset[str]]:
    """The parse of a module's file (once per content in a process)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return frozenset(), frozenset()
    return _imported_names(tree, package)


def module_digests(names: Iterable[str]) -> dict[str, str]:
    """``{module: SHA-256 of its file's bytes}`` (:data:`MISSING` where there is no file)."""
    files = _reading()
    digests = {}
    for name in sorted(set(names)):
        path = files.find(name)
        data = None if path is None else files.read(path)
        digests[name] = MISSING if data is None else hashlib.sha256(data).hexdigest()
    return digests


@functools.cache
def package_digest(top: str) -> str:
    """SHA-256 of every ``*.py`` and ``*.json`` file of package ``top``, once per process."""
    base = package_folder(top)
    digest = hashlib.sha256()
    for path in sorted(base.rglob("*")) if base is not None else ():
        if path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(base).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
