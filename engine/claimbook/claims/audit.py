"""Checking an artifact against a fresh recomputation (``claims verify --check-artifacts``).

:func:`claimbook.claims.judgement.judge` decides what a page shows from the artifact alone;
:func:`check_artifact` recomputes the claim and compares every field, without writing.

Examples
--------
>>> import tempfile
>>> from claimbook.errors import MissingArtifactError
>>> with tempfile.TemporaryDirectory() as scratch:
...     try:
...         check_artifact("c15-invariance-001", artifacts_dir=scratch)
...     except MissingArtifactError as error:
...         print(str(error).split(";")[1].strip())
run `python -m claimbook claims verify` to write it
"""

from __future__ import annotations

from pathlib import Path

from claimbook import instruments
from claimbook.claims.computations import run_computation
from claimbook.claims.judgement import staleness
from claimbook.claims.keys import claim_key
from claimbook.claims.registry import load_claim
from claimbook.claims.store import build_artifact, differences, read_artifact
from claimbook.errors import MissingArtifactError, StaleArtifactError, TamperedArtifactError
from claimbook.paths import artifact_path, shown

__all__ = ["check_artifact"]

_MACHINE_FIELDS = ("python", "numpy", "platform", "machine", "environment_mismatch")


def check_artifact(
    claim_id: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> dict:
    """Recompute a claim and compare it with its artifact on disk, without writing anything.

    Returns
    -------
    dict
        The stored artifact, when it matches the recomputation in every field except the
        machine description in ``provenance`` (python, numpy, platform, machine,
        environment_mismatch).

    Raises
    ------
    MissingArtifactError
        If there is no artifact.
    StaleArtifactError
        If it is stale (see :func:`claimbook.claims.judgement.judge`).
    TamperedArtifactError
        If it is unreadable, or any field differs from the recomputation; the message lists
        the fields.
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    path = artifact_path(claim.id, artifacts_dir)
    if not path.is_file():
        raise MissingArtifactError(
            f"claim {claim.id} has no artifact at {shown(path)}; run "
            "`python -m claimbook claims verify` to write it"
        )
    stored = read_artifact(path)
    stale = staleness(claim, stored)
    if stale is not None:
        raise StaleArtifactError(
            f"{shown(path)}: {stale}; run `python -m claimbook claims verify` to rewrite it"
        )
    outcome = run_computation(claim)
    machine = {
        field: stored["provenance"].get(field)
        for field in _MACHINE_FIELDS
        if field in stored["provenance"]
    }
    recomputed = build_artifact(
        claim,
        outcome.results,
        error=outcome.error,
        key=claim_key(claim),
        provenance={"version": instruments.version(), **machine},
    )
    found = differences(stored, recomputed)
    if found:
        raise TamperedArtifactError(
            f"{shown(path)} disagrees with a fresh recomputation of {claim.id}: "
            + "; ".join(found)
        )
    return stored
