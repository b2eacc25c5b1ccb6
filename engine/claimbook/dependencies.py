"""The book's own modules a piece of code reaches, found statically, and their digests.

**The rule.** A chapter or a claim depends on every byte of each module of the book's own
packages (:data:`FIRST_PARTY`: the instruments ``trainable_harness`` and the engine
``claimbook``) that its code imports, directly or through another such module. Every
``import`` and ``from ... import`` statement of a reached module counts, wherever it stands
(inside a function, under ``if`` or ``try``), and importing a module imports its parent
packages, so their ``__init__`` counts too; ``from package import name`` reaches the
submodule ``package.name`` when such a file exists. A module's digest is the SHA-256 of its
file, whole: an augmented assignment, a decorator, a conditional or an import anywhere in
it changes the digest of everything that reaches it. Nothing is imported or executed to find
these modules (:mod:`ast` reads their files), so the science package needs no hook and a
reader's kernel runs plain code. The price of reading whole modules is a little imprecision
towards re-running: an edit of a function that a chapter reaches but never calls re-executes
that chapter.

Examples
--------
Importing a module runs its package's ``__init__``, which here imports the package's modules:

>>> reached = modules_reached(["trainable_harness.normalization"])
>>> reached[0], "trainable_harness.layers.normalize" in reached
('trainable_harness', True)
>>> all(len(digest) == 64 for digest in module_digests(reached).values())
True
>>> sorted(imports_in_code("import numpy as np\\nfrom trainable_harness import layers"))
['trainable_harness', 'trainable_harness.layers']
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "FIRST_PARTY",
    "MISSING",
    "imports_in_code",
    "module_digests",
    "module_file",
    "modules_reached",
    "one_reading",
    "package_digest",
    "package_folder",
]

FIRST_PARTY = ("trainable_harness", "claimbook")
MISSING = "missing"  # the digest of a module whose file no longer exists


def package_folder(top: str) -> Path | None:
    """The folder of a top-level first-party package, found without importing it."""
    return _package_dir(top)


@functools.cache
def _package_dir(top: str) -> Path | None:
    """The folder of a top-level first-party package (see :func:`package_folder`)."""
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def module_file(name: str) -> Path | None:
    """The source file of first-party module ``name`` (``pkg/__init__.py`` for a package),
    or None when ``name`` is not first-party or has no file."""
    return _reading().find(name)


def _file_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _folder_entries(folder: str) -> tuple[frozenset[str], frozenset[str]]:
    """The files and the subfolders of ``folder`` (none when it cannot be listed)."""
    try:
        with os.scandir(folder) as entries:
            listed = [(entry.name, entry.is_file(), entry.is_dir()) for entry in entries]
    except OSError:
        listed = []
    files = frozenset(name for name, is_file, _ in listed if is_file)
    return files, frozenset(name for name, is_file, is_dir in listed if is_dir and not is_file)


class _ModuleFiles:
    """The book's module files as read once: each folder listed and each file read at most
    once (resolving a module's imports asks about every name its ``from`` statements import,
    and a build asks for the same claims' keys many times)."""

    def __init__(self) -> None:
        self.read = functools.cache(_file_bytes)  # None when it cannot be read
        self.find = functools.cache(self._find)
        self.digest = functools.cache(self._digest)
        self._entries = functools.cache(_folder_entries)
        self.reached: dict[tuple[str, ...], list[str]] = {}

    def _digest(self, path: Path) -> str:
        data = self.read(path)
        return MISSING if data is None else hashlib.sha256(data).hexdigest()

    def _find(self, name: str) -> Path | None:
        top, *rest = name.split(".")
        base = _package_dir(top) if top in FIRST_PARTY else None
        if base is None:
            return None
        if not rest:
            return base / "__init__.py" if "__init__.py" in self._entries(str(base))[0] else None
        parent = os.path.join(base, *rest[:-1])
        files, folders = self._entries(parent)
        stem = rest[-1]
        if stem in folders and "__init__.py" in self._entries(os.path.join(parent, stem))[0]:
            return Path(parent, stem, "__init__.py")
        if f"{stem}.py" in files:
            return Path(parent, f"{stem}.py")
        return None


def _first_party(name: str) -> bool:
    return name.split(".", 1)[0] in FIRST_PARTY


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: index + 1]) for index in range(len(parts))]


def _imported_names(tree: ast.AST, package: str) -> tuple[frozenset[str], frozenset[str]]:
    """The module names the statements of ``tree`` import, and the ``module.name`` of each
    ``from module import name`` (a submodule when such a file exists: :func:`_imports`)."""
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
    """First-party modules imported, with their parent packages, of ``_imported_names``'s
    result: the files are looked up now, so a module added since the parse counts."""
    found, submodules = names
    found = set(found) | {name for name in submodules if files.find(name) is not None}
    return {parent for name in found if _first_party(name) for parent in _with_parents(name)}


def _parse(source: str) -> ast.AST:
    """Parse code that may hold IPython's line magics and shell escapes (dropped)."""
    try:
        return ast.parse(source)
    except SyntaxError:
        kept = [
            "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
        ]
        return ast.parse("\n".join(kept))


@functools.lru_cache(maxsize=1024)
def _names_in_code(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """The parse of ``source`` (once per text in a process: a claim's mistakes are read for
    every claim page)."""
    return _imported_names(_parse(source), "")


def imports_in_code(source: str) -> set[str]:
    """First-party modules (with their parent packages) that the code ``source`` imports.

    Raises
    ------
    SyntaxError
        If ``source`` is not Python (after dropping IPython's ``%`` and ``!`` lines).
    """
    return _imports(_names_in_code(source), _reading())


_READINGS: list[_ModuleFiles] = []  # the reading in force (see one_reading), if any


def _reading() -> _ModuleFiles:
    return _READINGS[-1] if _READINGS else _ModuleFiles()


@contextmanager
def one_reading() -> Iterator[None]:
    """Inside, every lookup of this module reads the book's module files once.

    A build uses one reading per phase in which no code of the book runs (planning what to
    execute; rendering), so the keys computed in it all describe the files as they were at
    its start; outside, every call reads the files again.
    """
    _READINGS.append(_ModuleFiles())
    try:
        yield
    finally:
        _READINGS.pop()


def modules_reached(starts: Iterable[str]) -> list[str]:
    """Every first-party module reached from the modules ``starts`` by imports, sorted.

    A start or an import that names no file is kept as a name (its digest is
    :data:`MISSING`), so a module that disappears changes the digest of what reached it.
    A module that does not parse reaches nothing further; its bytes still count.
    """
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
            is_package = path.name == "__init__.py"
            waiting.extend(_module_imports(name, is_package, data, files) - seen)
    files.reached[starts] = sorted(seen)
    return sorted(seen)


def _module_imports(name: str, is_package: bool, data: bytes, files: _ModuleFiles) -> set[str]:
    """The first-party imports of module ``name`` whose file holds ``data``."""
    package = name if is_package else name.rpartition(".")[0]
    return _imports(_module_names(package, data), files)


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
        digests[name] = MISSING if path is None else files.digest(path)
    return digests


@functools.cache
def package_digest(top: str) -> str:
    """SHA-256 of every ``*.py`` and ``*.json`` file of first-party package ``top`` (once per
    process): what the site's pages depend on of the engine that renders them."""
    base = _package_dir(top)
    digest = hashlib.sha256()
    for path in sorted(base.rglob("*")) if base is not None else ():
        if path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(base).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
