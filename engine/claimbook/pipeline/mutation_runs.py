"""A build runs the mistakes of each claim that has no current mutation result.

A claim whose mutation key (:mod:`claimbook.claims.mistakes`) matches neither
``claims/mistakes/record.json`` nor ``artifacts/mutations.json`` is *stale*; a whole build runs
their mistakes in one ``python -m claimbook mutate --stale ID ...`` process beside the chapters
and waits for it before rendering. Its report goes to ``_build/mutate.log``; its outcome never
fails the build (``make mutate-check`` does).
"""

from __future__ import annotations

import os
import subprocess
import time

from claimbook import paths
from claimbook.claims.mistakes import current_entry, mutation_key
from claimbook.claims.registry import load_claim
from claimbook.errors import ClaimError
from claimbook.pipeline.claim_runs import claim_environment, isolated_command, kill_group
from claimbook.pipeline.workers import die_with_parent

LOG = paths.BUILD_DIR / "mutate.log"


def stale_claims(claim_ids: list[str]) -> list[str]:
    """The claims among ``claim_ids`` that name mistakes and have no current result (an
    unreadable registry entry is left out: the render reports it)."""
    stale, digests = [], {}
    for claim_id in claim_ids:
        try:
            claim = load_claim(claim_id)
        except ClaimError:
            continue
        if claim.catches and current_entry(claim, mutation_key(claim, digests))[0] is None:
            stale.append(claim_id)
    return stale


class StaleMutations:
    """The mistakes of the stale claims among ``claim_ids``, running from construction on."""

    def __init__(self, claim_ids: list[str], report) -> None:
        self.report = report
        self.due = stale_claims(claim_ids)
        self.process: subprocess.Popen | None = None
        self.started = time.perf_counter()
        if not self.due:
            return
        report(f"mistakes: running those of {len(self.due)} claim(s) with no current result")
        LOG.parent.mkdir(parents=True, exist_ok=True)
        parent = os.getpid()
        with LOG.open("w", encoding="utf-8") as log:
            self.process = subprocess.Popen(
                isolated_command("mutate", "--stale", *self.due),
                cwd=paths.REPO_ROOT,
                env=claim_environment(None),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # killed with its children when the build stops
                preexec_fn=lambda: die_with_parent(parent),
            )

    def finish(self) -> None:
        """Wait for the run (once); say how long it took and where its report is."""
        if self.process is None:
            return
        status = self.process.wait()
        seconds = time.perf_counter() - self.started
        self.process = None
        said = "ran" if status == 0 else f"ended with status {status}"
        self.report(
            f"mistakes: {said} for {len(self.due)} claim(s) in {seconds:.1f} s "
            f"(report: {paths.shown(LOG)})"
        )

    def stop(self) -> None:
        """End the run and its processes if it is still going (the build stops)."""
        if self.process is not None:
            kill_group(self.process)
            self.process = None
