"""A chapter worker forked when a build starts, its kernel booting while the build plans.

A kernel takes about 0.45 s to boot (launch, then ready to answer), and a build has more than
that to do before its first chapter can start: plan every chapter (parse those edited), start
computing the claims due, check the registry, reassemble prose edits. :class:`KernelHeadStart`
forks one worker process, which launches a kernel at once and waits until it is ready, then for
the first chapter (:meth:`KernelHeadStart.submit`); the chapter runs in it as in any chapter
worker (:func:`claimbook.build.execute._run_one`), on the booted kernel. No chapter code runs
in the kernel before the chapter is submitted, which the build does at the same point as
before, once the claims' artifacts have been read (:mod:`.claim_runs`, :mod:`.guard`).

It is forked before the build knows whether any chapter executes (knowing takes parsing the
edited chapters): a build that executes none stops the kernel unused, which costs the other
core half a second of work (a prose edit measured no slower, within its noise).

The kernel boots before its chapter is known, so the variables that name the chapter and the
build's claim record are set in it by the chapter's first (instrumentation) cell rather than
inherited; everything the kernel needs at launch is the same for every chapter. A chapter's
recorded kernel time is its kernel's boot plus its execution: not the wait in between, when the
kernel did nothing. A worker that gets no chapter stops its kernel and exits at once, even
mid-boot (:meth:`KernelHeadStart.close`); one whose kernel did not boot leaves the chapter to
start its own.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
from pathlib import Path

from claimbook.build.execute import (
    _WORKERS,
    ChapterRun,
    _run_one,
    chapter_process_variables,
    end_worker,
    start_worker,
)

__all__ = ["KernelHeadStart"]


class KernelHeadStart:
    """One forked chapter worker whose kernel boots before its chapter is submitted.

    Fork it from a process with no other thread (a fork copies only the calling thread, and
    a lock another thread held stays held in the copy). :func:`claimbook.build.execute.
    end_workers` waits for it like any chapter worker.
    """

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self._connection, theirs = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(theirs, os.getpid()), name="chapter head start"
        )
        self.process.start()
        theirs.close()
        _WORKERS.append(self.process)
        self._sent = False

    def submit(self, source: str, environment: dict[str, str]) -> concurrent.futures.Future:
        """Run chapter ``source`` on the booted kernel; the future's result is its run.

        Raises
        ------
        RuntimeError
            If a chapter was submitted already, or the worker was closed.
        """
        if self._sent:
            raise RuntimeError("a head start runs one chapter; this one has had it")
        self._sent = True
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        stem = Path(source).stem
        try:
            self._connection.send((source, environment))
        except OSError as error:
            future.set_result(ChapterRun(stem, False, 0.0, [], f"no chapter worker: {error}"))
            return future

        def receive() -> None:
            try:
                run = self._connection.recv()
            except (EOFError, OSError):
                run = ChapterRun(stem, False, 0.0, [], "its worker process died")
            future.set_result(run)

        threading.Thread(target=receive, name="head start", daemon=True).start()
        return future

    def close(self) -> None:
        """End the worker if it has no chapter, at once: its kernel is stopped, booted or not.

        A build that executes nothing does not wait for a boot it will not use.
        """
        if not self._sent:
            self._sent = True
            self.process.terminate()  # SIGTERM: the worker stops its kernel and exits


def _serve(connection, parent: int) -> None:
    """The worker: boot a kernel, then run the one chapter it is sent (or none).

    SIGTERM (:meth:`KernelHeadStart.close`, or the driver's death) ends the kernel, whatever
    it is doing, and the worker (:func:`claimbook.build.execute.end_worker`).
    """
    start_worker(parent)
    os.environ.update(chapter_process_variables())
    from claimbook.build.kernels import start_ready_kernel

    try:
        booted = start_ready_kernel()
    except Exception:  # the chapter starts a kernel of its own, and says why if it cannot
        booted = None
    try:
        message = connection.recv()
    except (EOFError, OSError):  # the driver went away without a word
        end_worker()
    source, environment = message
    connection.send(_run_one(source, environment, booted=booted))
