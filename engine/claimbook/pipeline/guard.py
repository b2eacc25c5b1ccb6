"""The guard on what only the build writes, checked as each chapter ends and at the end:
what differs from the bytes the build holds is put back, and the chapters that may have
written it fail, naming the files."""

import dataclasses
import shutil
import time
from pathlib import Path

from claimbook import paths
from claimbook.atomic import write_bytes_atomically
from claimbook.claims.record import CHAPTER_CLAIMS_VARIABLE
from claimbook.claims.record import record_path as claim_record_path
from claimbook.pipeline.execute import ChapterRun
from claimbook.pipeline.keys import ChapterPlan, read_record, record_path
from claimbook.sources import read_chapter


class ChapterGuard:
    """Holds the claim artifacts and record ``computation`` leaves and the records and outputs
    of the chapters in ``settled`` (not running); :attr:`seconds` sums the checks' time."""

    def __init__(self, computation, settled: list[ChapterPlan]):
        self.computation = computation
        self.expected: dict[Path, bytes] | None = None  # once the claims are computed
        self.tainted: dict[str, str] = {}
        self.seconds = 0.0
        self.kept: dict[Path, bytes] = {}
        for plan in settled:
            record = read_record(plan.stem)
            if record is None:
                continue
            outputs = map(paths.REPO_ROOT.joinpath, record["outputs"])
            for path in (record_path(plan.stem), *outputs):
                if path.is_file() and not path.is_symlink():
                    self.kept[path] = path.read_bytes()

    def environment(self, source: Path) -> dict[str, str]:
        """A chapter kernel's variables: the build's claim record, the chapter's claim ids."""
        found = self.computation.kernel_environment() if self.computation else {}
        ids = " ".join(read_chapter(source).verified_claims)
        return {**found, CHAPTER_CLAIMS_VARIABLE: ids}

    def final_check(self) -> list[str]:
        """Put back every file that differs from the bytes the build holds, removing unexpected
        ones in ``artifacts/claims/``; return one line per difference."""
        if self.computation is None:
            return []
        if self.expected is None:
            computed = self.computation.finish()
            record = claim_record_path()
            self.expected = {
                **self.kept,
                **computed.others,
                **{paths.artifact_path(c): data for c, data in computed.artifacts.items()},
                record: record.read_bytes() if record.is_file() else b"",
            }
        started = time.perf_counter()
        changed = []
        folder = paths.CLAIM_ARTIFACTS_DIR
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            if path not in self.expected:
                changed.append(f"{paths.shown(path)} added")
                _remove(path)
        for path, data in sorted(self.expected.items()):
            try:
                found = path.read_bytes() if path.is_file() and not path.is_symlink() else None
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

    def inspect(self, run: ChapterRun, running: list[str]) -> ChapterRun:
        """``run``, failed (its record removed) if the check finds a change, as are the
        chapters in ``running`` when they end."""
        changed = self.final_check()
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
        error = (
            "files only the build writes changed while it ran: "
            f"{self.tainted[run.stem]}; put back as the build computed them"
        )
        return dataclasses.replace(run, ok=False, error=error)


def _remove(path: Path) -> None:
    """Remove a build product: a file, link or directory."""
    paths.build_product(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
