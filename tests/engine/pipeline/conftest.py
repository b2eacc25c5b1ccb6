"""A built copy of the tiny fixture book (tests/books/tiny) for each build-driver test.

The book is copied with its own copy of the harness (``PYTHONPATH`` points there, and
``TRAINABLE_ROOT`` at the book), so a test may edit harness functions, claims and chapters
without touching the checkout. It is built once per test run, shared by the pytest-xdist
workers (the first to ask builds it, the others wait for it); each test gets a copy of that
built tree (its claim processes' bytecode hard-linked, see :func:`_copy_built`), and
nothing writes to the shared one. Each ``python -m claimbook`` command runs
in a fork of a preloaded interpreter, Sphinx and Jupyter Book already imported
(``tests/helpers/preloaded.py``): about half the CPU time of a small render is those imports.
"""

from __future__ import annotations

import compileall
import fcntl
import os
import py_compile
import shutil
import subprocess
from pathlib import Path

import preloaded
import pytest
from scratch_book import point_paths_at

from claimbook import paths
from claimbook.claims.cli import rewrite_pin
from claimbook.pipeline.claim_runs import BYTECODE_FOLDER
from trainable_harness import __version__

FIXTURE = Path(__file__).resolve().parents[2] / "books" / "tiny"
CLAIMS = ("c15-invariance-001", "c15-running-state-001")


class Book:
    """A fixture book on disk and the build driver run against it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def environment(self) -> dict:
        environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        environment["PYTHONPATH"] = str(self.root / "harness")
        environment["TRAINABLE_ROOT"] = str(self.root)
        return environment

    def run(self, *arguments: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """``python -m claimbook *arguments`` in the book, as ``subprocess.run`` would (in a
        fork of a preloaded interpreter: see ``tests/helpers/preloaded.py``)."""
        return preloaded.run(list(arguments), self.root, self.environment(), timeout)

    def build(self, *arguments: str) -> subprocess.CompletedProcess:
        return self.run("build", *arguments)

    @staticmethod
    def executed(process: subprocess.CompletedProcess) -> list[str]:
        """Chapter names the driver said it executed."""
        return sorted(
            line.split(":", 1)[0].removeprefix("chapters/")
            for line in process.stdout.splitlines()
            if ": executing (" in line
        )

    def path(self, relative: str) -> Path:
        return self.root / relative

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.path(relative)
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _make_book(root: Path) -> Book:
    shutil.copytree(FIXTURE, root)
    shutil.copytree(
        paths.REPO_ROOT / "harness" / "trainable_harness",
        root / "harness" / "trainable_harness",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    # The book's lock, so that the claims' keys (and with them the committed record of what
    # their mistakes turn red) are the book's own: a build runs no mistakes, as in CI.
    shutil.copy(paths.REPO_ROOT / "requirements.txt", root / "requirements.txt")
    # The mistakes the claims name, with the committed record of what they turn red.
    shutil.copytree(
        paths.CLAIMS_DIR / "mistakes",
        root / "claims" / "mistakes",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for claim_id in CLAIMS:
        shutil.copy(paths.CLAIMS_DIR / f"{claim_id}.yaml", root / "claims")
    (root / "artifacts").mkdir()
    for chapter in (root / "chapters").glob("*.md"):
        rewrite_pin(chapter, __version__)
    return Book(root)


def _compile_harness(book: Book) -> None:
    """Write the bytecode of the book's copy of the harness, checked against each source's
    bytes (as ``make`` compiles the checkout's): every build of every copy of the book would
    otherwise compile the modules it imports from source (``PYTHONDONTWRITEBYTECODE`` is set
    on this machine), and a module a test edits is compiled afresh, its hash being another."""
    compileall.compile_dir(
        book.path("harness"),
        quiet=1,
        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
    )


@pytest.fixture(scope="session", autouse=True)
def _preloaded_server():
    """This worker's preloaded build server (started by its first command) ends with it."""
    yield
    preloaded.close()


@pytest.fixture(scope="session")
def built_tiny_book(tmp_path_factory, worker_id) -> Book:
    """The fixture book built once; under pytest-xdist, once for all the workers.

    The workers' temporary roots share a parent; the first worker there builds the book
    while holding a lock on it, and the others find it built (a failed build is reported
    to each of them).
    """
    if worker_id == "master":  # not distributed: this process's own root
        shared = tmp_path_factory.mktemp("tiny")
    else:
        shared = tmp_path_factory.getbasetemp().parent / "built-tiny-book"
        shared.mkdir(exist_ok=True)
    with (shared / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        outcome = shared / "build.log"
        if not outcome.exists():
            book = _make_book(shared / "book")
            _compile_harness(book)
            process = book.build()
            status = "ok" if process.returncode == 0 else "failed"
            outcome.write_text(f"{status}\n{process.stdout}{process.stderr}", encoding="utf-8")
    status, _, log = outcome.read_text(encoding="utf-8").partition("\n")
    assert status == "ok", log
    return Book(shared / "book")


@pytest.fixture
def unbuilt_tiny_book(tmp_path) -> Book:
    """A copy of the fixture book that has never been built (no _build, no artifacts)."""
    return _make_book(tmp_path / "source")


def _copy_built(source: Path, target: Path) -> None:
    """Copy the built book at ``source`` to ``target``, its claim processes' bytecode linked.

    ``_build/claim-bytecode`` (the bytecode of NumPy, the engine and the harness that the
    claim processes read and write, :func:`claimbook.pipeline.claim_runs.isolated_command`)
    is 400 of the book's 670 files and was most of the 0.3 CPU-s each copy cost. Its files
    are hard-linked instead of copied: Python never writes a bytecode file in place (it
    writes a new file and renames it over the old one), so a build of the copy that writes
    bytecode there replaces its own link and leaves the shared book's file as it was. Every
    other file is copied, since builds and tests rewrite pages, records and artifacts.
    """
    bytecode = str(source / "_build" / BYTECODE_FOLDER) + os.sep

    def copy(from_path: str, to_path: str) -> str:
        if from_path.startswith(bytecode):
            try:
                os.link(from_path, to_path)
                return to_path
            except OSError:  # another filesystem, or links not allowed: a copy will do
                pass
        return shutil.copy2(from_path, to_path)

    shutil.copytree(source, target, symlinks=True, copy_function=copy)


@pytest.fixture
def tiny_book(built_tiny_book, tmp_path) -> Book:
    """A fresh copy of the built fixture book."""
    root = tmp_path / "book"
    _copy_built(built_tiny_book.root, root)
    (root / "_build" / ".build.lock").unlink(missing_ok=True)
    return Book(root)


@pytest.fixture
def artifacts(tmp_path, monkeypatch) -> dict[str, bytes]:
    """A scratch book's artifacts and build folders (the engine's paths point there), with
    two claim artifacts and a claim record; returns the artifacts' bytes by claim id."""
    point_paths_at(tmp_path / "book", monkeypatch)
    paths.CLAIM_ARTIFACTS_DIR.mkdir()
    held = {"c1-a-001": b'{"status": "verified"}\n', "c1-b-001": b'{"status": "refuted"}\n'}
    for claim_id, data in held.items():
        paths.artifact_path(claim_id).write_bytes(data)
    (paths.BUILD_DIR / "claims.json").write_text('{"format": 1}\n')
    return held
