"""What the site says about a claim, as plain data: no Sphinx build, a toy registry in tmp dirs.

Each test builds the model from a registry entry and a judgement made here (see
``tests/helpers/claimtools.py`` for the toy claim and the fixture registry), and checks what
a badge, a bound number, a claim page, the ledger and ``claims.json`` would show.
"""

import pytest
from claimtools import PLACE, TOY_ID, edit_artifact, verify_toy
from docutils import nodes

from claimbook.claims import harness_pin, judge, load_claim, verify_claim
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import badge_node, number_said, place_links
from claimbook.extensions.claim_pages import publishable_record
from claimbook.numbers import format_value


def described(registry, artifacts, stated_in=(), claim_id=TOY_ID) -> dict:
    claim = load_claim(claim_id, registry_dir=registry)
    judgement = judge(claim_id, registry_dir=registry, artifacts_dir=artifacts)
    publishable = publishable_record(claim_id, artifacts) is not None
    return model.describe(claim, judgement, list(stated_in), publishable)


# --- a verified claim -------------------------------------------------------------------------


def test_a_verified_claim_is_described_from_its_artifact(toy, registry, artifacts):
    artifact = verify_toy(registry, artifacts)
    info = described(registry, artifacts, [PLACE])
    assert (info["id"], info["state"], info["chapter"], info["kind"]) == (
        TOY_ID,
        "verified",
        1,
        "deterministic",
    )
    assert info["statement"] == artifact["statement"]
    assert info["page"] == f"claims/{TOY_ID}.html" and info["record"] == f"claims/{TOY_ID}.json"
    assert info["stated_in"] == [PLACE]
    assert info["provenance"] == artifact["provenance"] and info["key"] == artifact["key"]
    assert info["contract"]["seed"] == 'claim_seed("toy-seed") = ' + str(
        artifact["contract"]["seed"]
    )
    assert info["contract"]["dtype"] == "FP64"
    assert [row["field"] for row in info["fields"]] == ["count", "flag", "group.spread", "ratio"]
    assert all(row["passed"] for row in info["fields"])
    ratio = next(row for row in info["fields"] if row["field"] == "ratio")
    assert ratio == {
        "field": "ratio",
        "expected": 0.5,
        "got": 0.5,
        "tolerance": "abs_tol 1e-12",
        "reason": "A few ulps.",
        "passed": True,
        "tolerance_over_se": None,  # a deterministic claim has no seeds' standard error
        "wide_because": None,
        "expectation": {"value": 0.5, "abs_tol": 1e-12, "reason": "A few ulps."},
        "words": "ratio",
        "measured": "0.5000000",  # judged to 1e-12: at most seven significant digits
        "expected_words": "Within 1e-12 of 0.5.",
    }
    assert info["statistics"] == {} and info["error"] is None


def test_a_field_the_prose_cites_is_measured_in_the_prose_format(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    cited = {**PLACE, "as": "value", "cited": ["ratio", ".2f"]}
    rows = {row["field"]: row for row in described(registry, artifacts, [cited])["fields"]}
    assert rows["ratio"]["measured"] == format_value(0.5, ".2f") == "0.50"
    assert rows["count"]["measured"] == "3"  # not cited: as the rule writes it


def test_the_badge_of_a_verified_claim_hovers_with_its_statement(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    badge = badge_node("chapters/page", described(registry, artifacts))
    assert (badge.children[0].astext(), badge["claim-state"]) == (TOY_ID, "verified")
    assert badge["classes"] == ["claim-badge", "claim-verified"]
    assert badge["reftitle"].startswith("A toy witness returns a half")
    assert "(verified" not in badge["reftitle"]
    assert badge["refuri"] == f"../claims/{TOY_ID}.html"
    assert badge_node("intro", described(registry, artifacts))["refuri"] == f"claims/{TOY_ID}.html"


def test_a_badge_from_a_summary_and_from_a_page_description_agree(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    claim = load_claim(TOY_ID, registry_dir=registry)
    judgement = judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    from_summary = badge_node("intro", model.summary_of(claim, judgement))
    assert from_summary.pformat() == badge_node("intro", described(registry, artifacts)).pformat()


# --- claims that fail the build ---------------------------------------------------------------


def test_a_claim_not_run_shows_what_the_registry_expects(registry, artifacts):
    info = described(registry, artifacts)
    assert info["state"] == "not run" and "no artifact" in info["reason"]
    assert info["record"] is None and info["provenance"] is None
    assert info["statement"] == load_claim(TOY_ID, registry_dir=registry).statement
    rows = {row["field"]: row for row in info["fields"]}
    assert rows["ratio"] == {
        "field": "ratio",
        "expected": 0.5,
        "got": None,
        "tolerance": "abs_tol 1e-12",
        "reason": "A few ulps.",
        "passed": None,
        "tolerance_over_se": None,  # a deterministic claim has no seeds' standard error
        "wide_because": None,
        "expectation": {"value": 0.5, "abs_tol": 1e-12, "reason": "A few ulps."},
        "words": "ratio",
        "measured": None,
        "expected_words": "Within 1e-12 of 0.5.",
    }
    assert rows["group.spread"]["words"] == "group, spread"
    assert rows["group.spread"]["expected"] == [1.0, 1.5]
    assert rows["group.spread"]["tolerance"] == "closed interval"
    badge = badge_node("intro", info)
    assert badge["classes"] == ["claim-badge", "claim-not-run"]
    assert badge["reftitle"].endswith(f"(not run: {info['reason']})")


def test_a_failed_claim_shows_its_failed_field_and_why(toy, registry, artifacts):
    toy.result = {**toy.result, "count": 4}
    verify_toy(registry, artifacts)
    info = described(registry, artifacts)
    assert info["state"] == "failed" and "records status failed" in info["reason"]
    count = next(row for row in info["fields"] if row["field"] == "count")
    assert (count["expected"], count["got"], count["passed"]) == (3, 4, False)
    assert "(failed: " in model.badge_hover(info)


def test_a_stale_claim_keeps_its_record_and_says_why(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a["provenance"].update(version="0.0.1"))
    info = described(registry, artifacts)
    assert info["state"] == "stale" and "'0.0.1'" in info["reason"]
    assert info["provenance"]["version"] == "0.0.1" and info["record"] is not None


def test_a_computation_that_raised_shows_its_error(toy, registry, artifacts):
    toy.result = ZeroDivisionError("boom")
    verify_toy(registry, artifacts)
    info = described(registry, artifacts)
    assert info["state"] == "failed" and info["error"] == "ZeroDivisionError: boom"
    assert all(row["passed"] is None for row in info["fields"])  # nothing was compared


# --- statistical and refuted claims (the fixture registry) ------------------------------------


def test_a_statistical_claim_lists_its_intervals_and_seeds(fixture_registry, artifacts):
    registry = fixture_registry.directory
    artifact = verify_claim(
        "t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    info = described(registry, artifacts, claim_id="t01-noise-001")
    assert info["kind"] == "statistical" and info["seeds"] == artifact["seeds"]
    assert set(info["statistics"]) == {"draws", "estimate", "largest", "spread"} & set(
        artifact["result"]
    )
    assert info["statistics"]["estimate"] == artifact["result"]["estimate"]
    assert "claim_seeds(" in info["contract"]["seed"]
    low, high = artifact["result"]["estimate"]["ci"]
    assert f"(95% CI {low:.4g} to {high:.4g}) over 20 seeds." in model.badge_hover(info)


def test_a_statistical_claim_not_run_shows_its_statistical_expectations(fixture_registry):
    registry = fixture_registry.directory
    info = described(registry, registry / "no-artifacts", claim_id="t01-noise-001")
    estimate = next(row for row in info["fields"] if row["field"] == "estimate")
    assert estimate["expected"] == [0.98, 1.02] and estimate["tolerance"] == "interval within"
    draws = next(row for row in info["fields"] if row["field"] == "draws")
    assert draws["tolerance"] == "exact, every seed"


def test_a_refuted_claim_names_the_account_it_contradicts(fixture_registry, artifacts):
    registry = fixture_registry.directory
    verify_claim("t01-shift-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts)
    info = described(registry, artifacts, claim_id="t01-shift-001")
    assert info["state"] == "refuted"
    assert info["refutes"]["source"] == "a toy account written for this test fixture"
    badge = badge_node("intro", info)
    hover = badge["reftitle"]
    # Its badge says the account is refuted, in its own colour, never the failed one.
    assert badge["classes"] == ["claim-badge", "claim-refuted"]
    assert badge.children[1].astext() == "account refuted"
    assert "Account refuted: A common account says" in hover
    assert "a toy account written for this test fixture" in hover
    assert info["reason"] not in hover  # no build talk for a claim that holds
    # Its numbers are verified measurements: the verified mark and colour.
    assert model.STATE_MARKS["refuted"] == model.STATE_MARKS["verified"] == "\u2713"
    assert model.NUMBER_CLASSES["refuted"] == "claim-verified"
    assert number_said("refuted") == number_said("verified") == ""  # a screen reader: checked


@pytest.mark.parametrize("state", ["failed", "stale", "not run"])
def test_a_claim_registering_an_account_that_fails_shows_its_failure(state):
    # A refuted claim whose recomputation failed, went stale or did not run never reads as
    # refuted or verified: its badge word, mark and colour are the failing state's.
    info = {
        "id": "t01-shift-001",
        "state": state,
        "reason": "why",
        "statement": "A statement.",
        "kind": "deterministic",
        "refutes": {"account": "An account.", "source": "a source"},
        "result": None,
    }
    badge = badge_node("intro", info)
    assert badge.children[1].astext() == state
    assert badge["classes"][1] == model.STATE_CLASSES[state]
    hover = badge["reftitle"]
    assert "Account refuted" not in hover and hover.endswith(f"({state}: why)")
    assert model.STATE_MARKS[state] not in ("\u2713", "\u2260")
    assert model.NUMBER_CLASSES[state] == model.STATE_CLASSES[state]
    assert number_said(state) == f" ({state}, not checked)"


def test_place_links_keep_the_first_place_per_section():
    places = [
        {"page": "a.html", "section": "one", "anchor": "x-1", "chapter": "c"},
        {"page": "a.html", "section": "one", "anchor": "x-2", "chapter": "c"},
        {"page": "a.html", "section": "two", "anchor": "x-3", "chapter": "c"},
        {"page": "b.html", "section": "one", "anchor": "x-4", "chapter": "c"},
    ]
    links = place_links("intro", {"stated_in": places}).findall(nodes.reference)
    assert [link["refuri"].split("#")[1] for link in links] == ["x-1", "x-3", "x-4"]


# --- bound numbers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "c15-invariance-001.rms_shift_deviation:.3f",
            ("c15-invariance-001", "rms_shift_deviation", ".3f"),
        ),
        ("c16-x-001.gap.mean:.2f", ("c16-x-001", "gap.mean", ".2f")),
        (" c16-x-001.gap.ci ", ("c16-x-001", "gap.ci", "")),
    ],
)
def test_claim_value_syntax(text, expected):
    assert model.parse_claim_value(text) == expected


@pytest.mark.parametrize("text", ["c15-invariance-001", "c15-invariance-001.:.3f", ".x", "a..b"])
def test_claim_value_syntax_refuses_a_reference_without_a_field(text):
    with pytest.raises(ValueError, match="claim-value expects"):
        model.parse_claim_value(text)


def test_statistical_fields_render_mean_interval_and_both():
    field = {"mean": 1.2345, "ci": [1.1, 1.4], "level": 0.95, "method": "t", "per_seed": [1]}
    result = {"gap": field}
    assert format_value(model.field_value(result, "gap.mean"), ".3f") == "1.234"
    assert format_value(model.field_value(result, "gap.ci"), ".2f") == "[1.10, 1.40]"
    assert format_value(field, ".2f") == "1.23 (95% CI 1.10 to 1.40)"
    with pytest.raises(KeyError, match=r"gap\.median"):
        model.field_value(result, "gap.median")
    with pytest.raises(ValueError):
        format_value(model.field_value(result, "gap.per_seed"), ".2f")


def test_a_dotted_field_is_found_nested_or_by_its_dotted_name():
    assert model.field_value({"a": {"b": 1}}, "a.b") == 1
    assert model.field_value({"a.b": {"ci": [1, 2]}}, "a.b.ci") == [1, 2]
    with pytest.raises(KeyError, match="a"):
        model.field_value({"a": 1}, "a.b")


def test_values_that_are_not_numbers_are_refused_unless_shown_plainly():
    assert format_value(False) == "false" and format_value(float("inf")) == "inf"
    with pytest.raises(ValueError, match="is not a number"):
        format_value(True, ".2f")
    with pytest.raises(ValueError, match="is not a number"):
        format_value("text", "")


def test_an_account_reads_with_its_source_and_math_reads_as_text_in_a_hover():
    account = {"account": "BN fixes shift.", "source": "Paper 2015"}
    assert model.account_line(account) == "BN fixes shift. (Paper 2015)"
    assert model.account_line(None) is None
    statement = r"It falls like $B^{-1/2}$ from $\sqrt{2 - E[s]}$ at $\epsilon = 0$."
    assert model.plain_math(statement) == "It falls like B^(-1/2) from √(2 - E[s]) at ε = 0."
