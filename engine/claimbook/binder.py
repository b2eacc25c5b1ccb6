"""Check what Binder would do, without Binder (``make binder-check``).

Binder (repo2docker) reads ``runtime.txt`` (the Python version), installs ``requirements.txt``
with pip, runs ``postBuild`` from the repository root, and the launch button then opens
``chapters/<name>.ipynb`` in a kernel whose working directory is the notebook's folder. This
script does exactly that in a temporary directory:

1. copies the repository's files (tracked and untracked-but-not-ignored: what a push would
   hold; no ``.venv``, no ``artifacts`` or ``_build``);
2. makes a fresh virtual environment with the Python ``runtime.txt`` names and installs
   ``requirements.txt`` into it (pip, as repo2docker does);
3. runs ``postBuild`` with that environment first on ``PATH``;
4. executes every notebook the launch button opens (``chapters/*.ipynb`` from ``postBuild``)
   with papermill, working directory the notebook's folder, in that environment's kernel,
   one notebook per core at once (each reader opens one notebook in a kernel of their own;
   the chapters write different claim artifacts and figures, so running them side by side
   checks the same thing as one after another, in less time);
5. judges every registered claim from the artifact the notebooks wrote, in that
   environment: each must be ``verified`` or ``refuted`` (:func:`claimbook.claims.judge`).

Outside a build, a chapter's ``verify_claim`` computes its claim in the reader's kernel and
writes the artifact (:mod:`claimbook.claims.verify`), so after step 4 every claim a chapter
states has been computed once under Binder's environment. Step 5 does not compute them a
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

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from claimbook import paths

REPO_ROOT = paths.REPO_ROOT
SKIP_PREFIXES = (".venv/", "_build/", "artifacts/", "node_modules/")

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


def main() -> int:
    timings: list[tuple[str, float]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="binder-check-") as scratch:
        repo = Path(scratch) / "repo"
        venv = Path(scratch) / "venv"
        start = time.monotonic()
        _copy_repository(repo)
        timings.append(("copy the repository", time.monotonic() - start))
        python = _python_for_runtime(repo / "runtime.txt")
        environment = _clean_environment(venv)
        _step(
            "create the environment", [python, "-m", "venv", str(venv)], repo, environment, timings
        )
        pip = [str(venv / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
        _step(
            "install requirements.txt",
            [*pip, "install", "-r", "requirements.txt"],
            repo,
            environment,
            timings,
        )
        _step("run postBuild", ["bash", "./postBuild"], repo, environment, timings)
        notebooks = sorted((repo / "chapters").glob("*.ipynb"))
        if not notebooks:
            raise SystemExit("binder-check: postBuild wrote no chapters/*.ipynb")

        def execute(notebook: Path) -> None:
            executed = Path(scratch) / f"{notebook.stem}.executed.ipynb"
            _step(
                f"execute {notebook.relative_to(repo)}",
                [
                    str(venv / "bin" / "papermill"),
                    "--cwd",
                    str(notebook.parent),
                    "--log-level",
                    "WARNING",
                    "--no-progress-bar",
                    str(notebook),
                    str(executed),
                ],
                notebook.parent,
                environment,
                timings,
            )

        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
            for future in [pool.submit(execute, notebook) for notebook in notebooks]:
                future.result()  # the first failed step, by its SystemExit
        timings.append(("execute the notebooks (side by side)", time.monotonic() - start))
        _step(
            "judge every claim from the notebooks' artifacts",
            [str(venv / "bin" / "python"), "-c", JUDGE_EVERY_CLAIM],
            repo,
            environment,
            timings,
        )
    total = time.monotonic() - started
    print("binder-check: passed")
    for name, seconds in timings:
        print(f"  {seconds:7.1f} s  {name}")
    print(f"  {total:7.1f} s  total")
    return 0
