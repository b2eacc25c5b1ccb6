"""One build at a time: an exclusive ``flock`` on ``_build/.build.lock``.

The lock file names its holder (process id, command and start time), so a second build is
refused with a message saying who holds the lock. The lock is released by the kernel when
the holder exits, however it exits, so a killed build never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from claimbook.errors import BuildLockError

__all__ = ["build_lock"]


@contextlib.contextmanager
def build_lock(path: str | Path) -> Iterator[None]:
    """Hold the exclusive build lock at ``path`` for the duration of the block.

    Raises
    ------
    BuildLockError
        At once (never waiting) if another process holds it; the message names the holder.
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
        os.close(handle)
