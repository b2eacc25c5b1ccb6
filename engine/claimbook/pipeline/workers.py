"""Chapter worker processes: each ends with the driver, and ends its kernel as it ends.

A worker is forked from the driver by :func:`claimbook.pipeline.execute.execute_chapters`'s
pool; :func:`start_worker` is the pool's initializer. Linux only (``prctl``); elsewhere the
requests do nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from typing import NoReturn

import psutil

WORKERS: list = []  # chapter worker processes, joined by end_workers()


def die_with_parent(parent: int) -> None:
    """Ask Linux to send this process SIGTERM when its parent (the driver) dies.

    A process that outlived a killed driver would finish its work and write outputs nobody
    plans for; with ``PR_SET_PDEATHSIG`` it ends with the driver (process ``parent``).
    Elsewhere than Linux this does nothing.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return
    PR_SET_PDEATHSIG = 1
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the driver died before the request took effect
        os._exit(1)


def start_worker(parent: int) -> None:
    """Begin a chapter worker forked from the driver (process ``parent``).

    The worker ends with the driver (:func:`die_with_parent`), and SIGTERM, whoever sends
    it, ends it through :func:`end_worker`, which ends its kernel first. (Left to itself a
    kernel notices its parent's death within a second, but nothing would remove its sockets.)
    SIGINT (Ctrl-C, which the terminal sends to the driver's whole process group) is
    ignored: the driver ends its workers itself, and a worker's traceback would only repeat
    it. The worker is a child subreaper, so a process its kernel started and detached (a
    daemon that forked twice) becomes the worker's child, and ends with the chapter
    (:func:`claimbook.pipeline.kernels.kill_kernel`).
    """
    signal.signal(signal.SIGTERM, end_worker)  # before the request: its signal may come at once
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    become_subreaper()


def become_subreaper() -> None:
    """Ask Linux to make this process the parent of its orphaned descendants
    (``PR_SET_CHILD_SUBREAPER``), so that none escapes to ``init``; elsewhere, nothing."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    PR_SET_CHILD_SUBREAPER = 36
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def end_worker(signum: int | None = None, frame=None) -> NoReturn:
    """End this chapter worker now: kill every process it started, remove its kernels'
    socket folders, and exit with status 0.

    A worker's SIGTERM handler (:func:`start_worker`); it runs in the worker's main thread
    wherever that thread was: booting a kernel, waiting for it, running a chapter.
    """
    # Linux sends the parent-death signal again each time the dying driver hands this
    # worker to another of its threads. Python would run this handler again inside itself,
    # so the first delivery does the work and the others are ignored.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Its kernel (even one launched but not yet handed back) and what that kernel started.
    children = psutil.Process().children(recursive=True)
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.kill()
    # Reaped by waitpid itself, not subprocess.Popen.wait: the interrupted code may be inside
    # that wait for the same kernel, holding the lock a second wait would take.
    psutil.wait_procs(children, timeout=1)
    kernels = sys.modules.get("claimbook.pipeline.kernels")  # None: no kernel was started
    if kernels is not None:
        kernels.remove_own_sockets()
    os._exit(0)


def kill_workers() -> None:
    """End every chapter worker this process started (SIGTERM: each kills its kernel and
    what that kernel started, :func:`end_worker`), and reap them."""
    for worker in list(WORKERS):
        with contextlib.suppress(Exception):
            if worker.is_alive():
                worker.terminate()
    end_workers()


def end_workers() -> None:
    """Wait until every chapter worker this process started has ended, and reap it.

    Reaping a worker here (``join``; the pool's own thread may have reaped it first, which
    is as good) adds its CPU time, and that of the kernel it reaped, to this process's
    children's: the driver ends with ``os._exit``, and a worker left to ``init`` would take
    a chapter's CPU out of what ``make bench`` records for the build.
    """
    while WORKERS:
        WORKERS.pop().join()
