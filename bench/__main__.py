"""``python -m bench``: time the book's build against Jupyter Book's own (see :mod:`bench.book`).

Run from the repository root (``make bench``, ``make bench-growth``); the results go to
``_build/bench.json``. It is a tool beside the engine, not a part of it: it drives
``python -m claimbook build`` on copies of the book and measures them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.book import NO_OP_SECONDS, _ratio_line, describe, run_bench
from bench.growth import plot_growth, run_growth, verdicts
from claimbook import paths
from claimbook.atomic import write_text_atomically


def _update_record(output: Path, key: str, value) -> None:
    """Set ``key`` of the JSON record at ``output`` (``"book"`` or ``"growth"``), atomically."""
    try:
        record = json.loads(output.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        record = {}
    if not isinstance(record, dict) or not set(record) <= {"book", "growth"}:
        record = {}  # an older, flat record: replaced
    record[key] = value
    write_text_atomically(output, json.dumps(record, indent=2, sort_keys=True) + "\n")


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        message = f"--growth takes sizes like 20,50,100, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"--growth sizes must be positive, got {text!r}")
    return sizes


def _print_growth(rows: list[dict]) -> None:
    print("chapters | cold ours / JB (s) | ratio | no-op (s) | prose edit (s, budget) | peak MiB")
    for row in rows:
        judged = verdicts(row)
        ratio = f"{row['ratio']:.2f}" + (" loaded" if row["ratio_status"] == "loaded" else "")
        print(
            f"{row['chapters']} | {row['ours_cold']:.1f} / {row['jupyter_book_force']:.1f} | "
            f"{ratio} ({judged['ratio']}) | {row['no_op']:.2f} ({judged['no_op']}) | "
            f"{row['prose_edit']:.2f} ({row['prose_edit_budget']:.2f}, {judged['prose_edit']}) | "
            f"{row['peak_rss'] / 2**20:.0f} ({judged['peak_rss']})"
        )
        if "two_chapters" in row:
            print(
                f"    two-chapter function edit: ran again {row['two_chapters_reexecuted']} "
                f"(expected {row['two_chapters']}: {judged['two_chapter_edit']})"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--root", type=Path, default=paths.REPO_ROOT, help="the book to time")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (>= 1)")
    parser.add_argument("--output", type=Path, default=paths.BUILD_DIR / "bench.json")
    parser.add_argument(
        "--growth",
        type=_sizes,
        default=None,
        help="instead of the book at --root, time generated books of these sizes (20,50,100)",
    )
    parser.add_argument(
        "--generator", type=Path, default=None, help="the book generator script (--growth)"
    )
    options = parser.parse_args(argv)
    if options.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {options.rounds}")
    if options.growth is not None:
        if options.generator is None:
            parser.error("--growth needs --generator (tests/books/generate_scale_book.py)")
        rows = run_growth(options.growth, options.generator, options.rounds)
        _update_record(options.output, "growth", rows)
        svg = options.output.with_suffix(".svg")
        write_text_atomically(svg, plot_growth(rows))
        _print_growth(rows)
        print(f"written to {options.output} and {svg}")
        return 0
    results = run_bench(options.root.resolve(), options.rounds)
    _update_record(options.output, "book", results)
    print(
        f"ours cold (median): {results['median_ours_cold']:.2f} s; jupyter-book force "
        f"(median): {results['median_jupyter_book_force']:.2f} s; {_ratio_line(results)}"
    )
    print(
        f"no-op: {results['median_no_op']:.2f} s (budget {NO_OP_SECONDS:.2f} s); "
        f"prose edit: {describe(results['prose_edit'])} "
        f"(budget {results['prose_edit_budget']:.2f} s)"
    )
    for index, measurement in enumerate(results["code_edit"], start=1):
        print(
            f"code edit {index} of the last chapter: {describe(measurement)}; its kernel "
            f"{measurement['kernel']:.2f} s, beyond it {measurement['beyond_kernel']:.2f} s"
        )
    print(
        "code edit beyond the kernel (median): "
        f"{results['median_code_edit_beyond_kernel']:.2f} s (budget 2 s)"
    )
    if "edit_function_of_last_chapter" in results:
        print(
            "edit function of last chapter: "
            f"{describe(results['edit_function_of_last_chapter'])} (budget "
            f"{results['edit_function_of_last_chapter_budget']:.2f} s)"
        )
    if "edit_function_of_two_chapters" in results:
        print(
            f"edit {results['edited_function_of_two_chapters']} (run by "
            f"{', '.join(results['two_chapters'])}): "
            f"{describe(results['edit_function_of_two_chapters'])}; executed again: "
            f"{', '.join(results['two_chapters_reexecuted']) or 'none'}"
        )
    if "edit_unused_function" in results:
        print(f"edit unused function: {describe(results['edit_unused_function'])} (budget 1 s)")
    print(f"peak memory of a cold build: {results['peak_rss_ours_cold'] / 2**20:.0f} MiB")
    print(f"written to {options.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
