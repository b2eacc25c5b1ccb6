"""One build at a time: an exclusive ``flock`` on ``_build/.build.lock``, naming its holder.
A forked child closes its copy at once; a record left by a killed holder is taken over."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from claimbook import paths
from claimbook.errors import BuildLockError

TAKEOVER = "took over the build lock from a build that ended without releasing it"
_HELD: set[int] = set()  # descriptors of the locks this process holds


def _close_in_child() -> None:
    for handle in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(handle)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


def lock_path() -> Path:
    return paths.BUILD_DIR / ".build.lock"


@contextlib.contextmanager
def build_lock(path: str | Path, say=None) -> Iterator[None]:
    """Hold the build lock at ``path`` for the block (``say``, default stderr, gets a takeover's
    line); BuildLockError naming the holder if another holds it."""
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
