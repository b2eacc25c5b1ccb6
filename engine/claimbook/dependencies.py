"""The book's own modules a piece of code reaches, found statically (every ``import``
wherever it stands, with parent packages), and their digests."""

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
_READINGS: list[dict] = []  # the memo of the reading in force (:func:`one_reading`), if any


@functools.cache
def package_folder(top: str) -> Path | None:
    """The folder of top-level package ``top``, found without importing it."""
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


@contextmanager
def one_reading() -> Iterator[None]:
    """Inside, the book's module files are read once; outside, every call reads them again."""
    _READINGS.append({})
    try:
        yield
    finally:
        _READINGS.pop()


def _module_file(name: str) -> tuple[Path | None, bytes | None]:
    memo = _READINGS[-1] if _READINGS else {}
    if name not in memo:
        top, *rest = name.split(".")
        base = package_folder(top) if top in FIRST_PARTY else None
        candidates = [base.joinpath(*rest, "__init__.py")] if base is not None else []
        if base is not None and rest:
            candidates.append(base.joinpath(*rest[:-1], f"{rest[-1]}.py"))
        path = next((path for path in candidates if path.is_file()), None)
        memo[name] = (path, None if path is None else file_bytes(path))
    return memo[name]


@functools.lru_cache(maxsize=2048)
def _imported_names(source: str | bytes, package: str) -> tuple[frozenset, frozenset]:
    """The modules ``source`` imports, and ``module.name`` of each ``from module import
    name``; IPython's ``%`` and ``!`` lines dropped from code that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):  # ValueError: a null byte
        if isinstance(source, bytes):
            return frozenset(), frozenset()
        lines = source.splitlines()
        tree = ast.parse("\n".join("" if s.lstrip()[:1] in ("%", "!") else s for s in lines))
    found: set[str] = set()
    submodules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            name = "." * node.level + (node.module or "")
            try:
                module = importlib.util.resolve_name(name, package)
            except ImportError:  # a relative import above the top-level package
                continue
            found.add(module)
            submodules.update(f"{module}.{a.name}" for a in node.names if a.name != "*")
    return frozenset(found), frozenset(submodules)


def imports_in_code(source: str | bytes, package: str = "") -> set[str]:
    """First-party modules, with their parents, that ``source`` imports (``from m import n``
    counts ``m.n`` if that file exists now); SyntaxError if it is not Python."""
    found, submodules = _imported_names(source, package)
    return _with_parents(found | {name for name in submodules if _module_file(name)[0]})


def _with_parents(names: Iterable[str]) -> set[str]:
    parts = [name.split(".") for name in names if name.split(".", 1)[0] in FIRST_PARTY]
    return {".".join(name[: index + 1]) for name in parts for index in range(len(name))}


def modules_reached(starts: Iterable[str]) -> list[str]:
    """Every first-party module reached from ``starts`` by imports, sorted (a name without a
    file kept; a module that does not parse reaches nothing further)."""
    memo = _READINGS[-1] if _READINGS else {}
    starts = tuple(sorted(set(starts)))
    if starts not in memo:
        seen: set[str] = set()
        waiting = sorted(_with_parents(starts))
        while waiting:
            name = waiting.pop()
            if name in seen:
                continue
            seen.add(name)
            path, data = _module_file(name)
            if data is not None:
                package = name if path.name == "__init__.py" else name.rpartition(".")[0]
                waiting.extend(imports_in_code(data, package) - seen)
        memo[starts] = sorted(seen)
    return list(memo[starts])


def module_digests(names: Iterable[str]) -> dict[str, str]:
    """``{module: SHA-256 of its file}`` (:data:`MISSING` where there is no file)."""
    digests = {}
    for name in sorted(set(names)):
        data = _module_file(name)[1]
        digests[name] = MISSING if data is None else hashlib.sha256(data).hexdigest()
    return digests


@functools.cache
def package_digest(top: str) -> str:
    """SHA-256 of every ``*.py`` and ``*.json`` file of package ``top``."""
    base = package_folder(top)
    digest = hashlib.sha256()
    for path in sorted(base.rglob("*")) if base is not None else ():
        if path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(base).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
