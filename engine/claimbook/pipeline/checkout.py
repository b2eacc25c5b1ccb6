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
benchmark and the matrix check build copies that way), and there is nothing to check there.

Whichever way the root was found, a book that holds an engine of its own
(``<root>/engine/claimbook``, as every checkout does) is built by that engine: another
checkout's engine, reached through ``TRAINABLE_ROOT`` or an engine installed or moved
elsewhere, would build this book with code this checkout does not hold, and its pages would
show a clean stamp. :func:`foreign_engine` names the running engine then, and
:func:`check_engine` refuses the build in one line, unless the author allowed it
(``--allow-environment-mismatch``, the option that builds in an environment that is not the
book's); every page's footer then says "built with the engine at <path>, not this
checkout's" (:mod:`claimbook.extensions.book_site`). A book without an engine of its own (a
fixture or generated book, which the tests and the benchmark build) has none to compare
with and is built by the engine that runs. The benchmark and the matrix check put the
copy's own engine first on ``PYTHONPATH``, so each copy is built by its own engine.

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

from claimbook import environment, paths
from claimbook.errors import BuildError, EnvironmentMismatchError
from claimbook.startup_code import foreign_startup_files

__all__ = [
    "book_holding",
    "check_checkout",
    "check_engine",
    "check_environment",
    "foreign_engine",
    "running_engine",
]

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


def running_engine() -> Path:
    """The folder of the ``claimbook`` package this process imported, resolved."""
    return Path(paths.__file__).resolve().parent


def foreign_engine(
    root: str | Path | None = None, engine: str | Path | None = None
) -> Path | None:
    """The running engine's folder when the book at ``root`` holds another engine, else None.

    Parameters
    ----------
    root : path, optional
        The book (default :data:`claimbook.paths.REPO_ROOT`).
    engine : path, optional
        The engine's package folder (default :func:`running_engine`).

    Returns
    -------
    pathlib.Path or None
        ``engine`` when ``<root>/engine/claimbook`` is a folder and is not ``engine`` (both
        resolved); None when they are the same, or the book holds no engine of its own.
    """
    root = Path(root) if root is not None else paths.REPO_ROOT
    engine = Path(engine).resolve() if engine is not None else running_engine()
    own = root / "engine" / "claimbook"
    if not own.is_dir() or own.resolve() == engine:
        return None
    return engine


def check_engine(allow: bool = False, root: str | Path | None = None) -> Path | None:
    """Refuse, in one line, to build a book with an engine that is not its own, unless ``allow``.

    Returns
    -------
    pathlib.Path or None
        The foreign engine's folder, when allowed (:func:`foreign_engine`); else None.

    Raises
    ------
    EnvironmentMismatchError
        If the book holds an engine of its own and another runs, and ``allow`` is false.
    """
    root = Path(root) if root is not None else paths.REPO_ROOT
    engine = foreign_engine(root)
    if engine is not None and not allow:
        how = (
            f"{paths.ROOT_ENVIRONMENT_VARIABLE} names the book, the engine is another checkout's"
            if os.environ.get(paths.ROOT_ENVIRONMENT_VARIABLE)
            else "the engine was installed or moved elsewhere"
        )
        raise EnvironmentMismatchError(
            f"this build would run the engine at {engine}, not the book's own "
            f"{root / 'engine' / 'claimbook'} ({how}): run `make` in {root}, which builds "
            "the book with its own engine, or build anyway with --allow-environment-mismatch "
            "(every page then names the engine that built it)"
        )
    return engine


def check_environment(allow: bool = False, out=print) -> list[str]:
    """Compare the environment with the book's; refuse a difference unless ``allow``.

    Returns
    -------
    list of str
        The differences allowed (each printed through ``out``, one line each), or none.

    Raises
    ------
    EnvironmentMismatchError
        If the engine running is not the book's own
        (:func:`check_engine`), the installed distributions or
        Python differ from the lock (:func:`claimbook.environment.check_environment`), or
        site-packages holds start-up code no distribution installed
        (:func:`claimbook.startup_code.foreign_startup_files`), and ``allow`` is false; one
        line naming them.
    """
    found = []
    engine = check_engine(allow)
    if engine is not None:
        found.append(f"built with the engine at {engine}, not this checkout's")
    differences = environment.check_environment(allow=allow)
    if differences:
        found.append(
            f"the environment differs from {environment.LOCK_NAME}: {'; '.join(differences)}"
        )
    foreign = foreign_startup_files()
    if foreign:
        names = ", ".join(str(path) for path in foreign)
        line = f"start-up code that no installed package put there: {names}"
        if not allow:
            raise EnvironmentMismatchError(
                f"{line}; every Python process would run it before the book's code. Remove "
                f"it, or build anyway with {environment.ALLOW_OPTION}"
            )
        found.append(line)
    for line in found:
        out(f"build: {line} ({environment.ALLOW_OPTION}: every page says so)")
    return found
