"""The one judge: a claim's state from its artifact alone, or against a recomputation
(:func:`check_artifact`): ``"not run"`` (no artifact), ``"stale"`` (another harness version
or key), ``"failed"`` (unreadable, failed, or not what its own stored result gives),
``"refuted"`` or ``"verified"``.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from claimbook import cache, instruments
from claimbook.claims.keys import current_claim_key
from claimbook.claims.record import compute_artifact
from claimbook.claims.registry import Claim, load_claim, normalize_result
from claimbook.claims.store import (
    build_artifact,
    differences,
    failure_summary,
    parse_artifact,
    per_seed_results,
)
from claimbook.errors import (
    ClaimError,
    MissingArtifactError,
    StaleArtifactError,
    TamperedArtifactError,
    WitnessResultError,
)
from claimbook.paths import artifact_path, shown

STATES = ("verified", "refuted", "failed", "stale", "not run")
# What may differ between a stored artifact and a recomputation on another machine.
_MACHINE_FIELDS = ("python", "numpy", "platform", "machine", "environment_mismatch")
# An artifact's consistency by its bytes: a page asks once per number it binds.
_CONSISTENCY = cache.ContentCache("judgements")


class Judgement(NamedTuple):
    """A claim's state, its stored artifact (when it could be read) and one line saying why."""

    state: str
    artifact: dict | None
    reason: str

    @property
    def fails_build(self) -> bool:
        return state_fails_build(self.state)


def state_fails_build(state: str) -> bool:
    """True for failed, stale and not run."""
    if state not in STATES:
        raise ClaimError(f"parameter state must be one of {STATES}, got {state!r}")
    return state in STATES[2:]


def staleness(claim: Claim, stored: Mapping) -> str | None:
    """Why an artifact no longer describes the harness, registry and lock, or None."""
    version, running = stored["provenance"].get("version"), instruments.version()
    if version != running:
        return f"artifact written by harness {version!r}; the running harness is {running!r}"
    if stored["registry_digest"] != claim.registry_digest:
        return f"artifact computed from another version of {claim.path.name}"
    current, key = current_claim_key(claim, stored), stored["key"]
    if key.get("digest") == current["digest"]:
        return None
    if key.get("environment_digest") != current["environment_digest"]:
        return (
            "artifact computed under another lock (requirements.txt), installed versions or Python"
        )
    modules = key.get("modules") if isinstance(key.get("modules"), Mapping) else {}
    changed = sorted(name for name, d in current["modules"].items() if modules.get(name) != d)
    if not changed:
        return "artifact key does not match its modules, registry file and lock"
    more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
    return f"modules its computation reaches have changed: {', '.join(changed[:5])}{more}"


def _consistency(claim: Claim, stored: Mapping, path: Path) -> tuple[str, str]:
    """(state, reason) of a current artifact: does its own stored result support it?"""
    where, result = shown(path), stored["result"]
    try:
        if stored.get("error") is not None:
            results = []
        elif claim.kind == "statistical":
            results = per_seed_results(result)
        else:
            results = [normalize_result(result, claim)]
        rebuilt = build_artifact(
            claim,
            results,
            error=stored.get("error"),
            key=stored["key"],
            provenance=stored["provenance"],
        )
    except (WitnessResultError, TypeError, ValueError, KeyError, IndexError) as exc:
        return "failed", f"{where}: stored result is malformed ({type(exc).__name__})"
    found = differences(stored, rebuilt)
    if found:
        said = f"{where} disagrees with its own stored result under {claim.path.name}: "
        return "failed", said + "; ".join(found)
    status = stored["status"]  # equal to the rebuilt one: verified, refuted or failed
    if status == "failed":
        first = failure_summary(stored)
        return "failed", f"{where} records status failed" + (f": {first[0]}" if first else "")
    return status, f"{where} {status} under harness {stored['provenance']['version']}"


def judge(
    claim_id: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> Judgement:
    """``(state, artifact, reason)`` of a claim from its artifact (the caller's to keep),
    without recomputing; :class:`UnknownClaimError` or :class:`RegistryError` first."""
    claim = load_claim(claim_id, registry_dir=registry_dir)
    path = artifact_path(claim.id, artifacts_dir)
    if not path.is_file():
        return Judgement("not run", None, f"no artifact at {shown(path)}")
    try:
        data = path.read_bytes()
        stored = parse_artifact(data, path)
    except (TamperedArtifactError, OSError) as exc:
        return Judgement("failed", None, str(exc))
    stale = staleness(claim, stored)
    if stale is not None:
        return Judgement("stale", stored, stale)
    key = cache.digest(claim.id, claim.registry_digest, str(path), data)
    state, reason = _CONSISTENCY.get(key, lambda: _consistency(claim, stored, path))
    return Judgement(state, stored, reason)


def check_artifact(
    claim_id: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> dict:
    """The stored artifact, when a recomputation (writing nothing) agrees with it in every
    field but the machine's in ``provenance``; else :class:`MissingArtifactError`,
    :class:`StaleArtifactError` or :class:`TamperedArtifactError` (listing the fields)."""
    claim = load_claim(claim_id, registry_dir=registry_dir)
    path = artifact_path(claim.id, artifacts_dir)
    if not path.is_file():
        raise MissingArtifactError(
            f"claim {claim.id} has no artifact at {shown(path)}; run "
            "`python -m claimbook claims verify` to write it"
        )
    stored = parse_artifact(path.read_bytes(), path)
    stale = staleness(claim, stored)
    if stale is not None:
        raise StaleArtifactError(
            f"{shown(path)}: {stale}; run `python -m claimbook claims verify` to rewrite it"
        )
    recomputed = compute_artifact(claim)
    machine = {k: v for k, v in stored["provenance"].items() if k in _MACHINE_FIELDS}
    recomputed["provenance"] = {"version": instruments.version(), **machine}
    found = differences(stored, recomputed)
    if found:
        raise TamperedArtifactError(
            f"{shown(path)} disagrees with a fresh recomputation of {claim.id}: "
            + "; ".join(found)
        )
    return stored
