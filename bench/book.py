"""Time the book's build against Jupyter Book's own execution of the same sources.

``python -m bench`` (``make bench``) copies the book twice into a
temporary directory and, alternating the two for ``--rounds`` rounds, times:

- **ours, cold**: everything ``make rebuild`` does after ``clean`` -- plan, execute every
  chapter with papermill (in parallel), render with Sphinx, publish -- i.e.
  ``python -m claimbook build`` on a copy with no build products (MathJax,
  which ``make`` installs from npm once, is copied into both copies untimed);
- **Jupyter Book, force**: ``jupyter-book build`` of the same MyST sources with
  ``execute_notebooks: force`` (myst-nb executes each chapter with nbclient as it renders).

Then, on the warm copy of ours: a no-op build, a build after a one-sentence prose edit of the
first chapter, after a code cell appended to the last chapter (``--rounds`` times, each a new
cell: judged on the median time beyond the kernel), after an edit of a harness
function that only the last chapter runs, after an edit of a harness function exactly two
chapters run (recording which chapters executed again: exactly those two should), and after
an edit of a harness function that no chapter runs. The budgets: a no-op at most
:data:`NO_OP_SECONDS`, a prose edit at most :data:`PROSE_EDIT_SECONDS`, a code or function edit
at most the edited chapter's kernel time (the ``seconds`` its key record stores) plus 2 s, an
unused function's edit at most 1 s. Each
copy imports its own harness and engine (``PYTHONPATH`` and ``TRAINABLE_ROOT`` point at
them), so the edits never touch the checkout.

Every timing is measured by :mod:`bench.meter`: wall and CPU seconds, the
load average while it ran, the peak memory of the command's process tree, and a ``loaded``
flag when the load exceeded the machine's cores by more than one. Medians and the ratio
ours/Jupyter Book are printed and written to ``_build/bench.json``; when any cold round was
loaded the ratio is reported as "loaded", not compared with a target. Each cold round waits
first until the 1-minute load is at most half a load per core (at most three minutes;
:func:`~bench.meter.settle`), so that it does not start with the load of the
round before it; the wait is recorded as ``settled``.
Timings are noisy on a shared machine: this is a measurement, never a test (unit tests
check its bookkeeping on a generated book without building it).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

from bench.meter import load_threshold, measure, settle
from claimbook import paths
from claimbook.pipeline.keys import record_path

__all__ = ["run_bench"]

NO_OP_SECONDS = 0.3
PROSE_EDIT_SECONDS = 5.0
_SKIP = {".venv", "node_modules", ".git", ".pytest_cache", ".hypothesis", ".ruff_cache"}


def _copy_book(source: Path, target: Path) -> None:
    """Copy the book's sources (no build products) to ``target``."""

    def ignore(directory, names):
        here = Path(directory)
        skipped = {name for name in names if name in _SKIP or name == "__pycache__"}
        if here == source:
            skipped.add("_build")
        if here == source / "chapters":
            skipped.update(name for name in names if name.endswith(".ipynb"))
        if here == source / "artifacts":
            skipped.update(name for name in names if name not in ("README.md", ".gitignore"))
        return skipped

    shutil.copytree(source, target, ignore=ignore, symlinks=True)
    extra = source / "_build" / "site-extra"
    if extra.is_dir():  # MathJax, installed once by `make`; the same for both builds
        shutil.copytree(extra, target / "_build" / "site-extra")


def _force_execute_config(root: Path) -> None:
    """Make ``root`` a plain Jupyter Book that executes its MyST chapters itself."""
    config_path = root / "_config.yml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config.setdefault("execute", {})["execute_notebooks"] = "force"
    config["execute"]["timeout"] = 600
    config["exclude_patterns"] = [
        pattern for pattern in config.get("exclude_patterns", []) if pattern != "chapters/*.md"
    ]
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def _environment(root: Path) -> dict:
    environment = dict(os.environ)
    environment["TRAINABLE_ROOT"] = str(root)
    # The copy's own harness and engine: a book that holds an engine is built by it
    # (claimbook.pipeline.checkout.check_engine).
    code = [str(root / name) for name in ("harness", "engine") if (root / name).is_dir()]
    if code:
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [*code, environment.get("PYTHONPATH")])
        )
    return environment


def _timed(command: list[str], root: Path, check: bool = True) -> dict:
    """Run ``command`` in the copy at ``root``: wall, CPU, load and memory (``bench_meter``)."""
    return measure(command, root, env=_environment(root), check=check)


def _ours(root: Path) -> list[str]:
    return [sys.executable, "-m", "claimbook", "build"]


def _jupyter_book(root: Path) -> list[str]:
    return [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root), "--quiet"]


def _clean(root: Path) -> None:
    shutil.rmtree(root / "_build" / "html", ignore_errors=True)
    for name in (
        "html.new",
        "html.old",
        ".doctrees",
        ".templates",
        "keys",
        "notebooks",
        "jupyter_execute",
    ):
        shutil.rmtree(root / "_build" / name, ignore_errors=True)
    for name in ("site.json",):
        (root / "_build" / name).unlink(missing_ok=True)
    for notebook in (root / "chapters").glob("*.ipynb"):
        notebook.unlink()
    artifacts = root / "artifacts"
    for entry in artifacts.iterdir() if artifacts.is_dir() else ():
        if entry.name not in ("README.md", ".gitignore"):
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


def _edit_prose(root: Path) -> str:
    """Append a sentence to the first chapter's last prose paragraph; return its name."""
    from claimbook.sources import chapter_sources

    first = chapter_sources(root)[0]
    text = first.read_text(encoding="utf-8")
    first.write_text(text.rstrip("\n") + "\n\nA sentence added by the benchmark.\n")
    return first.name


def _edit_code(root: Path) -> str:
    """Append a code cell to the last chapter (its code changes: it executes); return its name."""
    from claimbook.sources import chapter_sources

    last = chapter_sources(root)[-1]
    text = last.read_text(encoding="utf-8")
    cell = "```{code-cell} ipython3\n# A cell added by the benchmark.\n```\n"
    last.write_text(text.rstrip("\n") + "\n\n" + cell)
    return last.name


def _record(root: Path, stem: str) -> dict:
    """The execution record of chapter ``stem`` in the book at ``root``."""
    return json.loads(record_path(stem, root / "_build").read_text())


def _modules_reached(root: Path, stem: str) -> set[str]:
    """The book's modules chapter ``stem`` depends on: those its code reaches and those its
    claims' computations reach (an edit of either executes the chapter again)."""
    record = _record(root, stem)
    modules = set(record["modules"])
    for claim_id in record.get("claims", []):
        artifact = paths.artifact_path(claim_id, root / "artifacts" / "claims")
        modules |= set(json.loads(artifact.read_text())["key"]["modules"])
    return modules


def _module_path(root: Path, module: str) -> Path:
    folder = {"trainable_harness": "harness", "claimbook": "engine"}[module.partition(".")[0]]
    base = root / folder / Path(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _edit_module(root: Path, module: str) -> None:
    """Append a comment line to a module of the book (any byte counts as an edit)."""
    path = _module_path(root, module)
    path.write_text(path.read_text(encoding="utf-8") + "# edited by the benchmark\n")


def _unused_module(root: Path, used: set[str]) -> str | None:
    """A science module that no chapter and no claim reaches (for the 'unused edit' timing)."""
    package = root / "harness" / "trainable_harness"
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(root / "harness").with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if module not in used:
            return module
    return None


def _records(root: Path, stems: list[str]) -> dict[str, str]:
    """Each chapter's key record as text (a chapter that executes again rewrites its own)."""
    return {stem: record_path(stem, root / "_build").read_text() for stem in stems}


def _reexecuted(root: Path, stems: list[str], before: dict[str, str]) -> list[str]:
    """The chapters whose key record changed since ``before``: those that executed again."""
    after = _records(root, stems)
    return [stem for stem in stems if after[stem] != before[stem]]


def _shared_by_two(runs: dict[str, set]) -> tuple[str, list[str]] | None:
    """A module exactly two chapters reach, and those chapters (first in order)."""
    counts: dict[str, list[str]] = {}
    for stem, modules in runs.items():
        for module in modules:
            counts.setdefault(module, []).append(stem)
    pairs = sorted((module, stems) for module, stems in counts.items() if len(stems) == 2)
    return pairs[0] if pairs else None


def _walls(measurements: list[dict]) -> list[float]:
    return [measurement["wall"] for measurement in measurements]


def run_bench(root: Path, rounds: int = 3, report=print) -> dict:
    """Run the benchmark on the book at ``root`` and return the measurements.

    Every timing is a :func:`bench.meter.measure` record (wall and CPU
    seconds, load average, peak memory, the ``loaded`` flag); the medians and the ratio are
    of wall times, and the ratio is marked ``"loaded"`` when any cold round was.
    """
    from claimbook.sources import chapter_sources

    results: dict = {
        "rounds": rounds,
        "book": str(root),
        "cores": os.cpu_count(),
        "load_threshold": load_threshold(),
        "ours_cold": [],
        "jupyter_book_force": [],
    }
    with tempfile.TemporaryDirectory(prefix="trainable-bench-") as scratch:
        ours, theirs = Path(scratch) / "ours", Path(scratch) / "theirs"
        _copy_book(root, ours)
        _copy_book(root, theirs)
        _force_execute_config(theirs)
        for index in range(rounds):
            _clean(ours)
            waited = settle()  # each cold round starts on a machine at rest
            results["ours_cold"].append({**_timed(_ours(ours), ours), "settled": waited})
            _clean(theirs)
            shutil.rmtree(theirs / "_build" / ".jupyter_cache", ignore_errors=True)
            waited = settle()
            results["jupyter_book_force"].append(
                {**_timed(_jupyter_book(theirs), theirs), "settled": waited}
            )
            report(
                f"round {index + 1}: ours cold {describe(results['ours_cold'][-1])}; "
                f"jupyter-book force {describe(results['jupyter_book_force'][-1])}"
            )
        results["no_op"] = [_timed(_ours(ours), ours) for _ in range(rounds)]
        stems = [source.stem for source in chapter_sources(ours)]
        results["prose_edit_chapter"] = _edit_prose(ours)
        results["prose_edit"] = _timed(_ours(ours), ours)
        results["prose_edit_budget"] = PROSE_EDIT_SECONDS
        # Each code edit's budget is the edited chapter's kernel time as its record holds it
        # right after that edit (a later edit may execute the chapter again, at another load).
        # One code edit varies by a few tenths of a second from run to run (so does its
        # kernel): the budget is judged on the median of ``rounds`` edits, each a new cell.
        results["code_edit"] = []
        for _ in range(rounds):
            results["code_edit_chapter"] = _edit_code(ours)
            measured = _timed(_ours(ours), ours)
            results["code_edit"].append(
                beyond_kernel(measured, _record(ours, stems[-1])["seconds"])
            )
        runs = {stem: _modules_reached(ours, stem) for stem in stems}
        others = set().union(*(runs[stem] for stem in stems[:-1])) if len(stems) > 1 else set()
        only_last = sorted(runs[stems[-1]] - others)
        if only_last:
            results["edited_function_of_last_chapter"] = only_last[0]
            _edit_module(ours, only_last[0])
            results["edit_function_of_last_chapter"] = _timed(_ours(ours), ours)
            results["edit_function_of_last_chapter_budget"] = (
                _record(ours, stems[-1])["seconds"] + 2.0
            )
        shared = _shared_by_two(runs)
        if shared is not None:
            (module, pair), before = shared, _records(ours, stems)
            results["edited_function_of_two_chapters"] = module
            results["two_chapters"] = pair
            _edit_module(ours, module)
            results["edit_function_of_two_chapters"] = _timed(_ours(ours), ours)
            results["two_chapters_reexecuted"] = _reexecuted(ours, stems, before)
            results["edit_function_of_two_chapters_budget"] = (
                sum(_record(ours, stem)["seconds"] for stem in pair) + 2.0
            )
        unused = _unused_module(ours, set().union(*runs.values()))
        if unused is not None:
            results["edited_unused_function"] = unused
            _edit_module(ours, unused)
            results["edit_unused_function"] = _timed(_ours(ours), ours)
        records = {stem: _record(ours, stem)["seconds"] for stem in stems}
        results["chapters"] = len(stems)
        results["chapter_execution_seconds"] = records
    results.update(summarize(results))
    return results


def beyond_kernel(measurement: dict, kernel: float) -> dict:
    """A build's measurement with the edited chapter's kernel seconds and the wall time
    beyond them (what an edit's budget of "its kernel + 2 s" bounds)."""
    return {**measurement, "kernel": kernel, "beyond_kernel": measurement["wall"] - kernel}


def summarize(results: dict) -> dict:
    """Medians of wall time, the cold ratio (or ``"loaded"``), CPU and peak memory, and of
    the code edits' time beyond the kernel (when there are code edits)."""
    cold, force = results["ours_cold"], results["jupyter_book_force"]
    loaded = any(measurement["loaded"] for measurement in cold + force)
    median_cold, median_force = statistics.median(_walls(cold)), statistics.median(_walls(force))
    summary = {
        "median_ours_cold": median_cold,
        "median_jupyter_book_force": median_force,
        "ratio": median_cold / median_force,
        "ratio_status": "loaded" if loaded else "measured",
        "median_no_op": statistics.median(_walls(results["no_op"])),
        "median_ours_cold_cpu": statistics.median(m["cpu"] for m in cold),
        "median_jupyter_book_force_cpu": statistics.median(m["cpu"] for m in force),
        "peak_rss_ours_cold": max(m["peak_rss"] for m in cold),
    }
    if results.get("code_edit"):  # the book's run (a growth round edits no code)
        summary["median_code_edit_beyond_kernel"] = statistics.median(
            measurement["beyond_kernel"] for measurement in results["code_edit"]
        )
    return summary


def describe(measurement: dict) -> str:
    """One timing as a reader wants it: wall, CPU, load, and the flag when it was loaded."""
    load = measurement["load"]
    text = (
        f"{measurement['wall']:.2f} s wall, {measurement['cpu']:.2f} s CPU, "
        f"load {load['mean']:.1f} (max {load['max']:.1f}, "
        f"{load['start']:.1f} at the start"
        + (f", after {measurement['settled']:.0f} s to settle" if "settled" in measurement else "")
        + f"), peak {measurement['peak_rss'] / 2**20:.0f} MiB"
    )
    return text + " [loaded]" if measurement["loaded"] else text


def _ratio_line(results: dict) -> str:
    ratio = f"ratio {results['ratio']:.2f}"
    if results["ratio_status"] == "loaded":
        return (
            f"{ratio}, loaded: the load exceeded {results['load_threshold']:.0f} (cores + 1) in a "
            "round, so it is not compared with a target"
        )
    return ratio
