"""One-line texts about an artifact: what failed, and a badge's hover text.

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

from __future__ import annotations

from collections.abc import Mapping

from claimbook.numbers import format_value, is_statistical

__all__ = ["badge_summary", "failure_summary"]


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def failure_summary(artifact: Mapping) -> list[str]:
    """One line per failed field: ``"<id> <field>: expected e, got g, tolerance t (reason)"``.

    A computation that raised gives one line with its error text.
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
    """Hover text: the statement and each statistical field as a page writes it.

    ``"<statement> <field>: m (95% CI lo to hi) over n seeds."``, the value written by
    :func:`claimbook.numbers.format_value` to 4 significant digits (an interval of the
    median says so), then for a claim that registers an account ``"Account refuted:
    <account> (<source>)"`` when it is refuted, and ``"Account it tests: ..."`` in any
    other state, as the claims ledger writes it.

    Examples
    --------
    >>> badge_summary({
    ...     "statement": "A toy.",
    ...     "kind": "statistical",
    ...     "result": {"x": {"mean": 1.0, "ci": [0.9, 1.1], "level": 0.95,
    ...                      "method": "t", "per_seed": [0.9, 1.0, 1.1]}},
    ... })
    'A toy. x: 1 (95% CI 0.9 to 1.1) over 3 seeds.'
    """
    parts = [str(artifact.get("statement", ""))]
    if artifact.get("kind") == "statistical":
        for field, entry in sorted((artifact.get("result") or {}).items()):
            if is_statistical(entry):
                seeds = len(entry["per_seed"])
                parts.append(f"{field}: {format_value(entry, '.4g')} over {seeds} seeds.")
    refutes = artifact.get("refutes")
    if refutes:
        # A summary of a judgement carries its state; a stored record, its status.
        state = artifact.get("state", artifact.get("status"))
        said = "Account refuted" if state == "refuted" else "Account it tests"  # as the ledger
        source = f" ({refutes['source']})" if refutes.get("source") else ""
        parts.append(f"{said}: {refutes.get('account')}{source}")
    return " ".join(parts)
