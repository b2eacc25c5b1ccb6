"""The record of a published site: the SHA-256 of each file, and the checks made against it.

Publishing keeps only regular files and directories (:func:`keep_regular`) and records the
SHA-256 of every file (paths relative to the site, ``/``-separated). Every build walks the
site again (:func:`differences`): a file edited, missing or added, or an entry that is not a
regular file or directory, publishes it again. A render starts from the published pages only
if every one matches the record (:func:`copy_verified`). Files are opened with
``O_NOFOLLOW`` and checked to be regular after opening; the walk follows no link.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as scratch:
...     site = Path(scratch)
...     _ = (site / "index.html").write_text("7.000")
...     files = scan(site).files
...     _ = (site / "index.html").write_text("7.777")
...     print(differences(site, files))
edited index.html
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import NamedTuple

from claimbook.pipeline import file_digests

__all__ = ["Scan", "copy_verified", "differences", "file_sha256", "keep_regular", "scan"]

_SHOWN = 3  # names shown per kind of difference


class Scan(NamedTuple):
    """A walk of a site: its regular files with their SHA-256, and every other entry."""

    files: dict[str, str]
    others: list[str]


def _open_regular(path: str | Path) -> int | None:
    """A descriptor of ``path`` if it is a regular file (never a link followed), else None."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    return descriptor


def file_sha256(path: str | Path) -> str | None:
    """SHA-256 of a regular file's bytes (remembered: :mod:`.file_digests`); None if it is
    absent or not a regular file."""
    found = file_digests.sha256(path)
    return None if found is None else found[1].hex()


def scan(directory: str | Path, skip: Collection[str] = ()) -> Scan:
    """Walk ``directory`` without following links, leaving out top-level names in ``skip``;
    what cannot be listed or is not a regular file or directory is one of ``others``."""
    files: dict[str, str] = {}
    others: list[str] = []
    folders = [(os.fspath(directory), "")]
    while folders:
        folder, prefix = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            others.append(prefix.rstrip("/") or ".")
            continue
        for entry in entries:
            name = prefix + entry.name
            if not prefix and entry.name in skip:
                continue
            if entry.is_dir(follow_symlinks=False):
                folders.append((entry.path, name + "/"))
                continue
            digest = file_sha256(entry.path) if entry.is_file(follow_symlinks=False) else None
            if digest is None:
                others.append(name)
            else:
                files[name] = digest
    return Scan(dict(sorted(files.items())), sorted(others))


def _names(kind: str, names: list[str]) -> str:
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return f"{kind} {', '.join(names[:_SHOWN])}{more}"


def differences(
    directory: str | Path, record: Mapping[str, str], skip: Collection[str] = ()
) -> str | None:
    """One line naming how ``directory`` differs from ``record``, or None if it matches it."""
    if not os.path.isdir(directory) or os.path.islink(directory):
        return "missing"
    found = scan(directory, skip)
    parts = []
    edited = [name for name, digest in found.files.items() if record.get(name, digest) != digest]
    missing = [name for name in record if name not in found.files]
    extra = [name for name in found.files if name not in record]
    for kind, names in (
        ("edited", edited),
        ("missing", sorted(missing)),
        ("not published by the build:", extra),
        ("not a regular file:", found.others),
    ):
        if names:
            parts.append(_names(kind, names))
    return "; ".join(parts) or None


def copy_verified(
    source: str | Path, target: str | Path, record: Mapping[str, str], skip: Collection[str] = ()
) -> bool:
    """Copy ``source`` into ``target`` (times kept) if it is exactly ``record``; else leave
    ``target`` absent and return False. Each file is written from the bytes it was hashed from.
    """
    source, target = Path(source), Path(target)
    copied = 0
    try:
        for folder, subfolders, names in os.walk(source, followlinks=False):
            here = Path(folder)
            relative = here.relative_to(source)
            (target / relative).mkdir(parents=True, exist_ok=True)
            if relative == Path("."):
                subfolders[:] = [name for name in subfolders if name not in skip]
                names = [name for name in names if name not in skip]
            if any((here / name).is_symlink() for name in subfolders):
                return _give_up(target)
            for name in names:
                key = (relative / name).as_posix()
                descriptor = _open_regular(here / name)
                if descriptor is None:
                    return _give_up(target)
                with open(descriptor, "rb") as stream:
                    data = stream.read()
                    times = os.fstat(stream.fileno())
                if record.get(key) != hashlib.sha256(data).hexdigest():
                    return _give_up(target)
                (target / key).write_bytes(data)
                os.utime(target / key, ns=(times.st_atime_ns, times.st_mtime_ns))
                copied += 1
    except OSError:
        return _give_up(target)
    if copied != len(record):
        return _give_up(target)
    return True


def _give_up(target: Path) -> bool:
    shutil.rmtree(target, ignore_errors=True)
    return False


def keep_regular(directory: str | Path) -> tuple[dict[str, str], list[str]]:
    """Remove every entry of ``directory`` that is not a regular file or directory; return
    the record of what is left (path -> SHA-256) and the paths removed."""
    found = scan(directory)
    for name in found.others:
        path = Path(directory, name)
        if path.is_dir() and not path.is_symlink():  # a directory that could not be listed
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return found.files, found.others
