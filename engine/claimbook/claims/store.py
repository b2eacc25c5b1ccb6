"""Claim artifacts: built from a claim's outcome, read back, compared, summarized.

An artifact (``artifacts/claims/<id>.json``, fields as in docs/claims.md) is a pure function
of the registry entry, the per-call results, the error, the key and the provenance (sorted
keys, no timestamps), so the judge can rebuild it from its own stored result.
"""

import json
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from claimbook import environment, instruments, paths
from claimbook.claims.compare import comparisons, is_number, mean_interval, median_rank_interval
from claimbook.claims.registry import Claim, claim_seed, flatten
from claimbook.claims.registry_schema import excerpt, field_name
from claimbook.errors import TamperedArtifactError, WitnessResultError
from claimbook.numbers import format_value, is_statistical

# The fields a reader relies on, and their types.
_SHAPE = {"status": str, "result": dict, "provenance": dict, "registry_digest": str, "key": dict}
_SCALARS = (bool, int, float, str, type(None))


def provenance() -> dict:
    """Harness version, Python, numpy, the machine, and ``environment_mismatch`` when the
    environment differs from the lock."""
    record = {
        "version": instruments.version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    mismatch = environment.differences()
    return {**record, "environment_mismatch": mismatch} if mismatch else record


def statistical_result(claim: Claim, results: Sequence[Mapping]) -> dict:
    """Per dotted field: ``per_seed`` and, for finite numbers, ``mean``, ``ci``, ``level`` and
    ``method`` (with ``median`` for ``interval_method: median-rank``)."""
    flats = [flatten(result) for result in results]
    level = (claim.statistics or {}).get("level")
    summary = {}
    for field in sorted({field for flat in flats for field in flat}):
        values = [flat.get(field) for flat in flats]
        summary[field] = entry = {"per_seed": values}
        if len(values) < 2 or not all(is_number(v) for v in values):
            continue
        x = np.asarray(values, dtype=np.float64)
        method = (claim.expect.get(field) or {}).get("interval_method")
        if method == "median-rank":
            ci = median_rank_interval(values, level=level)
            entry["median"] = float(np.median(x))
        else:
            method = claim.statistics["method"]
            seed = claim_seed(f"{claim.id}/bootstrap")
            ci = mean_interval(values, level=level, method=method, bootstrap_seed=seed)
        entry.update(mean=float(np.mean(x)), ci=list(ci), level=level, method=method)
    return summary


def per_seed_results(result: Mapping) -> list[dict]:
    """Undo :func:`statistical_result`: the flat per-seed results an artifact stores;
    :class:`WitnessResultError` for a field without a ``per_seed`` list of scalars."""
    for entry in result.values():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("per_seed"), list):
            raise WitnessResultError("a statistical field without a per_seed list")
        if not all(isinstance(v, _SCALARS) for v in entry["per_seed"]):
            raise WitnessResultError("a per-seed value that is not a scalar")
    counts = {len(entry["per_seed"]) for entry in result.values()}
    return [
        {
            field: entry["per_seed"][k]
            for field, entry in result.items()
            if entry["per_seed"][k] is not None
        }
        for k in range(counts.pop() if len(counts) == 1 else 0)
    ]


def build_artifact(
    claim: Claim, results: Sequence[Mapping], *, error: str | None, key: Mapping, provenance
) -> dict:
    """The artifact of ``claim`` from its per-call results (none if it raised first)."""
    statistical = claim.kind == "statistical"
    result, records = {}, {}
    if error is None:
        result = statistical_result(claim, results) if statistical else dict(results[0])
        records = comparisons(claim.expect, result, statistical=statistical)
    if error is not None or not all(record["passed"] for record in records.values()):
        status = "failed"
    else:
        status = "refuted" if claim.refutes is not None else "verified"
    return {
        "id": claim.id,
        "chapter": claim.chapter,
        "kind": claim.kind,
        "refutes": claim.refutes,
        "statement": claim.statement,
        "status": status,
        "error": error,
        "compute": claim.compute,
        "result": result,
        "expected": claim.expect,
        "comparisons": records,
        "contract": {"seed": claim.seed, **claim.contract},
        "seeds": claim.seeds,
        "statistics": claim.statistics,
        "key": dict(key),
        "registry_digest": claim.registry_digest,
        "provenance": dict(provenance),
    }


def artifact_text(artifact: Mapping) -> str:
    """Sorted, indented JSON with a final newline (NaN refused: it is not JSON)."""
    return json.dumps(artifact, sort_keys=True, indent=2, allow_nan=False) + "\n"


def parse_artifact(data: bytes, path: Path) -> dict:
    """The artifact of bytes ``data`` read from ``path``; :class:`TamperedArtifactError` if
    not JSON, not an object, or lacking a field a reader relies on."""
    where = paths.shown(path)
    try:
        stored = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise TamperedArtifactError(f"{where} is not readable JSON ({exc})") from exc
    if not isinstance(stored, dict):
        raise TamperedArtifactError(f"{where} holds {type(stored).__name__}, not an artifact")
    for key, kind in _SHAPE.items():
        if not isinstance(stored.get(key), kind):
            raise TamperedArtifactError(
                f"{where}: field {key} is missing or not a {kind.__name__}"
            )
    return stored


def _leaves(value, prefix: tuple = ()) -> dict:
    if not isinstance(value, Mapping):
        return {prefix: value}
    leaves = {}
    for key, item in value.items():
        leaves.update(_leaves(item, (*prefix, str(key))))
    return leaves or {prefix: {}}


def differences(stored: Mapping, expected: Mapping, limit: int = 8) -> list[str]:
    """Fields where two artifacts differ, compared as JSON text (so 1, 1.0 and true differ)."""
    stored_leaves, expected_leaves = _leaves(stored), _leaves(expected)
    found = []
    for key in sorted(stored_leaves.keys() | expected_leaves.keys()):
        on_disk = json.dumps(stored_leaves.get(key, "(absent)"), sort_keys=True)
        wanted = json.dumps(expected_leaves.get(key, "(absent)"), sort_keys=True)
        if on_disk != wanted:
            found.append(f"{field_name(key)}: on disk {on_disk[:80]}, expected {wanted[:80]}")
    if len(found) > limit:
        found = [*found[:limit], f"... and {len(found) - limit} more"]
    return found


def failure_summary(artifact: Mapping) -> list[str]:
    """``"<id> <field>: expected e, got g, tolerance t (reason)"`` per failed field, or the
    computation's error."""
    claim_id = artifact.get("id")
    if artifact.get("error"):
        return [f"{claim_id} error: {artifact['error']}"]
    return [
        f"{claim_id} {field}: expected {excerpt(record.get('expected'))}, got "
        f"{excerpt(record.get('got'))}, tolerance {record.get('tolerance')}"
        + (f" ({record['reason']})" if record.get("reason") else "")
        for field, record in sorted((artifact.get("comparisons") or {}).items())
        if not record.get("passed")
    ]


def badge_summary(artifact: Mapping) -> str:
    """Hover text: the statement, each statistical field (``"<field>: m (95% CI lo to hi)
    over n seeds."``), then ``"Account refuted: ..."`` or ``"Account it tests: ..."``."""
    parts = [str(artifact.get("statement", ""))]
    if artifact.get("kind") == "statistical":
        for field, entry in sorted((artifact.get("result") or {}).items()):
            if is_statistical(entry):
                seeds = len(entry["per_seed"])
                parts.append(f"{field}: {format_value(entry, '.4g')} over {seeds} seeds.")
    refutes = artifact.get("refutes")
    if refutes:
        state = artifact.get("state", artifact.get("status"))
        said = "Account refuted" if state == "refuted" else "Account it tests"
        source = f" ({refutes['source']})" if refutes.get("source") else ""
        parts.append(f"{said}: {refutes.get('account')}{source}")
    return " ".join(parts)
