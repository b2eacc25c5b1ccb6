"""``claimbook.build.head_start``: one chapter worker whose kernel boots before its chapter."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import psutil
import pytest

from claimbook.build import execute, head_start
from claimbook.build.execute import ChapterRun
from claimbook.build.kernels import stop_kernel

pytestmark = pytest.mark.book  # starts kernels


def _probe(source: str, environment: dict, booted=None) -> ChapterRun:
    """In the worker, instead of a chapter: ask the booted kernel for a variable it was given
    after it booted, and say how it went (``error`` carries the answer, as JSON)."""
    if booted is None:
        return ChapterRun("probe", False, 0.0, [], "no kernel was booted")
    manager, seconds = booted
    client = manager.client()
    client.start_channels()
    answer: list[str] = []
    try:
        began = time.perf_counter()
        asyncio.run(client.wait_for_ready(timeout=5))
        ready_after = time.perf_counter() - began
        code = f"import os; os.environ.update({environment!r}); print(os.environ['PROBE'])"
        asyncio.run(
            client.execute_interactive(
                code,
                timeout=30,
                output_hook=lambda m: answer.append(m["content"].get("text", "")),
            )
        )
    finally:
        client.stop_channels()
        stop_kernel(manager)
    said = {"answer": "".join(answer).strip(), "ready_after": ready_after, "boot": seconds}
    return ChapterRun("probe", True, seconds, [], json.dumps(said))


def _kernels_of(process_id: int, wait: float = 60) -> list[psutil.Process]:
    """The kernel processes below ``process_id``, once there is one (or none after ``wait``)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        found = [
            child
            for child in psutil.Process(process_id).children(recursive=True)
            if "ipykernel" in " ".join(child.cmdline())
        ]
        if found:
            return found
        time.sleep(0.05)
    return []


def test_the_chapter_runs_on_the_kernel_booted_before_it_came(monkeypatch):
    monkeypatch.setattr(head_start, "_run_one", _probe)  # the worker is forked: it has it
    worker = head_start.KernelHeadStart()
    time.sleep(0.5)  # the build plans meanwhile
    run = worker.submit("chapters/probe.md", {"PROBE": "given after the boot"}).result(60)
    assert run.ok, run.error
    said = json.loads(run.error)
    assert said["answer"] == "given after the boot"
    assert said["ready_after"] < 1.0  # booted already: no second boot
    assert 0 < said["boot"] == run.seconds
    execute.end_workers()
    worker.process.join(30)  # its sentinel is ready as it closes; its status comes after
    assert worker.process.exitcode == 0
    with pytest.raises(RuntimeError, match="one chapter"):
        worker.submit("chapters/another.md", {})


def test_a_head_start_that_gets_no_chapter_stops_its_kernel():
    worker = head_start.KernelHeadStart()
    kernels = _kernels_of(worker.process.pid)
    assert kernels, "the worker launched a kernel at once"
    worker.close()
    worker.close()  # once is enough; again does nothing
    execute.end_workers()
    worker.process.join(30)
    assert worker.process.exitcode == 0
    assert not any(_alive(kernel) for kernel in kernels)


def test_a_head_start_signalled_again_and_again_still_ends_with_its_kernel():
    # A dying driver with several threads sends its workers the parent-death signal more
    # than once (once per thread the worker is handed to): a handler run again inside
    # itself once waited forever on a lock its first run held, the worker and its kernel
    # outliving the build.
    worker = head_start.KernelHeadStart()
    kernels = _kernels_of(worker.process.pid)
    assert kernels, "the worker launched a kernel at once"
    for _ in range(200):
        try:
            os.kill(worker.process.pid, signal.SIGTERM)
        except ProcessLookupError:  # it has ended
            break
        time.sleep(0.0005)
    worker.process.join(10)
    assert worker.process.exitcode == 0
    assert not any(_alive(kernel) for kernel in kernels)
    execute.end_workers()


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _die(source: str, environment: dict, booted=None) -> ChapterRun:
    """In the worker, instead of a chapter: stop the kernel (nothing is left behind), die."""
    if booted is not None:
        stop_kernel(booted[0])
    os._exit(3)


def test_a_worker_that_died_fails_its_chapter_and_says_so(monkeypatch):
    monkeypatch.setattr(head_start, "_run_one", _die)
    worker = head_start.KernelHeadStart()
    run = worker.submit("chapters/lost.md", {}).result(60)
    execute.end_workers()
    assert (run.ok, run.stem, run.error) == (False, "lost", "its worker process died")


def _busy(source: str, environment: dict, booted=None) -> ChapterRun:
    """In the worker, instead of a chapter: stop the kernel, then compute for 0.3 s of CPU."""
    if booted is not None:
        stop_kernel(booted[0])
    began = time.process_time()
    while time.process_time() - began < 0.3:
        pass
    return ChapterRun("busy", True, 0.3, [])


def test_the_workers_cpu_time_is_counted_as_the_builds(monkeypatch):
    import resource

    monkeypatch.setattr(head_start, "_run_one", _busy)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    worker = head_start.KernelHeadStart()
    assert worker.submit("chapters/busy.md", {}).result(60).ok
    execute.end_workers()  # reaps it: its time, and its kernel's, are this process's children's
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before >= 0.3
