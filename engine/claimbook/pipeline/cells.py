"""The cells the build adds to a chapter's notebook, and how a message names a cell.

The first added cell sets the chapter's variables, the last notes that the chapter ran to its
end (papermill takes ``SystemExit(0)`` for a normal stop); both are removed again. A message
names a chapter's own cell by its number among the source's code cells.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

INSTRUMENT_TAG = "trainable-instrumentation"
_START = """\
import os as _trainable_os

# The chapter's variables (the build's claim record, the chapter's name).
_trainable_os.environ.update({variables!r})
"""
_STOP = """\
open({path!r}, "w").close()  # the last cell ran
"""


def instrumented(notebook, ended_file: Path, variables: dict[str, str]):
    start = nbformat.v4.new_code_cell(
        _START.format(variables=dict(sorted(variables.items()))),
        metadata={"tags": [INSTRUMENT_TAG]},
    )
    stop = nbformat.v4.new_code_cell(
        _STOP.format(path=str(ended_file)), metadata={"tags": [INSTRUMENT_TAG]}
    )
    notebook.cells = [start, *notebook.cells, stop]
    return notebook


def without_instrumentation(notebook):
    """Drop the instrumentation cells, renumber executions, and drop papermill's clocks."""
    notebook.cells = [
        cell
        for cell in notebook.cells
        if INSTRUMENT_TAG not in cell.get("metadata", {}).get("tags", [])
    ]
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


def code_cell_number(notebook, index: int | None) -> int | str:
    """The 1-based position of the cell at ``index`` among the source's code cells (as
    :meth:`claimbook.sources.Chapter.code_cell_number` counts); ``"?"`` if unknown."""
    if index is None or not 0 <= index < len(notebook.cells):
        return "?"
    number = 0
    for cell in notebook.cells[: index + 1]:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type == "code" and INSTRUMENT_TAG not in tags:
            number += 1
    return number


def code_cell_name(notebook, index: int | None) -> str:
    """``code cell N`` for a chapter's own cell, else what the build added there."""
    if index is None or not 0 <= index < len(notebook.cells):
        return "code cell ?"
    tags = notebook.cells[index].get("metadata", {}).get("tags", [])
    if INSTRUMENT_TAG in tags:
        if index == 0:
            return "the build's first cell (setting the chapter's variables)"
        return "the build's last cell (waiting for the chapter's figures)"
    return f"code cell {code_cell_number(notebook, index)}"


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
