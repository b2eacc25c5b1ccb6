"""Results against expectations: one record per field, for both kinds of claim, and a
statistical field's tolerance in standard errors of the seeds' mean."""

import math

import numpy as np
import pytest

from claimbook.claims import list_claims, load_claim
from claimbook.claims.compare import (
    WIDE_RATIO,
    comparisons,
    field_ratios,
    half_width,
    is_number,
    shown_expectation,
    tolerance_ratio,
    wide_tolerance_problems,
)
from claimbook.errors import ClaimError
from claimbook.pipeline.build_report import wide_tolerances

EXPECT = {
    "ratio": {"value": 0.5, "abs_tol": 1e-12, "reason": "a few ulps"},
    "count": {"equals": 3},
    "flag": {"equals": True},
    "group.spread": {"interval": [1.0, 1.5]},
}
RESULT = {"ratio": 0.5, "count": 3, "flag": True, "group": {"spread": 1.25}}


def passed(records) -> dict:
    return {field: record["passed"] for field, record in records.items()}


def test_every_expectation_met():
    records = comparisons(EXPECT, RESULT, statistical=False)
    assert passed(records) == dict.fromkeys(EXPECT, True)
    assert records["ratio"] == {
        "expected": 0.5,
        "got": 0.5,
        "tolerance": "abs_tol 1e-12",
        "reason": "a few ulps",
        "passed": True,
    }


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("ratio", 0.5 + 1e-9),
        ("count", 3.5),
        ("flag", 1),  # 1 is not True
        ("count", True),  # nor is True 1
        ("group", {"spread": 1.6}),
        ("ratio", float("nan")),
        ("ratio", "0.5"),
    ],
)
def test_a_missed_expectation_fails_only_its_field(field, value):
    records = comparisons(EXPECT, {**RESULT, field: value}, statistical=False)
    failed = {name for name, ok in passed(records).items() if not ok}
    assert failed == ({"group.spread"} if field == "group" else {field})


def test_absent_and_unexpected_fields_fail():
    result = {key: value for key, value in RESULT.items() if key != "count"}
    records = comparisons(EXPECT, {**result, "extra": 2.0}, statistical=False)
    assert records["count"]["got"] is None and not records["count"]["passed"]
    assert records["extra"] == {
        "expected": None,
        "got": 2.0,
        "tolerance": "no expectation registered",
        "reason": None,
        "passed": False,
    }


def test_a_relative_tolerance_scales_with_the_value():
    expect = {"x": {"value": 200.0, "rel_tol": 1e-3}}
    assert comparisons(expect, {"x": 200.1}, statistical=False)["x"]["passed"]
    assert not comparisons(expect, {"x": 200.3}, statistical=False)["x"]["passed"]


def summary(values, **extra):
    return {"per_seed": values, **extra}


def test_statistical_expectations():
    expect = {
        "a": {"ci_within": [0.9, 1.1]},
        "b": {"mean": {"value": 1.0, "abs_tol": 0.05}},
        "c": {"fraction": {"above": 0.5, "at_least": 0.75}},
        "d": {"equals": 100},
    }
    result = {
        "a": summary([1.0, 1.0], mean=1.0, ci=[0.95, 1.05]),
        "b": summary([1.0, 1.02], mean=1.01, ci=[0.9, 1.1]),
        "c": summary([0.6, 0.7, 0.8, 0.1]),
        "d": summary([100, 100]),
    }
    records = comparisons(expect, result, statistical=True)
    assert passed(records) == {"a": True, "b": True, "c": True, "d": True}
    assert records["c"]["got"] == 0.75 and records["d"]["tolerance"] == "exact, every seed"
    worse = {
        **result,
        "a": summary([1.0, 1.2], mean=1.1, ci=[0.8, 1.4]),
        "c": summary([0.6, 0.1, 0.1, 0.1]),
        "d": summary([100, 99]),
    }
    assert passed(comparisons(expect, worse, statistical=True)) == {
        "a": False,
        "b": True,
        "c": False,
        "d": False,
    }


def test_a_statistical_field_not_returned_fails():
    expect = {"a": {"equals": 1}, "b": {"ci_within": [0, 1]}}
    records = comparisons(expect, {}, statistical=True)
    assert records["a"]["expected"] == 1 and records["b"]["expected"] is None
    assert {record["tolerance"] for record in records.values()} == {"field not returned"}
    assert not any(passed(records).values())


def test_what_a_page_shows_for_each_kind_of_expectation():
    assert shown_expectation({"equals": "x"}) == ("x", "exact")
    assert shown_expectation({"interval": [1, 2]}) == ([1, 2], "closed interval")
    assert shown_expectation({"value": 2.0, "rel_tol": 0.01}) == (2.0, "rel_tol 0.01")
    assert shown_expectation({"mean": {"value": 1.0, "abs_tol": 0.5}}, statistical=True) == (
        1.0,
        "mean abs_tol 0.5",
    )
    assert shown_expectation({"fraction": {"below": 0.1, "at_least": 0.9}}) == (
        {"below": 0.1, "at_least": 0.9},
        "fraction of seeds below 0.1",
    )


def test_is_number():
    assert [is_number(v) for v in (1, 1.5, True, float("inf"), "1", None)] == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]


# --- tolerances in standard errors --------------------------------------------------------

SEEDS = [0.99, 1.01, 1.0, 0.98, 1.02]  # mean 1, SD sqrt(0.001 / 4), SE 0.0070711


def se(values) -> float:
    return float(np.std(values, ddof=1)) / math.sqrt(len(values))


@pytest.mark.parametrize(
    ("expectation", "expected"),
    [
        ({"ci_within": [0.9, 1.3]}, 0.2),
        ({"interval": [-1.0, 1.0]}, 1.0),
        ({"mean": {"value": 2.0, "abs_tol": 0.25}}, 0.25),
        ({"mean": {"value": -2.0, "rel_tol": 0.1}}, 0.2),
        ({"value": 4.0, "rel_tol": 0.5}, 2.0),
        ({"value": 4.0, "abs_tol": 0.5}, 0.5),
        ({"fraction": {"above": 0.25, "at_least": 1.0}}, 0.75),  # mean 1: distance to the bound
        ({"fraction": {"below": 3.0, "at_least": 0.9}}, 2.0),
        ({"equals": 1}, 0.0),
    ],
)
def test_the_half_width_of_each_kind_of_tolerance(expectation, expected):
    assert half_width(expectation, mean=1.0) == pytest.approx(expected, rel=1e-15)


def test_an_expectation_of_no_known_kind_is_named():
    with pytest.raises(ClaimError, match=r"parameter expectation has no known kind \(keys"):
        half_width({"reason": "nothing"}, mean=0.0)


def test_the_ratio_is_the_half_width_over_sd_over_root_n():
    ratio = tolerance_ratio({"ci_within": [0.95, 1.05]}, SEEDS)
    assert ratio["se"] == pytest.approx(math.sqrt(0.001 / 4 / 5), rel=1e-12)
    assert ratio["half_width"] == pytest.approx(0.05, rel=1e-12)
    assert ratio["ratio"] == pytest.approx(0.05 / se(SEEDS), rel=1e-12)


def test_a_one_sided_tolerance_is_the_distance_from_the_mean_to_its_bound():
    below = tolerance_ratio({"fraction": {"below": 1.1, "at_least": 1.0}}, SEEDS)
    above = tolerance_ratio({"fraction": {"above": 0.9, "at_least": 1.0}}, SEEDS)
    assert below["ratio"] == pytest.approx(0.1 / se(SEEDS), rel=1e-9)
    assert above["ratio"] == pytest.approx(below["ratio"], rel=1e-9)


def test_seeds_without_spread_give_an_infinite_ratio_unless_the_tolerance_is_zero():
    assert tolerance_ratio({"fraction": {"below": 1e-15, "at_least": 1.0}}, [0.0] * 4)[
        "ratio"
    ] == (math.inf)
    assert tolerance_ratio({"mean": {"value": 2.0, "abs_tol": 0.0}}, [2.0] * 3)["ratio"] == 0.0


@pytest.mark.parametrize("per_seed", [[1.0], [], [1.0, None], [1.0, math.nan], [True, False]])
def test_no_ratio_without_two_finite_numbers(per_seed):
    assert tolerance_ratio({"ci_within": [0.0, 1.0]}, per_seed) is None


def test_scaling_the_values_and_the_tolerance_together_keeps_the_ratio():
    scaled = [1000.0 * v for v in SEEDS]
    one = tolerance_ratio({"ci_within": [0.97, 1.03]}, SEEDS)["ratio"]
    other = tolerance_ratio({"ci_within": [970.0, 1030.0]}, scaled)["ratio"]
    assert other == pytest.approx(one, rel=1e-12)


def _summary(values):
    return {"per_seed": list(values)}


def test_a_wide_field_needs_wide_because_and_a_narrow_one_may_not_have_it():
    expect = {
        "wide": {"ci_within": [0.5, 1.5], "reason": "r"},
        "excused": {"ci_within": [0.5, 1.5], "reason": "r", "wide_because": "a side of a bound"},
        "narrow": {"ci_within": [0.98, 1.02], "reason": "r"},
        "stale": {"ci_within": [0.98, 1.02], "reason": "r", "wide_because": "no longer"},
    }
    result = {field: _summary(SEEDS) for field in expect}
    problems = wide_tolerance_problems("c0-toy-001", expect, result)
    assert len(problems) == 2
    assert problems[0].startswith("claim c0-toy-001 field stale: its tolerance is 2.83 standard")
    assert problems[0].endswith("so there is nothing to excuse; remove wide_because")
    assert problems[1].startswith("claim c0-toy-001 field wide: its tolerance is 70.7 standard")
    assert f"more than {WIDE_RATIO:g}; tighten it from the evidence" in problems[1]
    assert "wide_because: <reason>" in problems[1]


def test_the_boundary_ten_is_not_wide():
    values = [0.99, 1.01]  # SE 0.01
    expect = {"x": {"ci_within": [0.9, 1.1], "reason": "r"}}
    assert tolerance_ratio(expect["x"], values)["ratio"] <= WIDE_RATIO
    assert wide_tolerance_problems("c0-toy-001", expect, {"x": _summary(values)}) == []


def test_fields_without_seeds_are_left_out():
    expect = {"x": {"ci_within": [0.0, 1.0], "reason": "r"}}
    assert field_ratios(expect, {}) == {}
    assert field_ratios(expect, {"x": {"per_seed": ["a", "b"]}}) == {"x": None}


def test_the_build_check_reads_the_registry_entry_of_a_statistical_claim():
    # c16-small-batch-001 excuses group_gap_max (a rounding bound; every seed 0.0), not gap_b1.
    result = {
        "gap_b1": _summary([0.59216, 0.59217, 0.59215]),
        "group_gap_max": _summary([0.0, 0.0, 0.0]),
    }
    problems = wide_tolerances("c16-small-batch-001", {"kind": "statistical", "result": result})
    assert [p.split(":")[0] for p in problems] == ["claim c16-small-batch-001 field gap_b1"]
    assert wide_tolerances("c16-small-batch-001", {"kind": "deterministic"}) == []
    assert wide_tolerances("c16-small-batch-001", None) == []


def test_every_registered_wide_because_is_on_a_statistical_claim():
    for claim_id in list_claims():
        claim = load_claim(claim_id)
        if any("wide_because" in e for e in claim.expect.values()):
            assert claim.kind == "statistical", claim_id
