"""A chapter's pages: one executed notebook cut, at render time, into pages of readable length.

A chapter stays one source (``chapters/<stem>.md``) and one executed notebook
(``chapters/<stem>.ipynb``): its key, its claims, the Binder notebook and the reader's
download are whole. Its front matter may declare where later pages start, each at a section
label of the chapter (:func:`claimbook.sources.chapter_pages` reads it)::

    pages:
      - file: batch-normalization-dynamics   # the page is chapters/<file>
        starts: sec-bn-residual              # at the line "(sec-bn-residual)="

The first page (``chapters/<stem>``) holds everything before the first declared start; each
later page runs from its start to the next one. :func:`split_notebook` makes the pages from
the executed notebook, a pure function of its bytes and the declaration, so the same
notebook always gives the same pages. A later page's headings are raised one level (its
``##`` sections are the page's top-level sections), so Sphinx numbers them on from the
sections before them (16.6 follows 16.5), and figures, equations and theorems, numbered
from the sections, keep their numbers. The code cells of the other pages stay in each page,
hidden (``remove-cell``) with only their glued values, so a ``{glue:text}`` on one page may
paste a value a cell of another page glued. (:mod:`claimbook.extensions.chapter_pages`
serves the pages to Sphinx.)

Examples
--------
>>> notebook = {"cells": [
...     {"cell_type": "markdown", "id": "cell-0", "metadata": {},
...      "source": "# Title\\n\\n## One\\n\\nText.\\n\\n(sec-two)=\\n## Two\\n\\n### Two a\\n"},
... ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
>>> first, second = split_notebook(notebook, ["sec-two"])
>>> first["cells"][0]["source"]
'# Title\\n\\n## One\\n\\nText.\\n\\n'
>>> second["cells"][0]["source"]
'(sec-two)=\\n# Two\\n\\n## Two a\\n'
"""

from __future__ import annotations

import itertools
import re

from claimbook.errors import ChapterSourceError
from claimbook.prose import prose_blocks

__all__ = ["HIDDEN_TAG", "split_notebook"]

HIDDEN_TAG = "remove-cell"
_HEADING = re.compile(r"^(\s{0,3})(#{2,6})(\s)")


def _copied(value):
    """A copy of JSON data (dicts, lists and scalars) that shares no dict or list with it.

    What :func:`copy.deepcopy` gives for such data, at a fraction of its cost: parsed JSON
    holds no object twice, so no memo of the objects already copied is kept.
    """
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


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
    """The pages of ``notebook``: one before ``starts[0]``, then one from each start.

    ``starts`` are section labels in the order the pages follow; each must be the target
    line ``(label)=`` of a markdown cell, outside code and directives, after the previous
    one. A markdown cell holding a start is cut at that line. The notebook is not changed.

    Raises
    ------
    ChapterSourceError
        If a start is not found after the previous one.
    """
    pages: list[list[dict]] = [[]]
    pending = list(starts)
    for cell in notebook.get("cells", []):
        text = _source(cell) if cell.get("cell_type") == "markdown" and pending else ""
        # A cell whose text does not hold the next start's label has no cut: it is not parsed.
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
            part = _copied(cell)
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
                cell = _copied(cell)
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
