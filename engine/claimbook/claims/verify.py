"""``verify_claim``: a registered claim's artifact: the build's, or recomputed here.

In a chapter kernel a build started, the build computed the claims
(:mod:`claimbook.pipeline.claim_runs`) and ``verify_claim`` returns the artifact it recorded
(:mod:`claimbook.claims.record`), computing and writing nothing. Elsewhere (a reader in
Jupyter, ``claims verify``) it computes the claim here and writes the artifact. A chapter's
``pin = "..."`` is the harness version it was written against; another version is refused
before anything runs (whether an artifact is current is its key's business).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from claimbook import instruments
from claimbook.claims.computations import run_computation
from claimbook.claims.keys import claim_key
from claimbook.claims.record import build_is_running, recorded_artifact
from claimbook.claims.registry import load_claim
from claimbook.claims.store import build_artifact, failure_summary, provenance, write_artifact
from claimbook.errors import ClaimFailedError, RegistryError, StalePinError
from claimbook.paths import artifact_path, shown


class ComputedHere(dict):
    """An artifact computed in the calling process (not by a build): a dict that says so."""


def harness_pin() -> str:
    """The pin a chapter holds when it is current: the harness version, ``__version__``."""
    return instruments.version()


def _coverage_message(artifact: Mapping, claim) -> str | None:
    """The registry and computation mismatches of a failed artifact, or None."""
    records = artifact["comparisons"]
    unexpected = sorted(f for f, r in records.items() if r["expected"] is None)
    absent = sorted(f for f, r in records.items() if r["got"] is None)
    parts = []
    if unexpected:
        parts.append(f"result fields without an expectation: {', '.join(unexpected)}")
    if absent:
        parts.append(
            f"expectations naming fields the witness does not return: {', '.join(absent)}"
        )
    if not parts:
        return None
    return f"{claim.path}: field expect does not match {claim.compute}: " + "; ".join(parts)


def compute_artifact(claim) -> dict:
    """Run ``claim``'s computation here and return its artifact (this machine's provenance);
    write nothing."""
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
    """A registered claim's artifact: the running build's, or computed here and written
    (then a :class:`ComputedHere`), with status verified, refuted or failed.

    ``expected_harness`` (a chapter's ``pin``) must equal :func:`harness_pin`;
    ``registry_dir`` and ``artifacts_dir`` default to ``claims/`` and ``artifacts/claims/``.
    ``strict`` raises :class:`ClaimFailedError` on a failed artifact (after writing it), or
    :class:`RegistryError` when the computed fields and the expectations do not match one to
    one; by default a failure is returned, so a chapter finishes and shows a failed badge.

    Raises :class:`UnknownClaimError` or :class:`RegistryError` (an unknown id or a malformed
    registry file) and :class:`StalePinError` before computing anything; in a build's kernel,
    what :func:`claimbook.claims.record.recorded_artifact` raises.
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
    write_artifact(path, artifact)
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
    """What a chapter prints after verifying: ``"claim <id>: <status>"``, then for a failure
    its first line (:func:`failure_summary`), and ``" (computed in this kernel)"`` for a
    :class:`ComputedHere`."""
    line = f"claim {artifact['id']}: {artifact['status']}"
    failures = failure_summary(artifact) if artifact["status"] == "failed" else []
    if failures:
        line += f": {failures[0]}"
    if isinstance(artifact, ComputedHere):
        line += " (computed in this kernel)"
    return line
