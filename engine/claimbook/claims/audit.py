"""Reading artifacts back: what a page may show, and checks against a fresh recomputation.

:func:`badge_state` judges an artifact without recomputing it:

- ``"not run"`` -- no artifact;
- ``"stale"`` -- written by another harness version, or its key is not the key of the
  functions it recorded under today's sources, registry file and lock (a function it ran
  was edited, its registry entry was edited, the lock changed);
- ``"failed"`` -- unreadable, status failed, or a stored field its own stored result does
  not support under the current registry (an edited file is shown as failed, never as
  verified);
- ``"refuted"`` -- the measurement contradicts the common account the claim registers;
- ``"verified"``.

:func:`state_fails_build` is True for failed, stale and not run. :func:`check_artifact`
goes further and recomputes.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as scratch:
...     badge_state("c15-invariance-001", artifacts_dir=scratch)[0]
'not run'
>>> state_fails_build("refuted"), state_fails_build("stale")
(False, True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from claimbook import instruments
from claimbook.claims.computations import normalize_result, run_computation
from claimbook.claims.keys import claim_key, current_claim_key
from claimbook.claims.registry import Claim, _field_name, load_claim
from claimbook.claims.store import (
    artifact_path,
    build_artifact,
    per_seed_results,
    read_artifact,
)
from claimbook.errors import (
    ClaimError,
    MissingArtifactError,
    StaleArtifactError,
    TamperedArtifactError,
    WitnessResultError,
)

__all__ = [
    "BADGE_STATES",
    "badge_state",
    "badge_summary",
    "check_artifact",
    "failure_summary",
    "state_fails_build",
]

BADGE_STATES = ("verified", "refuted", "failed", "stale", "not run")
_SCALARS = (bool, int, float, str, type(None))
_MACHINE_FIELDS = ("python", "numpy", "platform", "machine")


def state_fails_build(state: str) -> bool:
    """True for the states that must fail a build: failed, stale and not run."""
    if state not in BADGE_STATES:
        raise ClaimError(f"parameter state must be one of {BADGE_STATES}, got {state!r}")
    return state in ("failed", "stale", "not run")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def failure_summary(artifact: Mapping) -> list[str]:
    """One line per failed field: ``"<id> <field>: expected e, got g, tolerance t (reason)"``.

    A computation that raised gives one line with its error text.

    Examples
    --------
    >>> failure_summary({
    ...     "id": "c0-toy-001",
    ...     "error": None,
    ...     "comparisons": {"x": {"expected": 1.0, "got": 1.5, "passed": False,
    ...                           "tolerance": "abs_tol 0.1", "reason": "stated"}},
    ... })
    ['c0-toy-001 x: expected 1.0, got 1.5, tolerance abs_tol 0.1 (stated)']
    >>> failure_summary({"id": "c0-toy-001", "error": "ZeroDivisionError: boom"})
    ['c0-toy-001 error: ZeroDivisionError: boom']
    """
    claim_id = artifact.get("id")
    if artifact.get("error"):
        return [f"{claim_id} error: {artifact['error']}"]
    lines = []
    for field, record in sorted((artifact.get("comparisons") or {}).items()):
        if record.get("passed"):
            continue
        line = (
            f"{claim_id} {field}: expected {_shown(record.get('expected'))}, "
            f"got {_shown(record.get('got'))}, tolerance {record.get('tolerance')}"
        )
        if record.get("reason"):
            line += f" ({record['reason']})"
        lines.append(line)
    return lines


def badge_summary(artifact: Mapping) -> str:
    """Hover text: the statement and, per statistical field, its mean and interval.

    ``"<statement> <field>: mean m, 95% CI [lo, hi] over n seeds (t)."``

    Examples
    --------
    >>> badge_summary({
    ...     "statement": "A toy.",
    ...     "kind": "statistical",
    ...     "result": {"x": {"mean": 1.0, "ci": [0.9, 1.1], "level": 0.95,
    ...                      "method": "t", "per_seed": [0.9, 1.0, 1.1]}},
    ... })
    'A toy. x: mean 1, 95% CI [0.9, 1.1] over 3 seeds (t).'
    """
    parts = [str(artifact.get("statement", ""))]
    if artifact.get("kind") == "statistical":
        for field, entry in sorted((artifact.get("result") or {}).items()):
            if not isinstance(entry, Mapping) or "ci" not in entry:
                continue
            low, high = entry["ci"]
            parts.append(
                f"{field}: mean {entry['mean']:.4g}, {entry['level']:.0%} CI "
                f"[{low:.4g}, {high:.4g}] over {len(entry['per_seed'])} seeds "
                f"({entry['method']})."
            )
    if artifact.get("refutes"):
        parts.append(f"Refutes: {artifact['refutes'].get('account')}")
    return " ".join(parts)


def _staleness(claim: Claim, stored: Mapping) -> str | None:
    """Why an artifact no longer describes the current harness, registry and lock, or None."""
    version = stored["provenance"].get("version")
    current = instruments.version()
    if version != current:
        return f"artifact written by harness {version!r}; the running harness is {current!r}"
    if stored["registry_digest"] != claim.registry_digest:
        return f"artifact computed from another version of {claim.path.name}"
    current = current_claim_key(claim, stored)
    key = stored["key"]
    if key.get("digest") != current["digest"]:
        changed = sorted(
            name
            for name, digest in current["functions"].items()
            if key.get("functions", {}).get(name) != digest
        )
        if key.get("environment_digest") != current["environment_digest"]:
            return "artifact computed under another lock (requirements.txt) or Python"
        if changed:
            shown = ", ".join(changed[:5])
            if len(changed) > 5:
                shown += f" and {len(changed) - 5} more"
            return f"harness functions it ran have changed: {shown}"
        return "artifact key does not match its recorded functions, registry file and lock"
    return None


def _leaves(value, prefix: tuple = ()) -> dict:
    if isinstance(value, Mapping):
        leaves = {}
        for key, item in value.items():
            leaves.update(_leaves(item, (*prefix, str(key))))
        return leaves or {prefix: {}}
    return {prefix: value}


def _differences(stored: Mapping, expected: Mapping, limit: int = 8) -> list[str]:
    """Fields where two artifacts differ, compared as JSON text (so 1, 1.0 and true differ)."""
    stored_leaves, expected_leaves = _leaves(stored), _leaves(expected)
    differences = []
    for key in sorted(stored_leaves.keys() | expected_leaves.keys()):
        on_disk = json.dumps(stored_leaves.get(key, "(absent)"), sort_keys=True)
        wanted = json.dumps(expected_leaves.get(key, "(absent)"), sort_keys=True)
        if on_disk != wanted:
            differences.append(
                f"{_field_name(key)}: on disk {on_disk[:80]}, expected {wanted[:80]}"
            )
    if len(differences) > limit:
        differences = [*differences[:limit], f"... and {len(differences) - limit} more"]
    return differences


def _stored_results(claim: Claim, stored: Mapping) -> list[dict]:
    """The per-call results an artifact stores, normalized as a computation's would be."""
    result = stored["result"]
    if stored.get("error") is not None:
        return []
    if claim.kind == "statistical":
        for entry in result.values():
            if not isinstance(entry, Mapping) or not isinstance(entry.get("per_seed"), list):
                raise WitnessResultError("a statistical field without a per_seed list")
            if not all(isinstance(v, _SCALARS) for v in entry["per_seed"]):
                raise WitnessResultError("a per-seed value that is not a scalar")
        return per_seed_results(result)
    return [normalize_result(result, claim)]


def badge_state(
    claim_id: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> tuple[str, dict | None, str]:
    """What a page may show for a claim, judged from its artifact without recomputing.

    Returns
    -------
    state : str
        One of :data:`BADGE_STATES` (see the module docstring).
    artifact : dict or None
        The stored artifact, when it could be read.
    reason : str
        One line saying why.

    Raises
    ------
    UnknownClaimError, RegistryError
        For an unknown id or a malformed registry file (a site build should fail).
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    path = artifact_path(claim.id, artifacts_dir)
    if not path.is_file():
        return "not run", None, f"no artifact at {path}"
    try:
        stored = read_artifact(path)
    except (TamperedArtifactError, OSError) as exc:
        return "failed", None, str(exc)
    stale = _staleness(claim, stored)
    if stale is not None:
        return "stale", stored, stale
    try:
        results = _stored_results(claim, stored)
        rebuilt = build_artifact(
            claim,
            results,
            error=stored.get("error"),
            key=stored["key"],
            provenance=stored["provenance"],
        )
    except (WitnessResultError, TypeError, ValueError, KeyError, IndexError) as exc:
        return "failed", stored, f"{path}: stored result is malformed ({type(exc).__name__})"
    differences = _differences(stored, rebuilt)
    if differences:
        return (
            "failed",
            stored,
            f"{path} disagrees with its own stored result under {claim.path.name}: "
            + "; ".join(differences),
        )
    status = stored["status"]
    if status == "failed":
        first = failure_summary(stored)
        return (
            "failed",
            stored,
            f"{path} records status failed" + (f": {first[0]}" if first else ""),
        )
    return status, stored, f"{path} {status} under harness {stored['provenance']['version']}"


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
        machine description in ``provenance`` (python, numpy, platform, machine).

    Raises
    ------
    MissingArtifactError
        If there is no artifact.
    StaleArtifactError
        If it is stale (see :func:`badge_state`).
    TamperedArtifactError
        If it is unreadable, or any field differs from the recomputation; the message lists
        the fields.
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    path = artifact_path(claim.id, artifacts_dir)
    if not path.is_file():
        raise MissingArtifactError(
            f"claim {claim.id} has no artifact at {path}; run "
            "`python -m claimbook claims verify` to write it"
        )
    stored = read_artifact(path)
    stale = _staleness(claim, stored)
    if stale is not None:
        raise StaleArtifactError(
            f"{path}: {stale}; run `python -m claimbook claims verify` to rewrite it"
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
        key=claim_key(claim, outcome.functions),
        provenance={"version": instruments.version(), **machine},
    )
    differences = _differences(stored, recomputed)
    if differences:
        raise TamperedArtifactError(
            f"{path} disagrees with a fresh recomputation of {claim.id}: " + "; ".join(differences)
        )
    return stored
