"""Execute chapters with papermill, each in a worker process and on a kernel of its own.

A last cell, removed again, runs only if the chapter ran to its end (papermill takes
``SystemExit(0)`` for a normal stop)."""

import logging
import multiprocessing
import os
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path

import nbformat

from claimbook import claims, paths
from claimbook.atomic import write_text_atomically
from claimbook.errors import InvalidFigureLabelError
from claimbook.figures import figure_files, figure_labels, phone_figure_file
from claimbook.pipeline import keys
from claimbook.pipeline.limits import read_limits
from claimbook.pipeline.workers import WORKERS, kill_children, start_worker
from claimbook.sources import read_chapter
from claimbook.text import one_line

CHAPTER_ENVIRONMENT_VARIABLE = "TRAINABLE_CHAPTER"
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# nbclient logs a cell out of time through papermill's logger; the chapter's failure says it.
logging.getLogger("papermill").addFilter(
    lambda record: "Timeout waiting for execute reply" not in str(record.msg)
)


@dataclass
class ChapterRun:
    stem: str
    ok: bool
    seconds: float
    claims: list[str] = field(default_factory=list)
    error: str = ""


def execute_chapters(
    sources: list[Path],
    jobs: int | None = None,
    report=print,
    environment=None,
    inspect=None,
) -> list[ChapterRun]:
    """Execute ``sources``, up to ``jobs`` (default: the CPU count) at once; return their runs
    in order. ``environment(source)``: variables for its kernel; ``inspect(run, running)``, as
    each chapter ends (with the stems not yet ended): the run to keep."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(sources)))
    context = multiprocessing.get_context("fork")
    waiting, running, runs = list(sources), {}, {}
    while waiting or running:
        while waiting and len(running) < jobs:
            source = waiting.pop(0)
            variables = environment(source) if environment else {}
            receiver, sender = context.Pipe(duplex=False)
            worker = context.Process(
                target=_work, args=(str(source), variables, sender, os.getpid())
            )
            worker.start()
            sender.close()
            WORKERS.append(worker)
            running[receiver] = source
        ended = sorted(wait(list(running)), key=lambda r: sources.index(running[r]))
        ended = [(receiver, running.pop(receiver)) for receiver in ended]
        for receiver, source in ended:
            try:
                run = receiver.recv()
            except EOFError:  # ended by a signal
                run = ChapterRun(source.stem, False, 0.0, [], "its worker process was ended")
            receiver.close()
            if inspect is not None:
                run = inspect(run, [other.stem for other in [*running.values(), *waiting]])
            runs[source] = run
            report(_progress_line(source, run))
    return [runs[source] for source in sources]


def _work(source: str, environment: dict[str, str], sender, parent: int) -> None:
    """A chapter worker: one chapter, its run sent once all it started has ended."""
    start_worker(parent)
    run = _run_one(source, environment)
    kill_children()
    sender.send(run)


def _run_one(source: str, environment: dict[str, str]) -> ChapterRun:
    """Execute one chapter, ``environment`` added to its kernel's; on success write its record."""
    # Imported in the worker only: jupyter_client and papermill take a second to import.
    from claimbook.pipeline.kernels import start_kernel, stop_kernel

    started = time.perf_counter()
    source_path, claim_ids = Path(source), []
    for variable in BLAS_THREAD_VARIABLES:  # one thread per kernel: reductions in one order
        os.environ.setdefault(variable, "1")
    # A kernel launched here starts with them.
    os.environ.update({CHAPTER_ENVIRONMENT_VARIABLE: source_path.stem, **environment})

    def failed(error: str) -> ChapterRun:
        return ChapterRun(source_path.stem, False, time.perf_counter() - started, claim_ids, error)

    try:
        kernel = start_kernel()  # it boots while the chapter is read
    except Exception as error:
        return failed(f"no kernel: {error}")
    timing: list[str] = []  # the id of each cell nbclient started timing, in order
    try:
        import papermill
        from nbclient.exceptions import CellTimeoutError
        from papermill.exceptions import PapermillExecutionError

        chapter = read_chapter(source_path)
        claim_ids = chapter.verified_claims
        notebook = nbformat.from_dict(chapter.notebook)
        notebook.cells.append(nbformat.v4.new_code_cell("pass  # the chapter ran to its end"))
        limit = read_limits().cell
        try:
            executed = papermill.execute_notebook(
                notebook,
                None,
                cwd=str(paths.CHAPTERS_DIR),
                kernel_name="python3",
                progress_bar=False,
                log_output=False,
                request_save_on_cell_execute=False,
                km=kernel,
                # One output per stream of a cell, however the kernel's flush timer cut it: the
                # notebook is the same on every machine.
                coalesce_streams=True,
                # Asked as each cell starts: the last id asked is the cell that ran out of time.
                timeout_func=lambda cell: timing.append(cell.get("id", "")) or limit,
            )
        except PapermillExecutionError as error:
            where = code_cell_name(notebook, error.cell_index)
            return failed(f"{where} raised {error.ename}: {error.evalue}")
        except CellTimeoutError:
            ids = [cell.get("id") for cell in notebook.cells]
            index = ids.index(timing[-1]) if timing and timing[-1] in ids else None
            where = "the last cell" if index is None else code_cell_name(notebook, index)
            return failed(f"{where} ran out of time ({limit:g} s, trainable_cell_timeout)")
        except Exception as error:  # a kernel that died or never started
            return failed(f"{type(error).__name__}: {error}")
        # Papermill takes SystemExit() or SystemExit(0) for a stop: the last cell never ran.
        if executed.cells[-1].get("execution_count") is None:
            return failed(stop_reason(executed))
        target = paths.CHAPTERS_DIR / f"{source_path.stem}.ipynb"
        write_text_atomically(target, nbformat.writes(_as_published(executed)) + "\n")
        outputs = [target, *map(paths.artifact_path, claim_ids), *_figure_outputs(chapter)]
        modules = keys.chapter_modules(chapter)
        key = keys.chapter_key(keys.code_digest(chapter), claim_ids, modules)
        seconds = time.perf_counter() - started
        keys.write_record(source_path, key, claim_ids, modules, outputs, seconds)
        return ChapterRun(source_path.stem, True, seconds, claim_ids)
    except Exception as error:  # one line for the driver, never a worker's traceback
        return failed(one_line(error))
    finally:
        stop_kernel(kernel)


def _as_published(notebook):
    """Drop the build's cell, renumber executions, and drop papermill's clocks."""
    del notebook.cells[-1]
    count = 0
    for cell in notebook.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code" and cell.get("execution_count") is not None:
            count += 1
            cell.execution_count = count
            for output in cell.get("outputs", []):
                if "execution_count" in output:
                    output["execution_count"] = count
    # The timings papermill stores would make every rebuild differ; they say nothing.
    notebook.metadata.pop("papermill", None)
    return notebook


def code_cell_name(notebook, index: int) -> str:
    """``code cell N`` (N counts the code cells from 1), or the build's last cell."""
    if index == len(notebook.cells) - 1:
        return "the build's last cell"
    return f"code cell {sum(cell.cell_type == 'code' for cell in notebook.cells[: index + 1])}"


def stop_reason(notebook) -> str:
    """Why an executed notebook ended before its last cell: the first cell that raised."""
    for index, cell in enumerate(notebook.cells):
        error = next((o for o in cell.get("outputs", []) if o.output_type == "error"), None)
        if error is not None:
            return (
                f"{code_cell_name(notebook, index)} raised {error.ename}: {error.evalue} "
                "(a chapter runs to its last cell; remove the exit)"
            )
    return "the notebook stopped before its last cell"


def _figure_outputs(chapter) -> list[Path]:
    """The saved figure artifacts the chapter's named figures link to."""
    found = []
    for label in figure_labels(chapter):
        try:
            found.extend((*figure_files(label), phone_figure_file(label)))
        except InvalidFigureLabelError:  # names no file: save_figure refuses it
            continue
    return sorted({path for path in found if path.is_file() and not path.is_symlink()})


def reassemble_chapter(source: Path) -> bool:
    """Rebuild an executed notebook after a prose-only edit from its executed outputs, without
    a kernel; False when the code cells differ."""
    chapter = read_chapter(source)
    target = paths.CHAPTERS_DIR / f"{source.stem}.ipynb"
    record = keys.read_record(source.stem)
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
    key = keys.chapter_key(keys.code_digest(chapter), chapter.verified_claims, modules)
    keys.write_record(source, key, chapter.verified_claims, modules, outputs, record["seconds"])
    return True


def _progress_line(source: Path, run: ChapterRun) -> str:
    name = paths.shown(source)
    if not run.ok:
        return one_line(f"{name}: FAILED after {run.seconds:.1f} s: {run.error}")
    states = [claims.judge(claim_id).state for claim_id in run.claims]
    summary = ", ".join(f"{states.count(s)} {s}" for s in dict.fromkeys(states)) or "no claims"
    return f"{name}: executed in {run.seconds:.1f} s; {len(run.claims)} claims: {summary}"
