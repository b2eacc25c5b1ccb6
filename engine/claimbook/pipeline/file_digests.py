"""Files hashed and folders walked without following a link or waiting on a FIFO."""

import hashlib
import os
import stat
from collections.abc import Collection


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


def walk(
    directory: str | os.PathLike[str], skipped: Collection[str] = ()
) -> dict[str, os.DirEntry | None]:
    """Each entry under ``directory`` but its folders, by relative path (a folder that cannot
    be listed: None); an entry whose name or relative path is in ``skipped`` is left out."""
    found: dict[str, os.DirEntry | None] = {}
    folders = [(os.fspath(directory), "")]
    while folders:
        folder, prefix = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            found[prefix.rstrip("/") or "."] = None
            continue
        for entry in entries:
            name = prefix + entry.name
            if entry.name in skipped or name in skipped:
                continue
            if entry.is_dir(follow_symlinks=False):
                folders.append((entry.path, name + "/"))
            else:
                found[name] = entry
    return found


def describe(entry: os.DirEntry | None) -> str:
    """``file:<SHA-256>``, ``link:<target>``, a special file's ``special:<mode>`` (never
    opened), ``gone`` (since it was listed) or, for a folder not listed, ``unlistable``."""
    if entry is None:
        return "unlistable"
    if entry.is_symlink():
        return f"link:{os.readlink(entry.path)}"
    if not entry.is_file(follow_symlinks=False):
        return f"special:{entry.stat(follow_symlinks=False).st_mode}"
    found = sha256(entry.path)
    return "gone" if found is None else f"file:{found}"
