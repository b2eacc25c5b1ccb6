"""``python -m claimbook claims list | verify [ID ...] [--check-artifacts] | compute ID ... |
show ID`` and ``repin``. ``compute`` (the build's) prints ``{"start": id}`` before each claim
and ``{"id": id, "seconds": s}`` after. Exit status 1: a claim failed (or an artifact is
missing, stale or wrong); 2, with one line: an unknown id, a bad registry file, an OSError.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from claimbook import cache, claims
from claimbook.claims import repin
from claimbook.claims.judgement import check_artifact
from claimbook.errors import ClaimError, RegistryError, UnknownClaimError
from claimbook.failures import failure_line
from claimbook.text import one_line


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


def _judge(options, claim_id: str) -> claims.Judgement:
    return claims.judge(claim_id, registry_dir=options.registry, artifacts_dir=options.artifacts)


def _known(options, ids) -> list[str]:
    """``ids`` (default: every claim), each refused when unknown before anything is computed."""
    ids = ids or claims.list_claims(options.registry)
    for claim_id in ids:
        claims.load_claim(claim_id, registry_dir=options.registry)
    return ids


def _list(options) -> int:
    for claim_id in claims.list_claims(options.registry):
        claim = claims.load_claim(claim_id, registry_dir=options.registry)
        state = _judge(options, claim_id).state
        print(f"{claim_id}  [{state}]  chapter {claim.chapter}: {claim.statement}")
    return 0


def _verify(options) -> int:
    failures = 0
    folders = {"registry_dir": options.registry, "artifacts_dir": options.artifacts}
    for claim_id in _known(options, options.ids):
        try:
            if options.check_artifacts:
                check_artifact(claim_id, **folders)
                print(f"{claim_id}: artifact matches a fresh recomputation")
            else:
                claims.verify_claim(claim_id, claims.harness_pin(), **folders, strict=True)
                print(f"{claim_id}: {_judge(options, claim_id).state}")
        except ClaimError as exc:
            failures += 1
            label = type(exc).__name__ if options.check_artifacts else "failed"
            print(f"{claim_id}: {label}: {one_line(exc)}")
    return 1 if failures else 0


def _compute(options) -> int:
    """Compute each claim here and write its artifact (a failed claim is not an error)."""
    for claim_id in _known(options, options.ids):
        # Said first, so that the build times each claim (trainable_claim_timeout).
        print(json.dumps({"start": claim_id}), flush=True)
        started = time.perf_counter()
        claims.verify_claim(
            claim_id,
            claims.harness_pin(),
            registry_dir=options.registry,
            artifacts_dir=options.artifacts,
        )
        seconds = round(time.perf_counter() - started, 3)
        print(json.dumps({"id": claim_id, "seconds": seconds}), flush=True)
    return 0


def _show(options) -> int:
    claim = claims.load_claim(options.id, registry_dir=options.registry)
    judgement = _judge(options, claim.id)
    print(f"# {claim.path}")
    print(claim.path.read_text(encoding="utf-8").rstrip("\n"))
    print(f"# seed: {claim.shown_contract['seed']}")
    print(f"# artifact: {claims.artifact_path(claim.id, options.artifacts)}")
    print(f"# state: {judgement.state} ({judgement.reason})")
    return 0


def _repin(options) -> int:
    return repin.repin(
        options.chapters, registry_dir=options.registry, artifacts_dir=options.artifacts
    )


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); the exit status."""
    options = _parser().parse_args(argv)
    cache.reset()  # each command is a build of its own: it reads the files as they are now
    handlers = {"list": _list, "verify": _verify, "compute": _compute, "show": _show}
    handler = handlers[options.action] if options.command == "claims" else _repin
    try:
        return handler(options)
    except (UnknownClaimError, RegistryError) as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # read-only directory, a directory where a file should be, ...
        doing = "computing claims" if options.command == "claims" else "re-pinning"
        print("error: " + failure_line(exc, doing).removeprefix("make: "), file=sys.stderr)
        return 2
