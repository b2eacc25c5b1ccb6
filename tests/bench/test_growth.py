"""The growth table's bookkeeping (``bench.growth``), on made-up rows."""

from __future__ import annotations

import pytest

from bench import book as bench
from bench.growth import TARGETS, growth_row, plot_growth, verdicts


def _measurement(wall, loaded=False, cpu=None, peak=2**28):
    return {
        "wall": wall,
        "cpu": wall if cpu is None else cpu,
        "load": {"start": 0.5, "max": 4.0 if loaded else 1.0, "mean": 1.0},
        "peak_rss": peak,
        "loaded": loaded,
        "returncode": 0,
    }


def _results(chapters, cold=(10.0, 11.0, 12.0), force=(25.0, 24.0, 26.0), loaded=False):
    results = {
        "chapters": chapters,
        "load_threshold": 3.0,
        "ours_cold": [_measurement(wall, loaded and i == 1) for i, wall in enumerate(cold)],
        "jupyter_book_force": [_measurement(wall) for wall in force],
        "no_op": [_measurement(0.2), _measurement(0.25), _measurement(0.22)],
        "prose_edit": _measurement(1.5),
        "prose_edit_budget": 2.5,
        "edit_function_of_two_chapters": _measurement(3.0),
        "two_chapters": ["chapter-01", "chapter-02"],
        "two_chapters_reexecuted": ["chapter-01", "chapter-02"],
    }
    results.update(bench.summarize(results))
    return results


def test_summary_is_of_medians_and_flags_a_loaded_round():
    quiet = bench.summarize(_results(100))
    assert quiet["median_ours_cold"] == 11.0 and quiet["median_jupyter_book_force"] == 25.0
    assert quiet["ratio"] == pytest.approx(0.44) and quiet["ratio_status"] == "measured"
    assert quiet["median_no_op"] == 0.22
    assert bench.summarize(_results(100, loaded=True))["ratio_status"] == "loaded"


def test_verdicts_at_100_chapters():
    row = growth_row(_results(100))
    assert verdicts(row) == {
        "ratio": "met",
        "no_op": "met",
        "prose_edit": "met",
        "two_chapter_edit": "met",
        "peak_rss": "met",
    }
    slow = growth_row(_results(100, cold=(13.0, 13.0, 13.0)))
    assert slow["ratio"] > TARGETS["ratio_at_100"] and verdicts(slow)["ratio"] == "missed"
    assert verdicts(growth_row(_results(100, loaded=True)))["ratio"] == "loaded"


def test_ratio_and_memory_are_judged_only_at_100_chapters():
    judged = verdicts(growth_row(_results(20, cold=(20.0, 20.0, 20.0))))
    assert judged["ratio"] == "n/a" and judged["peak_rss"] == "n/a"


def test_a_third_chapter_executed_again_misses_the_two_chapter_target():
    results = _results(50)
    results["two_chapters_reexecuted"] = ["chapter-01", "chapter-02", "chapter-03"]
    assert verdicts(growth_row(results))["two_chapter_edit"] == "missed"


def test_a_slow_no_op_or_prose_edit_misses():
    results = _results(20)
    results["no_op"] = [_measurement(0.35)] * 3
    results["prose_edit"] = _measurement(2.6)
    results.update(bench.summarize(results))
    judged = verdicts(growth_row(results))
    assert judged["no_op"] == "missed" and judged["prose_edit"] == "missed"


def test_the_plot_is_byte_stable_and_labelled():
    rows = [growth_row(_results(size)) for size in (20, 50, 100)]
    svg = plot_growth(rows)
    assert svg == plot_growth(list(reversed(rows)))
    assert svg.startswith("<?xml") and "<dc:date>" not in svg


def test_a_time_missed_on_a_loaded_machine_reads_loaded():
    results = _results(20)
    results["no_op"] = [_measurement(0.6, loaded=True)] * 3
    results["prose_edit"] = _measurement(2.6, loaded=True)
    results.update(bench.summarize(results))
    judged = verdicts(growth_row(results))
    assert judged["no_op"] == "loaded" and judged["prose_edit"] == "loaded"
    results["prose_edit"] = _measurement(1.0, loaded=True)
    assert verdicts(growth_row(results))["prose_edit"] == "met"


def test_a_code_edit_is_judged_on_the_median_time_beyond_its_kernel():
    results = _results(2)
    walls, kernels = (10.4, 9.1, 11.0), (8.6, 7.5, 8.7)
    results["code_edit"] = [
        bench.beyond_kernel(_measurement(wall), kernel)
        for wall, kernel in zip(walls, kernels, strict=True)
    ]
    assert [m["beyond_kernel"] for m in results["code_edit"]] == pytest.approx([1.8, 1.6, 2.3])
    assert bench.summarize(results)["median_code_edit_beyond_kernel"] == pytest.approx(1.8)
    assert "median_code_edit_beyond_kernel" not in bench.summarize(_results(2))
