"""``python -m claimbook claims list | verify [ID ...] [--check-artifacts] | compute ID ... |
show ID`` and ``repin``. Exit status 1: a claim failed (or an artifact is missing, stale or
wrong); 2, with one line: an unknown id, a bad registry file, an OSError.
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

from claimbook import cache, claims, paths, sources
from claimbook.atomic import write_bytes_atomically
from claimbook.claims.judgement import check_artifact
from claimbook.claims.store import parse_artifact
from claimbook.errors import (
    ChapterSourceError,
    ClaimError,
    RegistryError,
    TamperedArtifactError,
    UnknownClaimError,
)
from claimbook.failures import failure_line
from claimbook.text import one_line

# A pin is a version: release numbers, then optionally a pre/post/local part (PEP 440 style).
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:[.+-]?[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m claimbook", description="Claims of the Trainable book."
    )
    parser.add_argument("--registry", type=Path, help="registry directory (default: claims/)")
    parser.add_argument(
        "--artifacts", type=Path, help="claim artifacts directory (default: artifacts/claims/)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    actions = commands.add_parser("claims", help="list, verify or show claims").add_subparsers(
        dest="action", required=True
    )
    actions.add_parser("list", help="every claim with its state")
    verify = actions.add_parser("verify", help="recompute claims and write their artifacts")
    verify.add_argument("ids", nargs="*", metavar="ID", help="claim ids (default: all)")
    verify.add_argument(
        "--check-artifacts",
        action="store_true",
        help="recompute and compare with the artifacts on disk instead of writing them",
    )
    compute = actions.add_parser(
        "compute", help="compute claims and write their artifacts (the build runs this)"
    )
    compute.add_argument("ids", nargs="+", metavar="ID", help="claim ids")
    actions.add_parser("show", help="a claim's registry entry and its state").add_argument(
        "id", metavar="ID"
    )
    commands.add_parser("repin", help="re-pin every chapter, re-verify claims").add_argument(
        "--chapters", type=Path, help="chapters directory (default: chapters/)"
    )
    return parser


def _known(options, ids) -> list[str]:
    """``ids`` (default: every claim), each refused when unknown before anything is computed."""
    ids = ids or claims.list_claims(options.registry)
    for claim_id in ids:
        claims.load_claim(claim_id, registry_dir=options.registry)
    return ids


def _list(options, folders) -> int:
    for claim_id in claims.list_claims(options.registry):
        claim = claims.load_claim(claim_id, registry_dir=options.registry)
        state = claims.judge(claim_id, **folders).state
        print(f"{claim_id}  [{state}]  chapter {claim.chapter}: {claim.statement}")
    return 0


def _verify(options, folders) -> int:
    failures = 0
    for claim_id in _known(options, options.ids):
        try:
            if options.check_artifacts:
                check_artifact(claim_id, **folders)
                print(f"{claim_id}: artifact matches a fresh recomputation")
            else:
                claims.verify_claim(claim_id, claims.harness_pin(), **folders, strict=True)
                print(f"{claim_id}: {claims.judge(claim_id, **folders).state}")
        except ClaimError as exc:
            failures += 1
            label = type(exc).__name__ if options.check_artifacts else "failed"
            print(f"{claim_id}: {label}: {one_line(exc)}")
    return 1 if failures else 0


def _compute(options, folders) -> int:
    """Compute each claim and write its artifact (a failed claim is not an error); print
    ``{"start": id}`` before each, so that the build times it, and ``{"id", "seconds"}`` after."""
    for claim_id in _known(options, options.ids):
        print(json.dumps({"start": claim_id}), flush=True)
        started = time.perf_counter()
        claims.verify_claim(claim_id, claims.harness_pin(), **folders)
        seconds = round(time.perf_counter() - started, 3)
        print(json.dumps({"id": claim_id, "seconds": seconds}), flush=True)
    return 0


def _show(options, folders) -> int:
    claim = claims.load_claim(options.id, registry_dir=options.registry)
    judgement = claims.judge(claim.id, **folders)
    print(f"# {claim.path}")
    print(claim.path.read_text(encoding="utf-8").rstrip("\n"))
    print(f"# seed: {claim.shown_contract['seed']}")
    print(f"# artifact: {claims.artifact_path(claim.id, options.artifacts)}")
    print(f"# state: {judgement.state} ({judgement.reason})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); the exit status."""
    options = _parser().parse_args(argv)
    cache.reset()  # each command is a build of its own: it reads the files as they are now
    folders = {"registry_dir": options.registry, "artifacts_dir": options.artifacts}
    try:
        if options.command == "repin":
            return repin(options.chapters, **folders)
        handlers = {"list": _list, "verify": _verify, "compute": _compute, "show": _show}
        return handlers[options.action](options, folders)
    except (UnknownClaimError, RegistryError) as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # read-only directory, a directory where a file should be, ...
        doing = "computing claims" if options.command == "claims" else "re-pinning"
        print("error: " + failure_line(exc, doing).removeprefix("make: "), file=sys.stderr)
        return 2


def _reverified(claim_id: str, pin: str, folders) -> tuple[bool, str]:
    """Re-verify one claim: (whether it held, the line saying how its result moved)."""
    path = claims.artifact_path(claim_id, folders["artifacts_dir"])
    try:
        before = claims.flatten(parse_artifact(path.read_bytes(), path)["result"])
    except (TamperedArtifactError, OSError):  # none, or unreadable
        before = None
    try:
        artifact = claims.verify_claim(claim_id, pin, **folders)
    except ClaimError as exc:  # a malformed registry file: report it, re-pin nothing
        return False, f"{claim_id}: failed: {exc}"
    status = artifact["status"]
    if status not in ("verified", "refuted"):
        return False, f"{claim_id}: failed: " + "; ".join(claims.failure_summary(artifact))
    if before is None:
        return True, f"{claim_id}: {status} (no previous artifact to compare)"
    after = claims.flatten(artifact["result"])
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
    """``repin``: re-verify every claim, printing a line each; only if all held (verified, or
    refuted as registered), set the pin of every chapter (``chapters/*.md``) that has one to
    the running harness version, a line each. Exit status 1 when a claim failed, else 0."""
    pin = claims.harness_pin()
    folders = {"registry_dir": registry_dir, "artifacts_dir": artifacts_dir}
    held = True
    for claim_id in claims.list_claims(registry_dir):
        ok, line = _reverified(claim_id, pin, folders)
        held = held and ok
        print(line)
    if not held:
        print("a claim failed: no chapter was re-pinned; fix it (or its registry entry) first")
        return 1
    folder = Path(chapters_dir) if chapters_dir is not None else paths.CHAPTERS_DIR
    pinned = False
    for chapter in sorted(folder.glob("*.md")):
        old = sources.read_chapter(chapter).pin
        if old is not None:
            rewrite_pin(chapter, pin)
            pinned = True
            print(f"{chapter}: " + ("already pinned" if old == pin else f"pin {old} -> {pin}"))
    if not pinned:
        print("no chapter holds a pin line")
    return 0


def rewrite_pin(path: str | Path, new_pin: str) -> bool:
    """Set the chapter's ``pin = "..."`` literal to ``new_pin``, in the file's own bytes,
    atomically; True if the file changed. :class:`ChapterSourceError` if ``new_pin`` is not a
    version, or the parameters cell has no pin, or its line is not found exactly once."""
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
