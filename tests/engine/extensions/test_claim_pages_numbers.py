"""claimbook.extensions.claim_pages_model: a field's numbers as its claim page writes them."""

import json
import re
from importlib import resources

import pytest

from claimbook.extensions import claim_pages_model as numbers
from claimbook.numbers import format_value

# Every expectation shape the registry allows (claim_schema.json, $defs): what a claim page
# says for it, deterministic and over seeds; bounds as registered.
EXPECTATION_WORDS = [
    ({"equals": 3}, False, "Exactly 3."),
    ({"equals": 3}, True, "Every seed exactly 3."),
    ({"equals": True}, False, "Exactly true."),
    ({"equals": "never"}, False, "Exactly never."),
    ({"value": 2.055, "abs_tol": 0.0005}, False, "Within 0.0005 of 2.055."),
    (
        {"value": 0.8790322580645161, "rel_tol": 1e-12},
        True,
        "Every seed within a relative 1e-12 of 0.8790323.",
    ),
    ({"interval": [0.0, 1e-12]}, True, "Every seed within 0 to 1e-12."),
    ({"ci_within": [0.39, 2.2]}, True, "The 95% CI lies within 0.39 to 2.2."),
    ({"mean": {"value": 1.0, "abs_tol": 0.05}}, True, "The mean within 0.05 of 1."),
    ({"mean": {"value": 4.0, "rel_tol": 0.01}}, True, "The mean within a relative 0.01 of 4."),
    ({"fraction": {"above": 2.0, "at_least": 1.0}}, True, "At least 100% of the seeds above 2."),
    (
        {"fraction": {"below": 1e-14, "at_least": 0.9}},
        True,
        "At least 90% of the seeds below 1e-14.",
    ),
    (None, False, "No expectation is registered."),
]


@pytest.mark.parametrize(("expectation", "statistical", "words"), EXPECTATION_WORDS)
def test_every_expectation_shape_reads_as_a_sentence(expectation, statistical, words):
    assert numbers.expected_words(expectation, statistical=statistical) == words


def test_the_sentence_table_covers_every_shape_of_the_schema():
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
    covered = set()
    for expectation, _, _ in EXPECTATION_WORDS:
        covered |= set(expectation or {}) | set((expectation or {}).get("mean", {}))
    assert set(keys.values()) <= covered


@pytest.mark.parametrize(
    ("value", "expectation", "shown"),
    [
        # A statistical field: rounded to the leading digit of its interval's width, the
        # prose's interval format (the reviewer's 0.08 [0.07, 0.08] is 0.075 here).
        (
            {"mean": 0.07512, "ci": [0.07311, 0.07713], "level": 0.95, "method": "t"},
            {"ci_within": [0.06, 0.09]},
            "0.075 (95% CI 0.073 to 0.077)",
        ),
        (
            {"mean": 2.6, "median": 3.0, "ci": [1.0, 4.0], "level": 0.95, "method": "median-rank"},
            {"ci_within": [0.5, 4.0]},
            "3 (median; 95% CI 1 to 4)",
        ),
        # A deterministic field: to the leading digit of its tolerance's width.
        (2.0550947413870233, {"value": 2.055, "abs_tol": 0.0005}, "2.055"),
        (316.2277660168379, {"value": 316.228, "abs_tol": 0.0005}, "316.228"),
        (4.742971833882059e-05, {"value": 4.743e-05, "rel_tol": 0.001}, "4.743e-05"),
        # Below the width it is judged against: two significant digits, never 0.000000.
        (2.220446049250313e-16, {"interval": [0.0, 1e-12]}, "2.2e-16"),
        (0.0, {"interval": [0.0, 1e-12]}, "0"),
        # Nothing to judge by: as written, at most seven digits.
        (0.8790322580645161, {"equals": 0.8790322580645161}, "0.8790323"),
        (438304768, {"equals": 438304768}, "438304768"),
        (True, {"equals": True}, "true"),
        ("never", {"equals": "never"}, "never"),
    ],
)
def test_a_value_is_rounded_by_one_rule_when_the_prose_does_not_cite_it(value, expectation, shown):
    assert numbers.measured(value, expectation, None) == shown


def test_a_field_the_prose_cites_is_written_in_the_prose_format():
    value = {"mean": 1.23456, "ci": [1.2, 1.27], "level": 0.95, "method": "t"}
    spec = numbers.cited_spec("gap", [("gap_b1", ".1f"), ("gap.mean", ".3f")])
    assert spec == ".3f"
    assert numbers.measured(value, None, spec) == format_value(value, ".3f")
    # A spec that does not apply to the whole field (an integer format of a part): the rule.
    assert numbers.measured(2.5, {"value": 2.5, "abs_tol": 0.05}, "d") == "2.5"


def test_a_fraction_of_seeds_reads_as_a_share_of_them():
    expectation = {"fraction": {"below": 1e-14, "at_least": 1.0}}
    assert numbers.measured(0.9, expectation, None) == "90% of the seeds"


def test_no_page_number_is_json_or_a_long_float():
    for value, expectation in [
        (0.9999995000003751, {"value": 0.999999500000375, "abs_tol": 1e-14}),
        (0.19615667770528047, {"value": 0.19615667770528047, "abs_tol": 1e-12}),
        (47548378174.90708, {"value": 47548378175.0, "rel_tol": 1e-9}),
    ]:
        text = numbers.measured(value, expectation, None)
        assert "{" not in text and '"' not in text, text
        for number in re.findall(r"\d[\d.]*", text.split("e")[0]):
            assert len(number.replace(".", "").lstrip("0")) <= numbers.SHOWN_DIGITS, text


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [
        (
            {"half_width": 0.04, "se": 0.01, "ratio": 4.0},
            "4.0 standard errors of the seeds' mean.",
        ),
        ({"half_width": 0.5, "se": 0.01, "ratio": 50.0}, "50 standard errors of the seeds' mean."),
        (
            {"half_width": 0.05, "se": 1e-7, "ratio": 5e5},
            "5.00e+05 standard errors of the seeds' mean.",
        ),
        (
            {"half_width": 1e-15, "se": 0.0, "ratio": float("inf")},
            "No standard error: every seed gives the same value.",
        ),
        (None, None),
    ],
)
def test_the_tolerance_in_standard_errors_is_a_sentence(ratio, shown):
    assert numbers.tolerance_over_se(ratio) == shown


def test_the_rule_rounds_to_the_leading_digit_of_the_judged_width():
    assert numbers.judged_width(1.0, {"value": 1.0, "rel_tol": 0.01}) == 0.02
    assert numbers.rule_spec(3, numbers.judged_width(3, {"equals": 3})) == ".7g"
    specs = (numbers.rule_spec(0.0751, 0.0039), numbers.rule_spec(438.2, 30.0))
    assert specs == (".3f", ".0f")
    assert numbers.rule_spec(2.2e-16, 1e-12) == ".1e"
    assert numbers.measured(2.0550947413870233, None, ".1f") == "2.1"
