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
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "FIRST_PARTY",
    "MISSING",
    "imports_in_code",
    "module_digests",
    "module_file",
    "modules_reached",
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
    top, *rest = name.split(".")
    if top not in FIRST_PARTY:
        return None
    base = _package_dir(top)
    if base is None:
        return None
    base = base.joinpath(*rest)
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _first_party(name: str) -> bool:
    return name.split(".", 1)[0] in FIRST_PARTY


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: index + 1]) for index in range(len(parts))]


def _imports(tree: ast.AST, package: str) -> set[str]:
    """First-party modules the statements of ``tree`` import (``package``: the package
    relative imports are resolved against; empty for code outside any package)."""
    found: set[str] = set()
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
            for alias in node.names:
                if alias.name != "*" and module_file(f"{module}.{alias.name}") is not None:
                    found.add(f"{module}.{alias.name}")
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


def imports_in_code(source: str) -> set[str]:
    """First-party modules (with their parent packages) that the code ``source`` imports.

    Raises
    ------
    SyntaxError
        If ``source`` is not Python (after dropping IPython's ``%`` and ``!`` lines).
    """
    return _imports(_parse(source), "")


def modules_reached(starts: Iterable[str]) -> list[str]:
    """Every first-party module reached from the modules ``starts`` by imports, sorted.

    A start or an import that names no file is kept as a name (its digest is
    :data:`MISSING`), so a module that disappears changes the digest of what reached it.
    A module that does not parse reaches nothing further; its bytes still count.
    """
    seen: set[str] = set()
    waiting = [name for start in starts if _first_party(start) for name in _with_parents(start)]
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name)
        if path is None:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        waiting.extend(_module_imports(name, path.name == "__init__.py", data) - seen)
    return sorted(seen)


@functools.lru_cache(maxsize=1024)
def _module_imports(name: str, is_package: bool, data: bytes) -> frozenset[str]:
    """The first-party imports of module ``name`` whose file holds ``data`` (parsed once per
    content in a process)."""
    package = name if is_package else name.rpartition(".")[0]
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(_imports(tree, package))


def module_digests(names: Iterable[str]) -> dict[str, str]:
    """``{module: SHA-256 of its file's bytes}`` (:data:`MISSING` where there is no file)."""
    digests = {}
    for name in sorted(set(names)):
        path = module_file(name)
        try:
            digests[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path else MISSING
        except OSError:
            digests[name] = MISSING
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
