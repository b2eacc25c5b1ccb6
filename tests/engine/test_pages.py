"""A chapter's pages: the executed notebook cut at declared section labels (claimbook.pages)."""

import copy
import json

import pytest

from claimbook import paths
from claimbook.errors import ChapterSourceError
from claimbook.pages import HIDDEN_TAG, split_notebook
from claimbook.sources import CHAPTER_HEADER, Page, chapter_pages


def markdown(source, index):
    return {"cell_type": "markdown", "id": f"cell-{index}", "metadata": {}, "source": source}


def code(source, index, outputs=()):
    return {
        "cell_type": "code",
        "execution_count": 1,
        "id": f"cell-{index}",
        "metadata": {"tags": []},
        "outputs": list(outputs),
        "source": source,
    }


GLUED = {
    "output_type": "display_data",
    "data": {"application/papermill.record/text/plain": "'0.95'"},
    "metadata": {"scrapbook": {"name": "level", "mime_prefix": "application/papermill.record/"}},
}
PRINTED = {"output_type": "stream", "name": "stdout", "text": "claim x: verified\n"}


def notebook():
    return {
        "cells": [
            markdown("(chapter-x)=\n# Chapter\n\n## First\n\nText {eq}`eq-a`.\n", 0),
            code("glue('level', '0.95')\nprint('claim x: verified')", 1, [GLUED, PRINTED]),
            markdown(
                "More of the first section.\n\n(sec-second)=\n## Second\n\n"
                "```python\n## not a heading\n```\n\n### Second, a part\n",
                2,
            ),
            code("print(1)", 3, [PRINTED]),
            markdown("(sec-exercises)=\n## Exercises\n\n### Worked solutions\n", 4),
        ],
        "metadata": {"kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def own_cells(page):
    return [cell for cell in page["cells"] if HIDDEN_TAG not in cell["metadata"].get("tags", [])]


def test_a_cell_is_cut_at_the_start_label_and_later_headings_rise_one_level():
    first, second, third = split_notebook(notebook(), ["sec-second", "sec-exercises"])
    assert [cell["id"] for cell in own_cells(first)] == ["cell-0", "cell-1", "cell-2"]
    assert own_cells(first)[2]["source"] == "More of the first section.\n\n"
    assert [cell["id"] for cell in own_cells(second)] == ["cell-2-1", "cell-3"]
    assert own_cells(second)[0]["source"] == (
        "(sec-second)=\n# Second\n\n```python\n## not a heading\n```\n\n## Second, a part\n"
    )
    assert (
        own_cells(third)[0]["source"] == "(sec-exercises)=\n# Exercises\n\n## Worked solutions\n"
    )
    # The first page keeps its levels: its title is the chapter's.
    assert own_cells(first)[0]["source"].startswith("(chapter-x)=\n# Chapter\n\n## First")
    assert second["metadata"] == first["metadata"] == notebook()["metadata"]


def test_every_page_keeps_the_glued_values_of_the_other_pages_hidden():
    _first, second, third = split_notebook(notebook(), ["sec-second", "sec-exercises"])
    for page in (second, third):
        hidden = [cell for cell in page["cells"] if cell not in own_cells(page)]
        assert [cell["id"] for cell in hidden] == ["cell-1"]  # cell-3 glues nothing
        assert hidden[0]["outputs"] == [GLUED] and hidden[0]["source"] == ""


def test_the_pages_hold_every_cell_once_and_leave_the_notebook_as_it_was():
    original = notebook()
    held = copy.deepcopy(original)
    pages = split_notebook(held, ["sec-second", "sec-exercises"])
    assert held == original
    text = "".join(
        cell["source"]
        for page in pages
        for cell in own_cells(page)
        if cell["cell_type"] == "markdown"
    )
    assert text.replace("# ", "").replace("#", "") == "".join(
        cell["source"] for cell in original["cells"] if cell["cell_type"] == "markdown"
    ).replace("# ", "").replace("#", "")


def test_the_split_is_deterministic():
    runs = [
        json.dumps(split_notebook(notebook(), ["sec-second", "sec-exercises"]), sort_keys=True)
        for _ in range(3)
    ]
    assert len(set(runs)) == 1


def test_a_start_that_is_missing_or_out_of_order_is_refused():
    with pytest.raises(ChapterSourceError, match="'sec-nowhere' not found"):
        split_notebook(notebook(), ["sec-nowhere"])
    with pytest.raises(ChapterSourceError, match="'sec-second' not found"):
        split_notebook(notebook(), ["sec-exercises", "sec-second"])


def test_no_start_is_one_page():
    (page,) = split_notebook(notebook(), [])
    assert page == notebook()


def test_the_book_chapters_declare_their_pages():
    assert chapter_pages(paths.CHAPTERS_DIR / "batch-normalization.md") == [
        Page("batch-normalization-folding", "sec-bn-folding"),
        Page("batch-normalization-training", "sec-bn-residual"),
        Page("batch-normalization-batches", "sec-bn-learning-rates"),
        Page("batch-normalization-exercises", "sec-bn-exercises"),
    ]


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("pages: one\n", "must be a list"),
        ("pages:\n- {file: x}\n", "each entry of `pages`"),
        ("pages:\n- {file: ../x, starts: sec-a}\n", "is not a chapter name"),
        ("pages:\n- {file: x, starts: Sec A}\n", "'Sec A' is not a section label"),
        ("pages:\n- {file: x, starts: 3}\n", "3 is not a section label"),
        ("pages:\n- {file: x, starts: ../sec}\n", "is not a section label"),
        ("pages:\n- {file: x, starts: sec-a}\n- {file: x, starts: sec-b}\n", "names 'x' twice"),
    ],
)
def test_a_malformed_declaration_is_refused(tmp_path, front, message):
    path = tmp_path / "page.md"
    path.write_text(CHAPTER_HEADER.replace("kernelspec:", front + "kernelspec:"), encoding="utf-8")
    with pytest.raises(ChapterSourceError, match=message):
        chapter_pages(path)


def _containers(value) -> list:
    """Every dict and list inside ``value``, ``value`` included."""
    found = [value] if isinstance(value, (dict, list)) else []
    for item in value.values() if isinstance(value, dict) else value if found else ():
        found.extend(_containers(item))
    return found


def test_pages_share_no_dict_or_list_with_the_notebook_but_glued_outputs():
    """A page's cells are copies: a caller that changes a page leaves the notebook and the
    other pages as they were (the glued outputs a hidden cell carries are the notebook's)."""

    def code(number: int) -> dict:
        glued = {"data": {"text/plain": [f"{number}"]}, "metadata": {"scrapbook": {"name": "x"}}}
        shown = {"name": "stdout", "output_type": "stream", "text": ["shown\n"]}
        return {
            "cell_type": "code",
            "execution_count": number,
            "id": f"code-{number}",
            "metadata": {"tags": ["hide-input"]},
            "outputs": [glued, shown],
            "source": ["x = ", f"{number}\n"],
        }

    text = "# Title\n\n## One\n\n(sec-two)=\n## Two\n\n### Two a\n"
    notebook = {
        "cells": [
            code(1),
            {"cell_type": "markdown", "id": "prose", "metadata": {}, "source": text},
            code(2),
        ],
        "metadata": {"kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    before = copy.deepcopy(notebook)
    pages = split_notebook(notebook, ["sec-two"])
    assert notebook == before
    glued = {id(cell["outputs"][0]) for cell in notebook["cells"] if "outputs" in cell}
    theirs = {id(item) for item in _containers(notebook)}
    for page in pages:
        for cell in page["cells"]:
            if cell["source"] == "" and HIDDEN_TAG in cell["metadata"]["tags"]:
                (output,) = cell["outputs"]  # another page's cell: its glued value, as it is
                assert id(output) in glued
                continue
            assert not {id(item) for item in _containers(cell)} & theirs
    assert [len(page["cells"]) for page in pages] == [3, 3]  # each holds the other's glue
