"""The SHA-256 of each file this process read, by the version of the file it read.

:func:`sha256` hashes a regular file and remembers the digest under its version (device,
inode, size, modification and change times, the same before and after the read);
:func:`known` answers for an unchanged version. Used only where a stale digest is harmless:
the record a clean build leaves (:func:`.noop.record_clean_build`), which the next build
compares with digests computed afresh.
"""

from __future__ import annotations

import hashlib
import os
import stat

_DIGESTS: dict[tuple[int, int, int, int, int], bytes] = {}


def _version(status: os.stat_result) -> tuple[int, int, int, int, int]:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


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
    """``(size, SHA-256, steady)`` of the regular file at ``path`` (no link followed, no FIFO
    waited on), read now; None if it is none. ``steady`` is False (and nothing remembered) if
    the file changed while it was read."""
    descriptor = open_regular(path)
    if descriptor is None:
        return None
    before = os.fstat(descriptor)
    with open(descriptor, "rb") as stream:
        hasher = hashlib.file_digest(stream, "sha256")
        size = stream.tell()
        after = os.fstat(descriptor)
    digest = hasher.digest()
    steady = _version(before) == _version(after) and size == after.st_size
    if steady:
        _DIGESTS[_version(after)] = digest
    return size, digest, steady


def known(status: os.stat_result) -> bytes | None:
    """The SHA-256 remembered for the file version ``status`` describes, if any."""
    return _DIGESTS.get(_version(status))
