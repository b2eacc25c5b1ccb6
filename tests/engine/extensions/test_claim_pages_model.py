"""What the site says about a claim, as plain data: no Sphinx build, a toy registry in tmp dirs.

Each test builds the model from a registry entry and a judgement made here (see
``tests/helpers/claimtools.py`` for the toy claim and the fixture registry), and checks what
a badge, a bound number, a claim page, the ledger and ``claims.json`` would show.
"""

import json
import os
import re

import pytest
from claimtools import TOY_ID, edit_artifact, verify_toy

from claimbook.claims import artifact_path, harness_pin, judge, load_claim, verify_claim
from claimbook.extensions import claim_pages_model as model

PLACE = {
    "page": "chapters/page.html",
    "anchor": f"claim-{TOY_ID}-3",
    "chapter": "15. A page",
    "section": "15.1 A section",
    "as": "badge",
}


def described(registry, artifacts, stated_in=(), claim_id=TOY_ID) -> dict:
    claim = load_claim(claim_id, registry_dir=registry)
    judgement = judge(claim_id, registry_dir=registry, artifacts_dir=artifacts)
    publishable = model.publishable_record(claim_id, artifacts) is not None
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
        "reason": "a few ulps",
        "passed": True,
        "tolerance_over_se": None,  # a deterministic claim has no seeds' standard error
        "wide_because": None,
        "expectation": {"value": 0.5, "abs_tol": 1e-12, "reason": "a few ulps"},
    }
    assert info["statistics"] == {} and info["error"] is None


def test_the_badge_of_a_verified_claim_hovers_with_its_statement(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    badge = model.badge(described(registry, artifacts))
    assert (badge.claim, badge.state) == (TOY_ID, "verified")
    assert badge.classes == ["claim-badge", "claim-verified"]
    assert badge.hover.startswith("A toy witness returns a half")
    assert "(verified" not in badge.hover
    assert badge.uri("chapters/page") == f"../claims/{TOY_ID}.html"
    assert badge.uri("intro") == f"claims/{TOY_ID}.html"


def test_a_badge_from_a_summary_and_from_a_page_description_agree(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    claim = load_claim(TOY_ID, registry_dir=registry)
    judgement = judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    from_summary = model.badge(model.summary_of(claim, judgement))
    assert from_summary == model.badge(described(registry, artifacts))


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
        "reason": "a few ulps",
        "passed": None,
        "tolerance_over_se": None,  # a deterministic claim has no seeds' standard error
        "wide_because": None,
        "expectation": {"value": 0.5, "abs_tol": 1e-12, "reason": "a few ulps"},
    }
    assert rows["group.spread"]["expected"] == [1.0, 1.5]
    assert rows["group.spread"]["tolerance"] == "closed interval"
    badge = model.badge(info)
    assert badge.classes == ["claim-badge", "claim-not-run"]
    assert badge.hover.endswith(f"(not run: {info['reason']})")


def test_a_failed_claim_shows_its_failed_field_and_why(toy, registry, artifacts):
    toy.result = {**toy.result, "count": 4}
    verify_toy(registry, artifacts)
    info = described(registry, artifacts)
    assert info["state"] == "failed" and "records status failed" in info["reason"]
    count = next(row for row in info["fields"] if row["field"] == "count")
    assert (count["expected"], count["got"], count["passed"]) == (3, 4, False)
    assert "(failed: " in model.badge(info).hover


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


# --- the record: published only when it is a regular file -------------------------------------


def test_a_symlinked_record_is_not_publishable(toy, registry, artifacts, tmp_path):
    verify_toy(registry, artifacts)
    path = artifact_path(TOY_ID, artifacts)
    assert model.publishable_record(TOY_ID, artifacts) == path.read_bytes()
    outside = tmp_path / "outside.json"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    os.symlink(outside, path)
    assert model.publishable_record(TOY_ID, artifacts) is None
    assert described(registry, artifacts)["record"] is None


def test_a_record_in_a_symlinked_folder_is_not_publishable(toy, registry, artifacts, tmp_path):
    verify_toy(registry, artifacts)
    real = tmp_path / "real"
    artifacts.rename(real)
    artifacts.symlink_to(real, target_is_directory=True)
    assert artifact_path(TOY_ID, artifacts).is_file()
    assert model.publishable_record(TOY_ID, artifacts) is None


def test_no_record_without_an_artifact(registry, artifacts):
    assert model.publishable_record(TOY_ID, artifacts) is None


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
    assert f"[{low:.4g}, {high:.4g}] over 20 seeds" in model.badge(info).hover


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
    badge = model.badge(info)
    # Its badge says the account is refuted, in its own colour, never the failed one.
    assert badge.classes == ["claim-badge", "claim-refuted"]
    assert badge.word == "account refuted"
    assert "Account refuted: A common account says" in badge.hover
    assert "a toy account written for this test fixture" in badge.hover
    assert info["reason"] not in badge.hover  # no build talk for a claim that holds
    # Its numbers are verified measurements: the verified mark and colour.
    assert model.STATE_MARKS["refuted"] == model.STATE_MARKS["verified"] == "\u2713"
    assert model.NUMBER_CLASSES["refuted"] == "claim-verified"
    assert model.NUMBER_WORDS["refuted"] == "verified measurement"


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
    badge = model.badge(info)
    assert badge.word == state and badge.classes[1] == model.STATE_CLASSES[state]
    assert "Account refuted" not in badge.hover and badge.hover.endswith(f"({state}: why)")
    assert model.STATE_MARKS[state] not in ("\u2713", "\u2260")
    assert model.NUMBER_CLASSES[state] == model.STATE_CLASSES[state]
    assert model.NUMBER_WORDS[state] == state


# --- the ledger and claims.json ---------------------------------------------------------------


def _info(claim_id, chapter, state, stated_in=()):
    return {"id": claim_id, "chapter": chapter, "state": state, "stated_in": list(stated_in)}


def _place(page, serial, chapter):
    return {"page": page, "anchor": f"claim-x-{serial}", "chapter": chapter, "section": "s"}


def test_the_ledger_groups_by_chapter_in_the_order_the_book_states_claims():
    described_claims = [
        _info("c16-b-001", 16, "failed", [_place("chapters/b.html", 2, "16. B")]),
        _info("c15-z-001", 15, "verified", [_place("chapters/a.html", 9, "15. A")]),
        _info("c15-y-001", 15, "refuted", [_place("chapters/a.html", 10, "15. A")]),
        _info("c15-a-001", 15, "not run"),  # stated nowhere: last
        _info("c15-x-001", 15, "verified", [_place("chapters/a.html", 4, "15. A")]),
    ]
    shown = model.ledger(described_claims)
    assert shown["summary"] == (
        "5 claims: 2 verified results, 1 refuted account, 1 failed, 1 not run."
    )
    # Failing first, then the verified results, then the refuted accounts.
    groups = {group["id"]: group["chapters"] for group in shown["groups"]}
    assert list(groups) == ["failing", "verified", "refuted"]
    assert [chapter["title"] for chapter in groups["failing"]] == [
        "Chapter 15. A",  # titled from a claim of the chapter stated elsewhere
        "Chapter 16. B",
    ]
    assert [info["id"] for info in groups["failing"][0]["claims"]] == ["c15-a-001"]
    assert [info["id"] for info in groups["failing"][1]["claims"]] == ["c16-b-001"]
    assert [info["id"] for info in groups["verified"][0]["claims"]] == [
        "c15-x-001",  # anchor serial 4 before 9 (numerically, not as text)
        "c15-z-001",
    ]
    assert [info["id"] for info in groups["refuted"][0]["claims"]] == ["c15-y-001"]


def test_a_chapter_whose_claims_are_stated_nowhere_is_titled_by_its_number():
    shown = model.ledger([_info("c17-a-001", 17, "verified")])
    assert [group["id"] for group in shown["groups"]] == ["verified"]  # empty groups left out
    assert shown["groups"][0]["chapters"][0]["title"] == "Chapter 17"
    assert shown["summary"] == "1 claim: 1 verified result."


def test_claims_json_is_sorted_and_names_every_state(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    info = described(registry, artifacts, [PLACE])
    text = model.ledger_json([info])
    assert text.endswith("}\n") and text.index('"claims"') < text.index('"states"')
    data = json.loads(text)
    assert data["claims"] == [info]
    assert list(data["states"]) == sorted(model.STATE_MEANINGS)
    assert set(data["states"]) == set(model.STATE_CLASSES) == set(model.STATE_MARKS)
    assert list(json.loads(text.replace("\n", ""))["claims"][0]) == sorted(info)


def test_first_per_section_keeps_one_place_per_section():
    places = [
        {"page": "a.html", "section": "one", "anchor": "x-1"},
        {"page": "a.html", "section": "one", "anchor": "x-2"},
        {"page": "a.html", "section": "two", "anchor": "x-3"},
        {"page": "b.html", "section": "one", "anchor": "x-4"},
    ]
    assert [p["anchor"] for p in model.first_per_section(places)] == ["x-1", "x-3", "x-4"]


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
    assert model.format_value(model.field_value(result, "gap.mean"), ".3f") == "1.234"
    assert model.format_value(model.field_value(result, "gap.ci"), ".2f") == "[1.10, 1.40]"
    assert model.format_value(field, ".2f") == "1.23 (95% CI 1.10 to 1.40)"
    with pytest.raises(KeyError, match=r"gap\.median"):
        model.field_value(result, "gap.median")
    with pytest.raises(ValueError):
        model.format_value(model.field_value(result, "gap.per_seed"), ".2f")


def test_a_dotted_field_is_found_nested_or_by_its_dotted_name():
    assert model.field_value({"a": {"b": 1}}, "a.b") == 1
    assert model.field_value({"a.b": {"ci": [1, 2]}}, "a.b.ci") == [1, 2]
    with pytest.raises(KeyError, match="a"):
        model.field_value({"a": 1}, "a.b")


def test_values_that_are_not_numbers_are_refused_unless_shown_plainly():
    assert model.format_value(False) == "false" and model.format_value(float("inf")) == "inf"
    with pytest.raises(ValueError, match="is not a number"):
        model.format_value(True, ".2f")
    with pytest.raises(ValueError, match="is not a number"):
        model.format_value("text", "")


# --- numbers and expectations as a claim page shows them -------------------------------------

# Every expectation shape the registry allows (claim_schema.json, $defs): what a claim page
# says for it, deterministic and over seeds.
EXPECTATION_WORDS = [
    ({"equals": 3}, False, "exactly 3"),
    ({"equals": 3}, True, "every seed exactly 3"),
    ({"equals": True}, False, "exactly true"),
    ({"equals": "never"}, False, "exactly never"),
    ({"equals": 2.5}, False, "exactly 2.5"),
    ({"value": 2.055, "abs_tol": 0.0005}, False, "within 0.0005 of 2.0550"),
    (
        {"value": 0.8790322580645161, "rel_tol": 1e-12},
        True,
        "every seed within a relative 1e-12 of 0.8790323",
    ),
    ({"value": 47548378175.0, "rel_tol": 1e-9}, False, "within a relative 1e-09 of 4.754838e+10"),
    ({"interval": [0.99, 1.0]}, False, "within [0.99, 1]"),
    ({"interval": [0.0, 1e-12]}, True, "every seed within [0, 1e-12]"),
    ({"ci_within": [0.39, 2.2]}, True, "interval within [0.39, 2.2]"),
    ({"mean": {"value": 1.0, "abs_tol": 0.05}}, True, "mean within 0.05 of 1.00"),
    ({"mean": {"value": 4.0, "rel_tol": 0.01}}, True, "mean within a relative 0.01 of 4.00"),
    ({"fraction": {"above": 2.0, "at_least": 1.0}}, True, "at least 100% of seeds above 2"),
    ({"fraction": {"below": 1e-14, "at_least": 0.9}}, True, "at least 90% of seeds below 1e-14"),
    (None, False, "no expectation registered"),
]


@pytest.mark.parametrize(("expectation", "statistical", "words"), EXPECTATION_WORDS)
def test_every_expectation_shape_reads_in_words(expectation, statistical, words):
    assert model.expectation_words(expectation, statistical=statistical) == words


def test_the_word_table_covers_every_shape_of_the_schema():
    from importlib import resources

    schema = json.loads(
        resources.files("claimbook.claims").joinpath("claim_schema.json").read_text()
    )
    shapes = {
        ref["$ref"].rsplit("/", 1)[1]
        for ref in schema["properties"]["expect"]["additionalProperties"]["oneOf"]
    }
    keys = {
        "equals": "equals",
        "absolute": "abs_tol",
        "relative": "rel_tol",
        "interval": "interval",
        "ci_within": "ci_within",
        "mean": "mean",
        "fraction": "fraction",
    }
    assert set(keys) == shapes
    covered = {
        key for expectation, _, _ in EXPECTATION_WORDS if expectation for key in expectation
    }
    covered |= {
        key
        for expectation, _, _ in EXPECTATION_WORDS
        if expectation and "mean" in expectation
        for key in expectation["mean"]
    }
    assert set(keys.values()) <= covered


@pytest.mark.parametrize(
    ("value", "expectation", "shown"),
    [
        (2.0550947413870233, {"value": 2.055, "abs_tol": 0.0005}, "2.0551"),
        (316.2277660168379, {"value": 316.228, "abs_tol": 0.0005}, "316.2278"),
        (4.742971833882059e-05, {"value": 4.743e-05, "rel_tol": 0.001}, "4.743e-05"),
        # A tighter tolerance than a page shows: seven significant digits.
        (0.8790322580645161, {"value": 0.8790322580645161, "rel_tol": 1e-12}, "0.8790323"),
        (16.00000000000001, {"value": 16.0, "rel_tol": 1e-12}, "16.00000"),
        # Below what the interval resolves: its size in two digits, never 0.000000000000.
        (2.220446049250313e-16, {"interval": [0.0, 1e-12]}, "2.2e-16"),
        (7.477445465525942e-05, {"interval": [0.0, 0.0001]}, "7.5e-05"),
        (0.0, {"interval": [0.0, 1e-12]}, "0"),
        ([1.1649261861348141, 1.5814908121026008], {"ci_within": [0.39, 2.2]}, "[1.16, 1.58]"),
        ([78.79744389833785, 97.80255610166215], {"ci_within": [57, 117]}, "[79, 98]"),
        # The upper end 0.995 of an interval resolved to 0.01 reads 1.00, correctly rounded.
        ([0.9333394624675384, 0.9950369440318807], {"ci_within": [0.87, 1.07]}, "[0.93, 1.00]"),
        ([0.75, 0.75, 0.75], {"value": 0.75, "rel_tol": 1e-12}, "0.7500000, 0.7500000, 0.7500000"),
        (438304768, {"equals": 438304768}, "438304768"),
        (True, {"equals": True}, "true"),
        ("never", {"equals": "never"}, "never"),
        (None, {"equals": 3}, "\u2014"),
    ],
)
def test_a_value_is_rounded_to_what_its_tolerance_resolves(value, expectation, shown):
    assert model.shown_value(value, model.resolution(expectation)) == shown


def test_a_fraction_of_seeds_reads_as_a_percentage():
    row = {"expectation": {"fraction": {"below": 1e-14, "at_least": 1.0}}, "got": 0.9}
    assert model.field_texts(row, statistical=True) == {
        "expected": "at least 100% of seeds below 1e-14",
        "got": "90% of seeds",
    }


def test_no_page_text_is_json_or_a_long_float():
    rows = [
        {"expectation": expectation, "got": got}
        for expectation, got in [
            ({"fraction": {"above": 2.0, "at_least": 1.0}}, 1.0),
            ({"ci_within": [0.97, 1.03]}, [0.9903988410882818, 1.0035242822151045]),
            ({"value": 0.999999500000375, "abs_tol": 1e-14}, 0.9999995000003751),
            ({"value": 0.19615667770528047, "abs_tol": 1e-12}, 0.19615667770528047),
        ]
    ]
    for row in rows:
        for text in model.field_texts(row, statistical=True).values():
            assert "{" not in text and '"' not in text, text
            for number in re.findall(r"\d[\d.]*", text):
                assert len(number.replace(".", "").lstrip("0")) <= model.SHOWN_DIGITS, text


def test_a_statistical_summary_is_shown_at_its_fields_resolution():
    summary = {"mean": 1.3731, "ci": [1.1649, 1.5815], "level": 0.95, "method": "t"}
    assert model.shown_value(summary, 0.01) == "1.37 (95% CI 1.16 to 1.58)"
    median = {"mean": 2.6, "median": 3.0, "ci": [1.0, 4.0], "level": 0.95, "method": "median-rank"}
    assert model.shown_value(median, 1.0) == "3 (median; 95% CI 1 to 4)"
