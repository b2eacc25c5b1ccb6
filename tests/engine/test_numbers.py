"""claimbook.numbers: the one format of a result on a page."""

from claimbook.numbers import format_value


def test_a_number_an_interval_a_flag_and_a_median_over_seeds():
    assert format_value(2.0553, ".3f") == "2.055"
    assert format_value([0.1, 0.25], ".2f") == "[0.10, 0.25]"
    assert format_value(True) == "true"
    median = {"mean": 2.6, "median": 3.0, "ci": [1.0, 4.0], "level": 0.95, "method": "median-rank"}
    assert format_value(median, "g") == "3 (median; 95% CI 1 to 4)"
