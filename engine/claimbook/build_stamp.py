"""The build's stamp: the commit, date and "uncommitted changes" flag every page's footer
names, and how the environment building the book is not its own.

One definition, read by the site's footer (:mod:`claimbook.extensions.book_site`), the site
key (:mod:`claimbook.pipeline.site_key`), the CI matrix and the printed book.
"""

from __future__ import annotations

import os

from claimbook import environment, worktree
from claimbook.errors import EnvironmentMismatchError
from claimbook.pipeline.checkout import foreign_engine

__all__ = ["COMMIT_VARIABLE", "DATE_VARIABLE", "build_stamp", "environment_notes"]

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
    """How the environment building the book at ``srcdir`` is not its own, for the footer.

    ``{"environment": "numpy 2.3.5 installed, 2.4.6 locked; ..."}`` when the installed
    distributions or Python differ from the lock, ``{"engine": "<path>"}`` when the engine
    running is not the one the book holds; empty when neither (a build refuses both unless
    the author allowed them).
    """
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
