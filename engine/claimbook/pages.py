"""A chapter's pages: its one executed notebook cut, at render time, into readable pages.

A later page's headings are raised one level, so Sphinx numbers its sections on from the
ones before; every page keeps the other pages' glued values in hidden code cells.
"""

from __future__ import annotations

import copy
import itertools
import re

from claimbook.errors import ChapterSourceError
from claimbook.prose import prose_blocks

HIDDEN_TAG = "remove-cell"
_HEADING = re.compile(r"^(\s{0,3})(#{2,6})(\s)")


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _raise_headings(text: str) -> str:
    """``text`` with each top-level ATX heading one level up (``##`` to ``#``)."""
    lines = text.splitlines(keepends=True)
    for kind, line, _content in prose_blocks(text):
        if kind == "heading":
            lines[line] = _HEADING.sub(lambda m: m[1] + m[2][1:] + m[3], lines[line])
    return "".join(lines)


def _glue_only(cell: dict) -> dict:
    """A code cell of another page: hidden, its source and outputs reduced to its glue."""
    outputs = [
        output for output in cell.get("outputs", []) if "scrapbook" in output.get("metadata", {})
    ]
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cell.get("id"),
        "metadata": {"tags": [HIDDEN_TAG]},
        "outputs": outputs,
        "source": "",
    }


def split_notebook(notebook: dict, starts: list[str]) -> list[dict]:
    """The pages of ``notebook`` (unchanged): one before ``starts[0]``, then one from each
    start, a top-level target ``(label)=`` (a markdown cell is cut there);
    ChapterSourceError if a start is not found after the previous one."""
    pages: list[list[dict]] = [[]]
    pending = list(starts)
    for cell in notebook.get("cells", []):
        text = _source(cell) if cell.get("cell_type") == "markdown" and pending else ""
        if not pending or pending[0] not in text:
            pages[-1].append(cell)
            continue
        lines = text.splitlines(keepends=True)
        cuts = []
        for kind, line, content in prose_blocks(text):
            if kind == "target" and pending and content == pending[0]:
                cuts.append(line)
                pending.pop(0)
        bounds = [0, *cuts, len(lines)]
        for piece, (begin, end) in enumerate(itertools.pairwise(bounds)):
            if piece:
                pages.append([])
            if begin == end:
                continue
            part = copy.deepcopy(cell)
            part["source"] = "".join(lines[begin:end])
            if piece:
                part["id"] = f"{cell.get('id')}-{piece}"
            pages[-1].append(part)
    if pending:
        raise ChapterSourceError(
            f"page start {pending[0]!r} not found: the chapter has no line ({pending[0]})= "
            "after the previous page's start (front matter `pages:`)"
        )
    return [_page(notebook, pages, index) for index in range(len(pages))]


def _page(notebook: dict, pages: list, index: int) -> dict:
    cells = []
    for number, page in enumerate(pages):
        for cell in page:
            if number == index:
                cell = copy.deepcopy(cell)
                if index and cell.get("cell_type") == "markdown":
                    cell["source"] = _raise_headings(_source(cell))
                cells.append(cell)
            elif cell.get("cell_type") == "code":
                glued = _glue_only(cell)
                if glued["outputs"]:
                    cells.append(glued)
    page = {key: value for key, value in notebook.items() if key != "cells"}
    page["cells"] = cells
    return page
