"""Whether the book on disk is its commit: the content compared, whatever git's index says.

``git status`` trusts the index for a file marked ``--skip-worktree`` or
``--assume-unchanged``, so the files are compared with ``HEAD`` through a fresh index of
``HEAD`` (no such marks; git converts line ends and runs clean filters as it stores files).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path


def git(root: str | Path, *arguments: str, index: str | None = None) -> bytes | None:
    """``git -C root ARGUMENTS``'s output (with ``index`` as the index file, if given), or
    None when git is missing or fails."""
    environ = {**os.environ, "GIT_INDEX_FILE": index} if index else None
    try:
        found = subprocess.run(
            ["git", "-C", str(root), *arguments],
            capture_output=True,
            timeout=20,
            check=True,
            env=environ,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout


def uncommitted_files(root: str | Path) -> list[str] | None:
    """The files ``HEAD`` tracks under ``root`` whose content on disk is not ``HEAD``'s (changed,
    gone or made a link), relative and sorted; None outside a git work tree with a commit.
    Submodules are not looked into."""
    with tempfile.TemporaryDirectory() as folder:
        index = str(Path(folder) / "index")
        if git(root, "read-tree", "HEAD", index=index) is None:
            return None
        arguments = ("diff", "--name-only", "--relative", "--ignore-submodules", "-z")
        listing = git(root, *arguments, index=index)
    if listing is None:
        return None
    return sorted(os.fsdecode(name) for name in listing.split(b"\0") if name)


def uncommitted(root: str | Path) -> bool:
    """Whether the book at ``root`` differs from ``HEAD``: :func:`uncommitted_files`, or
    anything ``git status --porcelain`` lists; False outside a git work tree."""
    changed = uncommitted_files(root)
    if changed is None:
        return False
    return bool(changed or (git(root, "status", "--porcelain") or b"").strip())
