"""Claims computed by the engine, in fresh processes, beside the chapters.

A chapter never computes a claim (:mod:`claimbook.claims.record`). :class:`ClaimComputation`
computes the *due* claims (missing or stale artifact, or bytes other than the build recorded
last time) in ``python -m claimbook claims compute`` processes, one per core, spread by the
time each took last, and holds every claim's artifact bytes for :mod:`.guard`.

Examples
--------
>>> spread({"a": 4.0, "b": 1.0, "c": 3.0, "d": 2.0}, 2)
[['a', 'b'], ['c', 'd']]
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from claimbook import claims, dependencies, paths
from claimbook.claims.record import (
    BUILD_VARIABLE,
    CHAPTER_CLAIMS_VARIABLE,
    DRIVER_VARIABLE,
    RECORD_VARIABLE,
    bytes_digest,
    read_claim_record,
    write_claim_record,
)
from claimbook.claims.record import record_path as claim_record_path
from claimbook.errors import BuildError, ClaimError
from claimbook.pipeline.execute import BLAS_THREAD_VARIABLES
from claimbook.pipeline.limits import CLAIM_WAIT_VARIABLE, read_limits, seconds_text, stop_build
from claimbook.pipeline.workers import die_with_parent

# Seconds a kernel waits for the claim record beyond the claim limit.
_WAIT_MARGIN = 30.0
_UNKNOWN_SECONDS = 1.0  # a claim never timed counts as this, so new claims spread evenly


def due_claims(claim_ids: list[str], recorded: Mapping[str, str]) -> dict[str, str]:
    """The claims to compute, each with why: not run, stale, or not the build's own bytes. An
    unreadable registry entry is left out (the render reports it)."""
    due = {}
    for claim_id in claim_ids:
        try:
            judgement = claims.judge(claim_id)
        except ClaimError:
            continue
        if judgement.state in ("not run", "stale"):
            due[claim_id] = f"{judgement.state}: {judgement.reason}"
            continue
        path = paths.artifact_path(claim_id)
        if path.is_symlink():
            due[claim_id] = "its artifact is a link"
            continue
        try:
            digest = bytes_digest(path.read_bytes())
        except OSError:
            due[claim_id] = "its artifact cannot be read"
            continue
        if recorded.get(claim_id) != digest:
            due[claim_id] = "its artifact is not the one the build last computed"
    return due


def spread(seconds: Mapping[str, float], processes: int) -> list[list[str]]:
    """Share claims among ``processes`` so that their summed times are close (longest first,
    ties by id)."""
    if processes < 1:
        raise ValueError(f"parameter processes must be at least 1, got {processes}")
    batches: list[list[str]] = [[] for _ in range(min(processes, len(seconds)))]
    loads = [0.0] * len(batches)
    for claim_id in sorted(seconds, key=lambda c: (-seconds[c], c)):
        lightest = loads.index(min(loads))
        batches[lightest].append(claim_id)
        loads[lightest] += seconds[claim_id]
    return [sorted(batch) for batch in batches]


# The claim processes' bytecode, under _build/, never a __pycache__ a kernel could write.
BYTECODE_FOLDER = "claim-bytecode"


def isolated_command(*arguments: str) -> list[str]:
    """``python -m claimbook ARGUMENTS``, isolated from what a chapter can leave behind.

    ``-I`` (no ``PYTHONPATH``, user site or working folder), then exactly the folders this
    process imports the book's packages from on ``sys.path``; bytecode only under
    ``_build/claim-bytecode``, never a ``__pycache__`` a kernel could write.
    """
    folders = []
    for top in dependencies.FIRST_PARTY:
        package = dependencies.package_folder(top)
        if package is not None and str(package.parent) not in folders:
            folders.append(str(package.parent))
    boot = (
        "import runpy, sys; "
        f"sys.path[:0] = {folders!r}; "
        "runpy.run_module('claimbook', run_name='__main__', alter_sys=True)"
    )
    prefix = paths.BUILD_DIR / BYTECODE_FOLDER
    return [sys.executable, "-I", "-X", f"pycache_prefix={prefix}", "-c", boot, *arguments]


def claim_environment(workers_per_process: int | None) -> dict[str, str]:
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in (RECORD_VARIABLE, CHAPTER_CLAIMS_VARIABLE, BUILD_VARIABLE, DRIVER_VARIABLE)
    }
    # One BLAS thread, as in the kernels: reductions in one order, whoever computes them.
    for variable in BLAS_THREAD_VARIABLES:
        environment.setdefault(variable, "1")
    if workers_per_process is not None:
        environment["TRAINABLE_CLAIM_WORKERS"] = str(workers_per_process)
    return environment


class ClaimComputation:
    """The due claims among ``claim_ids``, computing in fresh processes from construction on.

    The build's claim record (carrying :attr:`token`) is written at once with the current
    claims, again as each process reports one, and last marked complete; a kernel asking for
    a claim waits for it (:func:`claimbook.claims.record.recorded_artifact`). :meth:`finish`
    waits for all.
    """

    def __init__(
        self, claim_ids: list[str], jobs: int | None = None, report: Callable[[str], None] = print
    ):
        self.claim_ids = list(claim_ids)
        self.report = report
        self.started = time.perf_counter()
        self.token = secrets.token_hex(16)
        previous = read_claim_record()
        self.due = due_claims(self.claim_ids, previous.artifacts)
        self.seconds = dict(previous.seconds)
        self.batches: list[list[str]] = []
        self.processes: list[subprocess.Popen] = []
        # Each process's error output, in a file: a pipe left unread while its reports are
        # read would stop a process that writes more than the pipe holds.
        self._errors: list = []
        self.limit = read_limits().claim  # trainable_claim_timeout, per claim
        # Per process: the claim it is computing and since when (time.monotonic()).
        self._current: list[tuple[str, float]] = []
        self._timed_out: list[str] = []
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        # The bytes of every artifact this build stands behind, each due one as it comes.
        self.artifacts: dict[str, bytes] = {}
        for claim_id in self.claim_ids:
            if claim_id in self.due:
                continue
            try:
                self.artifacts[claim_id] = paths.artifact_path(claim_id).read_bytes()
            except OSError:  # never computed (its registry entry is unreadable): judged so
                continue
        # The other files there (claims outside this build's selection), as they are.
        directory = paths.CLAIM_ARTIFACTS_DIR
        self.others: dict[Path, bytes] = {}
        for path in sorted(directory.iterdir()) if directory.is_dir() else []:
            if path.stem not in self.claim_ids and path.is_file() and not path.is_symlink():
                self.others[path] = path.read_bytes()
        self._write(complete=not self.due)
        if self.due:
            self._start(jobs)
        for claim_id, reason in self.due.items():  # said once their processes run
            report(f"claim {claim_id}: computing ({reason})")
        self._thread = threading.Thread(target=self._wait, name="claims", daemon=True)
        self._thread.start()

    def _start(self, jobs: int | None) -> None:
        cores = os.cpu_count() or 1
        self.batches = spread(
            {claim_id: self.seconds.get(claim_id, _UNKNOWN_SECONDS) for claim_id in self.due},
            max(1, min(jobs or cores, cores)),
        )
        # The book's order within a process: the first chapters' claims come first.
        order = {claim_id: index for index, claim_id in enumerate(self.claim_ids)}
        self.batches = [sorted(batch, key=order.__getitem__) for batch in self.batches]
        # Several processes: one worker each; a single process may spread seeds over cores.
        workers = 1 if len(self.batches) > 1 else None
        parent = os.getpid()
        for batch in self.batches:
            self._current.append((batch[0], time.monotonic()))
            self._errors.append(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
            self.processes.append(
                subprocess.Popen(
                    isolated_command("claims", "compute", *batch),
                    cwd=paths.REPO_ROOT,
                    env=claim_environment(workers),
                    stdout=subprocess.PIPE,
                    stderr=self._errors[-1],
                    text=True,
                    # Its own group: killed whole when out of time; Ctrl-C reaches the driver.
                    start_new_session=True,
                    preexec_fn=lambda: die_with_parent(parent),  # ends with the driver
                )
            )

    def finish(self) -> ClaimComputation:
        """Wait until every due claim is computed and recorded; return the computation, whose
        :attr:`artifacts` and :attr:`others` are then final.

        Raises :class:`BuildError` if a process ended without computing its claims (with its
        last line of error output) or a claim ran out of time.
        """
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self

    def _write(self, complete: bool) -> None:
        """Write the record of what this build has computed so far (under the lock); one that
        cannot be written ends the build (the kernels would wait for it)."""
        try:
            write_claim_record(
                claim_record_path(),
                {claim_id: bytes_digest(data) for claim_id, data in self.artifacts.items()},
                {k: v for k, v in self.seconds.items() if k in self.claim_ids},
                build=self.token,
                complete=complete,
            )
        except OSError as error:
            where = paths.shown(claim_record_path())
            stop_build(f"{where} cannot be written ({error.strerror}); nothing more is built")

    def _wait(self) -> None:
        try:
            self._record()
        except BaseException as error:  # handed to finish(), in the build's own thread
            self._error = error
            with self._lock:
                self._write(complete=True)  # the waiting kernels learn what is missing
        finally:
            for errors in self._errors:
                errors.close()

    def _read(self, number: int, done: list[str]) -> None:
        """Process ``number``'s reports, as they come: record each claim at once, and note
        which claim it starts next (``{"start": id}``) for the time limit."""
        for line in self.processes[number].stdout:
            try:
                entry = json.loads(line)
                if isinstance(entry, dict) and isinstance(entry.get("start"), str):
                    with self._lock:
                        self._current[number] = (entry["start"], time.monotonic())
                    continue
                claim_id, seconds = entry["id"], float(entry["seconds"])
                data = paths.artifact_path(claim_id).read_bytes()
            except (ValueError, KeyError, TypeError, OSError):
                continue
            with self._lock:
                self.artifacts[claim_id] = data
                self.seconds[claim_id] = seconds
                done.append(claim_id)
                self._write(complete=False)

    def _watch(self, readers: list[threading.Thread]) -> None:
        """Wait for the readers; kill the process group of a claim past :attr:`limit` and
        remove its artifact (no earlier one stands for a computation that never ended)."""
        while any(reader.is_alive() for reader in readers):
            time.sleep(0.1)
            now = time.monotonic()
            for number, (process, reader) in enumerate(zip(self.processes, readers, strict=True)):
                with self._lock:
                    claim_id, since = self._current[number]
                if not reader.is_alive() or now - since <= self.limit:
                    continue
                kill_group(process)
                self._timed_out.append(claim_id)
                paths.artifact_path(claim_id).unlink(missing_ok=True)
                with self._lock:
                    self._current[number] = (claim_id, float("inf"))

    def _record(self) -> None:
        done: list[list[str]] = [[] for _ in self.processes]
        readers = [
            threading.Thread(target=self._read, args=(number, finished), daemon=True)
            for number, finished in enumerate(done)
        ]
        for reader in readers:
            reader.start()
        self._watch(readers)
        if self._timed_out:
            for process in self.processes:  # the build fails: the others are not waited for
                kill_group(process)
            named = ", ".join(self._timed_out)
            raise BuildError(
                f"claim {named} ran out of time ({seconds_text(self.limit)} s, "
                "trainable_claim_timeout)"
            )
        for batch, process, finished, errors in zip(
            self.batches, self.processes, done, self._errors, strict=True
        ):
            process.wait()
            errors.seek(0)
            err = errors.read()
            missing = [claim_id for claim_id in batch if claim_id not in finished]
            if process.returncode != 0 or missing:
                last = (err.strip().splitlines() or ["no error output"])[-1]
                last = last.removeprefix("make: ").removeprefix("error: ")
                raise BuildError(
                    f"claims: the process computing {', '.join(missing or batch)} ended "
                    f"with status {process.returncode}: {last[:300]}"
                )
        with self._lock:
            self._write(complete=True)
        took = time.perf_counter() - self.started
        if self.due:
            self.report(
                f"claims: computed {len(self.due)} of {len(self.claim_ids)} in {took:.1f} s, "
                f"in {len(self.batches)} process(es) of their own"
            )

    def stop(self) -> None:
        """End any computation still running, with every process it started."""
        for process in self.processes:
            kill_group(process)

    def kernel_environment(self) -> dict[str, str]:
        """What every chapter kernel of this build starts with: the record, the build's token,
        and how long ``verify_claim`` waits for the record to change."""
        return {
            CLAIM_WAIT_VARIABLE: f"{self.limit + _WAIT_MARGIN:g}",
            RECORD_VARIABLE: str(claim_record_path()),
            BUILD_VARIABLE: self.token,
            DRIVER_VARIABLE: str(os.getpid()),
        }


def kill_group(process: subprocess.Popen) -> None:
    """Kill ``process`` and its process group (it leads one of its own), and reap it."""
    if process.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            process.kill()
    with contextlib.suppress(OSError):
        process.wait()
