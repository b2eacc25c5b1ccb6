"""Time the book's build against Jupyter Book's own execution of the same sources.

``python -m claimbook bench`` (``make bench``) copies the book twice into a
temporary directory and, alternating the two for ``--rounds`` rounds, times:

- **ours, cold**: everything ``make rebuild`` does after ``clean`` -- plan, execute every
  chapter with papermill (in parallel), render with Sphinx, publish -- i.e.
  ``python -m claimbook build`` on a copy with no build products (MathJax,
  which ``make`` installs from npm once, is copied into both copies untimed);
- **Jupyter Book, force**: ``jupyter-book build`` of the same MyST sources with
  ``execute_notebooks: force`` (myst-nb executes each chapter with nbclient as it renders).

Then, on the warm copy of ours: a no-op build, a build after a one-sentence prose edit of the
first chapter, after a code cell appended to the last chapter, after an edit of a harness
function that only the last chapter runs, and after an edit of a harness function that no
chapter runs. An edited chapter's budget is its kernel time (the ``seconds`` its key record
stores) plus 2 s; an unused function's is 1 s. Each copy imports its own harness
(``PYTHONPATH`` and ``TRAINABLE_ROOT`` point at it), so the edits never touch the checkout.

Medians and the ratio ours/Jupyter Book are printed and written to ``_build/bench.json``.
Timings are noisy on a shared machine: this is a measurement, never a test (a unit test only
checks that it runs on a tiny fixture book).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from claimbook import paths
from claimbook.atomic import write_text_atomically
from claimbook.build.keys import record_path

__all__ = ["main", "run_bench"]

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
    harness = root / "harness"
    if harness.is_dir():
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(harness), environment.get("PYTHONPATH")])
        )
    return environment


def _timed(command: list[str], root: Path, check: bool = True) -> float:
    started = time.perf_counter()
    process = subprocess.run(
        command, cwd=root, env=_environment(root), capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if check and process.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(command)}` in {root} exited {process.returncode}:\n"
            + (process.stdout + process.stderr)[-4000:]
        )
    return seconds


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


def _functions_run(root: Path, stem: str) -> set[tuple[str, str]]:
    return {tuple(name) for name in _record(root, stem)["functions"]}


def _edit_function(root: Path, module: str, qualname: str) -> None:
    """Insert a comment line as the first statement's neighbour in a function's body."""
    import ast

    path = root / "harness" / Path(*module.split(".")).with_suffix(".py")
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    node = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.name == qualname.split(".")[-1]
    )
    lines = source.splitlines(keepends=True)
    body = node.body[0]
    indent = " " * body.col_offset
    lines.insert(body.lineno - 1, f"{indent}# edited by the benchmark\n")
    path.write_text("".join(lines), encoding="utf-8")


def _unused_function(root: Path, used: set[tuple[str, str]]) -> tuple[str, str] | None:
    """A top-level harness function that no chapter ran (for the 'unused edit' timing)."""
    import ast

    package = root / "harness" / "trainable_harness"
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(root / "harness").with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and (module, node.name) not in used:
                return module, node.name
    return None


def run_bench(root: Path, rounds: int = 3, report=print) -> dict:
    """Run the benchmark on the book at ``root`` and return the measurements (seconds)."""
    from claimbook.sources import chapter_sources

    results: dict = {
        "rounds": rounds,
        "book": str(root),
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
            results["ours_cold"].append(_timed(_ours(ours), ours))
            _clean(theirs)
            shutil.rmtree(theirs / "_build" / ".jupyter_cache", ignore_errors=True)
            results["jupyter_book_force"].append(_timed(_jupyter_book(theirs), theirs))
            report(
                f"round {index + 1}: ours cold {results['ours_cold'][-1]:.2f} s, "
                f"jupyter-book force {results['jupyter_book_force'][-1]:.2f} s"
            )
        results["no_op"] = [_timed(_ours(ours), ours) for _ in range(rounds)]
        results["prose_edit_chapter"] = _edit_prose(ours)
        results["prose_edit"] = _timed(_ours(ours), ours)
        results["code_edit_chapter"] = _edit_code(ours)
        results["code_edit"] = _timed(_ours(ours), ours)
        stems = [source.stem for source in chapter_sources(ours)]
        code_edit_seconds = _record(ours, stems[-1])["seconds"]
        results["code_edit_budget"] = code_edit_seconds + 2.0
        runs = {stem: _functions_run(ours, stem) for stem in stems}
        others = set().union(*(runs[stem] for stem in stems[:-1])) if len(stems) > 1 else set()
        only_last = sorted(runs[stems[-1]] - others)
        if only_last:
            results["edited_function_of_last_chapter"] = ":".join(only_last[0])
            _edit_function(ours, *only_last[0])
            results["edit_function_of_last_chapter"] = _timed(_ours(ours), ours)
        unused = _unused_function(ours, set().union(*runs.values()))
        if unused is not None:
            results["edited_unused_function"] = ":".join(unused)
            _edit_function(ours, *unused)
            results["edit_unused_function"] = _timed(_ours(ours), ours)
        records = {stem: _record(ours, stem)["seconds"] for stem in stems}
        results["chapter_execution_seconds"] = records
        # The budgets of issue 11: an edited chapter costs at most its kernel time plus 2 s.
        results["prose_edit_budget"] = records[Path(results["prose_edit_chapter"]).stem] + 2.0
        if only_last:
            results["edit_function_of_last_chapter_budget"] = records[stems[-1]] + 2.0
    results["median_ours_cold"] = statistics.median(results["ours_cold"])
    results["median_jupyter_book_force"] = statistics.median(results["jupyter_book_force"])
    results["ratio"] = results["median_ours_cold"] / results["median_jupyter_book_force"]
    results["median_no_op"] = statistics.median(results["no_op"])
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m claimbook bench")
    parser.add_argument("--root", type=Path, default=paths.REPO_ROOT, help="the book to time")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (>= 1)")
    parser.add_argument("--output", type=Path, default=paths.BUILD_DIR / "bench.json")
    options = parser.parse_args(argv)
    if options.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {options.rounds}")
    results = run_bench(options.root.resolve(), options.rounds)
    write_text_atomically(options.output, json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(
        f"ours cold (median): {results['median_ours_cold']:.2f} s; jupyter-book force "
        f"(median): {results['median_jupyter_book_force']:.2f} s; ratio {results['ratio']:.2f}"
    )
    print(
        f"no-op: {results['median_no_op']:.2f} s; prose edit: {results['prose_edit']:.2f} s "
        f"(budget {results['prose_edit_budget']:.2f} s: the chapter's kernel time + 2 s)"
    )
    print(
        f"code edit of the last chapter: {results['code_edit']:.2f} s "
        f"(budget {results['code_edit_budget']:.2f} s)"
    )
    if "edit_function_of_last_chapter" in results:
        print(
            "edit function of last chapter: "
            f"{results['edit_function_of_last_chapter']:.2f} s (budget "
            f"{results['edit_function_of_last_chapter_budget']:.2f} s)"
        )
    if "edit_unused_function" in results:
        print(f"edit unused function: {results['edit_unused_function']:.2f} s (budget 1 s)")
    print(f"written to {options.output}")
    return 0
