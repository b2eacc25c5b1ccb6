"""Whether the book on disk is its commit: the content hashed, whatever git's index says.

``git status`` trusts the index for a file marked ``--skip-worktree`` or
``--assume-unchanged``, so every file ``HEAD`` tracks is hashed as git would (a link as its
target; a submodule not looked into).

>>> blob_id(b"hello\\n")  # printf "hello\\n" | git hash-object --stdin
'ce013625030ba8dba906f756967f9e9ca394464a'
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

_SUBMODULE = "160000"
_LINK = "120000"


def blob_id(data: bytes, algorithm: str = "sha1") -> str:
    """The id git gives a blob of ``data``: ``<algorithm>(b"blob <len>\\0" + data)`` in hex."""
    hasher = hashlib.new(algorithm)
    hasher.update(b"blob %d\0" % len(data))
    hasher.update(data)
    return hasher.hexdigest()


def git(root: str | Path, *arguments: str, stdin: bytes | None = None) -> bytes | None:
    """``git -C root ARGUMENTS``'s output, or None when git is missing or fails."""
    try:
        found = subprocess.run(
            ["git", "-C", str(root), *arguments],
            input=stdin,
            capture_output=True,
            timeout=20,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout


def tracked_blobs(root: str | Path) -> dict[str, tuple[str, str]] | None:
    """Path relative to ``root`` -> (mode, id) of each file ``HEAD`` tracks under ``root``;
    None outside a git work tree with a ``HEAD`` commit."""
    listing = git(Path(root), "ls-tree", "-r", "-z", "HEAD")
    if listing is None:
        return None
    blobs = {}
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, _kind, object_id = meta.decode().split(" ")
        blobs[os.fsdecode(name)] = (mode, object_id)
    return blobs


def _disk_id(path: Path, mode: str, algorithm: str) -> str | None:
    """The blob id of the file at ``path`` as it is on disk, or None when it is gone."""
    try:
        if mode == _LINK:
            return blob_id(os.fsencode(os.readlink(path)), algorithm)
        if path.is_symlink():  # a file replaced by a link: never the committed blob
            return blob_id(b"link:" + os.fsencode(os.readlink(path)), algorithm)
        return blob_id(path.read_bytes(), algorithm)
    except OSError:  # gone, a folder in its place, or unreadable
        return None


def uncommitted_files(root: str | Path) -> list[str] | None:
    """The files ``HEAD`` tracks under ``root`` whose content on disk is not ``HEAD``'s (changed
    or gone), relative and sorted; None outside a git work tree with a commit. Those that
    differ are confirmed by ``git hash-object`` (``core.autocrlf``, clean filters)."""
    root = Path(root)
    blobs = tracked_blobs(root)
    if blobs is None:
        return None
    differing = []
    for name, (mode, object_id) in blobs.items():
        if mode == _SUBMODULE:
            continue
        algorithm = "sha256" if len(object_id) == 64 else "sha1"
        if _disk_id(root / name, mode, algorithm) != object_id:
            differing.append(name)
    # A file gone or replaced by a link is a change whatever git says.
    regular = [
        name
        for name in differing
        if blobs[name][0] != _LINK and (root / name).is_file() and not (root / name).is_symlink()
    ]
    if regular:
        paths = "".join(f"{name}\n" for name in regular).encode()
        stored = git(root, "hash-object", "--stdin-paths", stdin=paths)
        ids = stored.decode().split() if stored is not None else []
        if len(ids) == len(regular):
            same = {
                name for name, found in zip(regular, ids, strict=True) if found == blobs[name][1]
            }
            differing = [name for name in differing if name not in same]
    return sorted(differing)


def uncommitted(root: str | Path) -> bool:
    """Whether the book at ``root`` differs from ``HEAD``: :func:`uncommitted_files`, or
    anything ``git status --porcelain`` lists; False outside a git work tree."""
    changed = uncommitted_files(root)
    if changed is None:
        return False
    return bool(changed or (git(root, "status", "--porcelain") or b"").strip())
