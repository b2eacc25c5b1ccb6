"""Regular files opened and hashed without following a link or waiting on a FIFO."""

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


def sha256(path: str | os.PathLike[str]) -> str | None:
    """The SHA-256 (hex) of the regular file at ``path``, None if it is none."""
    descriptor = open_regular(path)
    if descriptor is None:
        return None
    with open(descriptor, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()
