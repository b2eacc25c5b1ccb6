"""The claim records beside the claim pages, and ``claims.json`` at the site root.

For every claim the HTML build publishes ``claims/<id>.json``, its record, copied only when
it is a regular file the build wrote (a symlink in ``artifacts/`` is never followed, and is
reported; :func:`publishable_record`), and
``claims.json``: every claim described (:func:`~claimbook.extensions.claim_pages_model.describe`)
with what each state means, for machines. Sorted keys and no timestamps: an unchanged book
gives the same bytes, and a file whose bytes are unchanged is not written again.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from sphinx.util import logging

from claimbook import paths
from claimbook.claims.judgement import STATES
from claimbook.extensions import claim_pages_model as model
from claimbook.paths import artifact_path

__all__ = ["ledger_json", "publish", "publishable_record"]

logger = logging.getLogger(__name__)


def publishable_record(claim_id: str, artifacts_dir: str | Path | None = None) -> bytes | None:
    """The artifact's bytes if it is a regular file reached without following a symlink.

    The record published beside a claim's page is only ever this: a symlink in
    ``artifacts/`` (the file, its folder or the folder above) is never followed.
    """
    path = artifact_path(claim_id, artifacts_dir)
    if any(parent.is_symlink() for parent in (path.parent, path.parent.parent)):
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        with os.fdopen(descriptor, "rb") as handle:
            descriptor = -1
            return handle.read()
    finally:
        if descriptor >= 0:
            os.close(descriptor)


def ledger_json(described: list[dict]) -> str:
    """The text of ``claims.json``: every claim described, and what each state means."""
    ledger = {
        "claims": described,
        "states": {state: model.STATE_MEANINGS[state] for state in STATES},
    }
    return json.dumps(ledger, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def publish(outdir: Path, described: list[dict]) -> None:
    """Write the records and ``claims.json``; remove the files of claims no longer there."""
    pages = outdir / model.CLAIM_PAGES
    pages.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for info in described:
        source = paths.artifact_path(info["id"])
        data = publishable_record(info["id"]) if info["record"] else None
        if os.path.lexists(source) and data is None:
            logger.warning(
                "claim %s: %s is not a regular file in a real directory; it is not published",
                info["id"],
                paths.shown(source),
                location=paths.shown(source),
            )
        if data is not None:
            target = outdir / info["record"]
            wanted.add(target.name)
            if not target.is_file() or target.read_bytes() != data:
                target.unlink(missing_ok=True)
                target.write_bytes(data)
        wanted.add(Path(info["page"]).name)
    for stale in pages.iterdir():
        if stale.name not in wanted and (stale.is_symlink() or stale.is_file()):
            stale.unlink()
    text = ledger_json(described)
    target = outdir / model.LEDGER_JSON
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
