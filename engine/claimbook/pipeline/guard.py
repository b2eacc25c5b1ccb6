"""The guard on what only the build writes, checked as each chapter ends and at the end.

A chapter's cells could write a claim artifact, the build's claim record, or another
chapter's notebook, record or figure. As each chapter ends, :class:`ChapterGuard` compares
those files with the bytes the build holds; whatever differs is put back, and the chapter
that ended and every chapter still running beside it fail, naming the files, with their
records removed (so each executes again next build).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from claimbook import paths
from claimbook.atomic import write_bytes_atomically
from claimbook.claims.record import CHAPTER_CLAIMS_VARIABLE
from claimbook.claims.record import record_path as claim_record_path
from claimbook.pipeline.execute import ChapterRun
from claimbook.pipeline.keys import ChapterPlan, read_record, record_path
from claimbook.sources import read_chapter


class ArtifactGuard:
    """The files only the build writes, as it holds them: ``artifacts`` (claim id -> bytes),
    ``others`` (path -> bytes) and the claim record as it is now. :attr:`seconds` sums the
    time the checks took."""

    def __init__(self, artifacts: Mapping[str, bytes], others: Mapping[Path, bytes] | None = None):
        self.artifacts = dict(artifacts)
        self.others = dict(others or {})
        self.record = claim_record_path().read_bytes() if claim_record_path().is_file() else b""
        self.seconds = 0.0

    def _expected_files(self) -> dict[Path, bytes]:
        return {paths.artifact_path(claim_id): data for claim_id, data in self.artifacts.items()}

    def check(self) -> list[str]:
        """Put back every file that differs (removing unexpected ones in ``artifacts/claims/``);
        one line per difference."""
        started = time.perf_counter()
        expected = {**self.others, **self._expected_files()}
        expected[claim_record_path()] = self.record
        changed = []
        directory = paths.CLAIM_ARTIFACTS_DIR
        present = sorted(directory.iterdir()) if directory.is_dir() else []
        for path in present:
            if path not in expected:
                changed.append(f"{paths.shown(path)} added")
                _remove(path)
        for path, data in sorted(expected.items()):
            try:
                regular = path.is_file() and not path.is_symlink()
                found = path.read_bytes() if regular else None
            except OSError:
                found = None
            if found == data:
                continue
            there = path.is_symlink() or path.exists()
            changed.append(f"{paths.shown(path)} {'changed' if there else 'removed'}")
            if path.is_symlink() or path.is_dir():
                _remove(path)
            write_bytes_atomically(path, data)
        self.seconds += time.perf_counter() - started
        return changed


def _remove(path: Path) -> None:
    """Remove a file, link or directory the build did not write (a build product only)."""
    paths.build_product(path)  # raises for anything outside artifacts/, _build/, notebooks
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


class ChapterGuard:
    """The kernels' environment and, as each chapter ends, the check of the claim artifacts
    and of the records and outputs of the chapters in ``settled`` (not running)."""

    def __init__(self, computation, settled: list[ChapterPlan]):
        self.computation = computation
        self.guard: ArtifactGuard | None = None
        self.tainted: dict[str, str] = {}
        self.kept: dict[Path, bytes] = {}
        for plan in settled:
            record = read_record(plan.stem)
            if record is None:
                continue
            for path in (
                record_path(plan.stem),
                *map(paths.REPO_ROOT.joinpath, record["outputs"]),
            ):
                if path.is_file() and not path.is_symlink():
                    self.kept[path] = path.read_bytes()

    @property
    def seconds(self) -> float:
        return self.guard.seconds if self.guard is not None else 0.0

    def environment(self, source: Path) -> dict[str, str]:
        """What a chapter's kernel starts with: the build's claim record, the chapter's ids."""
        found = self.computation.kernel_environment() if self.computation else {}
        ids = " ".join(read_chapter(source).verified_claims)
        return {**found, CHAPTER_CLAIMS_VARIABLE: ids}

    def final_check(self) -> list[str]:
        """The same check once the site is published (a process a chapter left behind may
        have written meanwhile); one line per file put back."""
        if self.computation is None:
            return []
        return self._guard().check()

    def _guard(self) -> ArtifactGuard:
        if self.guard is None:
            computed = self.computation.finish()
            self.guard = ArtifactGuard(computed.artifacts, {**self.kept, **computed.others})
        return self.guard

    def inspect(self, run: ChapterRun, running: list[str]) -> ChapterRun:
        if self.computation is None:
            return run
        changed = self._guard().check()
        if changed:
            what = "; ".join(changed[:5])
            if len(changed) > 5:
                what += f" and {len(changed) - 5} more"
            if running:
                what += f" (or a chapter running beside it: {', '.join(running)})"
            for stem in (run.stem, *running):
                self.tainted.setdefault(stem, what)
        if run.stem not in self.tainted:
            return run
        record_path(run.stem).unlink(missing_ok=True)  # executes again next build
        return ChapterRun(
            run.stem,
            False,
            run.seconds,
            run.claims,
            "files only the build writes changed while it ran: "
            f"{self.tainted[run.stem]}; put back as the build computed them",
        )
