"""The one judge: what state a claim is in, decided from its artifact without recomputing it.

Everything that shows or acts on a claim's state asks :func:`judge` -- the build driver, the
claims command line, the badges and bound numbers of a page, the claim pages, the ledger and
``claims.json``. The states (:data:`STATES`):

- ``"not run"`` -- no artifact;
- ``"stale"`` -- written by another harness version, or its key is not the key of the
  functions it recorded under today's sources, registry file and lock (a function it ran
  was edited, its registry entry was edited, the lock or the engine changed);
- ``"failed"`` -- unreadable, status failed, or a stored field its own stored result does
  not support under the current registry (an edited file is shown as failed, never as
  verified);
- ``"refuted"`` -- the measurement contradicts the common account the claim registers;
- ``"verified"``.

:func:`state_fails_build` is True for failed, stale and not run.
:func:`claimbook.claims.audit.check_artifact` goes further and recomputes.

A page asks about the same claim once per number it binds, so the expensive part of a
judgement (rebuilding the artifact from its own stored result) is kept in a
:class:`~claimbook.cache.ContentCache`, keyed by the bytes of the registry entry and of the
artifact; it is reached only once the artifact's key has been found current, and that key
covers everything else the rebuild depends on (the functions, the lock, the engine).

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

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from claimbook import cache, instruments, paths
from claimbook.claims.computations import normalize_result
from claimbook.claims.keys import current_claim_key, parse_package
from claimbook.claims.registry import ENTRIES, Claim, entry_stored, load_claim
from claimbook.claims.store import build_artifact, differences, parse_artifact, per_seed_results
from claimbook.claims.summary import failure_summary
from claimbook.errors import ClaimError, TamperedArtifactError, WitnessResultError
from claimbook.paths import artifact_path, shown

__all__ = ["STATES", "Judgement", "judge", "judge_ahead", "staleness", "state_fails_build"]

STATES = ("verified", "refuted", "failed", "stale", "not run")
_FAILING = ("failed", "stale", "not run")
_SCALARS = (bool, int, float, str, type(None))


def _judging_environment() -> str:
    """What else than the entry's and the artifact's bytes decides a verdict on an artifact's
    consistency: the engine that rebuilds it, and numpy and the lock its statistics use."""
    from claimbook.claims.keys import environment_digest

    return environment_digest()


# The verdict on an artifact's own consistency, by the bytes it was reached from, kept
# between builds: rebuilding a statistical artifact from its stored result is most of the
# cost of judging it, and a build judges every claim before its first chapter can start.
_CONSISTENCY = cache.StoredCache("judgements", _judging_environment)


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
        return "artifact computed under another lock (requirements.txt), Python or engine"
    changed = sorted(
        name
        for name, digest in current["functions"].items()
        if key.get("functions", {}).get(name) != digest
    )
    if changed:
        listed = ", ".join(changed[:5])
        if len(changed) > 5:
            listed += f" and {len(changed) - 5} more"
        return f"harness functions it ran have changed: {listed}"
    return "artifact key does not match its recorded functions, registry file and lock"


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


def _judged_before(
    claim_id: str, registry_dir: str | Path | None, artifacts_dir: str | Path | None
) -> bool:
    """Whether judging the claim will find its slow parts stored: its validated registry
    entry and the verdict on its artifact, for their bytes as they are now. A claim with no
    artifact is judged at once; a stale one, whose verdict is never stored, counts as not
    judged before."""
    if not entry_stored(claim_id, registry_dir=registry_dir):
        return False
    path = artifact_path(claim_id, artifacts_dir)
    try:
        data = path.read_bytes()
    except OSError:  # judged "not run", or refused, without rebuilding anything
        return True
    try:
        registry = paths.registry_path(claim_id, registry_dir).read_bytes()
    except (ClaimError, OSError):
        return False
    digest = hashlib.sha256(registry).hexdigest()
    return _CONSISTENCY.holds(_verdict_key(claim_id, digest, path, data))


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


def judge_ahead(
    claim_ids: Sequence[str],
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
    least: int = 8,
) -> None:
    """Judge ``claim_ids`` on two cores, so that judging each of them afterwards is quick.

    A build judges every claim before it starts (which are due) and its render judges them
    all again; the slow part of a judgement -- validating the registry file and rebuilding
    the artifact from its own stored result -- is cached by the bytes it was computed from,
    and :func:`claimbook.cache.fill_on_two_cores` computes half of those values in a forked
    copy of the process. Nothing is decided here: each :func:`judge` call afterwards
    decides, from the files as they are then. A claim whose registry entry cannot be read
    is skipped here and refused by :func:`judge`. Only the claims not judged before are
    judged here (one whose entry and verdict are stored is quick to judge at each call), and
    with fewer than ``least`` of them, in this process alone (a fork costs more than it
    saves). The harness's modules are parsed first, so that both halves find them parsed
    (every key reads them).
    """

    def work(ids: Sequence[str]) -> None:
        for claim_id in ids:
            try:
                judge(claim_id, registry_dir=registry_dir, artifacts_dir=artifacts_dir)
            except ClaimError:
                continue

    unjudged = [
        claim_id
        for claim_id in claim_ids
        if not _judged_before(claim_id, registry_dir, artifacts_dir)
    ]
    if len(unjudged) >= least:
        parse_package()
    cache.fill_on_two_cores(work, unjudged, [ENTRIES, _CONSISTENCY], least=least)
