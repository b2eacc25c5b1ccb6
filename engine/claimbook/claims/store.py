"""Claim artifacts: how one is built from a claim's outcome, its JSON text, reading it back.

An artifact (``artifacts/claims/<id>.json``, named by :func:`claimbook.paths.artifact_path`)
is a pure function of the registry entry, the per-call results, the computation's error (if
any), the claim's key and the provenance, so writing it twice gives byte-identical files
(sorted keys, no timestamps), and :mod:`~claimbook.claims.judgement` can rebuild it from its own
stored result to catch an edited file. Its fields:

``id, chapter, kind, refutes, statement, status, error, compute, result, expected,
comparisons, contract, seeds, statistics, key, registry_digest, provenance``

- ``kind`` is ``"deterministic"`` or ``"statistical"``; ``refutes`` is the registry's
  ``{account, source}`` or null.
- ``status``: ``"verified"`` when every comparison passes; for a claim with ``refutes``,
  ``"refuted"`` instead (the measurement contradicts the account as registered);
  ``"failed"`` when any comparison fails or the computation raised (``error``).
- ``result``: a deterministic claim's (nested) result mapping; for a statistical claim,
  per dotted field ``{"per_seed": [...]}`` plus, when every value is a finite number,
  ``"mean"``, ``"ci": [lo, hi]``, ``"level"`` and ``"method"`` (and ``"median"`` for a field
  whose interval is the median's, ``interval_method: median-rank``).
- ``comparisons``: per field ``expected, got, tolerance, reason, passed``
  (:mod:`~claimbook.claims.compare`).

Examples
--------
>>> text = artifact_text({"status": "verified", "result": {"x": 1.0}})
>>> try:
...     parse_artifact(text.encode(), paths.artifact_path("c0-toy-001"))
... except TamperedArtifactError as error:
...     print(error)
artifacts/claims/c0-toy-001.json: field provenance is missing or not a dict
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from claimbook import environment, instruments, paths
from claimbook.atomic import write_text_atomically
from claimbook.claims.compare import comparisons, is_number
from claimbook.claims.computations import flatten
from claimbook.claims.intervals import mean_interval, median_rank_interval
from claimbook.claims.registry import Claim, claim_seed
from claimbook.claims.registry_schema import field_name as _field_name
from claimbook.errors import TamperedArtifactError

__all__ = [
    "artifact_text",
    "build_artifact",
    "differences",
    "parse_artifact",
    "per_seed_results",
    "provenance",
    "read_artifact",
    "statistical_result",
    "write_artifact",
]


def provenance() -> dict:
    """Where and with what a claim was computed: harness version, Python, numpy, machine.

    ``python`` is the exact version running and ``numpy`` the version imported (the
    installed one, whatever the lock says). When the environment differs from the lock (a
    build with ``--allow-environment-mismatch``), ``environment_mismatch`` lists how, one
    phrase each ("numpy 2.3.5 installed, 2.4.6 locked": :mod:`claimbook.environment`); an
    environment that is the lock's adds no field, so its artifacts are what they were.
    """
    record = {
        "version": instruments.version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    mismatch = environment.differences()
    if mismatch:
        record["environment_mismatch"] = mismatch
    return record


# --- statistical summaries ------------------------------------------------------------------


def statistical_result(claim: Claim, results: Sequence[Mapping]) -> dict:
    """Per dotted field: ``per_seed`` values and, for finite numbers, mean and interval.

    The interval is the claim's ``statistics.method`` for the mean, unless the field's
    registry entry selects ``interval_method: median-rank``: then it is the exact rank-based
    interval of the median (:func:`~claimbook.claims.intervals.median_rank_interval`), and
    the entry holds the ``median`` too.
    """
    flats = [flatten(result) for result in results]
    fields = sorted({field for flat in flats for field in flat})
    statistics = claim.statistics or {}
    summary = {}
    for field in fields:
        values = [flat.get(field) for flat in flats]
        entry: dict = {"per_seed": values}
        method = (claim.expect.get(field) or {}).get("interval_method")
        if method == "median-rank" and len(values) >= 2 and all(is_number(v) for v in values):
            low, high = median_rank_interval(values, level=statistics["level"])
            x = np.asarray(values, dtype=np.float64)
            entry.update(
                mean=float(np.mean(x)),
                median=float(np.median(x)),
                ci=[low, high],
                level=statistics["level"],
                method=method,
            )
        elif len(values) >= 2 and all(is_number(v) for v in values):
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
    records = (
        {} if error is not None else comparisons(claim.expect, result, statistical=statistical)
    )
    passed = error is None and all(record["passed"] for record in records.values())
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
        "comparisons": records,
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
    """The stored artifact at ``path``, checked for the fields a reader relies on.

    Raises
    ------
    TamperedArtifactError
        If the file is not JSON, not an object, or lacks a field.
    OSError
        If it cannot be read.
    """
    return parse_artifact(path.read_bytes(), path)


def parse_artifact(data: bytes, path: Path) -> dict:
    """The artifact whose bytes are ``data`` (read from ``path``); see :func:`read_artifact`."""
    where = paths.shown(path)
    try:
        stored = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise TamperedArtifactError(f"{where} is not readable JSON ({exc})") from exc
    if not isinstance(stored, dict):
        raise TamperedArtifactError(f"{where} holds {type(stored).__name__}, not an artifact")
    for key, kind in _ARTIFACT_SHAPE.items():
        if not isinstance(stored.get(key), kind):
            raise TamperedArtifactError(
                f"{where}: field {key} is missing or not a {kind.__name__}"
            )
    return stored


# --- comparing two artifacts ------------------------------------------------------------------


def _leaves(value, prefix: tuple = ()) -> dict:
    if isinstance(value, Mapping):
        leaves = {}
        for key, item in value.items():
            leaves.update(_leaves(item, (*prefix, str(key))))
        return leaves or {prefix: {}}
    return {prefix: value}


def differences(stored: Mapping, expected: Mapping, limit: int = 8) -> list[str]:
    """Fields where two artifacts differ, compared as JSON text (so 1, 1.0 and true differ).

    Examples
    --------
    >>> differences({"result": {"x": 1}}, {"result": {"x": 1.0}})
    ['result.x: on disk 1, expected 1.0']
    """
    stored_leaves, expected_leaves = _leaves(stored), _leaves(expected)
    found = []
    for key in sorted(stored_leaves.keys() | expected_leaves.keys()):
        on_disk = json.dumps(stored_leaves.get(key, "(absent)"), sort_keys=True)
        wanted = json.dumps(expected_leaves.get(key, "(absent)"), sort_keys=True)
        if on_disk != wanted:
            found.append(f"{_field_name(key)}: on disk {on_disk[:80]}, expected {wanted[:80]}")
    if len(found) > limit:
        found = [*found[:limit], f"... and {len(found) - limit} more"]
    return found
