"""The build's stamp every page's footer names: commit, date, "uncommitted changes", and how
the environment building the book is not its own.

Uncommitted means the content on disk differs from ``HEAD``, compared through a fresh index of
``HEAD``: ``git status`` on the checkout's own index trusts it for a file marked
``--skip-worktree`` or ``--assume-unchanged``.
"""

import os
import subprocess
import tempfile
from pathlib import Path

from claimbook import environment
from claimbook.errors import EnvironmentMismatchError
from claimbook.pipeline.checkout import foreign_engine

COMMIT_VARIABLE = "TRAINABLE_BUILD_COMMIT"
DATE_VARIABLE = "TRAINABLE_BUILD_DATE"


def git(root: str | Path, *arguments: str, index: str | None = None) -> bytes | None:
    """``git -C root ARGUMENTS``'s output (``index``: the index file), or None if it fails."""
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
    """The files under ``root`` whose content on disk is not ``HEAD``'s, untracked ones
    included, sorted (submodules not looked into); None outside a work tree with a commit."""
    with tempfile.TemporaryDirectory() as folder:
        index = str(Path(folder) / "index")
        if git(root, "read-tree", "HEAD", index=index) is None:
            return None
        arguments = ("status", "--porcelain", "-z", "--ignore-submodules", "--", ".")
        listing = git(root, *arguments, index=index)
    if listing is None:
        return None
    return sorted(os.fsdecode(entry[3:]) for entry in listing.split(b"\0") if entry)


def build_stamp(srcdir: str, environ=os.environ) -> dict[str, str]:
    """``{"commit", "date", "dirty"}`` of the tree at ``srcdir`` (the variables override git),
    with ``environment`` (how distributions or Python differ from the lock) and ``engine``
    (another checkout's engine running) when the book is not built in its own environment."""
    found = (git(srcdir, "log", "-1", "--format=%h %cs") or b"").decode().split()
    commit, date = found if len(found) == 2 else ("unknown", "unknown")
    dirty = COMMIT_VARIABLE not in environ and bool(uncommitted_files(srcdir))
    stamp = {
        "commit": environ.get(COMMIT_VARIABLE) or commit,
        "date": environ.get(DATE_VARIABLE) or date,
        "dirty": "uncommitted changes" if dirty else "",
    }
    try:
        differences = environment.differences(srcdir)
    except EnvironmentMismatchError as error:  # an unreadable lock: said as it is
        differences = [str(error)]
    if differences:
        stamp["environment"] = "; ".join(differences)
    if (engine := foreign_engine(srcdir)) is not None:
        stamp["engine"] = str(engine)
    return stamp
