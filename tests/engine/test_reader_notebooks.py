"""claimbook.reader_notebooks: a chapter's notebook as its pages read, without MyST.

The site tier checks the notebooks the build writes against the built site and in JupyterLab
(tests/site/test_reader_notebooks.py); these tests need no build: the chapters as jupytext
reads them stand in for executed notebooks, with glued values and figures added by hand.
"""

import base64
import functools

import nbformat
import pytest
from markdown_it import MarkdownIt

from checks.binder import image_outputs, raw_myst
from claimbook import figures, paths, reader_notebooks, sources
from claimbook.claims.judgement import Judgement
from claimbook.errors import UnknownClaimError
from claimbook.numbers import format_value
from claimbook.reader_notebooks import RECORD_PREFIX, book_numbers, reader_notebook

# The start of a PNG 1350 pixels wide: drawn at 270 dpi, the site shows it 540 CSS px wide.
PNG = base64.b64encode(
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + (1350).to_bytes(4, "big") + (900).to_bytes(4, "big")
).decode()


def _source(stem):
    return paths.CHAPTERS_DIR / f"{stem}.md"


def _as_executed(stem):
    """The chapter's notebook as a build's kernel leaves it: each figure glued (not shown),
    each setting glued (as 1), under myst-nb's record prefix."""
    chapter = sources.read_chapter(_source(stem))
    notebook = nbformat.from_dict(chapter.notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    for index, call in chapter.calls("glue_figure"):
        figure = {"image/png": PNG, "text/plain": "<Image>"}
        notebook.cells[index].outputs.append(_record(call.args[1].value, figure))
    for index, call in chapter.calls("glue_setting"):
        notebook.cells[index].outputs.append(_record(call.args[0].value, {"text/plain": "1"}))
    return notebook


def _record(name, data):
    return nbformat.v4.new_output(
        "display_data",
        data={RECORD_PREFIX + key: value for key, value in data.items()},
        metadata={"scrapbook": {"name": name, "mime_prefix": RECORD_PREFIX}},
    )


@pytest.fixture(scope="module")
def numbers():
    return book_numbers()


@pytest.fixture(scope="module", params=[source.stem for source in sources.chapter_sources()])
def reader(request, numbers):
    stem = request.param
    return stem, reader_notebook(_source(stem), _as_executed(stem), numbers)


def test_numbers_follow_the_chapters_order_from_the_first_chapters_number(numbers):
    first = sources.chapter_number(sources.chapter_sources()[0].stem)
    chapter = sources.read_chapter(sources.chapter_sources()[0])
    labels = [d.options["name"] for d in chapter.directives() if d.name == "glue:figure"]
    assert [numbers.text[label] for label in labels] == [
        f"Figure {first}.{k}" for k in range(1, len(labels) + 1)
    ]
    assert numbers.figures[chapter.stem] == len(labels)
    headings = numbers.headings[chapter.stem]
    assert headings[0] == str(first) and headings[1] == f"{first}.1"


def test_a_reader_notebook_shows_no_myst_and_every_figure_as_an_image(reader, numbers):
    stem, notebook = reader
    assert raw_myst(notebook) == []
    assert image_outputs(notebook) == numbers.figures[stem] > 0
    shown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    for label, text in numbers.text.items():
        if label.startswith("fig-") and numbers.number[label].startswith(
            str(sources.chapter_number(stem))
        ):
            assert f"**{text}.**" in shown  # the caption, numbered, where the figure stands


def test_the_markdown_renders_as_classic_jupyter_renders_it(reader):
    """Classic Jupyter renders markdown with a CommonMark renderer (marked): no directive
    becomes a code block, and no role or target is left as text."""
    _stem, notebook = reader
    renderer = MarkdownIt("commonmark", {"html": True})
    html = "\n".join(
        renderer.render(cell.source) for cell in notebook.cells if cell.cell_type == "markdown"
    )
    for raw in ("{claim-value}", "{numref}", "{glue:", "{eq}", "{cite:", "```{", ":::", ")="):
        assert raw not in html
    assert "<blockquote>" in html and "<details>" in html and "\\tag{" in html
    assert '<code class="language-{' not in html


def test_plumbing_cells_are_collapsed_as_the_site_hides_them(reader):
    _stem, notebook = reader
    first_code = next(i for i, c in enumerate(notebook.cells) if c.cell_type == "code")
    assert notebook.cells[0].cell_type == "markdown"
    assert notebook.cells[0].source.startswith("# ")  # the numbered title comes first
    pin_cell = notebook.cells[first_code]
    assert "parameters" in pin_cell.metadata["tags"]  # papermill still finds it
    assert pin_cell.metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert pin_cell.metadata["collapsed"] is True  # classic Jupyter's flag
    for cell in notebook.cells:
        if "hide-input" in cell.metadata.get("tags", ()):
            assert cell.metadata["jupyter"] == {"source_hidden": True}
            assert "collapsed" not in cell.metadata


def test_claim_values_are_formatted_as_the_site_formats_them_with_their_state(monkeypatch):
    result = {"x": 2.05534, "m": {"mean": 1.0, "ci": [0.5, 1.5], "level": 0.95}}
    states = {"c-v": "verified", "c-r": "refuted", "c-s": "stale"}

    def judge(claim_id):
        if claim_id not in states:
            raise UnknownClaimError(f"no claim {claim_id}")
        return Judgement(states[claim_id], {"result": result}, "")

    monkeypatch.setattr(reader_notebooks.registry, "judge", judge)
    chapter = reader_notebooks._Chapter(book_numbers(), {}, None)
    value = functools.partial(reader_notebooks._claim_value, chapter=chapter)
    assert value("c-v.x:.3f") == format_value(2.05534, ".3f") == "2.055"
    assert value("c-v.m:.2f") == "1.00 (95% CI 0.50 to 1.50)"
    assert value("c-r.x:.1f") == "2.1 (account refuted)"
    assert value("c-s.x:.1f") == "2.1 (stale)"
    # What the site shows as a failed number: an unknown claim, a missing field, a bad spec.
    assert value("c-unknown.x:.1f") == value("c-v.y") == value("c-v.x:d") == "? (failed)"


def test_roles_become_text(numbers):
    chapter = reader_notebooks._Chapter(numbers, {"lr": "0.1", "n": "32"}, _bibliography())
    role = reader_notebooks._role
    assert role("glue:text", "lr:.2f", chapter) == "0.10"
    assert role("glue:text", "n", chapter) == "32"
    assert role("numref", "sec-two-maps", chapter) == numbers.text["sec-two-maps"]
    assert role("numref", "Chapter %s <chapter-batch-normalization>", chapter) == "Chapter 16"
    assert role("eq", "eq-centered-map", chapter) == numbers.text["eq-centered-map"]
    assert role("prf:ref", "thm-jacobians", chapter) == numbers.text["thm-jacobians"]
    assert role("book-chapter", "2", chapter) == "Chapter 2"
    assert role("cite:t", "c16-wu2018group", chapter) == "Wu and He [2018]"
    assert role("cite:p", "c16-wu2018group", chapter) == "[Wu and He, 2018]"
    # A chip, then a hard line break: chips written one a line stay one a line.
    assert role("bdg-ref-primary", "NS · Numerical stability <chip-ns>", chapter) == (
        "**NS · Numerical stability**  "
    )


def _bibliography():
    from pybtex.database import parse_file

    return parse_file(paths.REPO_ROOT / "references.bib")


def test_outputs_keep_one_image_per_figure_and_drop_glued_values():
    shown_by_a_reader = nbformat.v4.new_output(
        "display_data",
        data={"image/png": PNG, "text/plain": "<Image>"},
        metadata={"scrapbook": {"name": "fig-a", "mime_prefix": ""}},
    )
    outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hello\n"),
        _record("fig-b", {"image/png": PNG, "text/plain": "<Image>"}),
        _record("lr", {"text/plain": "0.1"}),
        shown_by_a_reader,
    ]
    kept = reader_notebooks._outputs(outputs)
    assert [output.output_type for output in kept] == ["stream", "display_data", "display_data"]
    assert [output["data"].get("image/png") for output in kept[1:]] == [PNG, PNG]
    # The site's size: 1350 px at the figures' dpi, DISPLAY_PX_PER_POINT CSS px a point.
    shown = round(1350 / figures.PNG_DPI * 72 * figures.DISPLAY_PX_PER_POINT)
    assert [output.metadata["image/png"]["width"] for output in kept[1:]] == [shown, shown]
    assert not any(key.startswith(RECORD_PREFIX) for o in kept for key in o.get("data", {}))


def test_raw_myst_finds_roles_fences_and_targets_but_not_plain_braces():
    cell = nbformat.v4.new_markdown_cell
    notebook = nbformat.v4.new_notebook(
        cells=[
            cell("$\\{x\\}$ and {1, 2} are sets; `code` is code"),
            cell("(sec-a)=\n## A\n\n```{admonition} T\nx\n```\n:::{note}\ny\n:::"),
            nbformat.v4.new_code_cell("print('{numref}`a`')"),
        ]
    )
    assert raw_myst(notebook) == ["(sec-a)=", "```{", ":::", ":::"]
