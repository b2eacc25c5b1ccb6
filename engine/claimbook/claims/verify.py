"""``verify_claim``: a registered claim's artifact: the build's, or recomputed here.

In a kernel a build started it returns the artifact the build recorded
(:mod:`claimbook.claims.record`); elsewhere (Jupyter, ``claims verify``) it computes the claim
and writes the artifact. A chapter's ``pin`` other than the harness version is refused first.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from claimbook import instruments
from claimbook.atomic import write_text_atomically
from claimbook.claims.computations import run_computation
from claimbook.claims.keys import claim_key
from claimbook.claims.record import build_is_running, recorded_artifact
from claimbook.claims.registry import load_claim
from claimbook.claims.store import artifact_text, build_artifact, failure_summary, provenance
from claimbook.errors import ClaimFailedError, RegistryError, StalePinError
from claimbook.paths import artifact_path, shown

_MISMATCHES = {  # a comparison's missing side: what it says of the registry and computation
    "expected": "result fields without an expectation",
    "got": "expectations naming fields the witness does not return",
}


class ComputedHere(dict):
    """An artifact computed in the calling process, not by a build."""


def harness_pin() -> str:
    """The pin of a current chapter: the harness version."""
    return instruments.version()


def _coverage_message(artifact: Mapping, claim) -> str | None:
    """The registry and computation mismatches of a failed artifact, or None."""
    parts = []
    for missing, said in _MISMATCHES.items():
        fields = sorted(f for f, r in artifact["comparisons"].items() if r[missing] is None)
        if fields:
            parts.append(f"{said}: {', '.join(fields)}")
    if not parts:
        return None
    return f"{claim.path}: field expect does not match {claim.compute}: " + "; ".join(parts)


def compute_artifact(claim) -> dict:
    """``claim``'s artifact computed here, with this machine's provenance; writes nothing."""
    outcome = run_computation(claim)
    return build_artifact(
        claim, outcome.results, error=outcome.error, key=claim_key(claim), provenance=provenance()
    )


def verify_claim(
    claim_id: str,
    expected_harness: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
    strict: bool = False,
) -> dict:
    """A claim's artifact (status verified, refuted or failed): the running build's, or
    computed here and written (a :class:`ComputedHere`).

    ``expected_harness`` (a chapter's ``pin``) must equal :func:`harness_pin`, else
    :class:`StalePinError`; an unknown id or malformed registry file raises first. A failure
    is returned, unless ``strict``: then :class:`ClaimFailedError` (after writing), or
    :class:`RegistryError` when the fields and expectations do not match one to one.
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    current = harness_pin()
    if expected_harness != current:
        raise StalePinError(
            f"claim {claim.id} was asked for harness {str(expected_harness)[:80]!r}, but the "
            f"running harness is {current!r}; run `make repin` to re-pin every chapter (it "
            "re-verifies the claims first and reports which results changed)"
        )
    failed = f"claim {claim.id} failed ({claim.compute})"
    if build_is_running():
        artifact = recorded_artifact(claim.id, artifacts_dir)
        if strict and artifact["status"] == "failed":
            raise ClaimFailedError(f"{failed}:\n  " + "\n  ".join(failure_summary(artifact)))
        return artifact
    artifact = compute_artifact(claim)
    path = artifact_path(claim.id, artifacts_dir)
    write_text_atomically(path, artifact_text(artifact))
    if strict and artifact["status"] == "failed":
        coverage = _coverage_message(artifact, claim) if artifact["error"] is None else None
        if coverage is not None:
            raise RegistryError(coverage)
        raise ClaimFailedError(
            f"{failed}; artifact written with status failed to {shown(path)}:\n  "
            + "\n  ".join(failure_summary(artifact))
        )
    return ComputedHere(artifact)


def claim_status_line(artifact: Mapping) -> str:
    """``"claim <id>: <status>"``, a failure's first line, and ``" (computed in this
    kernel)"`` for a :class:`ComputedHere`: what a chapter prints after verifying."""
    line = f"claim {artifact['id']}: {artifact['status']}"
    failures = failure_summary(artifact) if artifact["status"] == "failed" else []
    if failures:
        line += f": {failures[0]}"
    if isinstance(artifact, ComputedHere):
        line += " (computed in this kernel)"
    return line
