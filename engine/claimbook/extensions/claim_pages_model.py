"""What the site says about each claim, as plain data: badges, bound numbers, claim pages
and ``claims.json``. A place that states a claim is ``{page, anchor, chapter, section, as,
cited}`` (``as``: badge, value or line; ``cited``: a bound number's ``[field, spec]``)."""

import json
import math
import posixpath
import re
from collections.abc import Mapping
from numbers import Real

from claimbook.claims.compare import field_ratios, half_width, shown_expectation
from claimbook.claims.judgement import STATES, Judgement
from claimbook.claims.mistakes import mutation_states
from claimbook.claims.registry import Claim
from claimbook.claims.store import badge_summary
from claimbook.numbers import format_value, is_statistical

CLAIM_PAGES = "claims"
LEDGER_JSON = "claims.json"
STATE_CLASSES = {state: "claim-" + state.replace(" ", "-") for state in STATES}
# The mark after a bound number, its state without hovering or colour: a refuted claim's
# numbers are the book's verified measurement, so they carry the check mark.
STATE_MARKS = dict(zip(STATES, "\u2713\u2713\u2717~?", strict=True))  # check, ballot x
# The word a badge shows for a state.
STATE_WORDS = {state: state for state in STATES} | {"refuted": "account refuted"}
NUMBER_CLASSES = STATE_CLASSES | {"refuted": STATE_CLASSES["verified"]}
STATE_MEANINGS = {
    "verified": "the build recomputed this claim with the book's instruments, and every "
    "field met its registered expectation.",
    "refuted": "the claim quotes a common account the book argues against; the build "
    "recomputed the book's own measurement, every field met its registered expectation, and "
    "the measurement contradicts the account. The measurement is verified; the account is "
    "refuted.",
    "failed": "the latest recomputation did not meet its registered expectation (or the "
    "record disagrees with itself); the strict build fails.",
    "stale": "the stored record was computed by other instruments or for another version "
    "of the registration; the strict build fails until it is recomputed.",
    "not run": "no record of a computation is on file; the strict build fails until one is made.",
}


def state_meaning(state: str, reason: str) -> tuple[str, str]:
    """A claim page's bold lead and sentence for its state, with the reason unless it holds."""
    why = "" if state in ("verified", "refuted") else f" Why: {reason}"
    return f"{STATE_WORDS[state].capitalize()}: ", STATE_MEANINGS[state] + why


def measurement_lead(state: str) -> str:
    """What a claim page says of an account before the book's measurement."""
    if state == "refuted":
        return "The book's measurement, verified, refutes it:"
    return f"The book's measurement that tests it is {state}:"


def account_line(refutes: Mapping | None) -> str | None:
    """``"<account> (<source>)"`` of a claim that registers an account, else None."""
    return f"{refutes['account']} ({refutes['source']})" if refutes else None


def page_path(claim_id: str) -> str:
    return f"{CLAIM_PAGES}/{claim_id}.html"


def record_path(claim_id: str) -> str:
    return f"{CLAIM_PAGES}/{claim_id}.json"


def relative_uri(docname: str, target: str) -> str:
    """URI of a site-root-relative ``target`` as seen from page ``docname``."""
    return posixpath.relpath(target, posixpath.dirname(docname) or ".")


def summary_of(claim: Claim, judgement: Judgement) -> dict:
    """What a badge says: id, state, reason; statement, kind, refutes, result (the artifact's,
    else the registry's)."""
    artifact = judgement.artifact or {}
    statement = artifact.get("statement")
    return {
        "id": claim.id,
        "state": judgement.state,
        "reason": judgement.reason,
        "statement": statement if isinstance(statement, str) else claim.statement,
        "kind": artifact.get("kind", claim.kind),
        "refutes": artifact.get("refutes", claim.refutes),
        "result": artifact.get("result"),
    }


# What a hover shows for a statement's LaTeX (a title attribute renders no math).
_SYMBOLS = {
    "\\epsilon": "ε", "\\lambda": "λ", "\\gamma": "γ", "\\sigma": "σ", "\\beta": "β",
    "\\tau": "τ", "\\eta": "η", "\\mu": "μ", "\\pi": "π", "\\times": "×", "\\nabla": "∇",
    "\\sqrt": "√", "\\lVert": "‖", "\\rVert": "‖", "\\,": " ",
}  # fmt: skip


def plain_math(text: str) -> str:
    """A statement with its ``$...$`` math as plain text, for a hover."""

    def plain(match: re.Match) -> str:
        math = re.sub(r"\\(?:mathrm|operatorname)\{([^}]*)\}", r"\1", match.group(1))
        for command, symbol in _SYMBOLS.items():
            math = math.replace(command, symbol)
        math = re.sub(r"\\([A-Za-z]+)", r"\1", math)  # \max, \tanh: the name
        return math.replace("{", "(").replace("}", ")")

    return re.sub(r"\$([^$]+)\$", plain, text)


def badge_hover(summary: Mapping) -> str:
    """A badge's hover: statement, intervals, account, and the state and reason unless it holds."""
    hover = badge_summary({**summary, "statement": plain_math(summary["statement"])})
    if summary["state"] not in ("verified", "refuted"):
        hover += f" ({summary['state']}: {summary['reason']})"
    return hover


def parse_claim_value(text: str) -> tuple[str, str, str]:
    """``"<id>.<field>[:spec]"`` -> ``(id, field, spec)``; raises ValueError if malformed."""
    reference, _, spec = text.strip().partition(":")
    claim_id, _, field = reference.partition(".")
    if not claim_id or not field or any(not part for part in field.split(".")):
        raise ValueError(f"claim-value expects <claim-id>.<field>[:format], got {text.strip()!r}")
    return claim_id, field, spec


def field_value(result: Mapping, field: str):
    """The value at dotted ``field`` (the longest key present wins); KeyError names what lacks."""
    parts = field.split(".")
    value, index = result, 0
    while index < len(parts):
        if not isinstance(value, Mapping):
            raise KeyError(".".join(parts[: index + 1]))
        for end in range(len(parts), index, -1):
            key = ".".join(parts[index:end])
            if key in value:
                value, index = value[key], end
                break
        else:
            raise KeyError(".".join(parts[: index + 1]))
    return value


_COMPARED = ("expected", "got", "tolerance", "reason", "passed")


def _fields(claim: Claim, artifact: Mapping, kind: str, places: list[dict]) -> list[dict]:
    """A row per field: the artifact's comparison (else the registry's), value and words."""
    comparisons, result = artifact.get("comparisons") or {}, artifact.get("result") or {}
    statistical = kind == "statistical"
    ratios = field_ratios(claim.expect, result) if statistical else {}
    cited = [tuple(place["cited"]) for place in places if place.get("cited")]
    rows = []
    for name in sorted(set(claim.expect) | set(comparisons)):
        expectation = claim.expect.get(name) or {}
        comparison = comparisons.get(name)
        if comparison is None:
            registered = (artifact.get("expected") or {}).get(name) or expectation
            shown, tolerance = shown_expectation(registered, statistical=statistical)
            comparison = dict(expected=shown, tolerance=tolerance, reason=registered.get("reason"))
        try:
            value = field_value(result, name)
        except KeyError:
            value = None
        spec = cited_spec(name, cited)
        rows.append(
            {key: comparison.get(key) for key in _COMPARED}
            | {
                "field": name,
                "expectation": claim.expect.get(name),
                "tolerance_over_se": tolerance_over_se(ratios.get(name)),
                "wide_because": expectation.get("wide_because"),
                "words": name.replace("_", " ").replace(".", ", "),
                "measured": None if value is None else measured(value, expectation, spec),
                "expected_words": expected_words(expectation, statistical=statistical),
            }
        )
    return rows


def describe(claim: Claim, judgement: Judgement, stated_in: list, publishable: bool, digests=None):
    """Everything the site says about one claim (its page, its ``claims.json`` entry);
    ``digests``: shared by claims described together (``mistakes.mutation_key``)."""
    artifact = judgement.artifact or {}
    summary = summary_of(claim, judgement)
    result = artifact.get("result")
    return {
        **summary,
        "chapter": claim.chapter,
        "fields": _fields(claim, artifact, summary["kind"], stated_in),
        "statistics": {
            name: value for name, value in sorted((result or {}).items()) if is_statistical(value)
        },
        "seeds": artifact.get("seeds"),
        "contract": {**(artifact.get("contract") or {}), **claim.shown_contract},
        "compute": artifact.get("compute", claim.compute),
        "key": artifact.get("key"),
        "registry_digest": artifact.get("registry_digest"),
        "provenance": artifact.get("provenance"),
        "error": artifact.get("error"),
        "page": page_path(claim.id),
        "record": record_path(claim.id) if publishable else None,
        "stated_in": list(stated_in),
        "catches": mutation_states(claim, digests=digests),
    }


def ledger_json(described: list[dict]) -> str:
    """The text of ``claims.json``: every claim described, and what each state means."""
    ledger = {"claims": described, "states": STATE_MEANINGS}
    return json.dumps(ledger, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --- a field's numbers as its claim page writes them, in the prose's format ---------------

SHOWN_DIGITS = 7  # at most this many significant digits; the record keeps every one


def _real(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def judged_width(value, expectation: Mapping | None) -> float | None:
    """The width a value is judged against: its interval over seeds, else its tolerance's."""
    if is_statistical(value):
        low, high = value["ci"]
        return high - low if high > low else None
    return 2 * half_width(expectation, 0.0) if expectation else None


def rule_spec(center: float, width: float | None) -> str:
    """The spec rounding ``center`` to ``width``'s leading digit (fixed point from 1e-4 to 1e7,
    else scientific); two significant digits below that digit; ``.7g`` without a width."""
    if not width or not _real(width) or not _real(center) or not center:
        return f".{SHOWN_DIGITS}g"
    place = math.floor(math.log10(abs(width)))
    magnitude = math.floor(math.log10(abs(center)))
    if magnitude < place:
        return ".1e"
    if -4 <= magnitude < SHOWN_DIGITS:
        return f".{max(0, min(-place, SHOWN_DIGITS - 1 - magnitude))}f"
    return f".{min(magnitude - place, SHOWN_DIGITS - 1)}e"


def _interval_spec(value: Mapping, width: float | None) -> str:
    """:func:`rule_spec` of an interval, made finer until its centre and ends read apart."""
    center = value["median"] if value.get("method") == "median-rank" else value["mean"]
    spec = rule_spec(center, width)
    while spec.endswith("f") and int(spec[1:-1]) < SHOWN_DIGITS:
        texts = {format(number, spec) for number in (center, *value["ci"])}
        if len(texts) == 3:
            break
        spec = f".{int(spec[1:-1]) + 1}f"
    return spec


def cited_spec(field: str, cited: list[tuple[str, str]]) -> str | None:
    """The spec the prose gives ``field``, or one of its dotted parts, where it cites it."""
    for name, spec in cited:
        if spec and (name == field or name.startswith(field + ".")):
            return spec
    return None


def measured(value, expectation: Mapping | None, spec: str | None) -> str:
    """A field's value: by the prose's ``spec`` if it applies, else by :func:`rule_spec`;
    a fraction of seeds as the share that met it; other values as they are."""
    if isinstance(value, str):
        return value
    if expectation and "fraction" in expectation and _real(value):
        return f"{value:.0%} of the seeds"
    if spec:
        try:
            return format_value(value, spec)
        except ValueError:
            pass  # the prose cites another part of the field; round this one by the rule
    width = judged_width(value, expectation)
    if is_statistical(value):
        return format_value(value, _interval_spec(value, width))
    if _real(value) and isinstance(value, float):
        return format_value(value, rule_spec(value, width))
    return format_value(value)


def _as_written(bound) -> str:
    if isinstance(bound, str):
        return bound
    return format_value(bound, ".7g") if _real(bound) else format_value(bound)


def expected_words(expectation: Mapping | None, *, statistical: bool = False) -> str:
    """A registered expectation (any shape ``claim_schema.json`` allows) as a sentence."""
    if not expectation:
        return "No expectation is registered."
    if "ci_within" in expectation:
        low, high = map(_as_written, expectation["ci_within"])
        return f"The 95% CI lies within {low} to {high}."
    if "fraction" in expectation:
        rule = expectation["fraction"]
        side = "above" if "above" in rule else "below"
        return f"At least {rule['at_least']:.0%} of the seeds {side} {_as_written(rule[side])}."
    bound = expectation.get("mean", expectation)
    if "equals" in bound:
        words = f"exactly {_as_written(bound['equals'])}"
    elif "interval" in bound:
        low, high = map(_as_written, bound["interval"])
        words = f"within {low} to {high}"
    elif "abs_tol" in bound:
        words = f"within {_as_written(bound['abs_tol'])} of {_as_written(bound['value'])}"
    else:
        words = (
            f"within a relative {_as_written(bound['rel_tol'])} of {_as_written(bound['value'])}"
        )
    prefix = "the mean " if "mean" in expectation else "every seed " if statistical else ""
    words = prefix + words
    return words[0].upper() + words[1:] + "."


def tolerance_over_se(ratio: Mapping | None) -> str | None:
    """A field's tolerance half-width over its seeds' standard error, as a sentence."""
    if ratio is None:
        return None
    value = ratio["ratio"]
    if math.isinf(value) or ratio["se"] == 0.0:
        return "No standard error: every seed gives the same value."
    shown = f"{value:.1f}" if value < 10 else f"{value:.0f}" if value < 1000 else f"{value:.2e}"
    return f"{shown} standard errors of the seeds' mean."
