"""The build's stamp every page's footer names: commit, date, "uncommitted changes", and how
the environment building the book is not its own (read by the footer, the site key, the CI
matrix and the printed book)."""

from __future__ import annotations

import os

from claimbook import environment, worktree
from claimbook.errors import EnvironmentMismatchError
from claimbook.pipeline.checkout import foreign_engine

COMMIT_VARIABLE = "TRAINABLE_BUILD_COMMIT"
DATE_VARIABLE = "TRAINABLE_BUILD_DATE"


def build_stamp(srcdir: str, environ=os.environ) -> dict[str, str]:
    """``{"commit", "date", "dirty"}`` of the tree at ``srcdir`` (the variables override git),
    with ``environment`` (how distributions or Python differ from the lock) and ``engine``
    (another checkout's engine running) when the book is not built in its own environment."""
    found = (worktree.git(srcdir, "log", "-1", "--format=%h %cs") or b"").decode().split()
    commit, date = found if len(found) == 2 else ("unknown", "unknown")
    dirty = COMMIT_VARIABLE not in environ and worktree.uncommitted(srcdir)
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
