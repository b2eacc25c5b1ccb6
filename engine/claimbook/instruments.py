"""The instrument package the book's claims and chapters run, seen from the engine.

The science (``trainable_harness``) imports nothing of the engine; the engine never imports
it at module level either. It reaches it only through what the book names -- the dotted
``compute:`` of a registry file, which :mod:`claimbook.claims.computations` imports when it
runs a claim -- and through its source files, which it reads statically (for the keys,
:mod:`claimbook.dependencies`, and for the version a chapter pins).

Examples
--------
>>> PACKAGE
'trainable_harness'
>>> (package_dir() / "__init__.py").is_file()
True
>>> version() == __import__("trainable_harness").__version__
True
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from claimbook import paths
from claimbook.errors import BookError

__all__ = ["PACKAGE", "package_dir", "version"]

# The version found in each content of ``_version.py`` (a few dozen bytes) read so far.
_VERSIONS: dict[bytes, str | None] = {}

PACKAGE = "trainable_harness"


def package_dir() -> Path:
    """The folder of the instrument package's source, found without importing it.

    ``importlib.util.find_spec`` of a top-level package locates it without running its
    ``__init__``; a checkout whose package is not installed falls back to
    ``harness/trainable_harness`` under the repository root.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return paths.HARNESS_DIR / PACKAGE


def _literal_version(data: bytes) -> str | None:
    """The literal string assigned to ``__version__`` in ``data`` (Python source), or None."""
    for node in ast.parse(data).body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def version() -> str:
    """The instruments' version (the chapters' pin), read from ``_version.py`` as text.

    Read statically, so it is the version of the source on disk, not of whatever copy a
    process imported earlier.

    Raises
    ------
    BookError
        If ``_version.py`` cannot be read or has no literal ``__version__ = "..."``.
    """
    path = package_dir() / "_version.py"
    try:
        data = path.read_bytes()
    except OSError as error:
        message = f"{path}: cannot be read ({error}); the chapters' pin is read from it"
        raise BookError(message) from None
    # Parsed once per content: a build asks for every claim it judges, three times a claim.
    if data not in _VERSIONS:
        _VERSIONS[data] = _literal_version(data)
    found = _VERSIONS[data]
    if found is not None:
        return found
    raise BookError(f"{path}: no literal __version__ = '...'; the chapters' pin is read from it")
