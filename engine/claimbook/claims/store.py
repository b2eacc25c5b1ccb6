"""Claim artifacts: where they live, how one is built from a claim's outcome, its JSON text.

An artifact (``artifacts/claims/<id>.json``) is a pure function of the registry entry, the
per-call results, the computation's error (if any), the claim's key and the provenance, so
writing it twice gives byte-identical files (sorted keys, no timestamps), and
:mod:`~claimbook.claims.audit` can rebuild it from its own stored result to catch
an edited file. Its fields:

``id, chapter, kind, refutes, statement, status, error, compute, result, expected,
comparisons, contract, seeds, statistics, key, registry_digest, provenance``

- ``kind`` is ``"deterministic"`` or ``"statistical"``; ``refutes`` is the registry's
  ``{account, source}`` or null.
- ``status``: ``"verified"`` when every comparison passes; for a claim with ``refutes``,
  ``"refuted"`` instead (the measurement contradicts the account as registered);
  ``"failed"`` when any comparison fails or the computation raised (``error``).
- ``result``: a deterministic claim's (nested) result mapping; for a statistical claim,
  per dotted field ``{"per_seed": [...]}`` plus, when every value is a finite number,
  ``"mean"``, ``"ci": [lo, hi]``, ``"level"`` and ``"method"``.
- ``comparisons``: per field ``expected, got, tolerance, reason, passed``.

Examples
--------
>>> artifact_path("c15-invariance-001").relative_to(paths.REPO_ROOT).as_posix()
'artifacts/claims/c15-invariance-001.json'
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from claimbook import instruments, paths
from claimbook.atomic import write_text_atomically
from claimbook.claims.computations import flatten
from claimbook.claims.intervals import mean_interval
from claimbook.claims.registry import Claim, claim_seed
from claimbook.errors import TamperedArtifactError

__all__ = ["artifact_path", "artifact_text", "build_artifact", "provenance", "read_artifact"]

_MISSING = object()


def artifact_path(claim_id: str, artifacts_dir: str | Path | None = None) -> Path:
    """``<artifacts_dir>/<claim_id>.json``; by default under ``artifacts/claims/``."""
    directory = Path(artifacts_dir) if artifacts_dir is not None else paths.CLAIM_ARTIFACTS_DIR
    return directory / f"{claim_id}.json"


def provenance() -> dict:
    """Where and with what a claim was computed: harness version, Python, numpy, machine."""
    return {
        "version": instruments.version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


# --- comparing ------------------------------------------------------------------------------


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _equal_exactly(expected, got) -> bool:
    """Equality that keeps booleans, numbers and strings apart (``True == 1`` in Python)."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool) and expected == got
    if isinstance(expected, str) or isinstance(got, str):
        return isinstance(expected, str) and isinstance(got, str) and expected == got
    return got == expected


def _within(bound: Mapping, got) -> bool:
    if "abs_tol" in bound:
        return _is_number(got) and abs(got - bound["value"]) <= bound["abs_tol"]
    return _is_number(got) and abs(got - bound["value"]) <= bound["rel_tol"] * abs(bound["value"])


def _tolerance_text(bound: Mapping) -> str:
    name = "abs_tol" if "abs_tol" in bound else "rel_tol"
    return f"{name} {bound[name]!r}"


def _per_value(expectation: Mapping) -> tuple:
    """(expected shown, tolerance text, test of one value) for equals/abs/rel/interval."""
    if "equals" in expectation:
        expected = expectation["equals"]
        return expected, "exact", lambda got: got is not _MISSING and _equal_exactly(expected, got)
    if "interval" in expectation:
        low, high = expectation["interval"]
        return [low, high], "closed interval", lambda got: _is_number(got) and low <= got <= high
    tolerance = _tolerance_text(expectation)
    return expectation["value"], tolerance, lambda got: _within(expectation, got)


def _record(expected, got, tolerance, reason, passed) -> dict:
    return {
        "expected": expected,
        "got": None if got is _MISSING else got,
        "tolerance": tolerance,
        "reason": reason,
        "passed": bool(passed),
    }


def _unexpected(got) -> dict:
    return _record(None, got, "no expectation registered", None, False)


def _deterministic_comparisons(claim: Claim, result: Mapping) -> dict:
    flat = flatten(result)
    comparisons = {}
    for field, expectation in claim.expect.items():
        got = flat.get(field, _MISSING)
        expected, tolerance, test = _per_value(expectation)
        comparisons[field] = _record(
            expected, got, tolerance, expectation.get("reason"), test(got)
        )
    for field in flat.keys() - claim.expect.keys():
        comparisons[field] = _unexpected(flat[field])
    return comparisons


def _statistical_comparison(expectation: Mapping, summary: Mapping) -> dict:
    values = summary["per_seed"]
    reason = expectation.get("reason")
    if "ci_within" in expectation:
        low, high = expectation["ci_within"]
        ci = summary.get("ci")
        passed = ci is not None and low <= ci[0] and ci[1] <= high
        return _record([low, high], ci, "interval within", reason, passed)
    if "mean" in expectation:
        bound = expectation["mean"]
        mean = summary.get("mean")
        passed = mean is not None and _within(bound, mean)
        return _record(bound["value"], mean, f"mean {_tolerance_text(bound)}", reason, passed)
    if "fraction" in expectation:
        rule = expectation["fraction"]
        side = "above" if "above" in rule else "below"
        threshold, needed = rule[side], rule["at_least"]
        numbers = all(_is_number(v) for v in values)
        if side == "above":
            hits = sum(_is_number(v) and v > threshold for v in values)
        else:
            hits = sum(_is_number(v) and v < threshold for v in values)
        fraction = hits / len(values) if values else 0.0
        return _record(
            {side: threshold, "at_least": needed},
            fraction,
            f"fraction of seeds {side} {threshold!r}",
            reason,
            numbers and fraction >= needed,
        )
    expected, tolerance, test = _per_value(expectation)
    passed = bool(values) and all(test(_MISSING if v is None else v) for v in values)
    return _record(expected, values, f"{tolerance}, every seed", reason, passed)


def _statistical_comparisons(claim: Claim, result: Mapping) -> dict:
    comparisons = {}
    for field, expectation in claim.expect.items():
        summary = result.get(field)
        if summary is None:
            comparisons[field] = _record(
                _per_value(expectation)[0] if _is_per_value(expectation) else None,
                _MISSING,
                "field not returned",
                expectation.get("reason"),
                False,
            )
        else:
            comparisons[field] = _statistical_comparison(expectation, summary)
    for field in result.keys() - claim.expect.keys():
        comparisons[field] = _unexpected(result[field]["per_seed"])
    return comparisons


def _is_per_value(expectation: Mapping) -> bool:
    return any(key in expectation for key in ("equals", "interval", "value"))


# --- statistical summaries ------------------------------------------------------------------


def statistical_result(claim: Claim, results: Sequence[Mapping]) -> dict:
    """Per dotted field: ``per_seed`` values and, for finite numbers, mean and interval."""
    flats = [flatten(result) for result in results]
    fields = sorted({field for flat in flats for field in flat})
    statistics = claim.statistics or {}
    summary = {}
    for field in fields:
        values = [flat.get(field) for flat in flats]
        entry: dict = {"per_seed": values}
        if len(values) >= 2 and all(_is_number(v) for v in values):
            low, high = mean_interval(
                values,
                level=statistics["level"],
                method=statistics["method"],
                bootstrap_seed=claim_seed(f"{claim.id}/bootstrap"),
            )
            entry.update(
                mean=float(np.mean(np.asarray(values, dtype=np.float64))),
                ci=[low, high],
                level=statistics["level"],
                method=statistics["method"],
            )
        summary[field] = entry
    return summary


def per_seed_results(result: Mapping) -> list[dict]:
    """Undo :func:`statistical_result`: the flat per-seed results an artifact stores."""
    counts = {len(entry["per_seed"]) for entry in result.values()}
    count = counts.pop() if len(counts) == 1 else 0
    return [
        {
            field: entry["per_seed"][k]
            for field, entry in result.items()
            if entry["per_seed"][k] is not None
        }
        for k in range(count)
    ]


# --- the artifact ---------------------------------------------------------------------------


def build_artifact(
    claim: Claim,
    results: Sequence[Mapping],
    *,
    error: str | None,
    key: Mapping,
    provenance: Mapping,
) -> dict:
    """The artifact as a pure function of the claim, its per-call results, error, key, provenance.

    ``results`` holds one result for a deterministic claim (none if it raised before
    returning) and one per seed for a statistical claim.
    """
    statistical = claim.kind == "statistical"
    if statistical:
        result = statistical_result(claim, results) if error is None else {}
    else:
        result = dict(results[0]) if results and error is None else {}
    if error is not None:
        comparisons = {}
    elif statistical:
        comparisons = _statistical_comparisons(claim, result)
    else:
        comparisons = _deterministic_comparisons(claim, result)
    passed = error is None and all(record["passed"] for record in comparisons.values())
    if not passed:
        status = "failed"
    else:
        status = "refuted" if claim.refutes is not None else "verified"
    return {
        "id": claim.id,
        "chapter": claim.chapter,
        "kind": claim.kind,
        "refutes": dict(claim.refutes) if claim.refutes is not None else None,
        "statement": claim.statement,
        "status": status,
        "error": error,
        "compute": claim.compute,
        "result": result,
        "expected": claim.expect,
        "comparisons": comparisons,
        "contract": {"seed": claim.seed, **claim.contract},
        "seeds": claim.seeds,
        "statistics": dict(claim.statistics) if claim.statistics is not None else None,
        "key": dict(key),
        "registry_digest": claim.registry_digest,
        "provenance": dict(provenance),
    }


def artifact_text(artifact: Mapping) -> str:
    """Sorted, indented JSON with a final newline (NaN refused: it is not JSON)."""
    return json.dumps(artifact, sort_keys=True, indent=2, allow_nan=False) + "\n"


def write_artifact(path: Path, artifact: Mapping) -> None:
    """Write ``artifact`` to ``path`` atomically."""
    write_text_atomically(path, artifact_text(artifact))


_ARTIFACT_SHAPE = {
    "status": str,
    "result": dict,
    "provenance": dict,
    "registry_digest": str,
    "key": dict,
}


def read_artifact(path: Path) -> dict:
    """The stored artifact, checked for the fields a reader relies on.

    Raises
    ------
    TamperedArtifactError
        If the file is not JSON, not an object, or lacks a field.
    """
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TamperedArtifactError(f"{path} is not readable JSON ({exc})") from exc
    if not isinstance(stored, dict):
        raise TamperedArtifactError(f"{path} holds {type(stored).__name__}, not an artifact")
    for key, kind in _ARTIFACT_SHAPE.items():
        if not isinstance(stored.get(key), kind):
            raise TamperedArtifactError(f"{path}: field {key} is missing or not a {kind.__name__}")
    return stored
