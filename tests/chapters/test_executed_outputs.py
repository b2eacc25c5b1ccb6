"""Executed chapters show only what a cell means to show.

A code cell whose last line is an expression (``glue_setting(...)``, a tuple, a string)
makes IPython print its value as an ``execute_result``: a bare ``256`` or ``'95%'`` on the
page that the reader did not ask for. What a chapter shows on purpose it prints, passes to
``display`` (a ``stream`` or ``display_data`` output), or returns as a rich display object
(``show_source`` returns a Markdown listing: its result carries ``text/markdown``). So an
``execute_result`` with nothing but ``text/plain`` in the executed notebook
``chapters/<name>.ipynb`` is a stray value.

Each executed notebook is read once, with nbformat. It is a build product, so this is a
site-tier check (it needs ``make`` to have run), and it refuses a notebook executed from
other code than the source's: that would check an old chapter.
"""

import functools

import nbformat
import pytest

from claimbook import paths
from claimbook.sources import read_chapter

CHAPTERS = sorted(paths.CHAPTERS_DIR.glob("*.md"))


@functools.cache
def executed(stem):
    """The executed notebook of chapter ``stem``, read once, checked against its source."""
    path = paths.CHAPTERS_DIR / f"{stem}.ipynb"
    if not path.is_file():
        pytest.fail(f"{path.name} is missing: run `make` before this check")
    notebook = nbformat.read(path, as_version=4)
    ran = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    chapter = read_chapter(paths.CHAPTERS_DIR / f"{stem}.md")
    source = [source for _index, source, _tags in chapter.code_cells()]
    if ran != source:
        pytest.fail(f"{path.name} was executed from older code than {stem}.md: run `make`")
    return notebook


def stray_results(notebook):
    """``(code cell number, text)`` of every plain-text ``execute_result`` in ``notebook``."""
    found = []
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for number, cell in enumerate(code_cells, start=1):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if output.get("output_type") == "execute_result" and set(data) <= {"text/plain"}:
                text = data.get("text/plain", "")
                found.append((number, text if isinstance(text, str) else "".join(text)))
    return found


@pytest.mark.site
@pytest.mark.parametrize("stem", [path.stem for path in CHAPTERS])
def test_no_cell_prints_a_stray_last_expression(stem):
    stray = stray_results(executed(stem))
    assert stray == [], (
        f"{stem}: code cells print their last expression (end them with a statement, or "
        f"print or display what they mean to show): {stray}"
    )


def test_stray_results_finds_a_bare_last_expression():
    notebook = nbformat.v4.new_notebook()
    shown = nbformat.v4.new_code_cell("print('claim x: verified')")
    shown.outputs = [nbformat.v4.new_output("stream", name="stdout", text="claim x\n")]
    stray = nbformat.v4.new_code_cell("glue_setting('batch_size', 256)")
    stray.outputs = [
        nbformat.v4.new_output("execute_result", data={"text/plain": "256"}, execution_count=2)
    ]
    table = nbformat.v4.new_code_cell("display(HTML(table))")
    table.outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<table/>"})]
    listing = nbformat.v4.new_code_cell("show_source(batch_norm)")
    listing.outputs = [
        nbformat.v4.new_output(
            "execute_result",
            data={"text/plain": "<Markdown>", "text/markdown": "```python\n```"},
            execution_count=4,
        )
    ]
    notebook.cells = [shown, stray, table, listing]
    assert stray_results(notebook) == [(2, "256")]
