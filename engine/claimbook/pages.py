"""A chapter's pages: its one executed notebook cut, at render time, into readable pages.

A later page's headings are raised one level, so Sphinx numbers its sections on from the
ones before; every page keeps the other pages' glued values in hidden code cells.
"""

import copy
import itertools
import re

from claimbook.errors import ChapterSourceError
from claimbook.sources import prose_blocks

HIDDEN_TAG = "remove-cell"
_HEADING = re.compile(r"^(\s{0,3})(#{2,6})(\s)")


def _raise_headings(text: str) -> str:
    """``text`` with each top-level ATX heading one level up (``##`` to ``#``)."""
    lines = text.splitlines(keepends=True)
    for kind, line, _content in prose_blocks(text):
        if kind == "heading":
            lines[line] = _HEADING.sub(lambda m: m[1] + m[2][1:] + m[3], lines[line])
    return "".join(lines)


def split_notebook(notebook: dict, starts: list[str]) -> list[dict]:
    """The pages of ``notebook`` (unchanged): one before ``starts[0]``, then one from each
    start, a top-level target ``(label)=`` (a markdown cell is cut there);
    ChapterSourceError if a start is not found after the previous one."""
    pages: list[list[dict]] = [[]]
    pending = list(starts)
    for cell in notebook.get("cells", []):
        text = "".join(cell.get("source", "")) if cell.get("cell_type") == "markdown" else ""
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
    """Page ``index``: its cells, and each other page's glue as hidden code cells."""
    cells = []
    for number, page in enumerate(pages):
        for cell in page:
            if number == index:
                cell = copy.deepcopy(cell)
                if index and cell.get("cell_type") == "markdown":
                    cell["source"] = _raise_headings("".join(cell.get("source", "")))
                cells.append(cell)
                continue
            glued = [
                out for out in cell.get("outputs", []) if "scrapbook" in out.get("metadata", {})
            ]
            if cell.get("cell_type") == "code" and glued:
                cells.append(
                    {
                        "cell_type": "code",
                        "execution_count": None,
                        "id": cell.get("id"),
                        "metadata": {"tags": [HIDDEN_TAG]},
                        "outputs": glued,
                        "source": "",
                    }
                )
    return {key: value for key, value in notebook.items() if key != "cells"} | {"cells": cells}
