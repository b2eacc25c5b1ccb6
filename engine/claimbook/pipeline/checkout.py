"""The engine builds the checkout it belongs to, with its own engine and the environment the
book locks, or refuses (unless ``--allow-environment-mismatch``: every page then says so); and
one build at a time, under an exclusive ``flock`` on ``_build/.build.lock`` naming its holder.
"""

import contextlib
import fcntl
import functools
import os
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from claimbook import environment, paths
from claimbook.errors import BuildError, BuildLockError, EnvironmentMismatchError


def book_holding(directory: str | Path) -> Path | None:
    """The nearest folder at or above ``directory`` that holds a book, or None."""
    here = Path(directory).resolve()
    for folder in (here, *here.parents):
        if (folder / "_config.yml").is_file() and (folder / "_toc.yml").is_file():
            return folder
    return None


def check_checkout(environ: Mapping[str, str] = os.environ, cwd: str | Path | None = None) -> None:
    """BuildError if ``TRAINABLE_ROOT`` is unset and the book holding ``cwd`` is not
    :data:`claimbook.paths.REPO_ROOT` (a ``cp -a`` copy's ``.venv`` names the original)."""
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


def foreign_engine(root: str | Path | None = None) -> Path | None:
    """The running engine's folder if the book at ``root`` holds another engine; else None."""
    own = Path(root or paths.REPO_ROOT) / "engine" / "claimbook"
    engine = Path(paths.__file__).resolve().parent
    return engine if own.is_dir() and own.resolve() != engine else None


def check_engine(allow: bool = False, root: str | Path | None = None) -> Path | None:
    """The foreign engine's folder, or None; EnvironmentMismatchError unless ``allow``."""
    root = Path(root or paths.REPO_ROOT)
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
    """The differences of engine, distributions, Python and start-up code from the book's,
    each said through ``out``; without ``allow`` one raises EnvironmentMismatchError."""
    found = []
    engine = check_engine(allow)
    if engine is not None:
        found.append(f"built with the engine at {engine}, not this checkout's")
    differences = environment.check_environment(allow=allow)
    if differences:
        found.append(
            f"the environment differs from {environment.LOCK_NAME}: {'; '.join(differences)}"
        )
    foreign = environment.foreign_startup_files()
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


TAKEOVER = "took over the build lock from a build that ended without releasing it"
_HELD: set[int] = set()  # descriptors of the locks this process holds


def _close_in_child() -> None:
    """A forked child (a chapter worker) never keeps the lock once the driver is gone."""
    for handle in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(handle)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


def lock_path() -> Path:
    return paths.BUILD_DIR / ".build.lock"


@contextlib.contextmanager
def build_lock(path: str | Path, say=None) -> Iterator[None]:
    """Hold the build lock at ``path`` for the block (``say``, default stderr, gets the line
    taking over a killed holder's record); BuildLockError naming the holder if another holds it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle, 4096, 0).decode("utf-8", "replace").strip()
            raise BuildLockError(
                f"another build holds {path} ({holder or 'holder unknown'}); wait for it to "
                "finish, or stop it"
            ) from None
        _HELD.add(handle)
        previous = os.pread(handle, 4096, 0).decode("utf-8", "replace").strip()
        if previous:
            (say or functools.partial(print, file=sys.stderr, flush=True))(
                f"make: {TAKEOVER} ({previous})"
            )
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        command = " ".join(sys.argv) or sys.executable
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"pid {os.getpid()}, `{command}`, since {started}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(handle, 0)
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        _HELD.discard(handle)
        os.close(handle)
