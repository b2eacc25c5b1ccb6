"""What the site says about each claim, as plain data: badges, bound numbers, claim pages,
the ledger and ``claims.json``.

Nothing here imports docutils or Sphinx: every function takes the registry entry
(:class:`~claimbook.claims.registry.Claim`), the judgement
(:func:`claimbook.claims.judgement.judge`, whose artifact is the stored record) and, for a claim
page, the places that state the claim, already labelled by the Sphinx side. The extensions
turn the result into nodes: ``claims`` (badges, bound numbers, claim lines), ``claim_pages``
(a page per claim, the records, ``claims.json``) and ``claim_ledger`` (the ledger).

A *place* is a dict ``{page, anchor, chapter, section, as}``: the site page that states
the claim, the anchor of the statement, the chapter's and the section's labels, and how it
is stated (``badge``, ``value`` or ``line``).

Examples
--------
>>> page_path("c15-invariance-001"), record_path("c15-invariance-001")
('claims/c15-invariance-001.html', 'claims/c15-invariance-001.json')
>>> relative_uri("chapters/page", page_path("c15-invariance-001"))
'../claims/c15-invariance-001.html'
>>> format_value({"mean": 1.0, "ci": [0.9, 1.1], "level": 0.95}, ".2f")
'1.00 (95% CI 0.90 to 1.10)'
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from numbers import Real
from pathlib import Path

from claimbook.claims.compare import shown_expectation
from claimbook.claims.judgement import STATES, Judgement
from claimbook.claims.mutation_record import mutation_states
from claimbook.claims.ratios import field_ratios
from claimbook.claims.registry import Claim
from claimbook.claims.summary import badge_summary
from claimbook.numbers import format_value, is_statistical, level_percent
from claimbook.paths import artifact_path

__all__ = [
    "CLAIM_PAGES",
    "LEDGER_GROUPS",
    "LEDGER_JSON",
    "NUMBER_CLASSES",
    "NUMBER_WORDS",
    "STATE_CLASSES",
    "STATE_MARKS",
    "STATE_MEANINGS",
    "STATE_WORDS",
    "Badge",
    "account_line",
    "badge",
    "describe",
    "expectation_words",
    "field_texts",
    "field_value",
    "first_per_section",
    "format_value",
    "ledger",
    "ledger_json",
    "page_path",
    "parse_claim_value",
    "publishable_record",
    "record_path",
    "relative_uri",
    "resolution",
    "shown_number",
    "shown_value",
    "summary_of",
    "tolerance_over_se",
]

# The site folder of the claim pages and of the published records beside them.
CLAIM_PAGES = "claims"
LEDGER_JSON = "claims.json"
STATE_CLASSES = {state: "claim-" + state.replace(" ", "-") for state in STATES}
# The mark a bound number carries, so that its state is visible without hovering or colour.
# A refuted claim is the book's own measurement, verified, that contradicts a common account:
# its numbers carry the verified mark, and its badge says the account is refuted.
STATE_MARKS = {
    "verified": "\u2713",  # check mark
    "refuted": "\u2713",  # the measurement that refutes the account is verified
    "failed": "\u2717",  # ballot x
    "stale": "~",
    "not run": "?",
}
# The word a badge shows for a state (the state itself, but for a refuted claim).
STATE_WORDS = {state: state for state in STATES} | {"refuted": "account refuted"}
# What a bound number says it is (its mark's name), for screen readers and the page legend.
NUMBER_WORDS = {
    "verified": "verified measurement",
    "refuted": "verified measurement",
    "failed": "failed",
    "stale": "stale",
    "not run": "not run",
}
# The class a bound number is coloured by: a refuted claim's numbers are verified measurements.
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


def account_line(refutes: Mapping | None) -> str | None:
    """``"<account> (<source>)"`` of a claim that registers an account, else None.

    Examples
    --------
    >>> account_line({"account": "BN fixes shift.", "source": "Paper 2015"})
    'BN fixes shift. (Paper 2015)'
    >>> account_line(None) is None
    True
    """
    if not refutes:
        return None
    account = str(refutes.get("account") or "").strip()
    source = str(refutes.get("source") or "").strip()
    return f"{account} ({source})" if source else account


# --- site paths -----------------------------------------------------------------------------


def page_path(claim_id: str) -> str:
    """The site path of a claim's page, ``claims/<id>.html``."""
    return f"{CLAIM_PAGES}/{claim_id}.html"


def record_path(claim_id: str) -> str:
    """The site path of a claim's published record, ``claims/<id>.json``."""
    return f"{CLAIM_PAGES}/{claim_id}.json"


def relative_uri(docname: str, target: str) -> str:
    """URI of a site-root-relative ``target`` as seen from page ``docname``."""
    return posixpath.relpath(target, posixpath.dirname(docname) or ".")


def publishable_record(claim_id: str, artifacts_dir: str | Path | None = None) -> bytes | None:
    """The artifact's bytes if it is a regular file reached without following a symlink.

    The record published beside a claim's page is only ever this: a symlink in
    ``artifacts/`` (the file, its folder or the folder above) is never followed.
    """
    path = artifact_path(claim_id, artifacts_dir)
    if any(parent.is_symlink() for parent in (path.parent, path.parent.parent)):
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        with os.fdopen(descriptor, "rb") as handle:
            descriptor = -1
            return handle.read()
    finally:
        if descriptor >= 0:
            os.close(descriptor)


# --- a badge --------------------------------------------------------------------------------


def summary_of(claim: Claim, judgement: Judgement) -> dict:
    """What a badge says: id, state, reason, and statement, kind, refutes and result.

    Read from the artifact when there is one, else from the registry entry.
    """
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


@dataclass(frozen=True)
class Badge:
    """A claim's badge: its id and state word, coloured by state, linking to its page."""

    claim: str
    state: str
    hover: str

    @property
    def classes(self) -> list[str]:
        return ["claim-badge", STATE_CLASSES[self.state]]

    @property
    def word(self) -> str:
        """What the badge says: the state, or "account refuted" for a refuted claim."""
        return STATE_WORDS[self.state]

    def uri(self, docname: str) -> str:
        """The claim page's URI from page ``docname``."""
        return relative_uri(docname, page_path(self.claim))


def badge(summary: Mapping) -> Badge:
    """The badge of a claim summarized by :func:`summary_of` (or described by :func:`describe`).

    Its hover text is the statement with a statistical claim's intervals and a refuted
    account, and, unless the claim is verified or refuted, its state and the reason.
    """
    hover = badge_summary(summary)
    if summary["state"] not in ("verified", "refuted"):
        hover += f" ({summary['state']}: {summary['reason']})"
    return Badge(summary["id"], summary["state"], hover)


# --- a bound number -------------------------------------------------------------------------


def parse_claim_value(text: str) -> tuple[str, str, str]:
    """``"<id>.<field>[:spec]"`` -> ``(id, field, spec)``; raises ValueError if malformed.

    Examples
    --------
    >>> parse_claim_value("c15-invariance-001.rms_shift_deviation:.3f")
    ('c15-invariance-001', 'rms_shift_deviation', '.3f')
    >>> parse_claim_value("c16-x-001.gap.ci")
    ('c16-x-001', 'gap.ci', '')
    """
    reference, _, spec = text.strip().partition(":")
    claim_id, _, field = reference.partition(".")
    if not claim_id or not field or any(not part for part in field.split(".")):
        raise ValueError(f"claim-value expects <claim-id>.<field>[:format], got {text.strip()!r}")
    return claim_id, field, spec


def field_value(result: Mapping, field: str):
    """The value at dotted ``field`` of a result; raises KeyError naming the missing part.

    A result may nest fields (``{"a": {"b": 1}}``) or key them by their dotted name, as a
    statistical claim's record does (``{"a.b": {"mean": ..., "ci": ...}}``): at each level
    the longest dotted key present wins, so ``a.b.ci`` reaches the interval either way.

    Examples
    --------
    >>> field_value({"a.b": {"ci": [1, 2]}}, "a.b.ci")
    [1, 2]
    """
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


# --- numbers and expectations as a claim page shows them ------------------------------------

# A claim page shows at most this many significant digits of a number: the record beside it
# (``claims/<id>.json``) keeps every digit.
SHOWN_DIGITS = 7


def _last_place(bound: float) -> float | None:
    """The place value of a registered bound's last digit: 0.39 -> 0.01, 117 -> 1."""
    if not isinstance(bound, Real) or isinstance(bound, bool) or not bound:
        return None
    if not math.isfinite(bound):
        return None
    return 10.0 ** Decimal(repr(float(bound))).normalize().as_tuple().exponent


def resolution(expectation: Mapping | None) -> float | None:
    """The smallest difference a registered expectation tells apart, or None (exact, or none).

    A tolerance resolves itself (``abs_tol``; ``rel_tol`` times the value); an interval, the
    last digit its bounds are written to; a fraction of seeds and ``equals``, nothing finer
    than the number itself.

    Examples
    --------
    >>> resolution({"value": 2.055, "abs_tol": 0.0005})
    0.0005
    >>> resolution({"ci_within": [0.39, 2.2]})
    0.01
    >>> resolution({"mean": {"value": 4.0, "rel_tol": 0.01}})
    0.04
    >>> resolution({"equals": 3}) is None
    True
    """
    if not expectation:
        return None
    if "mean" in expectation:
        return resolution(expectation["mean"])
    if "abs_tol" in expectation:
        return float(expectation["abs_tol"]) or None
    if "rel_tol" in expectation:
        return float(expectation["rel_tol"] * abs(expectation["value"])) or None
    bounds = expectation.get("interval") or expectation.get("ci_within")
    if bounds:
        places = [place for place in map(_last_place, bounds) if place is not None]
        return min(places) if places else None
    return None


def _number_spec(value: float, step: float | None) -> str:
    """The format spec that rounds ``value`` to ``step``, within :data:`SHOWN_DIGITS`."""
    if not step or not value:  # exact, nothing registered, or zero: as written
        return f".{SHOWN_DIGITS}g"
    magnitude = math.floor(math.log10(abs(value)))
    digits = magnitude - math.floor(math.log10(step)) + 1
    if digits < 1:  # below what the tolerance resolves: its size, in two digits
        return ".2g"
    digits = min(digits, SHOWN_DIGITS)
    if -4 <= magnitude < SHOWN_DIGITS:
        return f".{max(0, digits - magnitude - 1)}f"
    return f".{digits - 1}e"


def shown_number(value, step: float | None = None) -> str:
    """A number as a claim page shows it: rounded to ``step`` (what the field's tolerance
    resolves, :func:`resolution`), at most :data:`SHOWN_DIGITS` significant digits, at least
    two when the value is below the step; without a step as written (``.7g``); integers,
    booleans and text as they are. The text
    is :func:`format_value`'s, with the spec chosen here.

    Examples
    --------
    >>> shown_number(2.0550947413870233, 0.0005)
    '2.0551'
    >>> shown_number(0.9950369440318807, 0.01)
    '1.00'
    >>> shown_number(0.8790322580645161, 1e-12)
    '0.8790323'
    >>> shown_number(2.220446049250313e-16, 1e-12)
    '2.2e-16'
    >>> shown_number(47548378174.90708, 47.5)
    '4.754838e+10'
    >>> shown_number(438304768), shown_number(True), shown_number("never")
    ('438304768', 'true', 'never')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return format_value(value, _number_spec(value, step))
    return format_value(value)


def shown_value(value, step: float | None = None) -> str:
    """A field's value as a page shows it: a number, ``[lo, hi]``, a list of per-seed values,
    or a statistical summary's "m (95% CI lo to hi)", each number by :func:`shown_number`.

    Examples
    --------
    >>> shown_value([1.1649261861348141, 1.5814908121026008], 0.01)
    '[1.16, 1.58]'
    >>> shown_value({"mean": 1.37, "ci": [1.1649, 1.5815], "level": 0.95}, 0.01)
    '1.37 (95% CI 1.16 to 1.58)'
    """
    if value is None:
        return "\u2014"
    if is_statistical(value):
        low, high = value["ci"]
        center = value["median"] if value.get("method") == "median-rank" else value["mean"]
        median = "median; " if value.get("method") == "median-rank" else ""
        return (
            f"{shown_number(center, step)} ({median}{level_percent(value.get('level'))} CI "
            f"{shown_number(low, step)} to {shown_number(high, step)})"
        )
    if isinstance(value, (list, tuple)):
        shown = ", ".join(shown_number(item, step) for item in value)
        return f"[{shown}]" if len(value) == 2 else shown
    if isinstance(value, Mapping):
        return ", ".join(f"{key} {shown_value(item, step)}" for key, item in sorted(value.items()))
    return shown_number(value, step)


def _bound(value) -> str:
    """A registered bound or threshold, as written (at most :data:`SHOWN_DIGITS` digits)."""
    return shown_number(value)


def _bounds(values) -> str:
    low, high = values
    return f"[{_bound(low)}, {_bound(high)}]"


def _within(bound: Mapping, step: float | None) -> str:
    value = shown_number(bound["value"], step)
    if "abs_tol" in bound:
        return f"within {_bound(bound['abs_tol'])} of {value}"
    return f"within a relative {_bound(bound['rel_tol'])} of {value}"


def expectation_words(expectation: Mapping | None, *, statistical: bool = False) -> str:
    """A registered expectation in words, for every shape the registry allows
    (``engine/claimbook/claims/claim_schema.json``): equals, value with ``abs_tol`` or
    ``rel_tol``, interval, and over seeds ``ci_within``, ``mean`` and ``fraction``; a
    per-value expectation of a statistical claim holds for every seed.

    Examples
    --------
    >>> expectation_words({"ci_within": [0.39, 2.2]}, statistical=True)
    'interval within [0.39, 2.2]'
    >>> expectation_words({"fraction": {"below": 1e-14, "at_least": 1.0}}, statistical=True)
    'at least 100% of seeds below 1e-14'
    >>> expectation_words({"value": 2.055, "abs_tol": 0.0005})
    'within 0.0005 of 2.0550'
    >>> expectation_words({"value": 0.75, "rel_tol": 1e-12}, statistical=True)
    'every seed within a relative 1e-12 of 0.7500000'
    >>> expectation_words({"equals": "never"})
    'exactly never'
    >>> expectation_words({"interval": [0.0, 1e-12]})
    'within [0, 1e-12]'
    >>> expectation_words({"mean": {"value": 1.0, "abs_tol": 0.05}}, statistical=True)
    'mean within 0.05 of 1.00'
    """
    if not expectation:
        return "no expectation registered"
    step = resolution(expectation)
    if "ci_within" in expectation:
        return f"interval within {_bounds(expectation['ci_within'])}"
    if "mean" in expectation:
        return f"mean {_within(expectation['mean'], step)}"
    if "fraction" in expectation:
        rule = expectation["fraction"]
        side = "above" if "above" in rule else "below"
        return f"at least {rule['at_least']:.0%} of seeds {side} {_bound(rule[side])}"
    if "equals" in expectation:
        words = f"exactly {shown_number(expectation['equals'])}"
    elif "interval" in expectation:
        words = f"within {_bounds(expectation['interval'])}"
    else:
        words = _within(expectation, step)
    return f"every seed {words}" if statistical else words


def field_texts(field: Mapping, *, statistical: bool = False) -> dict:
    """``{"expected", "got"}`` of a field row (:func:`describe`'s ``fields``) as a page
    shows them: the expectation in words, the value rounded to what it resolves; a fraction
    of seeds as a percentage of them.

    Examples
    --------
    >>> field_texts(
    ...     {"expectation": {"fraction": {"above": 2.0, "at_least": 1.0}}, "got": 1.0},
    ...     statistical=True,
    ... )
    {'expected': 'at least 100% of seeds above 2', 'got': '100% of seeds'}
    """
    expectation = field.get("expectation")
    got = field.get("got")
    if expectation and "fraction" in expectation and isinstance(got, Real):
        shown = f"{got:.0%} of seeds"
    else:
        shown = shown_value(got, resolution(expectation))
    return {"expected": expectation_words(expectation, statistical=statistical), "got": shown}


# --- a claim page, and its entry in claims.json ---------------------------------------------


def tolerance_over_se(ratio: Mapping | None) -> str | None:
    """A field's tolerance half-width over its seeds' standard error, as a page shows it.

    Examples
    --------
    >>> tolerance_over_se({"half_width": 0.04, "se": 0.01, "ratio": 4.0})
    '4.0'
    >>> tolerance_over_se({"half_width": 0.05, "se": 1e-7, "ratio": 5e5})
    '5.00e+05'
    >>> tolerance_over_se({"half_width": 1e-15, "se": 0.0, "ratio": math.inf})
    'inf (every seed gives the same value)'
    """
    if ratio is None:
        return None
    if math.isinf(ratio["ratio"]):
        return "inf (every seed gives the same value)"
    if ratio["se"] == 0.0:
        return "0 (exact, every seed the same)"
    value = ratio["ratio"]
    if value < 10:
        return f"{value:.1f}"
    return f"{value:.0f}" if value < 1000 else f"{value:.2e}"


def _fields(claim: Claim, artifact: Mapping, kind: str) -> list[dict]:
    """A row per field: the artifact's comparison, or what the registry expects (not run);
    for a statistical claim, each field's tolerance in standard errors of the seeds' mean
    (:mod:`claimbook.claims.ratios`) and, above 10, the registry's ``wide_because``."""
    expected = artifact.get("expected") or {}
    comparisons = artifact.get("comparisons") or {}
    result = artifact.get("result") or {}
    ratios = field_ratios(claim.expect, result) if kind == "statistical" else {}
    rows = []
    for name in sorted(set(claim.expect) | set(comparisons)):
        comparison = comparisons.get(name)
        if comparison is None:
            expectation = expected.get(name) or claim.expect[name]
            shown, tolerance = shown_expectation(expectation, statistical=kind == "statistical")
            comparison = {"expected": shown, "tolerance": tolerance}
            comparison["reason"] = expectation.get("reason")
        rows.append(
            {
                "field": name,
                "expected": comparison.get("expected"),
                "got": comparison.get("got"),
                "tolerance": comparison.get("tolerance"),
                "reason": comparison.get("reason"),
                "passed": comparison.get("passed"),
                "expectation": claim.expect.get(name),
                "tolerance_over_se": tolerance_over_se(ratios.get(name)),
                "wide_because": (claim.expect.get(name) or {}).get("wide_because"),
            }
        )
    return rows


def describe(claim: Claim, judgement: Judgement, stated_in: list[dict], publishable: bool) -> dict:
    """Everything the site says about one claim: its page's content and its ``claims.json`` entry.

    ``stated_in`` are the places that state it, in the book's order; ``publishable`` says
    whether its record is published beside its page (see :func:`publishable_record`).
    """
    artifact = judgement.artifact or {}
    summary = summary_of(claim, judgement)
    result = artifact.get("result")
    return {
        **summary,
        "chapter": claim.chapter,
        "fields": _fields(claim, artifact, summary["kind"]),
        "statistics": {
            name: value for name, value in sorted((result or {}).items()) if is_statistical(value)
        },
        "seeds": artifact.get("seeds"),
        # The registered contract, with a derived seed shown with its derivation.
        "contract": {**(artifact.get("contract") or {}), **claim.shown_contract},
        "compute": artifact.get("compute", claim.compute),
        "key": artifact.get("key"),
        "registry_digest": artifact.get("registry_digest"),
        "provenance": artifact.get("provenance"),
        "error": artifact.get("error"),
        "page": page_path(claim.id),
        "record": record_path(claim.id) if publishable else None,
        "stated_in": list(stated_in),
        # The mistakes it exists to catch, with the state of the last mutate run.
        "catches": mutation_states(claim),
    }


def first_per_section(places: list[dict]) -> list[dict]:
    """The first place in each section (a section may state a claim several times)."""
    seen, first = set(), []
    for place in places:
        key = (place["page"], place["section"])
        if key not in seen:
            seen.add(key)
            first.append(place)
    return first


# --- the ledger and claims.json -----------------------------------------------------------


def _ledger_order(info: Mapping):
    """Claims in the order the book first states them; unstated claims last, by id."""
    first = info["stated_in"][0] if info["stated_in"] else None
    if first is None:
        return (1, "", 0, info["id"])
    return (0, first["page"], int(first["anchor"].rsplit("-", 1)[1]), info["id"])


# The ledger's groups, in the order it shows them: what fails the build first, then the
# book's verified results, then the accounts its measurements refute.
LEDGER_GROUPS = (
    ("failing", "Failing: the build fails until these are fixed", ("failed", "stale", "not run")),
    ("verified", "Verified results", ("verified",)),
    (
        "refuted",
        "Refuted accounts: verified measurements that contradict a common account",
        ("refuted",),
    ),
)
# The ledger's summary, singular and plural: "1 claim: 1 verified result."
_SUMMARY_WORDS = {
    "verified": ("verified result", "verified results"),
    "refuted": ("refuted account", "refuted accounts"),
}


def _counted(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _chapter_title(chapter, described: list[dict]) -> str:
    """ "Chapter <label>" as the book labels it where one of its claims is stated."""
    group = [info for info in described if info["chapter"] == chapter]
    stated = next((info["stated_in"][0] for info in group if info["stated_in"]), None)
    return f"Chapter {stated['chapter'] if stated else chapter}"


def ledger(described: list[dict]) -> dict:
    """The ledger: ``{"summary", "groups": [{"id", "title", "chapters": [{"title",
    "claims"}]}]}``.

    Claims are grouped by state (:data:`LEDGER_GROUPS`: failing, verified results, refuted
    accounts; an empty group is left out), then by chapter in number order, each titled as
    the book labels it where one of its claims is stated; a chapter's claims in the order the
    book first states them.
    """
    groups = []
    for key, title, states in LEDGER_GROUPS:
        members = [info for info in described if info["state"] in states]
        chapters = [
            {
                "title": _chapter_title(chapter, described),
                "claims": sorted(
                    (info for info in members if info["chapter"] == chapter), key=_ledger_order
                ),
            }
            for chapter in sorted({info["chapter"] for info in members})
        ]
        if chapters:
            groups.append({"id": key, "title": title, "chapters": chapters})
    counts = {state: sum(info["state"] == state for info in described) for state in STATES}
    shown = ", ".join(
        _counted(counts[state], *_SUMMARY_WORDS.get(state, (state, state)))
        for state in STATES
        if counts[state]
    )
    return {
        "summary": f"{_counted(len(described), 'claim', 'claims')}: {shown}.",
        "groups": groups,
    }


def ledger_json(described: list[dict]) -> str:
    """The text of ``claims.json``: every claim described, and what each state means.

    Sorted keys and no timestamps: an unchanged book gives the same bytes.
    """
    ledger = {"claims": described, "states": {state: STATE_MEANINGS[state] for state in STATES}}
    return json.dumps(ledger, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
