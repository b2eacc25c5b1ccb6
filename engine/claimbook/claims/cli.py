"""The claims part of the command line: ``python -m claimbook claims ...`` and ``... repin``.

::

    claims list                         every claim with its state and statement
    claims verify [ID ...]              recompute, write artifacts, one line per claim
    claims verify --check-artifacts     recompute and compare with the artifacts on disk
    claims compute ID ...               what the build runs in a fresh process: compute,
                                        write artifacts, one JSON line {id, seconds} each
    claims show ID                      the registry entry and the artifact's state
    repin [--chapters DIR]              re-verify every claim, report changes, then re-pin

``verify`` uses the running harness's version (it is not a chapter) and exits with status 1
if any claim fails, or (with ``--check-artifacts``) if any artifact is missing, stale, or
disagrees with a fresh recomputation. ``repin`` exits with status 1, rewriting no chapter,
if any claim fails. Unknown ids, malformed registry files and filesystem problems (a
read-only artifacts directory, a directory where a file should be) exit with status 2 and
a one-line message. ``--registry`` and ``--artifacts`` point at other directories (used by
tests).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from claimbook import cache, claims
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

    claims_parser = commands.add_parser("claims", help="list, verify or show claims")
    actions = claims_parser.add_subparsers(dest="action", required=True)
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
    show = actions.add_parser("show", help="a claim's registry entry and its state")
    show.add_argument("id", metavar="ID")

    repin = commands.add_parser("repin", help="re-pin every chapter and re-verify every claim")
    repin.add_argument("--chapters", type=Path, help="chapters directory (default: chapters/)")
    return parser


def _list(options) -> int:
    for claim_id in claims.list_claims(options.registry):
        claim = claims.load_claim(claim_id, registry_dir=options.registry)
        judgement = claims.judge(
            claim_id, registry_dir=options.registry, artifacts_dir=options.artifacts
        )
        print(f"{claim_id}  [{judgement.state}]  chapter {claim.chapter}: {claim.statement}")
    return 0


def _verify(options) -> int:
    ids = options.ids or claims.list_claims(options.registry)
    for claim_id in ids:  # refuse unknown ids before computing anything
        claims.load_claim(claim_id, registry_dir=options.registry)
    pin = claims.harness_pin()
    failures = 0
    for claim_id in ids:
        try:
            if options.check_artifacts:
                claims.check_artifact(
                    claim_id, registry_dir=options.registry, artifacts_dir=options.artifacts
                )
                print(f"{claim_id}: artifact matches a fresh recomputation")
            else:
                claims.verify_claim(
                    claim_id,
                    pin,
                    registry_dir=options.registry,
                    artifacts_dir=options.artifacts,
                    strict=True,
                )
                judgement = claims.judge(
                    claim_id, registry_dir=options.registry, artifacts_dir=options.artifacts
                )
                print(f"{claim_id}: {judgement.state}")
        except ClaimError as exc:
            failures += 1
            label = "failed" if not options.check_artifacts else type(exc).__name__
            print(f"{claim_id}: {label}: {one_line(exc)}")
    return 1 if failures else 0


def _compute(options) -> int:
    """Compute each claim in this process and write its artifact; a JSON line per claim.

    The build (:mod:`claimbook.pipeline.claim_runs`) runs this in a fresh interpreter, which
    imports only the engine, the harness and the registry entries it is given. Before each
    claim, a JSON line ``{"start": id}``; after it, ``{"id": id, "seconds": s}``. A failed
    claim is an artifact with status failed, not an error of this command.
    """
    for claim_id in options.ids:  # refuse unknown ids before computing anything
        claims.load_claim(claim_id, registry_dir=options.registry)
    pin = claims.harness_pin()
    for claim_id in options.ids:
        # Said first, so that the build times each claim (trainable_claim_timeout).
        print(json.dumps({"start": claim_id}), flush=True)
        started = time.perf_counter()
        claims.verify_claim(
            claim_id, pin, registry_dir=options.registry, artifacts_dir=options.artifacts
        )
        seconds = time.perf_counter() - started
        print(json.dumps({"id": claim_id, "seconds": round(seconds, 3)}), flush=True)
    return 0


def _show(options) -> int:
    claim = claims.load_claim(options.id, registry_dir=options.registry)
    judgement = claims.judge(
        claim.id, registry_dir=options.registry, artifacts_dir=options.artifacts
    )
    print(f"# {claim.path}")
    print(claim.path.read_text(encoding="utf-8").rstrip("\n"))
    print(f"# seed: {claims.display_contract(claim.id, registry_dir=options.registry)['seed']}")
    print(f"# artifact: {claims.artifact_path(claim.id, options.artifacts)}")
    print(f"# state: {judgement.state} ({judgement.reason})")
    return 0


def _repin(options) -> int:
    report = claims.repin.repin(
        options.chapters, registry_dir=options.registry, artifacts_dir=options.artifacts
    )
    for claim in report.claims:
        if claim.status not in claims.repin.SUCCESS:
            print(f"{claim.id}: failed: {claim.message}")
        elif not claim.had_artifact:
            print(f"{claim.id}: {claim.status} (no previous artifact to compare)")
        elif claim.changes:
            print(f"{claim.id}: {claim.status}; result changed: " + "; ".join(claim.changes))
        else:
            print(f"{claim.id}: {claim.status}; result unchanged")
    if not report.all_verified:
        print("a claim failed: no chapter was re-pinned; fix it (or its registry entry) first")
        return 1
    for update in report.pin_updates:
        verb = f"pin {update.old_pin} -> {update.new_pin}" if update.changed else "already pinned"
        print(f"{update.path}: {verb}")
    if not report.pin_updates:
        print("no chapter holds a pin line")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Examples
    --------
    An unknown id is refused before anything is computed (the message goes to stderr):

    >>> main(["claims", "verify", "c15-invariance-01"])
    2
    """
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
