"""``repin`` (``make repin``): re-verify every claim, report which result fields changed
against the artifacts on disk, and only when every claim verified (or was refuted as
registered) rewrite each chapter's ``pin = "..."`` to the running harness version.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from claimbook import paths, sources
from claimbook.atomic import write_bytes_atomically
from claimbook.claims.computations import flatten
from claimbook.claims.registry import list_claims
from claimbook.claims.store import failure_summary, parse_artifact
from claimbook.claims.verify import harness_pin, verify_claim
from claimbook.errors import ChapterSourceError, ClaimError, TamperedArtifactError
from claimbook.paths import artifact_path

# A pin is a version: release numbers, then optionally a pre/post/local part (PEP 440 style).
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:[.+-]?[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?")


def _verified(claim_id: str, pin: str, registry_dir, artifacts_dir) -> tuple[bool, str]:
    """Re-verify one claim: (whether it held, the line saying how its result moved)."""
    path = artifact_path(claim_id, artifacts_dir)
    try:
        before = flatten(parse_artifact(path.read_bytes(), path)["result"])
    except (TamperedArtifactError, OSError):  # none, or unreadable
        before = None
    try:
        artifact = verify_claim(
            claim_id, pin, registry_dir=registry_dir, artifacts_dir=artifacts_dir
        )
    except ClaimError as exc:  # a malformed registry file: report it, re-pin nothing
        return False, f"{claim_id}: failed: {exc}"
    status = artifact["status"]
    if status not in ("verified", "refuted"):
        return False, f"{claim_id}: failed: " + "; ".join(failure_summary(artifact))
    if before is None:
        return True, f"{claim_id}: {status} (no previous artifact to compare)"
    after = flatten(artifact["result"])
    changes = [
        f"{field}: {repr(before.get(field, '(absent)'))[:80]} -> "
        f"{repr(after.get(field, '(absent)'))[:80]}"
        for field in sorted(before.keys() | after.keys())
        if json.dumps(before.get(field)) != json.dumps(after.get(field))
    ]
    if changes:
        return True, f"{claim_id}: {status}; result changed: " + "; ".join(changes)
    return True, f"{claim_id}: {status}; result unchanged"


def repin(
    chapters_dir: str | Path | None = None,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> int:
    """Re-verify every claim, printing a line each; only if all held, re-pin every chapter
    (``chapters/*.md``) that has a pin, a line each. Exit status 1 when a claim failed (no
    chapter touched), else 0."""
    pin = harness_pin()
    held = True
    for claim_id in list_claims(registry_dir):
        ok, line = _verified(claim_id, pin, registry_dir, artifacts_dir)
        held = held and ok
        print(line)
    if not held:
        print(
            "a claim failed: no chapter was re-pinned; fix it (or its registry entry) first",
        )
        return 1
    folder = Path(chapters_dir) if chapters_dir is not None else paths.CHAPTERS_DIR
    pinned = False
    for chapter in sorted(folder.glob("*.md")):
        old = sources.read_chapter(chapter).pin
        if old is not None:
            rewrite_pin(chapter, pin)
            pinned = True
            said = "already pinned" if old == pin else f"pin {old} -> {pin}"
            print(f"{chapter}: {said}")
    if not pinned:
        print("no chapter holds a pin line")
    return 0


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
