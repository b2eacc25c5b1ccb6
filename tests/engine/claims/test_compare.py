"""Results against expectations: one record per field, for both kinds of claim."""

import pytest

from claimbook.claims.compare import comparisons, is_number, shown_expectation

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
