"""``repin``: the one command after an intended change (``make repin``).

It re-verifies every claim and reports which result fields changed against the artifacts
on disk; only when every claim verified (or was refuted as registered) does it rewrite each
chapter's ``pin = "..."`` to the running harness version. Otherwise no chapter is touched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

from claimbook import paths, sources
from claimbook.atomic import write_bytes_atomically
from claimbook.claims.computations import flatten
from claimbook.claims.registry import list_claims
from claimbook.claims.store import failure_summary, read_artifact
from claimbook.claims.verify import harness_pin, verify_claim
from claimbook.errors import ChapterSourceError, ClaimError, TamperedArtifactError
from claimbook.paths import artifact_path

SUCCESS = ("verified", "refuted")
# A pin is a version: release numbers, then optionally a pre/post/local part (PEP 440 style).
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:[.+-]?[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?")


class PinUpdate(NamedTuple):
    """One chapter's pin before and after re-pinning."""

    path: Path
    old_pin: str
    new_pin: str

    @property
    def changed(self) -> bool:
        return self.old_pin != self.new_pin


class ClaimReport(NamedTuple):
    """One claim after re-verification: its status and which result fields moved."""

    id: str
    status: str
    changes: tuple[str, ...]
    had_artifact: bool
    message: str = ""


class RepinReport(NamedTuple):
    """What :func:`repin` did: each claim's re-verification, then the pin updates (if any)."""

    claims: tuple[ClaimReport, ...]
    pin_updates: tuple[PinUpdate, ...]

    @property
    def all_verified(self) -> bool:
        """True when every claim verified or was refuted as registered."""
        return all(report.status in SUCCESS for report in self.claims)


def _result_changes(old_result, new_result) -> tuple[str, ...]:
    """``"field: old -> new"`` for each result field that changed (as JSON text)."""
    old, new = flatten(old_result), flatten(new_result)
    return tuple(
        f"{field}: {repr(old.get(field, '(absent)'))[:80]} -> "
        f"{repr(new.get(field, '(absent)'))[:80]}"
        for field in sorted(old.keys() | new.keys())
        if json.dumps(old.get(field)) != json.dumps(new.get(field))
    )


def repin(
    chapters_dir: str | Path | None = None,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> RepinReport:
    """Re-verify every claim, report whose results changed from those on disk, then (only
    if all held) re-pin every chapter (``chapters/*.md``) that has a pin."""
    pin = harness_pin()
    reports = []
    for claim_id in list_claims(registry_dir):
        path = artifact_path(claim_id, artifacts_dir)
        try:
            before = read_artifact(path)["result"] if path.is_file() else None
        except (TamperedArtifactError, OSError):
            before = None
        try:
            artifact = verify_claim(
                claim_id, pin, registry_dir=registry_dir, artifacts_dir=artifacts_dir
            )
        except ClaimError as exc:  # a malformed registry file: report it, re-pin nothing
            reports.append(ClaimReport(claim_id, "failed", (), before is not None, str(exc)))
            continue
        changes = () if before is None else _result_changes(before, artifact["result"])
        message = "; ".join(failure_summary(artifact))
        reports.append(
            ClaimReport(claim_id, artifact["status"], changes, before is not None, message)
        )
    if not all(report.status in SUCCESS for report in reports):
        return RepinReport(tuple(reports), ())
    folder = Path(chapters_dir) if chapters_dir is not None else paths.CHAPTERS_DIR
    updates = []
    for chapter in sorted(folder.glob("*.md")):
        old = sources.read_chapter(chapter).pin
        if old is not None:
            rewrite_pin(chapter, pin)
            updates.append(PinUpdate(chapter, old, pin))
    return RepinReport(tuple(reports), tuple(updates))


def rewrite_pin(path: str | Path, new_pin: str) -> bool:
    """Set the chapter's ``pin = "..."`` literal to ``new_pin``; True if the file changed.

    Only the line the parameters cell's syntax tree names is rewritten, in the file's own
    bytes, atomically. Raises :class:`ChapterSourceError` if ``new_pin`` is not a version
    (digits and dots, optionally a local part such as ``+f5d27de``), or the chapter has no
    pin, or its line is not found exactly once.
    """
    if not isinstance(new_pin, str) or not _VERSION.fullmatch(new_pin):
        raise ChapterSourceError(
            "rewrite_pin: parameter new_pin must be a version string such as '0.2.0', "
            f"got {str(new_pin)[:80]!r}"
        )
    path = Path(path)
    found = sources.read_chapter(path).pin_assignment()
    if found is None:
        raise ChapterSourceError(f'{path}: no `pin = "..."` in a cell tagged parameters')
    _index, old_pin, line = found
    if old_pin == new_pin:
        return False
    lines = path.read_bytes().decode("utf-8").splitlines(keepends=True)
    matches = [i for i, text in enumerate(lines) if text.rstrip("\r\n") == line]
    if len(matches) != 1:
        raise ChapterSourceError(
            f"{path}: the pin line {line.strip()!r} occurs {len(matches)} times as a whole "
            "line; expected exactly once"
        )
    lines[matches[0]] = lines[matches[0]].replace(f'"{old_pin}"', f'"{new_pin}"', 1)
    write_bytes_atomically(path, "".join(lines).encode("utf-8"))
    return True
