"""``python -m claimbook bench`` runs end to end on a tiny generated book.

Timings are not asserted (they are noisy); the benchmark's shape is: both builds ran in
every round, the edits were timed, and the results file holds medians and the ratio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "books"))

from generate_scale_book import generate

from claimbook.build import bench


def test_the_benchmark_runs_on_a_two_chapter_book(tmp_path):
    book = generate(tmp_path / "book", chapters=2)
    output = tmp_path / "bench.json"
    assert bench.main(["--root", str(book), "--rounds", "1", "--output", str(output)]) == 0
    results = json.loads(output.read_text())
    assert len(results["ours_cold"]) == len(results["jupyter_book_force"]) == 1
    assert results["ratio"] == results["median_ours_cold"] / results["median_jupyter_book_force"]
    assert results["prose_edit_chapter"] == "chapter-01.md"
    assert results["edited_unused_function"]
    assert set(results["chapter_execution_seconds"]) == {"chapter-01", "chapter-02"}
    # The benchmark edits its own copies only.
    assert (
        "edited by the benchmark"
        not in (book / "harness")
        .joinpath(*results["edited_unused_function"].split(":")[0].split("."))
        .with_suffix(".py")
        .read_text()
    )


def test_generate_refuses_an_empty_book(tmp_path):
    import pytest

    with pytest.raises(ValueError, match="chapters must be at least 1"):
        generate(tmp_path / "none", chapters=0)
