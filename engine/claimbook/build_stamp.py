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


def _git(srcdir: str, *arguments: str) -> str | None:
    found = worktree.git(srcdir, *arguments)
    return found.decode("utf-8", "replace").strip() if found is not None else None


def build_stamp(srcdir: str, environ=os.environ) -> dict[str, str]:
    """``{"commit", "date", "dirty"}`` of the tree at ``srcdir`` (environment overrides git),
    and ``environment`` and ``engine`` when the book is not built in its own environment
    (:func:`environment_notes`)."""
    commit = environ.get(COMMIT_VARIABLE) or _git(srcdir, "rev-parse", "--short", "HEAD")
    date = environ.get(DATE_VARIABLE) or _git(srcdir, "log", "-1", "--format=%cs")
    if COMMIT_VARIABLE in environ:
        dirty = ""
    else:
        dirty = "uncommitted changes" if worktree.uncommitted(srcdir) else ""
    stamp = {"commit": commit or "unknown", "date": date or "unknown", "dirty": dirty}
    stamp.update(environment_notes(srcdir))
    return stamp


def environment_notes(srcdir: str) -> dict[str, str]:
    """``{"environment": <differences>}`` when distributions or Python differ from the lock,
    ``{"engine": <path>}`` when the engine running is another checkout's; else empty."""
    notes = {}
    try:
        found = environment.differences(srcdir)
    except EnvironmentMismatchError as error:  # an unreadable lock: said as it is
        found = [str(error)]
    if found:
        notes["environment"] = "; ".join(found)
    engine = foreign_engine(srcdir)
    if engine is not None:
        notes["engine"] = str(engine)
    return notes
