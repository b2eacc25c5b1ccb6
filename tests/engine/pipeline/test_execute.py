"""``claimbook.pipeline.execute``'s chapter workers: each ends with its parent."""

from __future__ import annotations

import itertools
import os
import time
from multiprocessing.connection import wait

import pytest

from claimbook import paths
from claimbook.pipeline import execute, workers


def _pretend(source: str, environment: dict) -> execute.ChapterRun:
    # A chapter named "sN" takes N tenths of a second and verifies nothing.
    stem = source.rsplit("/", 1)[1].removesuffix(".md")
    time.sleep(int(stem[1:]) / 10)
    return execute.ChapterRun(stem, True, int(stem[1:]) / 10, [])


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(execute, "_run_one", _pretend)
    monkeypatch.setattr(execute.os, "cpu_count", lambda: 2)


def test_end_workers_leaves_no_worker_process(two_cores):
    workers.end_workers()
    execute.execute_chapters([paths.REPO_ROOT / "chapters" / f"s{n}.md" for n in (1, 2)])
    started = list(workers.WORKERS)
    assert len(started) == 2, "each chapter ran in a worker process of its own"
    workers.end_workers()
    assert all(wait([worker.sentinel], timeout=0) for worker in started)  # ready: ended
    assert workers.WORKERS == []


ORPHAN = """
import os, sys, time
from claimbook.pipeline.workers import die_with_parent

parent = os.getpid()
child = os.fork()
if child == 0:
    if sys.argv[1] == "ask":
        die_with_parent(parent)
    time.sleep(60)
    os._exit(0)
print(child, flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("ask", [True, False])
def test_a_worker_that_asked_ends_with_its_parent(ask):
    import signal
    import subprocess
    import sys

    with subprocess.Popen(
        [sys.executable, "-c", ORPHAN, "ask" if ask else "no"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as parent:
        child = int(parent.stdout.readline())
        parent.kill()
        parent.wait(timeout=30)
        # A signal sent at the parent's death arrives within milliseconds: the asked child
        # gets 5 s to end; the one not asked is looked at after 1 s (it would be gone by then).
        deadline = time.monotonic() + (5 if ask else 1)
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.05)
        try:
            # Asked: SIGTERM came with the parent's death. Not asked: the child lives on.
            assert _alive(child) is not ask
        finally:
            if _alive(child):
                os.kill(child, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped, counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stream:
            return stream.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


_LOG = {"folder": ""}  # set by the test before the workers fork (they see it)


def _logged(source: str, environment: dict, booted=None) -> execute.ChapterRun:
    """:func:`_pretend`, leaving its start and end times in a file of ``_LOG["folder"]``."""
    began = time.time()
    run = _pretend(source, environment)
    with open(os.path.join(_LOG["folder"], f"{run.stem}-{os.getpid()}"), "w") as stream:
        stream.write(f"{began} {time.time()}")
    return run


def test_no_more_than_jobs_chapters_run_at_once(two_cores, monkeypatch, tmp_path):
    monkeypatch.setattr(execute, "_run_one", _logged)
    monkeypatch.setitem(_LOG, "folder", str(tmp_path))
    sources = [paths.REPO_ROOT / "chapters" / f"s{n}.md" for n in (6, 1, 2, 3)]
    reported = []
    execute.execute_chapters(sources, jobs=1, report=reported.append)
    workers.end_workers()
    assert sorted(line.split(":")[0] for line in reported) == sorted(
        f"chapters/s{n}.md" for n in (6, 1, 2, 3)
    )
    # One job: the chapters ran one at a time.
    spans = sorted(tuple(map(float, path.read_text().split())) for path in tmp_path.iterdir())
    assert len(spans) == 4
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end - 0.01


def _kernel_then_wait(source: str, environment: dict, booted=None) -> execute.ChapterRun:
    """In a chapter worker, instead of a chapter: start a kernel, say where it is, wait."""
    from claimbook.pipeline.kernels import start_kernel

    manager = start_kernel()
    said = f"{os.getpid()} {manager.provisioner.process.pid} {os.path.dirname(manager.ip)}"
    with open(os.path.join(_LOG["folder"], "said"), "w") as stream:
        stream.write(said)
    time.sleep(60)
    return execute.ChapterRun("waited", True, 60.0, [])


@pytest.mark.book  # starts a kernel
def test_a_chapter_worker_signalled_again_and_again_ends_its_kernel_and_its_sockets(
    monkeypatch, tmp_path
):
    # SIGTERM is what a driver's death sends its workers (several times when the driver
    # had several threads). A kernel left to itself would end within a second of its
    # worker, but its socket folder would stay; a handler run inside itself could hang.
    import signal
    import threading

    monkeypatch.setattr(execute, "_run_one", _kernel_then_wait)
    monkeypatch.setitem(_LOG, "folder", str(tmp_path))
    outcome: list[BaseException | list] = []

    def build() -> None:
        try:
            outcome.append(execute.execute_chapters([paths.REPO_ROOT / "chapters" / "s1.md"]))
        except BaseException as error:  # the pool breaks when its worker is ended
            outcome.append(error)

    thread = threading.Thread(target=build)
    thread.start()
    said = tmp_path / "said"
    deadline = time.monotonic() + 60
    while not said.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    worker, kernel, sockets = said.read_text().split()
    assert os.path.isdir(sockets)
    for _ in range(200):
        try:
            os.kill(int(worker), signal.SIGTERM)
        except ProcessLookupError:
            break
        time.sleep(0.0005)
    thread.join(30)
    workers.end_workers()
    assert not thread.is_alive() and outcome, "the build learned its worker had ended"
    assert not _alive(int(worker)) and not _alive(int(kernel))
    assert not os.path.exists(sockets)
