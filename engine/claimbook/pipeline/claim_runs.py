"""Claims computed by the engine, in fresh processes beside the chapters, never by a chapter:
``python -m claimbook claims compute``, one per core, spread by the time each claim took last.
"""

import contextlib
import json
import math
import os
import secrets
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Self

from claimbook import claims, paths
from claimbook.claims import record
from claimbook.errors import BuildError, ClaimError
from claimbook.pipeline.execute import BLAS_THREAD_VARIABLES
from claimbook.pipeline.limits import read_limits, stop_build
from claimbook.pipeline.sandbox import book_folders
from claimbook.pipeline.workers import die_with_parent, kill_group

_WAIT_MARGIN = 30.0  # seconds a kernel waits for the claim record beyond the claim limit
_UNKNOWN_SECONDS = 1.0  # a claim never timed counts as this, so new claims spread evenly
# The claim processes' bytecode, under _build/, never a __pycache__ a kernel could write.
BYTECODE_FOLDER = "claim-bytecode"


def due_claims(claim_ids: list[str], recorded: Mapping[str, str]) -> dict[str, str]:
    """The claims to compute (missing or stale artifact, or bytes other than ``recorded``), each
    with why; an unreadable registry entry is left out (the render reports it)."""
    due = {}
    for claim_id in claim_ids:
        try:
            judgement = claims.judge(claim_id)
        except ClaimError:
            continue
        path = paths.artifact_path(claim_id)
        if judgement.state in ("not run", "stale"):
            due[claim_id] = f"{judgement.state}: {judgement.reason}"
        elif path.is_symlink():
            due[claim_id] = "its artifact is a link"
        else:
            try:
                digest = record.bytes_digest(path.read_bytes())
            except OSError:
                due[claim_id] = "its artifact cannot be read"
                continue
            if recorded.get(claim_id) != digest:
                due[claim_id] = "its artifact is not the one the build last computed"
    return due


def spread(seconds: Mapping[str, float], processes: int) -> list[list[str]]:
    """Share claims among ``processes`` so that their summed times are close (longest first,
    ties by id)."""
    batches: list[list[str]] = [[] for _ in range(min(processes, len(seconds)))]
    loads = [0.0] * len(batches)
    for claim_id in sorted(seconds, key=lambda c: (-seconds[c], c)):
        lightest = loads.index(min(loads))
        batches[lightest].append(claim_id)
        loads[lightest] += seconds[claim_id]
    return [sorted(batch) for batch in batches]


def isolated_command(*arguments: str) -> list[str]:
    """``python -m claimbook ARGUMENTS`` isolated (``-I``) from what a chapter can leave behind,
    with this process's book folders on ``sys.path`` and bytecode under ``_build/``."""
    boot = (
        "import runpy, sys; "
        f"sys.path[:0] = {list(map(str, book_folders()))!r}; "
        "runpy.run_module('claimbook', run_name='__main__', alter_sys=True)"
    )
    prefix = paths.BUILD_DIR / BYTECODE_FOLDER
    return [sys.executable, "-I", "-X", f"pycache_prefix={prefix}", "-c", boot, *arguments]


def claim_environment() -> dict[str, str]:
    """This environment without the build's record variables, with one BLAS thread."""
    hidden = (
        record.RECORD_VARIABLE,
        record.CHAPTER_CLAIMS_VARIABLE,
        record.BUILD_VARIABLE,
        record.DRIVER_VARIABLE,
    )
    environment = {name: value for name, value in os.environ.items() if name not in hidden}
    for variable in BLAS_THREAD_VARIABLES:
        environment.setdefault(variable, "1")
    return environment


class ClaimComputation:
    """The due claims among ``claim_ids``, computing from construction on. The claim record is
    written at once, as each claim is computed, and last marked complete (a kernel's
    ``verify_claim`` waits for it). :attr:`artifacts` (id -> bytes) and :attr:`others` (other
    files in ``artifacts/claims/``) are final after :meth:`finish`."""

    def __init__(
        self, claim_ids: list[str], jobs: int | None = None, report: Callable[[str], None] = print
    ):
        self.claim_ids = list(claim_ids)
        self.report = report
        self.started = time.perf_counter()
        self.token = secrets.token_hex(16)
        self.limit = read_limits().claim
        previous = record.read_claim_record()
        self.due = due_claims(self.claim_ids, previous.artifacts)
        self.seconds = dict(previous.seconds)
        self.artifacts: dict[str, bytes] = {}
        for claim_id in self.claim_ids:
            if claim_id not in self.due:  # an unreadable one was never computed: judged so
                with contextlib.suppress(OSError):
                    self.artifacts[claim_id] = paths.artifact_path(claim_id).read_bytes()
        folder = paths.CLAIM_ARTIFACTS_DIR
        self.others = {
            path: path.read_bytes()
            for path in (sorted(folder.iterdir()) if folder.is_dir() else [])
            if path.stem not in self.claim_ids and path.is_file() and not path.is_symlink()
        }
        self._write(complete=not self.due)
        cores = os.cpu_count() or 1
        due = {claim_id: self.seconds.get(claim_id, _UNKNOWN_SECONDS) for claim_id in self.due}
        order = self.claim_ids.index  # the first chapters' claims first, within a process
        self.batches = [
            sorted(batch, key=order) for batch in spread(due, max(1, min(jobs or cores, cores)))
        ]
        environment = claim_environment()
        # Each process's error output: a file, as a pipe left unread would stop a chatty one.
        self._errors = [tempfile.TemporaryFile() for _ in self.batches]
        parent = os.getpid()
        self.processes = [
            subprocess.Popen(
                isolated_command("claims", "compute", *batch),
                cwd=paths.REPO_ROOT,
                env=environment,
                stdout=subprocess.PIPE,
                bufsize=0,
                stderr=errors,
                # Its own group: killed whole when out of time; Ctrl-C reaches the driver.
                start_new_session=True,
                preexec_fn=lambda: die_with_parent(parent),  # ends with the driver
            )
            for batch, errors in zip(self.batches, self._errors, strict=True)
        ]
        for claim_id, reason in self.due.items():
            report(f"claim {claim_id}: computing ({reason})")
        self._waiting = ThreadPoolExecutor(1, "claims").submit(self._wait)

    def finish(self) -> Self:
        """Wait until every due claim is recorded; return self. BuildError if a process ended
        without computing its claims or a claim ran out of time."""
        self._waiting.result()
        return self

    def stop(self) -> None:
        """End any computation still running, with every process it started."""
        for process in self.processes:
            kill_group(process)

    def kernel_environment(self) -> dict[str, str]:
        """What every chapter kernel starts with: the record, the build's token, and how long
        ``verify_claim`` waits for the record."""
        return {
            record.CLAIM_WAIT_VARIABLE: f"{self.limit + _WAIT_MARGIN:g}",
            record.RECORD_VARIABLE: str(record.record_path()),
            record.BUILD_VARIABLE: self.token,
            record.DRIVER_VARIABLE: str(os.getpid()),
        }

    def _write(self, complete: bool) -> None:
        """Write the record of what is computed so far; failing that, end the build."""
        try:
            record.write_claim_record(
                record.record_path(),
                {claim_id: record.bytes_digest(data) for claim_id, data in self.artifacts.items()},
                {k: v for k, v in self.seconds.items() if k in self.claim_ids},
                build=self.token,
                complete=complete,
            )
        except OSError as error:
            where = paths.shown(record.record_path())
            stop_build(f"{where} cannot be written ({error.strerror}); nothing more is built")

    def _wait(self) -> None:
        try:
            self._follow()  # what it raises, finish() raises
        finally:
            self._write(complete=True)  # the waiting kernels learn what is there, and not
            for errors in self._errors:
                errors.close()
        if self.due:
            self.report(
                f"claims: computed {len(self.due)} of {len(self.claim_ids)} in "
                f"{time.perf_counter() - self.started:.1f} s, "
                f"in {len(self.batches)} process(es) of their own"
            )

    def _follow(self) -> None:
        """Record each claim as its process reports it (JSON lines ``{"start": id}`` before,
        ``{"id": id, "seconds": s}`` after); kill the process group of a claim past
        :attr:`limit` and remove its artifact."""
        computing = [[batch[0], time.monotonic()] for batch in self.batches]
        done: set[str] = set()
        timed_out = []
        with selectors.DefaultSelector() as selector:
            for number, process in enumerate(self.processes):
                selector.register(process.stdout, selectors.EVENT_READ, number)
            while selector.get_map():
                for key, _ in selector.select(timeout=0.1):
                    # Unbuffered: a line read leaves the next in the pipe, for select to see.
                    line = key.fileobj.readline()
                    if not line:  # the process ended
                        selector.unregister(key.fileobj)
                        computing[key.data][1] = math.inf
                        continue
                    with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
                        entry = json.loads(line)
                        if isinstance(entry, dict) and isinstance(entry.get("start"), str):
                            computing[key.data] = [entry["start"], time.monotonic()]
                            continue
                        claim_id, seconds = entry["id"], float(entry["seconds"])
                        self.artifacts[claim_id] = paths.artifact_path(claim_id).read_bytes()
                        self.seconds[claim_id] = seconds
                        done.add(claim_id)
                        self._write(complete=False)
                for number, (claim_id, since) in enumerate(computing):
                    if time.monotonic() - since > self.limit:
                        kill_group(self.processes[number])
                        timed_out.append(claim_id)
                        paths.artifact_path(claim_id).unlink(missing_ok=True)
                        computing[number][1] = math.inf
        if timed_out:
            self.stop()  # the build fails: the other processes are not waited for
            raise BuildError(
                f"claim {', '.join(timed_out)} ran out of time ({self.limit:g} s, "
                "trainable_claim_timeout)"
            )
        for batch, process, errors in zip(self.batches, self.processes, self._errors, strict=True):
            process.wait()
            missing = [claim_id for claim_id in batch if claim_id not in done]
            if process.returncode != 0 or missing:
                errors.seek(0)
                lines = errors.read().decode("utf-8", "replace").strip().splitlines()
                last = (lines or ["no error output"])[-1]
                last = last.removeprefix("make: ").removeprefix("error: ")
                raise BuildError(
                    f"claims: the process computing {', '.join(missing or batch)} ended "
                    f"with status {process.returncode}: {last[:300]}"
                )
