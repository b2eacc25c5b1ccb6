"""The CI workflow's build spread over machines, run locally: ``python -m checks matrix``.

::

    matrix [--root DIR] [--work DIR] [--keep] [--reference SITE]

``.github/workflows/book.yml`` computes every claim in a job that runs no chapter code, lists
the chapters in one job, executes each chapter in a job of its own (starting from the claims
job's artifacts), uploads exactly the files that chapter's record lists, and renders the site
in one last job from those files alone, the claim artifacts taken from the claims job. This
check runs the same commands (:data:`COMMANDS`), each job in a fresh copy of the book at
``--root`` (default: this repository):

1. **Copies.** A ``git clone`` of the root's HEAD when the root is a git checkout (so
   uncommitted changes are not part of the check; it says so), otherwise a copy of the tree
   without its build products (what ``make clean`` removes, and ``.git``, ``.venv``,
   ``node_modules``).
2. **Chapters.** ``chapters --json`` in a copy of its own lists the chapters.
3. **One job per chapter.** ``execute CHAPTER`` then ``outputs CHAPTER`` in a fresh copy;
   the files listed, and nothing else, are collected (``actions/upload-artifact``).
4. **Render.** A fresh copy receives every job's files (``actions/download-artifact`` with
   ``merge-multiple``; two jobs listing one path with different bytes is an error) and runs
   ``render``, which fails rather than execute anything.
5. **One machine.** Another fresh copy runs ``build``; or, with ``--reference SITE``, the
   ``_build/html`` of a one-machine build of the same sources that already exists is taken
   instead (the tests build their fixture book once and check the matrix against it).
6. **Compare.** The two ``_build/html`` trees are compared byte for byte; every file that
   differs or exists on one side only is listed.
7. **Time.** Each job's commands are timed; the critical path (the slowest chapter job, since
   the chapter jobs run side by side, plus the render job) is printed beside the one-machine
   build's time (:func:`critical_path`).

Every job runs with this interpreter, the copy's own ``harness/`` and ``engine/`` first on
``PYTHONPATH`` (so the copy's code runs, not the checkout's) and ``TRAINABLE_ROOT`` set to the
copy, one BLAS thread, and the same footer stamp (``TRAINABLE_BUILD_COMMIT`` and
``TRAINABLE_BUILD_DATE``: the root's commit and its date, as the footer would show them), so
two sites built from the same files can be equal. MathJax (``_build/site-extra``, which
``make`` vendors from ``package-lock.json``; no chapter writes it) is copied from the root into
the two rendering copies when the root has it; the workflow's render job runs ``make mathjax``.

Exit status: 0 the sites are byte-identical; 1 a job failed or the sites differ.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from claimbook import paths
from claimbook.build_stamp import COMMIT_VARIABLE, DATE_VARIABLE, build_stamp
from claimbook.errors import BuildError
from claimbook.pipeline.execute import BLAS_THREAD_VARIABLES

__all__ = [
    "COMMANDS",
    "MatrixCheckError",
    "compare_sites",
    "critical_path",
    "fresh_copy",
    "matrix_check",
]


class MatrixCheckError(BuildError):
    """A job of the check failed, or its outputs cannot be assembled; the message says which."""


# The workflow's commands (``python -m claimbook ...``), in the order its jobs run them;
# tests/checks/test_matrix.py checks that book.yml runs each of them.
COMMANDS = {
    "claims": ("claims", "verify"),
    "chapters": ("chapters", "--json"),
    "execute": ("execute", "{chapter}"),
    "outputs": ("outputs", "{chapter}"),
    "render": ("render",),
}
ONE_MACHINE = ("build",)
_NEVER_COPIED = frozenset(
    {".git", ".venv", "_build", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache"}
    | {".hypothesis", ".setup.lock"}
)
_KEPT_IN_ARTIFACTS = ("README.md", ".gitignore")
_SITE_EXTRA = Path("_build") / "site-extra"


def _is_git_checkout(root: Path) -> bool:
    return (root / ".git").exists()


def _git(root: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *arguments], capture_output=True, text=True, check=True
    ).stdout.strip()


def fresh_copy(root: Path, target: Path) -> Path:
    """A fresh copy of the book at ``root`` in ``target`` (see the module doc); ``target``."""
    if _is_git_checkout(root):
        commit = _git(root, "rev-parse", "HEAD")
        subprocess.run(
            ["git", "clone", "--quiet", "--no-checkout", str(root), str(target)], check=True
        )
        _git(target, "checkout", "--quiet", "--detach", commit)
        return target

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory)
        skipped = {name for name in names if name in _NEVER_COPIED}
        if here == root / "chapters":
            skipped.update(name for name in names if name.endswith(".ipynb"))
        if here == root / "artifacts":
            skipped.update(name for name in names if name not in _KEPT_IN_ARTIFACTS)
        return skipped

    shutil.copytree(root, target, symlinks=True, ignore=ignore)
    return target


def _stamp(root: Path) -> dict[str, str]:
    """The footer stamp every job is given, and whether the root has uncommitted changes."""
    return build_stamp(str(root), environ={})


def _environment(copy: Path, stamp: dict[str, str]) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    code = [str(copy / folder) for folder in ("harness", "engine") if (copy / folder).is_dir()]
    if code:
        environment["PYTHONPATH"] = os.pathsep.join(code)
    environment[paths.ROOT_ENVIRONMENT_VARIABLE] = str(copy)
    environment[COMMIT_VARIABLE] = stamp["commit"]
    environment[DATE_VARIABLE] = stamp["date"]
    for variable in BLAS_THREAD_VARIABLES:
        environment[variable] = "1"
    return environment


class _Jobs:
    """Runs each job's commands in its copy, timing them and keeping what they printed."""

    def __init__(self, root: Path, work: Path, stamp: dict[str, str], out) -> None:
        self.root, self.work, self.stamp, self.out = root, work, stamp, out
        self.seconds: dict[str, float] = {}  # each job's commands, summed, by copy name

    def copy(self, name: str) -> Path:
        return fresh_copy(self.root, self.work / name)

    def run(self, copy: Path, command: tuple[str, ...], chapter: str = "") -> str:
        arguments = [word.format(chapter=chapter) for word in command]
        started = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-m", "claimbook", *arguments],
            cwd=copy,
            env=_environment(copy, self.stamp),
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        self.seconds[copy.name] = self.seconds.get(copy.name, 0.0) + seconds
        shown = " ".join(arguments)
        if process.returncode != 0:
            raise MatrixCheckError(
                f"job {copy.name}: `python -m claimbook {shown}` exited with status "
                f"{process.returncode} after {seconds:.1f} s:\n{process.stdout}{process.stderr}"
            )
        self.out(f"matrix-check: {copy.name}: `{shown}` took {seconds:.1f} s")
        return process.stdout


def _collect(copy: Path, listed: list[str], into: Path) -> None:
    """Copy the files a job listed (and only those) out of its copy, as an upload does."""
    for name in listed:
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts:
            raise MatrixCheckError(f"job {copy.name} listed {name!r}, not a path in the book")
        found = copy / relative
        if not found.is_file() or found.is_symlink():
            raise MatrixCheckError(f"job {copy.name} listed {name}, which it did not write")
        (into / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(found, into / relative)


def _assemble(uploads: dict[str, Path], target: Path) -> int:
    """Put every upload's files into ``target`` (a download of them all); the file count."""
    placed: dict[Path, str] = {}
    for chapter, upload in uploads.items():
        for found in sorted(path for path in upload.rglob("*") if path.is_file()):
            relative = found.relative_to(upload)
            destination = target / relative
            if relative in placed and not filecmp.cmp(found, destination, shallow=False):
                raise MatrixCheckError(
                    f"jobs {placed[relative]} and {chapter} both uploaded {relative.as_posix()}"
                    ", with different bytes"
                )
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(found, destination)
            placed[relative] = chapter
    return len(placed)


def _files(site: Path) -> dict[str, Path]:
    found = {}
    for folder, _subfolders, names in os.walk(site):
        for name in names:
            path = Path(folder) / name
            found[path.relative_to(site).as_posix()] = path
    return found


def compare_sites(assembled: Path, one_machine: Path) -> tuple[int, list[str]]:
    """Compare two sites byte for byte: the number of files, and one line per difference."""
    left, right = _files(assembled), _files(one_machine)
    differences = [
        f"{name}: only in the assembled site" for name in sorted(set(left) - set(right))
    ]
    differences += [
        f"{name}: only in the one-machine site" for name in sorted(set(right) - set(left))
    ]
    differences += [
        f"{name}: differs"
        for name in sorted(set(left) & set(right))
        if left[name].is_symlink() != right[name].is_symlink()
        or not filecmp.cmp(left[name], right[name], shallow=False)
    ]
    return len(left), differences


def critical_path(seconds: dict[str, float]) -> dict:
    """The matrix build's critical path from its jobs' times (seconds by job name).

    The chapter jobs run side by side, so the site is ready after the slowest of them plus the
    render job; that is compared with the one-machine build when one was timed.
    """
    chapters = {name: value for name, value in seconds.items() if name.startswith("chapter-")}
    if not chapters or "render" not in seconds:
        raise ValueError(f"need chapter jobs and a render job, got {sorted(seconds)}")
    slowest = max(sorted(chapters), key=chapters.__getitem__)
    timings = {
        "slowest_chapter_job": slowest,
        "slowest_chapter_seconds": chapters[slowest],
        "render_seconds": seconds["render"],
        "critical_path_seconds": chapters[slowest] + seconds["render"],
    }
    if "one-machine" in seconds:
        timings["one_machine_seconds"] = seconds["one-machine"]
    return timings


def matrix_check(
    root: Path, work: Path, out=print, reference: Path | None = None, timings: dict | None = None
) -> int:
    """Run the workflow's jobs under ``work`` and compare the sites; the exit status.

    ``reference``, if given, is the site of a one-machine build of the same sources, compared
    against instead of building one (step 5 of the module doc). ``timings``, if given, is
    filled with :func:`critical_path`'s figures once every job has run.
    """
    root = root.resolve()
    started = time.perf_counter()
    stamp = _stamp(root)
    if _is_git_checkout(root):
        where = f"a clone of HEAD ({stamp['commit']}, {stamp['date']})"
        if stamp["dirty"]:
            where += "; the uncommitted changes of the root are not part of the check"
    else:
        where = "a copy of the tree without its build products"
    out(f"matrix-check: {root}: each job runs in {where}, under {work}")
    extra = root / _SITE_EXTRA
    if (root / "package.json").is_file() and not extra.is_dir():
        out(f"matrix-check: {extra} is missing: run `make mathjax` in {root} first")
        return 1
    jobs = _Jobs(root, work, stamp, out)
    try:
        # The claims job: every claim computed in a copy that runs no chapter; its artifacts
        # are the ones every chapter job starts from and the render job renders.
        claims_copy = jobs.copy("claims")
        jobs.run(claims_copy, COMMANDS["claims"])
        claims_upload = work / "uploads" / "claims"
        computed = sorted((claims_copy / "artifacts" / "claims").glob("*.json"))
        _collect(
            claims_copy, [p.relative_to(claims_copy).as_posix() for p in computed], claims_upload
        )
        out(f"matrix-check: claims: {len(computed)} artifact(s) uploaded")
        listing = jobs.copy("chapters")
        chapters = json.loads(jobs.run(listing, COMMANDS["chapters"]))
        shutil.rmtree(listing)
        uploads: dict[str, Path] = {}
        for chapter in chapters:
            copy = jobs.copy(f"chapter-{chapter}")
            _assemble({"claims": claims_upload}, copy)
            jobs.run(copy, COMMANDS["execute"], chapter)
            listed = jobs.run(copy, COMMANDS["outputs"], chapter).split()
            uploads[chapter] = work / "uploads" / chapter
            _collect(copy, listed, uploads[chapter])
            out(f"matrix-check: chapter-{chapter}: {len(listed)} file(s) uploaded")
        render_copy = jobs.copy("render")
        count = _assemble(uploads, render_copy)
        # The claim artifacts are the claims job's, whatever a chapter job uploaded.
        for stale in (render_copy / "artifacts" / "claims").glob("*.json"):
            stale.unlink()
        count += _assemble({"claims": claims_upload}, render_copy)
        out(f"matrix-check: render: {count} file(s) downloaded from {len(uploads) + 1} job(s)")
        rendering = [render_copy]
        if reference is None:
            one_machine = jobs.copy("one-machine")
            rendering.append(one_machine)
        if extra.is_dir():
            for copy in rendering:
                shutil.copytree(extra, copy / _SITE_EXTRA, symlinks=True)
        jobs.run(render_copy, COMMANDS["render"])
        if reference is None:
            jobs.run(one_machine, ONE_MACHINE)
            reference = one_machine / "_build/html"
        else:
            out(f"matrix-check: one-machine: the site at {reference}, built before")
    except (MatrixCheckError, subprocess.CalledProcessError, ValueError) as error:
        out(f"matrix-check: FAILED: {error}")
        return 1
    path = critical_path(jobs.seconds)
    if timings is not None:
        timings.update(path)
    line = (
        f"matrix-check: critical path {path['critical_path_seconds']:.1f} s (slowest chapter "
        f"job {path['slowest_chapter_job']} {path['slowest_chapter_seconds']:.1f} s + render "
        f"{path['render_seconds']:.1f} s)"
    )
    if "one_machine_seconds" in path:
        line += f" against {path['one_machine_seconds']:.1f} s for the one-machine build"
    out(line)
    files, differences = compare_sites(render_copy / "_build/html", reference)
    seconds = time.perf_counter() - started
    if differences:
        for line in differences:
            out(f"matrix-check: {line}")
        out(
            f"matrix-check: FAILED in {seconds:.1f} s: {len(differences)} difference(s) "
            f"between the assembled site and the one-machine site ({files} files)"
        )
        return 1
    out(
        f"matrix-check: the assembled site and the one-machine site are byte-identical "
        f"({files} files; {len(chapters)} chapter job(s); {seconds:.1f} s)"
    )
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m checks matrix",
        description="Run the CI workflow's jobs locally, each in a fresh copy of the book, and "
        "compare the site they assemble with a one-machine build, byte for byte.",
    )
    parser.add_argument(
        "--root", type=Path, default=paths.REPO_ROOT, help="the book (default: this checkout)"
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=None,
        help="where the copies go (default: a new temporary "
        "directory, removed afterwards unless --keep)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the copies")
    parser.add_argument(
        "--reference",
        type=Path,
        default=None,
        help="the _build/html of a one-machine build of the same sources, compared against "
        "instead of building one",
    )
    options = parser.parse_args(argv)
    if not (options.root / "_toc.yml").is_file():
        parser.error(f"{options.root} holds no _toc.yml")
    if options.reference is not None and not options.reference.is_dir():
        parser.error(f"{options.reference} is not a directory")
    if options.work is not None:
        if options.work.exists() and any(options.work.iterdir()):
            parser.error(f"{options.work} is not empty")
        options.work.mkdir(parents=True, exist_ok=True)
        work = options.work.resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix="matrix-check-"))
    try:
        return matrix_check(
            options.root,
            work,
            out=lambda line: print(line, flush=True),
            reference=None if options.reference is None else options.reference.resolve(),
        )
    finally:
        if options.work is None and not options.keep:
            shutil.rmtree(work, ignore_errors=True)
