"""The instrument package (``trainable_harness``) seen without importing it: the engine
reaches the science only through a registry's ``compute:`` and by reading its files."""

import ast
import functools

from claimbook import dependencies, paths
from claimbook.errors import BookError

PACKAGE = "trainable_harness"


@functools.cache
def _literal_version(data: bytes) -> str | None:
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
    """The instruments' version (the chapters' pin), read statically from ``_version.py``;
    BookError if it cannot be read or has no literal ``__version__ = "..."``."""
    folder = dependencies.package_folder(PACKAGE) or paths.HARNESS_DIR / PACKAGE
    path = folder / "_version.py"
    pinned = "the chapters' pin is read from it"
    try:
        found = _literal_version(path.read_bytes())
    except OSError as error:
        raise BookError(f"{path}: cannot be read ({error}); {pinned}") from None
    if found is None:
        raise BookError(f"{path}: no literal __version__ = '...'; {pinned}")
    return found
