"""Check what Binder would do, without Binder (``make binder-check``).

Binder (repo2docker) reads ``binder/`` (its configuration folder, which hides any file of the
repository's root): ``binder/runtime.txt`` (the Python version), installs
``binder/requirements.txt`` (a reader's environment, pinned to the book's lock) with pip, runs
``binder/postBuild`` from the repository root (the book's packages, each chapter run once and
written as its reader notebook, :mod:`claimbook.reader_notebooks`), and the launch button then
opens ``chapters/<name>.ipynb`` in a kernel whose working directory is the notebook's folder.
This script does exactly that in a temporary directory:

1. copies the repository's files (tracked and untracked-but-not-ignored: what a push would
   hold; no ``.venv``, no ``artifacts`` or ``_build``);
2. makes a fresh virtual environment with the Python ``binder/runtime.txt`` names, pip in it,
   and installs ``binder/requirements.txt`` into it: with uv by default (``uv venv --seed``,
   1 s against the 8 s of ``python -m venv``; every line pins one version, so uv installs the
   same packages pip would, in seconds rather than the 40-280 s pip takes here), or with
   ``python -m venv`` and pip, as repo2docker does, given ``--pip``;
3. runs ``binder/postBuild`` with that environment first on ``PATH``, and checks that each
   notebook it wrote reads as the site does: no raw MyST in its prose
   (:func:`raw_myst`) and a drawn figure (``image/png``) for
   each figure the chapter's prose shows;
4. judges every registered claim from the artifact each chapter wrote as ``postBuild`` ran
   it, in that environment: each must be ``verified`` or ``refuted``
   (:func:`claimbook.claims.judge`);
   given ``--against DIR`` (``make test`` passes the build's ``artifacts/claims``), each
   artifact must also equal the one in DIR in every field but those naming the environment
   (Binder's is the lock's runtime part): a recomputation in a fresh
   environment, in a reader's kernel, agrees with the build's subprocess, which is what
   ``claims verify --check-artifacts`` checks, without computing every claim a third time.

Outside a build, a chapter's ``verify_claim`` computes its claim in the reader's kernel and
writes the artifact (:mod:`claimbook.claims.record`), so after step 3 every claim a chapter
states has been computed once under Binder's environment. Step 4 does not compute them a
second time (which ``claims verify`` would): the judge finds an artifact that no notebook
wrote ``not run``, one written under another harness, registry entry or lock ``stale``, and
one whose stored result does not support its status, or that records a failure, ``failed``;
so "every claim verified or refuted" holds exactly when every claim was computed by a
notebook, under this environment, with the registry's outcome, which is what a reader on
Binder relies on.

It prints how long each step took and exits non-zero, naming the step, if one fails. Nothing
outside the temporary directory is written, and the environment of the calling shell (an
active virtual environment, ``TRAINABLE_*`` variables) is not passed on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from claimbook import paths
from claimbook.claims.store import differences
from claimbook.reader_notebooks import book_numbers

REPO_ROOT = paths.REPO_ROOT
SKIP_PREFIXES = (".venv/", "_build/", "artifacts/", "node_modules/")
# What MyST source looks like to a reader who sees it raw: a role, a directive's fence, a
# colon fence, a target line.
RAW_MYST = re.compile(r"\{[a-z][\w:+-]*\}`|```\{|^:::|^\([\w:.-]+\)=$", re.MULTILINE)

# Step 5, run in Binder's environment: every registered claim judged from its artifact.
JUDGE_EVERY_CLAIM = """
import sys
from claimbook import claims
bad = 0
for claim_id in claims.list_claims():
    judgement = claims.judge(claim_id)
    print(f"{claim_id}: {judgement.state}")
    if judgement.state not in ("verified", "refuted"):
        bad += 1
        print(f"{claim_id}: {judgement.reason}", file=sys.stderr)
sys.exit(1 if bad else 0)
"""


# What names the environment an artifact was computed in: Binder's is the lock's runtime part
# (binder/requirements.txt), so its environment digest, the key digest over it and the note of
# the packages it lacks differ from the build's by design; everything computed must not.
_ENVIRONMENT_FIELDS = (
    ("key", "digest"),
    ("key", "environment_digest"),
    ("provenance", "environment_mismatch"),
)


def artifact_differences(written: Path, built: Path, claim_ids) -> list[str]:
    """One line per claim whose artifact in ``written`` differs from ``built``'s in anything
    but the fields that name the environment (:data:`_ENVIRONMENT_FIELDS`).

    A missing file on either side is a difference; for two readable artifacts the line names
    the differing fields (:func:`claimbook.claims.store.differences`).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
    ...     _ = (Path(a) / "c-1.json").write_text('{"result": {"x": 1}, "key": {"digest": 1}}')
    ...     _ = (Path(b) / "c-1.json").write_text('{"result": {"x": 2}, "key": {"digest": 2}}')
    ...     artifact_differences(Path(a), Path(b), ["c-1", "c-2"])
    ['c-1: result.x: on disk 1, expected 2', 'c-2: the notebooks wrote no artifact']
    """
    found = []
    for claim_id in claim_ids:
        mine, theirs = written / f"{claim_id}.json", built / f"{claim_id}.json"
        if not mine.is_file():
            found.append(f"{claim_id}: the notebooks wrote no artifact")
        elif not theirs.is_file():
            found.append(f"{claim_id}: no artifact in {theirs.parent} to compare with")
        elif mine.read_bytes() != theirs.read_bytes():
            try:
                fields = differences(
                    _computed(json.loads(mine.read_bytes())),
                    _computed(json.loads(theirs.read_bytes())),
                )
            except ValueError as error:  # not JSON, or not UTF-8
                found.append(f"{claim_id}: unreadable: {error}")
                continue
            if fields:
                found.append(f"{claim_id}: " + "; ".join(fields))
    return found


def _computed(artifact: dict) -> dict:
    """``artifact`` without the fields that name its environment (a copy)."""
    artifact = json.loads(json.dumps(artifact))
    for section, name in _ENVIRONMENT_FIELDS:
        if isinstance(artifact.get(section), dict):
            artifact[section].pop(name, None)
    return artifact


def raw_myst(notebook) -> list[str]:
    """Every piece of raw MyST in the markdown cells of ``notebook`` (none in a reader's).

    Examples
    --------
    >>> notebook = nbformat.v4.new_notebook()
    >>> notebook.cells.append(nbformat.v4.new_markdown_cell("x {numref}`fig-a` y"))
    >>> raw_myst(notebook)
    ['{numref}`']
    """
    return [
        found.group(0)
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for found in RAW_MYST.finditer(cell.source)
    ]


def image_outputs(notebook) -> int:
    """How many ``image/png`` outputs the code cells of ``notebook`` hold."""
    return sum(
        "image/png" in output.get("data", {})
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", ())
    )


def reader_problems(notebooks, root: Path) -> list[str]:
    """One line per notebook that shows raw MyST or lacks a figure its chapter shows."""
    figures = book_numbers(root).figures
    found = []
    for path in notebooks:
        notebook = nbformat.read(path, as_version=4)
        raw, drawn = raw_myst(notebook), image_outputs(notebook)
        if raw:
            found.append(f"{path.name}: raw MyST in its prose: {', '.join(sorted(set(raw)))}")
        if drawn != figures.get(path.stem, 0):
            found.append(
                f"{path.name}: {drawn} figure(s) drawn, the chapter shows "
                f"{figures.get(path.stem, 0)}"
            )
    return found


def _python_for_runtime(runtime: Path) -> str:
    match = re.fullmatch(r"python-(\d+\.\d+)(?:\.\d+)?", runtime.read_text().strip())
    if match is None:
        raise SystemExit(
            f"binder-check: runtime.txt must read python-X.Y, got {runtime.read_text()!r}"
        )
    name = f"python{match.group(1)}"
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"binder-check: runtime.txt asks for {name}, which is not installed")
    return found


def _clean_environment(venv: Path) -> dict[str, str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("TRAINABLE_", "PYTHON", "VIRTUAL_ENV", "JUPYTER", "CONDA"))
    }
    environment["PATH"] = f"{venv / 'bin'}{os.pathsep}{environment.get('PATH', '')}"
    environment["VIRTUAL_ENV"] = str(venv)
    environment["MPLBACKEND"] = "agg"
    return environment


def _copy_repository(destination: Path) -> None:
    listed = subprocess.run(
        [
            "git",
            "-C",
            str(REPO_ROOT),
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    for name in sorted(set(filter(None, listed.split("\0")))):
        if name.startswith(SKIP_PREFIXES):
            continue
        source = REPO_ROOT / name
        if not source.is_file() or source.is_symlink():
            continue  # deleted in the work tree, or a link Binder would not follow here
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _step(name: str, command: list[str], cwd: Path, environment: dict[str, str], timings):
    print(f"binder-check: {name}: {' '.join(command)}  (in {cwd})", flush=True)
    start = time.monotonic()
    result = subprocess.run(command, cwd=cwd, env=environment, stderr=subprocess.PIPE, text=True)
    # pip's notes about this machine's unused local index paths are noise; all else is shown.
    for line in result.stderr.splitlines():
        if "is ignored: it is neither a file nor a directory" not in line:
            print(line, file=sys.stderr)
    timings.append((name, time.monotonic() - start))
    if result.returncode != 0:
        raise SystemExit(f"binder-check: step '{name}' failed (exit {result.returncode})")


def _options(argv):
    parser = argparse.ArgumentParser(
        prog="python -m checks binder", description="What Binder does, without Binder."
    )
    parser.add_argument(
        "--pip",
        action="store_true",
        help="install binder/requirements.txt with pip, as repo2docker does",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="also require every claim artifact to equal DIR's in all it computed",
    )
    options = parser.parse_args(argv)
    if options.against is not None and not options.against.is_dir():
        parser.error(f"--against: {options.against} is not a directory (run `make` first)")
    if options.against is not None:
        options.against = options.against.resolve()
    return options


def _uv() -> str:
    return shutil.which("uv") or str(Path(sys.executable).with_name("uv"))


def _creator(python: str, venv: Path, use_pip: bool) -> list[str]:
    """The command that makes the environment at ``venv`` with ``python``, pip in it
    (postBuild runs ``python -m pip``)."""
    if use_pip:
        return [python, "-m", "venv", str(venv)]
    return [_uv(), "venv", "--quiet", "--seed", "--python", python, str(venv)]


def _installer(venv: Path, use_pip: bool) -> list[str]:
    if use_pip:
        python = str(venv / "bin" / "python")
        return [python, "-m", "pip", "--quiet", "--disable-pip-version-check", "install"]
    return [_uv(), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python")]


def main(argv=()) -> int:
    options = _options(list(argv))
    timings: list[tuple[str, float]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="binder-check-") as scratch:
        repo = Path(scratch) / "repo"
        venv = Path(scratch) / "venv"
        start = time.monotonic()
        _copy_repository(repo)
        timings.append(("copy the repository", time.monotonic() - start))
        python = _python_for_runtime(repo / "binder" / "runtime.txt")
        environment = _clean_environment(venv)
        _step(
            "create the environment",
            _creator(python, venv, options.pip),
            repo,
            environment,
            timings,
        )
        _step(
            f"install binder/requirements.txt with {'pip' if options.pip else 'uv'}",
            [*_installer(venv, options.pip), "-r", "binder/requirements.txt"],
            repo,
            environment,
            timings,
        )
        _step("run binder/postBuild", ["bash", "binder/postBuild"], repo, environment, timings)
        notebooks = sorted((repo / "chapters").glob("*.ipynb"))
        if not notebooks:
            raise SystemExit("binder-check: binder/postBuild wrote no chapters/*.ipynb")
        found = reader_problems(notebooks, repo)
        if found:
            print("\n".join(found), file=sys.stderr)
            raise SystemExit(f"binder-check: {len(found)} notebook(s) do not read as the site")

        _step(
            "judge every claim from the notebooks' artifacts",
            [str(venv / "bin" / "python"), "-c", JUDGE_EVERY_CLAIM],
            repo,
            environment,
            timings,
        )
        if options.against is not None:
            from claimbook import claims

            found = artifact_differences(
                repo / "artifacts" / "claims", options.against, claims.list_claims()
            )
            if found:
                print("\n".join(found), file=sys.stderr)
                raise SystemExit(
                    f"binder-check: {len(found)} artifact(s) differ from {options.against}"
                )
            print(
                f"binder-check: every claim artifact equals {options.against}'s in all it computed"
            )
    total = time.monotonic() - started
    print("binder-check: passed")
    for name, seconds in timings:
        print(f"  {seconds:7.1f} s  {name}")
    print(f"  {total:7.1f} s  total")
    return 0
