"""How the build grows with the book: the benchmark on generated books of several sizes.

``python -m bench --growth 20,50,100 --generator tests/books/generate_scale_book.py``
(``make bench-growth``) writes a book of each size with the generator script (a fixture
writer that lives with the tests; its path is an argument, so the engine names no test
file), runs :func:`bench.book.run_bench` on it, and keeps, per size, the figures
the growth table shows (:func:`growth_row`). The rows go into ``_build/bench.json`` under
``"growth"`` (beside this book's own ``"book"`` entry) and a plot of each figure against the
number of chapters into ``_build/bench.svg``.

The targets (:data:`TARGETS`): at 100 chapters a cold build at most half of Jupyter Book's
force-execute, at every size the book's own budgets for a no-op and a prose edit
(:data:`bench.book.NO_OP_SECONDS`, :data:`bench.book.PROSE_EDIT_SECONDS`), a two-chapter
function edit re-executing exactly those two, and at most 2 GiB of peak memory at 100
chapters. A row measured while
the machine was loaded says so instead of a verdict on the ratio.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.book import NO_OP_SECONDS, run_bench

__all__ = ["TARGETS", "growth_row", "plot_growth", "run_growth", "verdicts"]

TARGETS = {
    "ratio_at_100": 0.5,
    "no_op_seconds": NO_OP_SECONDS,
    "peak_bytes_at_100": 2 * 2**30,
}


def growth_row(results: dict) -> dict:
    """The figures of one size's benchmark that the growth table and plot show."""
    row = {
        "chapters": results["chapters"],
        "ours_cold": results["median_ours_cold"],
        "ours_cold_cpu": results["median_ours_cold_cpu"],
        "jupyter_book_force": results["median_jupyter_book_force"],
        "ratio": results["ratio"],
        "ratio_status": results["ratio_status"],
        "no_op": results["median_no_op"],
        "no_op_loaded": any(measurement["loaded"] for measurement in results["no_op"]),
        "prose_edit": results["prose_edit"]["wall"],
        "prose_edit_loaded": results["prose_edit"]["loaded"],
        "prose_edit_budget": results["prose_edit_budget"],
        "peak_rss": results["peak_rss_ours_cold"],
    }
    if "edit_function_of_two_chapters" in results:
        row["two_chapter_edit"] = results["edit_function_of_two_chapters"]["wall"]
        row["two_chapters"] = results["two_chapters"]
        row["two_chapters_reexecuted"] = results["two_chapters_reexecuted"]
    return row


def _timed_verdict(within: bool, loaded: bool) -> str:
    # A time measured on a loaded machine that misses its target says nothing about the build.
    if within:
        return "met"
    return "loaded" if loaded else "missed"


def verdicts(row: dict) -> dict[str, str]:
    """Each target's verdict for one row: ``"met"``, ``"missed"`` or ``"loaded"``.

    The ratio and memory targets are stated at 100 chapters; at other sizes they are shown
    but not judged (``"n/a"``). A time that misses its target while the machine was loaded
    reads ``"loaded"``; one that meets it reads ``"met"`` either way.
    """
    at_100 = row["chapters"] == 100
    found: dict[str, str] = {}
    if not at_100:
        found["ratio"] = "n/a"
    elif row["ratio_status"] == "loaded":
        found["ratio"] = "loaded"
    else:
        found["ratio"] = "met" if row["ratio"] <= TARGETS["ratio_at_100"] else "missed"
    found["no_op"] = _timed_verdict(
        row["no_op"] <= TARGETS["no_op_seconds"], row.get("no_op_loaded", False)
    )
    found["prose_edit"] = _timed_verdict(
        row["prose_edit"] <= row["prose_edit_budget"], row.get("prose_edit_loaded", False)
    )
    if "two_chapters" in row:
        same = sorted(row["two_chapters_reexecuted"]) == sorted(row["two_chapters"])
        found["two_chapter_edit"] = "met" if same else "missed"
    if at_100:
        found["peak_rss"] = "met" if row["peak_rss"] <= TARGETS["peak_bytes_at_100"] else "missed"
    else:
        found["peak_rss"] = "n/a"
    return found


def plot_growth(rows: list[dict]) -> str:
    """An SVG (text) of each growth figure against the number of chapters; byte-stable."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from claimbook.figures import FIGURE_STYLE

    rows = sorted(rows, key=lambda row: row["chapters"])
    chapters = [row["chapters"] for row in rows]
    panels = (
        ("cold build (s)", ("ours_cold", "jupyter_book_force"), ("ours", "Jupyter Book force")),
        ("cold ratio", ("ratio",), ("ours / Jupyter Book",)),
        ("no-op and prose edit (s)", ("no_op", "prose_edit"), ("no-op", "prose edit")),
        ("peak memory (GiB)", ("peak_rss",), ("cold build",)),
    )
    with plt.rc_context({**FIGURE_STYLE, "svg.hashsalt": "bench-growth"}):
        fig, axes = plt.subplots(2, 2, figsize=(6.4, 5.6))
        for ax, (ylabel, keys, labels) in zip(axes.flat, panels, strict=True):
            for key, label in zip(keys, labels, strict=True):
                scale = 2**30 if key == "peak_rss" else 1
                ax.plot(chapters, [row[key] / scale for row in rows], marker="o", label=label)
            ax.set(xlabel="chapters", ylabel=ylabel)
            if len(keys) > 1:
                ax.legend(frameon=False)
        axes.flat[1].axhline(TARGETS["ratio_at_100"], linestyle="--", color="grey")
        axes.flat[2].axhline(TARGETS["no_op_seconds"], linestyle="--", color="grey")
        axes.flat[3].axhline(TARGETS["peak_bytes_at_100"] / 2**30, linestyle="--", color="grey")
        fig.tight_layout()
        stream = io.StringIO()
        fig.savefig(stream, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return stream.getvalue()


def run_growth(sizes: list[int], generator: Path, rounds: int, report=print) -> list[dict]:
    """Generate a book of each size with ``generator`` and benchmark it; the growth rows."""
    if not sizes or any(size < 1 for size in sizes):
        raise ValueError(f"sizes must be positive chapter counts, got {sizes!r}")
    if not generator.is_file():
        raise FileNotFoundError(f"generator {generator} is not a file")
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix=f"trainable-growth-{size}-") as scratch:
            book = Path(scratch) / "book"
            subprocess.run(
                [sys.executable, str(generator), str(book), "--chapters", str(size)],
                check=True,
                capture_output=True,
                text=True,
            )
            report(f"growth: {size} chapters")
            rows.append(growth_row(run_bench(book, rounds, report=report)))
    return rows
