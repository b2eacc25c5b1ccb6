"""``verify_claim``: a registered claim's artifact: the build's, or recomputed here.

Who computes
------------
During a build, claims are computed by the engine in processes of its own
(:mod:`claimbook.pipeline.claim_runs`), before any chapter runs. A chapter's kernel is then
started with the build's record of those artifacts (:mod:`claimbook.claims.record`), and
``verify_claim`` there computes nothing and writes nothing: it returns the artifact the
build recorded, so nothing a chapter does can change a claim's outcome. When no build is
running (a reader in Binder or Jupyter, ``python -m claimbook claims verify``), it computes
the claim in the running process, writes the artifact, and its status line says so.

The pin
-------
A chapter's literal ``pin = "..."`` is the harness *version* (its API) the chapter was
written against, e.g. ``pin = "0.2.0"``. ``verify_claim(claim_id, expected_harness=pin)``
refuses another version (:class:`StalePinError`, naming ``make repin``) before computing
anything. Whether a claim's *artifact* is current is decided by its key, not by the pin
(see :mod:`claimbook.claims.keys`).

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as scratch:
...     claim = verify_claim("c15-invariance-001", harness_pin(), artifacts_dir=scratch)
>>> claim["status"], claim["result"]["centered_jacobian_rank"]
('verified', 2)
>>> claim_status_line(claim)
'claim c15-invariance-001: verified (computed in this kernel)'
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

__all__ = ["ComputedHere", "claim_status_line", "compute_artifact", "harness_pin", "verify_claim"]


class ComputedHere(dict):
    """An artifact computed in the calling process (not by a build): a dict that says so."""


def harness_pin() -> str:
    """The pin a chapter holds when it is current: the harness version, ``__version__``.

    Examples
    --------
    >>> from trainable_harness import __version__
    >>> harness_pin() == __version__
    True
    """
    return instruments.version()


def _coverage_message(artifact: Mapping, claim) -> str | None:
    """Name registry/witness mismatches: fields without expectation, expectations without field."""
    comparisons = artifact["comparisons"]
    unexpected = sorted(f for f, r in comparisons.items() if r["expected"] is None)
    absent = sorted(f for f, r in comparisons.items() if r["got"] is None)
    if not unexpected and not absent:
        return None
    parts = []
    if unexpected:
        parts.append(f"result fields without an expectation: {', '.join(unexpected)}")
    if absent:
        parts.append(
            f"expectations naming fields the witness does not return: {', '.join(absent)}"
        )
    return f"{claim.path}: field expect does not match {claim.compute}: " + "; ".join(parts)


def compute_artifact(claim) -> dict:
    """Run ``claim``'s computation in this process and return its artifact; write nothing.

    The one place a computation becomes an artifact (its comparisons, status, key and this
    machine's provenance): :func:`verify_claim` writes what it returns, and
    :mod:`claimbook.claims.mutate` judges it under a perturbation.
    """
    outcome = run_computation(claim)
    return build_artifact(
        claim,
        outcome.results,
        error=outcome.error,
        key=claim_key(claim),
        provenance=provenance(),
    )


def verify_claim(
    claim_id: str,
    expected_harness: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
    strict: bool = False,
) -> dict:
    """A registered claim's artifact: the running build's, or computed here and written.

    In a kernel a build started (see the module doc) the artifact the build computed is
    returned, after the id and the pin are checked; nothing is computed or written.
    Otherwise the claim is recomputed, compared with its registry, and its artifact
    written; the returned mapping is then a :class:`ComputedHere`.

    Parameters
    ----------
    claim_id : str
        The claim's id.
    expected_harness : str
        The pin the caller was written against (a chapter's ``pin`` literal): the harness
        version. Must equal :func:`harness_pin`.
    registry_dir, artifacts_dir : path, optional
        Default to ``claims/`` and ``artifacts/claims/`` of the repository.
    strict : bool
        Raise :class:`ClaimFailedError` (or :class:`RegistryError` when the computation's
        fields and the registry's expectations do not match one to one) after writing a
        failed artifact. By default a failure is recorded and returned, so a chapter
        finishes and the page shows the failed badge.

    Returns
    -------
    dict
        The artifact (see :mod:`claimbook.claims.store`), with ``status``
        ``"verified"``, ``"refuted"`` or ``"failed"``; a computation that raised is recorded
        as failed with its ``error`` text.

    Raises
    ------
    UnknownClaimError, RegistryError
        For an unknown id or a malformed registry file; nothing is computed.
    StalePinError
        If ``expected_harness`` is not the running harness's version; nothing is computed.
    ClaimError, TamperedArtifactError
        In a build's kernel: the chapter's source does not name the claim literally, or the
        artifact on disk is not the one the build recorded (see
        :func:`claimbook.claims.record.recorded_artifact`).
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    current = harness_pin()
    if expected_harness != current:
        raise StalePinError(
            f"claim {claim.id} was asked for harness {str(expected_harness)[:80]!r}, but the "
            f"running harness is {current!r}; run `make repin` to re-pin every chapter (it "
            "re-verifies the claims first and reports which results changed)"
        )
    if build_is_running():
        artifact = recorded_artifact(claim.id, artifacts_dir)
        if strict and artifact["status"] == "failed":
            raise ClaimFailedError(
                f"claim {claim.id} failed ({claim.compute}):\n  "
                + "\n  ".join(failure_summary(artifact))
            )
        return artifact
    artifact = compute_artifact(claim)
    path = artifact_path(claim.id, artifacts_dir)
    write_artifact(path, artifact)
    if strict and artifact["status"] == "failed":
        coverage = _coverage_message(artifact, claim) if artifact["error"] is None else None
        if coverage is not None:
            raise RegistryError(coverage)
        raise ClaimFailedError(
            f"claim {claim.id} failed ({claim.compute}); artifact written with status failed "
            f"to {shown(path)}:\n  " + "\n  ".join(failure_summary(artifact))
        )
    return ComputedHere(artifact)


def claim_status_line(artifact: Mapping) -> str:
    """What a chapter prints after verifying: the state the artifact records.

    ``"claim <id>: verified"``, ``"claim <id>: refuted"``, or
    ``"claim <id>: failed: <first failure line>"`` (see :func:`failure_summary`); an
    artifact computed in the calling process (:class:`ComputedHere`) adds
    ``" (computed in this kernel)"``.

    Examples
    --------
    >>> claim_status_line({"id": "c0-toy-001", "status": "refuted"})
    'claim c0-toy-001: refuted'
    >>> claim_status_line({"id": "c0-toy-001", "status": "failed", "error": "OSError: gone"})
    'claim c0-toy-001: failed: c0-toy-001 error: OSError: gone'
    """
    status = artifact["status"]
    line = f"claim {artifact['id']}: {status}"
    if status == "failed":
        failures = failure_summary(artifact)
        if failures:
            line += f": {failures[0]}"
    if isinstance(artifact, ComputedHere):
        line += " (computed in this kernel)"
    return line
