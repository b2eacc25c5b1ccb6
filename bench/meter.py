"""Run one timed command and say how loaded the machine was while it ran.

A wall time on a shared machine means little without the machine's state beside it, so each
timed command (:func:`measure`) returns:

- ``wall``: seconds from start to exit (``time.perf_counter``);
- ``cpu``: user + system seconds of the command and every process it waited for
  (``resource.getrusage(RUSAGE_CHILDREN)`` before and after; a descendant counts once it has
  been reaped, which every process of a finished build has);
- ``load``: the machine's 1-minute load average (``os.getloadavg``), sampled every
  ``interval`` seconds while the command runs, as ``{"max", "mean", "start"}``;
- ``peak_rss``: the largest sum, over the samples, of the resident set sizes of the command
  and all its descendants, in bytes (``psutil``); a lower bound, since a peak shorter than the
  sampling interval can fall between samples;
- ``loaded``: whether the load exceeded the machine's cores by more than one
  (:func:`is_loaded`), in which case a ratio computed from this round is reported as
  "loaded" and not compared with a target.

The load average includes the command's own processes (a build running one kernel per
core adds about the number of cores), so the threshold of cores + 1 leaves the build itself
room and flags other work on the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from pathlib import Path

import psutil

from claimbook.errors import BuildError

__all__ = ["BenchCommandError", "is_loaded", "load_threshold", "measure", "settle"]


class BenchCommandError(BuildError):
    """A command the benchmark times exited non-zero; the message ends with its output's tail."""


# The 1-minute load a timed round waits for before it starts, per core: what the previous
# round left (the average decays with a time constant of a minute) is not the machine's load.
SETTLED_PER_CORE = 0.5
SETTLE_TIMEOUT = 180.0  # seconds; a machine busy with other work starts the round loaded


def load_threshold(cores: int | None = None) -> float:
    """The load above which a round counts as loaded: the machine's cores plus one."""
    cores = os.cpu_count() if cores is None else cores
    if cores is None or cores < 1:
        raise ValueError(f"cores must be a positive integer, got {cores!r}")
    return float(cores + 1)


def is_loaded(load_max: float, cores: int | None = None) -> bool:
    """True when a round's highest 1-minute load average exceeded cores + 1."""
    if load_max != load_max or load_max < 0:  # NaN or negative: not a load average
        raise ValueError(f"load_max must be a non-negative number, got {load_max!r}")
    return load_max > load_threshold(cores)


def settle(
    below: float | None = None, timeout: float = SETTLE_TIMEOUT, poll: float = 2.0
) -> float:
    """Wait until the 1-minute load average is at most ``below``; return the seconds waited.

    ``below`` defaults to :data:`SETTLED_PER_CORE` times the machine's cores. A cold round
    started right after another (ours after Jupyter Book's, one book size after the last)
    would otherwise begin with that round's load, which it then shows as its own, being an
    average over the last minute. Gives up after ``timeout`` seconds: the load is then other
    work's, and the round reports it.
    """
    if below is None:
        below = SETTLED_PER_CORE * (os.cpu_count() or 1)
    if not below > 0 or not timeout >= 0 or not poll > 0:
        raise ValueError(
            f"below, timeout and poll must be positive, got {below!r}, {timeout!r}, {poll!r}"
        )
    started = time.monotonic()
    while os.getloadavg()[0] > below and time.monotonic() - started < timeout:
        time.sleep(poll)
    return time.monotonic() - started


def _tree_rss(process: psutil.Process) -> int:
    """Resident bytes of ``process`` and its descendants; processes that end meanwhile skip."""
    total = 0
    try:
        members = [process, *process.children(recursive=True)]
    except psutil.Error:
        return 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            continue
    return total


def measure(
    command: list[str],
    cwd: Path,
    env: dict | None = None,
    interval: float = 0.2,
    check: bool = True,
    cores: int | None = None,
) -> dict:
    """Run ``command`` in ``cwd`` and return its wall, CPU, load and memory (see module doc).

    Raises :class:`BenchCommandError` (with the output's tail) when
    ``check`` and it exits non-zero.
    """
    if interval <= 0:
        raise ValueError(f"interval must be positive, got {interval!r}")
    loads: list[float] = [os.getloadavg()[0]]
    peak = [0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    done = threading.Event()

    def sample() -> None:
        watched = psutil.Process(process.pid)
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss(watched))
            loads.append(os.getloadavg()[0])
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and process.returncode != 0:
        raise BenchCommandError(
            f"`{' '.join(command)}` in {cwd} exited {process.returncode}:\n{output[-4000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    load_max = max(loads)
    return {
        "wall": wall,
        "cpu": cpu,
        "load": {"start": loads[0], "max": load_max, "mean": sum(loads) / len(loads)},
        "peak_rss": peak[0],
        "loaded": is_loaded(load_max, cores),
        "returncode": process.returncode,
    }
