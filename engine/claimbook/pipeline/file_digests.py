"""The SHA-256 of each file this process read, by the version of the file it read.

A build hashes most of the book's tree twice: when it starts, to see whether anything changed
since the last clean build (:mod:`.noop`), and when it ends clean, to record the tree it
leaves. Most files are the same at both ends, and the site the build just published was
hashed as it was published (:mod:`.site_record`). :func:`sha256` hashes a regular file and
remembers the digest under the file's *version*: its device and inode, its size, and its
modification and change times, as ``fstat`` gave them before and after the read (a file that
changed while it was read is not remembered). :func:`known` answers for a file whose version
is unchanged.

A remembered digest is used only where a stale one is harmless: the record a clean build
leaves (:func:`claimbook.pipeline.noop.record_clean_build`). The next build compares that record
with a digest of every file's bytes as they are then, computed afresh, so a file that changed
without its version changing (within one tick of the file system's clock, with the same size)
makes that comparison fail and the build take its full path; it never makes a changed tree
pass for an unchanged one. Nothing that decides what a page shows reads it.
"""

from __future__ import annotations

import hashlib
import os
import stat

__all__ = ["known", "sha256"]

_DIGESTS: dict[tuple[int, int, int, int, int], bytes] = {}


def _version(status: os.stat_result) -> tuple[int, int, int, int, int]:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def sha256(path: str | os.PathLike[str]) -> tuple[int, bytes, bool] | None:
    """``(size, SHA-256, steady)`` of the regular file at ``path``, read now; None if it is none.

    The file is opened without following a symbolic link, and without waiting on a FIFO.
    ``size`` is the number of bytes hashed. ``steady`` is False if the file changed while it
    was read: the digest is then of what was read, and it is not remembered.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    before = os.fstat(descriptor)
    if not stat.S_ISREG(before.st_mode):
        os.close(descriptor)
        return None
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
