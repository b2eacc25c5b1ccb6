"""The one judge: what state a claim is in, decided from its artifact without recomputing it.

Everything that shows or acts on a claim's state asks :func:`judge` -- the build driver, the
claims command line, the badges and bound numbers of a page, the claim pages, the ledger and
``claims.json``. The states (:data:`STATES`):

- ``"not run"`` -- no artifact;
- ``"stale"`` -- written by another harness version, or its key is not the key of the
  modules it names under today's files, registry file and lock (a module its computation
  reaches was edited, its registry entry was edited, the lock or Python changed);
- ``"failed"`` -- unreadable, status failed, or a stored field its own stored result does
  not support under the current registry (an edited file is shown as failed, never as
  verified);
- ``"refuted"`` -- the measurement contradicts the common account the claim registers;
- ``"verified"``.

:func:`state_fails_build` is True for failed, stale and not run.
:func:`claimbook.claims.audit.check_artifact` goes further and recomputes.

Every build judges every claim afresh from the registry and the artifact: no verdict is
stored between processes. Within one process the verdict on an artifact's consistency is
kept in a :class:`~claimbook.cache.ContentCache`, keyed by the bytes of the registry entry and
of the artifact, reached only once the artifact's key has been found current.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as scratch:
...     judge("c15-invariance-001", artifacts_dir=scratch)[:2]
('not run', None)
>>> state_fails_build("refuted"), state_fails_build("stale")
(False, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from claimbook import cache, instruments
from claimbook.claims.computations import normalize_result
from claimbook.claims.keys import current_claim_key
from claimbook.claims.registry import Claim, load_claim
from claimbook.claims.store import build_artifact, differences, parse_artifact, per_seed_results
from claimbook.claims.summary import failure_summary
from claimbook.errors import ClaimError, TamperedArtifactError, WitnessResultError
from claimbook.paths import artifact_path, shown

__all__ = ["STATES", "Judgement", "judge", "staleness", "state_fails_build"]

STATES = ("verified", "refuted", "failed", "stale", "not run")
_FAILING = ("failed", "stale", "not run")
_SCALARS = (bool, int, float, str, type(None))


# The verdict on an artifact's own consistency, by the bytes it was reached from, in this
# process only: a page asks about the same claim once per number it binds.
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
    """True for the states that must fail a build: failed, stale and not run."""
    if state not in STATES:
        raise ClaimError(f"parameter state must be one of {STATES}, got {state!r}")
    return state in _FAILING


def staleness(claim: Claim, stored: Mapping) -> str | None:
    """Why an artifact no longer describes the current harness, registry and lock, or None."""
    version = stored["provenance"].get("version")
    current = instruments.version()
    if version != current:
        return f"artifact written by harness {version!r}; the running harness is {current!r}"
    if stored["registry_digest"] != claim.registry_digest:
        return f"artifact computed from another version of {claim.path.name}"
    current = current_claim_key(claim, stored)
    key = stored["key"]
    if key.get("digest") == current["digest"]:
        return None
    if key.get("environment_digest") != current["environment_digest"]:
        return (
            "artifact computed under another lock (requirements.txt), installed versions or Python"
        )
    stored_modules = key.get("modules") if isinstance(key.get("modules"), Mapping) else {}
    changed = sorted(
        name for name, digest in current["modules"].items() if stored_modules.get(name) != digest
    )
    if changed:
        listed = ", ".join(changed[:5])
        if len(changed) > 5:
            listed += f" and {len(changed) - 5} more"
        return f"modules its computation reaches have changed: {listed}"
    return "artifact key does not match its modules, registry file and lock"


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


def _consistency(claim: Claim, stored: Mapping, path: Path) -> tuple[str, str]:
    """(state, reason) of a current artifact: does its own stored result support it?"""
    where = shown(path)
    try:
        rebuilt = build_artifact(
            claim,
            _stored_results(claim, stored),
            error=stored.get("error"),
            key=stored["key"],
            provenance=stored["provenance"],
        )
    except (WitnessResultError, TypeError, ValueError, KeyError, IndexError) as exc:
        return "failed", f"{where}: stored result is malformed ({type(exc).__name__})"
    found = differences(stored, rebuilt)
    if found:
        return (
            "failed",
            f"{where} disagrees with its own stored result under {claim.path.name}: "
            + "; ".join(found),
        )
    status = stored["status"]  # equal to the rebuilt one: verified, refuted or failed
    if status == "failed":
        first = failure_summary(stored)
        return "failed", f"{where} records status failed" + (f": {first[0]}" if first else "")
    return status, f"{where} {status} under harness {stored['provenance']['version']}"


def _verdict_key(claim_id: str, registry_digest: str, path: Path, data: bytes) -> str:
    """The key of a verdict on an artifact's consistency: the entry's and the artifact's."""
    return cache.digest(claim_id, registry_digest, str(path), data)


def judge(
    claim_id: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> Judgement:
    """What a page may show for a claim, judged from its artifact without recomputing.

    Returns
    -------
    Judgement
        ``(state, artifact, reason)``: one of :data:`STATES` (see the module docstring), the
        stored artifact when it could be read (a fresh copy, the caller's to keep), and one
        line saying why, naming files relative to the book.

    Raises
    ------
    UnknownClaimError, RegistryError
        For an unknown id or a malformed registry file (a site build should fail).
    """
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
    key = _verdict_key(claim.id, claim.registry_digest, path, data)
    # A list, which JSON gives back as it was (a tuple would be kept in this process only).
    state, reason = _CONSISTENCY.get(key, lambda: list(_consistency(claim, stored, path)))
    return Judgement(state, stored, reason)
