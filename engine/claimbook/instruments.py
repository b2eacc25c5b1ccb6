"""The instrument package (``trainable_harness``), seen from the engine without importing it.

The engine reaches the science only through a registry's ``compute:``
(:mod:`claimbook.claims.computations`) and by reading its files (keys, the pinned version).

>>> version() == __import__("trainable_harness").__version__
True
"""

from __future__ import annotations

import ast
import functools

from claimbook import dependencies, paths
from claimbook.errors import BookError

PACKAGE = "trainable_harness"


@functools.cache
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
    """The instruments' version (the chapters' pin), read statically from ``_version.py`` on
    disk; BookError if it cannot be read or has no literal ``__version__ = "..."``."""
    folder = dependencies.package_folder(PACKAGE) or paths.HARNESS_DIR / PACKAGE
    path = folder / "_version.py"
    try:
        found = _literal_version(path.read_bytes())
    except OSError as error:
        message = f"{path}: cannot be read ({error}); the chapters' pin is read from it"
        raise BookError(message) from None
    if found is not None:
        return found
    raise BookError(f"{path}: no literal __version__ = '...'; the chapters' pin is read from it")
