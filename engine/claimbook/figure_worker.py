"""Draw a build's figures in a process beside the chapter kernel.

Every figure a chapter glues is drawn twice, once per artifact (:mod:`claimbook.figures`):
the PNG, whose bytes the page shows, and the SVG a reader opens with a tap. Neither is read
by a later cell, so in a kernel the build driver started with :data:`WORKER_VARIABLE` set,
in a chapter with figures enough to pay for it (:func:`worth_it`), :func:`hand_over`
pickles the figure as it is at that moment and hands it to a spawned process (two, on two
cores or more), which unpickles it and writes both files (atomically, in the order
:meth:`~claimbook.figures.FigureJob.draw` gives) while the kernel goes on with the chapter.

The cell that hands a figure over shows a placeholder output in its place, marked with the
label (:data:`PENDING_KEY`). The driver's last cell of every chapter calls
:func:`finish_figures`, which waits for them all, glues each PNG's bytes as ``glue_figure``
does outside a build, and raises :class:`FigureWorkerError` naming each figure that failed,
so the chapter fails rather than leaving a file missing or stale. The driver then puts each
glued output in its placeholder's place (:func:`move_glued_outputs`): the executed notebook
is the one drawing in the kernel gives, output for output.

The worker draws under the kernel's own Matplotlib settings (every ``rcParams`` entry but the
backend's), and the figure's layout travels in the pickle, so its files are byte for byte
the ones the kernel would write (the tests compare both). Outside a build (a reader's
notebook, Binder, a test) ``glue_figure`` draws in the calling process.
"""

from __future__ import annotations

import os
import pickle

from claimbook.errors import FigureWorkerError

__all__ = [
    "PENDING_KEY",
    "WORKER_VARIABLE",
    "FigureWorkerError",
    "finish_figures",
    "hand_over",
    "in_use",
    "move_glued_outputs",
    "worth_it",
]

WORKER_VARIABLE = "CLAIMBOOK_FIGURE_WORKER"
# Metadata of the placeholder output a figure handed over leaves in its cell: the label.
PENDING_KEY = "claimbook_figure_pending"
# The worker's settings are the kernel's, but for how Matplotlib picks its canvas: the kernel
# shows figures inline, the worker only writes files.
_NOT_COPIED = frozenset({"backend", "backend_fallback", "interactive"})
_POOL = None  # the worker processes (a pool), started by the first hand_over
_PENDING: list[tuple] = []  # (FigureJob, pickle, settings, future), in the order handed over


def in_use() -> bool:
    """True in a kernel whose figures the build draws beside it (see :func:`worth_it`)."""
    return os.environ.get(WORKER_VARIABLE) == "1"


# A worker costs an interpreter and Matplotlib's import (about a second of CPU); a figure
# costs about as much to draw. A chapter with a single figure draws it in the kernel.
MIN_FIGURES = 2


def worth_it(figure_count: int) -> bool:
    """Whether a chapter with ``figure_count`` figures hands them over (:data:`MIN_FIGURES`)."""
    return figure_count >= MIN_FIGURES


def hand_over(fig, files) -> bool:
    """Have the worker draw ``fig`` into ``files`` (a :class:`~claimbook.figures.FigureJob`).

    The figure is pickled now, with the settings in force: later changes to it do not reach
    the files. The cell gets a placeholder output; :func:`finish_figures` waits for the
    files and glues the PNG. Returns False, handing nothing over, when the figure cannot be
    pickled (a tick formatter that is a lambda, say): the caller draws it itself.
    """
    import matplotlib
    from IPython.display import display

    settings = {k: v for k, v in matplotlib.rcParams.items() if k not in _NOT_COPIED}
    # Pickled here, not by the pool's feeder thread: what is drawn is the figure as it is now.
    try:
        payload = pickle.dumps(fig, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # whatever an artist's state raises when pickled
        return False
    future = _pool().submit(_draw_pickled, payload, files, settings)
    _PENDING.append((files, payload, settings, future))
    display(
        {"text/plain": f"[figure {files.label}: glued when the chapter ends]"},
        raw=True,
        metadata={PENDING_KEY: files.label},
    )
    return True


def finish_figures() -> list[str]:
    """Wait for every figure handed over, glue each PNG, stop the worker; return the labels.

    A figure the worker could not draw is drawn here from the same pickle (a worker cannot
    unpickle what refers to a function defined in the notebook, say); only a figure that
    fails here too is a failure.

    Raises
    ------
    FigureWorkerError
        Naming each figure that was not drawn and why (the worker's exception, or a worker
        that died, and this process's); the others were still waited for and glued.
    """
    global _POOL
    from claimbook.figures import glue_png  # late: that module hands figures to this one

    done, failures = [], []
    try:
        for files, payload, settings, future in _PENDING:
            try:
                future.result()
            except Exception as error:  # the worker's exception, or BrokenProcessPool
                try:
                    _draw_pickled(payload, files, settings)
                except Exception as here:
                    failures.append(
                        f"{files.label}: {type(error).__name__}: {error}; drawn in the "
                        f"kernel: {type(here).__name__}: {here}"
                    )
                    continue
            glue_png(files)
            done.append(files.label)
    finally:
        _PENDING.clear()
        if _POOL is not None:
            _POOL.shutdown(wait=True)
            _POOL = None
    if failures:
        raise FigureWorkerError("figures not drawn:\n  " + "\n  ".join(failures))
    return done


def move_glued_outputs(notebook, cell) -> None:
    """Put each figure ``cell`` glued in the place of its placeholder (see the module doc).

    ``notebook`` is the executed notebook (nbformat) and ``cell`` its last cell, which ran
    :func:`finish_figures`; the glued outputs leave it.

    Raises
    ------
    FigureWorkerError
        If a placeholder has no glued figure, or a figure glued has no placeholder.
    """
    glued: dict[str, list] = {}  # label -> its glued outputs, in the order glued
    for output in cell.get("outputs", []):
        if "scrapbook" in output.get("metadata", {}):
            glued.setdefault(output["metadata"]["scrapbook"]["name"], []).append(output)
    cell["outputs"] = [
        o for o in cell.get("outputs", []) if "scrapbook" not in o.get("metadata", {})
    ]
    for other in notebook.cells:
        for index, output in enumerate(other.get("outputs", [])):
            label = output.get("metadata", {}).get(PENDING_KEY)
            if label is None:
                continue
            if not glued.get(label):
                raise FigureWorkerError(f"figure {label} was handed over but never glued")
            other["outputs"][index] = glued[label].pop(0)
    glued = {label: outputs for label, outputs in glued.items() if outputs}
    if glued:
        raise FigureWorkerError(f"figures glued with no cell that drew them: {sorted(glued)}")


def _pool():
    global _POOL
    if _POOL is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # Spawned, not forked: the kernel runs threads of its own (its message loops), and a
        # fork copies whatever locks they hold.
        _POOL = ProcessPoolExecutor(
            # Two, on two cores or more: with chapter 16's figures handed over, its kernel
            # mostly waits, and a code edit of it ran in 7.0-9.0 s with two workers against
            # 10.4-13.2 s with one (the processes start only as figures arrive).
            max_workers=min(2, os.cpu_count() or 1),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
        )
    return _POOL


def _start_worker() -> None:
    # Before Matplotlib is imported: the kernel's inline backend would import IPython.
    os.environ["MPLBACKEND"] = "agg"


def _draw_pickled(payload: bytes, files, settings: dict) -> None:
    import matplotlib
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(settings):
        fig = pickle.loads(payload)
        try:
            files.draw(fig)
        finally:
            plt.close(fig)
