"""Execute chapters with papermill's Python API, in parallel worker processes.

Each chapter runs in a worker process of its own (papermill changes the working directory)
on a kernel of its own (:mod:`.kernels`), working directory ``chapters/``, with the build's
cells around it (:mod:`.cells`) and the build's claim record in its environment, so
``verify_claim`` returns what the build computed (:mod:`.claim_runs`).
"""

from __future__ import annotations

import concurrent.futures
import logging
import multiprocessing
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from claimbook import claims, paths
from claimbook.atomic import write_text_atomically
from claimbook.errors import InvalidFigureLabelError
from claimbook.figures import figure_files, figure_labels, phone_figure_file
from claimbook.pipeline.cells import (
    code_cell_name,
    instrumented,
    stop_reason,
    without_instrumentation,
)
from claimbook.pipeline.keys import (
    chapter_key,
    chapter_modules,
    code_digest,
    read_record,
    write_record,
)
from claimbook.pipeline.limits import read_limits, seconds_text
from claimbook.pipeline.workers import WORKERS, start_worker
from claimbook.sources import read_chapter
from claimbook.text import one_line

CHAPTER_ENVIRONMENT_VARIABLE = "TRAINABLE_CHAPTER"
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass
class ChapterRun:
    """The outcome of executing one chapter."""

    stem: str
    ok: bool
    seconds: float
    claims: list[str] = field(default_factory=list)
    error: str = ""


def _figure_outputs(chapter) -> list[Path]:
    """The figure artifacts the chapter's named figures link to (those saved)."""
    found = []
    for label in figure_labels(chapter):
        try:
            found.extend((*figure_files(label), phone_figure_file(label)))
        except InvalidFigureLabelError:  # names no file: save_figure refuses it
            continue
    return sorted({path for path in found if path.is_file() and not path.is_symlink()})


def chapter_process_variables() -> dict[str, str]:
    """One BLAS thread per kernel unless set (kernels run side by side, and a fixed count
    keeps reductions in one order)."""
    return {variable: os.environ.get(variable, "1") for variable in BLAS_THREAD_VARIABLES}


def _run_one(source: str, environment: dict[str, str]) -> ChapterRun:
    """Worker: execute one chapter, ``environment`` added to its kernel's; on success write
    its record."""
    # Imported in the worker only: jupyter_client is needed only where a kernel starts.
    from claimbook.pipeline.kernels import start_kernel, stop_kernel

    started = time.perf_counter()
    source_path = Path(source)
    stem = source_path.stem
    variables = {CHAPTER_ENVIRONMENT_VARIABLE: stem, **environment}
    os.environ.update(chapter_process_variables())
    os.environ.update(variables)  # a kernel launched here starts with them
    try:
        kernel = start_kernel()
    except Exception as error:
        return ChapterRun(stem, False, time.perf_counter() - started, [], f"no kernel: {error}")
    try:
        return _execute(source_path, kernel, started, variables)
    except Exception as error:  # one line for the driver, never a worker's traceback
        return ChapterRun(stem, False, time.perf_counter() - started, [], one_line(error))
    finally:
        stop_kernel(kernel)


def _execute(source_path: Path, kernel, started: float, variables: dict[str, str]) -> ChapterRun:
    # A second of import that only a build executing a chapter pays.
    import papermill
    from nbclient.exceptions import CellTimeoutError
    from papermill.exceptions import PapermillExecutionError

    stem = source_path.stem
    chapter = read_chapter(source_path)
    claim_ids = chapter.verified_claims
    work = paths.BUILD_DIR / "notebooks"
    work.mkdir(parents=True, exist_ok=True)
    ended_file = work / f"{stem}.ended"
    ended_file.unlink(missing_ok=True)
    notebook = instrumented(nbformat.from_dict(chapter.notebook), ended_file, variables)
    limit = read_limits().cell
    _quiet_timeouts()
    timing: list[str] = []  # the id of each cell nbclient started timing, in order

    def failed(error: str) -> ChapterRun:
        return ChapterRun(stem, False, time.perf_counter() - started, claim_ids, error)

    def cell_timeout(cell) -> float:
        timing.append(cell.get("id", ""))
        return limit

    try:
        executed = papermill.execute_notebook(
            notebook,
            None,
            cwd=str(paths.CHAPTERS_DIR),
            kernel_name="python3",
            progress_bar=False,
            log_output=False,
            request_save_on_cell_execute=False,
            km=kernel,  # started and stopped by _run_one (claimbook.pipeline.kernels)
            # One output per stream of a cell, however the kernel's flush timer cut it: the
            # notebook is the same on every machine.
            coalesce_streams=True,
            # Asked as each cell starts: the last id asked is the cell that ran out of time.
            timeout_func=cell_timeout,
        )
    except PapermillExecutionError as error:
        where = code_cell_name(notebook, error.cell_index)
        return failed(f"{where} raised {error.ename}: {error.evalue}")
    except CellTimeoutError:
        ids = [cell.get("id") for cell in notebook.cells]
        index = ids.index(timing[-1]) if timing and timing[-1] in ids else None
        where = "the last cell" if index is None else code_cell_name(notebook, index)
        return failed(f"{where} ran out of time ({seconds_text(limit)} s, trainable_cell_timeout)")
    except Exception as error:  # a kernel that died or never started
        return failed(f"{type(error).__name__}: {error}")
    if not ended_file.is_file():  # papermill takes SystemExit() or SystemExit(0) for a stop
        return failed(stop_reason(executed))
    ended_file.unlink()
    notebook_text = nbformat.writes(without_instrumentation(executed)) + "\n"
    target = paths.CHAPTERS_DIR / f"{stem}.ipynb"
    write_text_atomically(target, notebook_text)
    outputs = [
        target,
        *(paths.artifact_path(claim_id) for claim_id in claim_ids),
        *_figure_outputs(chapter),
    ]
    seconds = time.perf_counter() - started
    modules = chapter_modules(chapter)
    write_record(
        source_path,
        chapter_key(code_digest(chapter), claim_ids, modules),
        claim_ids,
        modules,
        outputs,
        seconds,
    )
    return ChapterRun(stem, True, seconds, claim_ids)


def reassemble_chapter(source: Path) -> bool:
    """Rebuild an executed notebook after a prose-only edit, without a kernel: the new cells,
    each code cell with its executed outputs. False when the code cells differ."""
    chapter = read_chapter(source)
    target = paths.CHAPTERS_DIR / f"{source.stem}.ipynb"
    record = read_record(source.stem)
    if record is None or not target.is_file():
        return False
    executed = nbformat.read(target, as_version=4)
    fresh = nbformat.from_dict(chapter.notebook)
    old_code = [cell for cell in executed.cells if cell.cell_type == "code"]
    new_code = [cell for cell in fresh.cells if cell.cell_type == "code"]
    if [c.source for c in old_code] != [c.source for c in new_code]:
        return False
    for new, old in zip(new_code, old_code, strict=True):
        new.outputs, new.execution_count = old.outputs, old.execution_count
    fresh.metadata = executed.metadata
    write_text_atomically(target, nbformat.writes(fresh) + "\n")
    modules = record["modules"]  # the same code cells, so the same imports
    outputs = [paths.REPO_ROOT / name for name in record["outputs"]]
    key = chapter_key(code_digest(chapter), chapter.verified_claims, modules)
    write_record(source, key, chapter.verified_claims, modules, outputs, record["seconds"])
    return True


def execute_chapters(
    sources: list[Path],
    jobs: int | None = None,
    report=print,
    environment=None,
    inspect=None,
) -> list[ChapterRun]:
    """Execute ``sources`` in up to ``jobs`` worker processes (default: the CPU count).

    ``environment(source)`` gives variables for that chapter's kernel; ``inspect(run,
    running)`` is called as each chapter ends (with the stems still running) and returns the
    run to keep; ``report`` gets one line per chapter.
    """
    if not sources:
        return []
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(sources)))
    runs = []
    waiting = list(sources)
    futures: dict[concurrent.futures.Future, Path] = {}
    others = set(multiprocessing.active_children())
    pool = concurrent.futures.ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context("fork"),
        initializer=start_worker,
        initargs=(os.getpid(),),
    )

    def submit() -> None:
        source = waiting.pop(0)
        variables = environment(source) if environment else {}
        futures[pool.submit(_run_one, str(source), variables)] = source
        if len(futures) == 1:  # with fork, the first submission starts every worker
            WORKERS.extend(set(multiprocessing.active_children()) - others)

    def running() -> list[concurrent.futures.Future]:
        return [future for future in futures if not future.done()]

    try:
        while waiting and len(running()) < jobs:
            submit()
        reported: set[concurrent.futures.Future] = set()
        while len(runs) < len(sources):
            done, _ = concurrent.futures.wait(
                [future for future in futures if future not in reported],
                return_when=concurrent.futures.FIRST_COMPLETED,
            )
            for future in sorted(done, key=lambda f: sources.index(futures[f])):
                reported.add(future)
                run = future.result()
                if inspect is not None:
                    still = [futures[other].stem for other in running()]
                    run = inspect(run, still + [source.stem for source in waiting])
                runs.append(run)
                report(_progress_line(futures[future], run))
            while waiting and len(running()) < jobs:
                submit()
    finally:
        # Idle workers exit while the build goes on; end_workers() reaps them.
        pool.shutdown(wait=False, cancel_futures=True)
    return sorted(runs, key=lambda run: [s.stem for s in sources].index(run.stem))


def _without_timeout_notes(record) -> bool:
    return "Timeout waiting for execute reply" not in str(record.msg)


def _quiet_timeouts() -> None:
    """Drop nbclient's log line for a cell out of time: the chapter's failure line says it."""
    logger = logging.getLogger("papermill")
    if _without_timeout_notes not in logger.filters:
        logger.addFilter(_without_timeout_notes)


def _progress_line(source: Path, run: ChapterRun) -> str:
    name = source.relative_to(paths.REPO_ROOT).as_posix()
    if not run.ok:
        return one_line(f"{name}: FAILED after {run.seconds:.1f} s: {run.error}")
    states = [claims.judge(claim_id).state for claim_id in run.claims]
    summary = ", ".join(f"{states.count(s)} {s}" for s in dict.fromkeys(states)) or "no claims"
    return f"{name}: executed in {run.seconds:.1f} s; {len(run.claims)} claims: {summary}"
