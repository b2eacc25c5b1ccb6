"""Regular files opened and hashed without following a link or waiting on a FIFO."""

from __future__ import annotations

import hashlib
import os
import stat


def open_regular(path: str | os.PathLike[str]) -> int | None:
    """A descriptor of ``path`` if it is a regular file (no link followed, no FIFO waited
    on), else None."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    return descriptor


def sha256(path: str | os.PathLike[str]) -> tuple[int, bytes, bool] | None:
    """``(size, SHA-256, steady)`` of the regular file at ``path``, None if it is none;
    ``steady`` is False if it changed while it was read (device, inode, size or times)."""
    descriptor = open_regular(path)
    if descriptor is None:
        return None
    before = os.fstat(descriptor)
    with open(descriptor, "rb") as stream:
        digest = hashlib.file_digest(stream, "sha256").digest()
        size, after = stream.tell(), os.fstat(descriptor)

    def version(status: os.stat_result) -> tuple:
        return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns

    return size, digest, version(before) == version(after) and size == after.st_size
