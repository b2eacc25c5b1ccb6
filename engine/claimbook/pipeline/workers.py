"""The build's processes: each ends with the driver, and ends what it started as it ends
(Linux's ``prctl``; elsewhere the requests do nothing)."""

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import NoReturn

import psutil

WORKERS: list = []  # chapter worker processes, joined by end_workers()
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36


def _prctl(option: int, value: int) -> bool:
    """Linux's ``prctl(option, value)``; False where there is none."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl(option, value, 0, 0, 0)
    return True


def die_with_parent(parent: int) -> None:
    """SIGTERM this process when the driver (process ``parent``) dies: nothing outlives a
    killed build to write outputs nobody plans for."""
    if _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) and os.getppid() != parent:
        os._exit(1)  # the driver died before the request took effect


def socket_prefix() -> str:
    """The start of the names of this process's kernels' socket folders."""
    return f"trainable-kernel-{os.getpid()}-"


def start_worker(parent: int) -> None:
    """Begin a chapter worker forked from the driver: it ends with the driver or on SIGTERM
    (:func:`end_worker`), ignores SIGINT, and adopts what its kernel detaches (a subreaper)."""
    signal.signal(signal.SIGTERM, end_worker)  # before the request: its signal may come at once
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def end_worker(signum: int | None = None, frame=None) -> NoReturn:
    """SIGTERM in a worker: kill what it started, remove its kernels' sockets, exit 0."""
    # The parent-death signal comes again for each thread of the dying driver: once is enough.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kill_children()
    for folder in Path(tempfile.gettempdir()).glob(socket_prefix() + "*"):
        shutil.rmtree(folder, ignore_errors=True)
    os._exit(0)


def kill_children() -> None:
    """Kill and reap every descendant of this process."""
    children = psutil.Process().children(recursive=True)
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.kill()
    # Not Popen.wait: the interrupted code may hold that wait's lock for the same kernel.
    psutil.wait_procs(children, timeout=1)


def kill_group(process: subprocess.Popen) -> None:
    """Kill ``process`` and its process group (it leads one of its own), and reap it."""
    if process.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def kill_workers() -> None:
    """End (SIGTERM) and reap every chapter worker this process started."""
    for worker in WORKERS:
        with contextlib.suppress(Exception):
            worker.terminate()
    end_workers()


def end_workers() -> None:
    """Reap every chapter worker (their CPU time then counts in ``make bench``'s children's)."""
    while WORKERS:
        WORKERS.pop().join()
