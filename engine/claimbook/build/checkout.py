"""The engine builds the checkout it belongs to, or refuses.

A copy of a built checkout (``cp -a``) carries its ``.venv``, whose editable installs of the
engine and the harness, and whose scripts' ``#!`` lines, name the original checkout. Run in
the copy, ``python -m claimbook build`` would import the original's engine and harness, and
:data:`claimbook.paths.REPO_ROOT` (found from the engine's own file) would be the original:
the copy would build the original. The Makefile makes the environment again when it was made
in another directory (``.venv/.checkout``); :func:`check_checkout` is the second guard, in
the engine itself, for any other way in.

The directory a command is asked to build is the book that holds the working directory: the
nearest folder, from the working directory upward, that holds a ``_config.yml`` and a
``_toc.yml``. When ``TRAINABLE_ROOT`` is set it names the book explicitly (the tests, the
benchmark and the matrix check build copies that way), and there is nothing to check.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as scratch:
...     book = Path(scratch).resolve()
...     for name in ("_config.yml", "_toc.yml"):
...         _ = (book / name).write_text("")
...     (book / "chapters").mkdir()
...     book_holding(book / "chapters") == book
True
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from claimbook import paths
from claimbook.errors import BuildError

__all__ = ["book_holding", "check_checkout"]

_BOOK_FILES = ("_config.yml", "_toc.yml")


def book_holding(directory: str | Path) -> Path | None:
    """The nearest folder at or above ``directory`` that holds a book, or None."""
    here = Path(directory).resolve()
    for folder in (here, *here.parents):
        if all((folder / name).is_file() for name in _BOOK_FILES):
            return folder
    return None


def check_checkout(environ: Mapping[str, str] = os.environ, cwd: str | Path | None = None) -> None:
    """Refuse, in one line, to build a book that is not :data:`claimbook.paths.REPO_ROOT`.

    Raises
    ------
    BuildError
        If ``TRAINABLE_ROOT`` is unset and the book holding ``cwd`` (default: the working
        directory) is another directory than the one the engine belongs to.
    """
    if environ.get(paths.ROOT_ENVIRONMENT_VARIABLE):
        return
    asked = book_holding(Path.cwd() if cwd is None else cwd)
    root = Path(paths.REPO_ROOT).resolve()
    if asked is not None and asked != root:
        raise BuildError(
            f"asked to build {asked}, but this engine belongs to the checkout {root} "
            "(claimbook.paths.REPO_ROOT): the environment was made there, e.g. a `cp -a` copy "
            f"of its .venv; remove {asked / '.venv'} and run `make` in {asked} to make its own"
        )
