"""Figure artifacts named by label (engine/claimbook/figures.py)."""

import base64
import xml.etree.ElementTree as ElementTree

import matplotlib

matplotlib.use("agg")

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from claimbook import figures, paths, sources
from claimbook.errors import InvalidFigureLabelError, UnknownFigureError
from claimbook.figures import PHONE_COLUMN_PX, SMALLEST_TEXT_CSS_PX
from trainable_harness import __version__

CONFIG = "sphinx:\n  config:\n    trainable_first_chapter: 15\n"
TOC = """format: jb-book
root: intro
chapters:
  - file: chapters/first
  - file: chapters/second
"""
# An unnamed figure and a figure example inside a code fence come before fig-beta: a count of
# the source would give fig-beta a wrong number; a label cannot be miscounted.
HEADER = "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n"
FIRST = """# First

```{glue:figure} a
:name: fig-alpha

caption
```

```{figure} plain.png
```

````markdown
```{figure} example.png
:name: fig-example
```
````

```{glue:figure} b
:figwidth: 80%
:name: fig-beta
```
"""
SECOND = "# Second\n\n:::{figure} c.png\n:name: fig-gamma\n:::\n"


@pytest.fixture
def book(tmp_path, monkeypatch):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "_config.yml").write_text(CONFIG)
    (tmp_path / "_toc.yml").write_text(TOC)
    (tmp_path / "chapters" / "first.md").write_text(HEADER + FIRST)
    (tmp_path / "chapters" / "second.md").write_text(HEADER + SECOND)
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(paths, "CHAPTERS_DIR", tmp_path / "chapters")
    monkeypatch.setattr(paths, "FIGURES_DIR", tmp_path / "artifacts" / "figures")
    monkeypatch.delenv(figures.CHAPTER_VARIABLE, raising=False)
    return tmp_path


@pytest.fixture
def fig():
    figure, axis = plt.subplots(figsize=(2, 2))
    axis.plot([0, 1], [1, 0], label="line")
    axis.legend()
    yield figure
    plt.close(figure)


def test_chapters_are_numbered_by_position_from_the_declared_first(book):
    assert [source.stem for source in sources.chapter_sources()] == ["first", "second"]
    assert sources.chapter_number("first") == 15
    assert sources.chapter_number("second") == 16


def test_only_named_figure_directives_in_prose_are_labels(book):
    assert figures.figure_labels(book / "chapters" / "first.md") == ["fig-alpha", "fig-beta"]
    assert figures.figure_labels(book / "chapters" / "second.md") == ["fig-gamma"]


def test_a_figure_is_found_by_label_or_by_the_chapter_the_driver_names(book, monkeypatch):
    assert figures.locate_figure("fig-beta") == "first"
    assert figures.locate_figure("fig-gamma") == "second"
    monkeypatch.setenv(figures.CHAPTER_VARIABLE, "second")
    assert figures.locate_figure("fig-gamma") == "second"
    # The driver says chapter "second" is running: a label of another chapter is refused.
    with pytest.raises(UnknownFigureError, match=r"chapters/second\.md.*fig-beta"):
        figures.locate_figure("fig-beta")


def test_unknown_and_unusable_labels_are_refused(book, fig):
    with pytest.raises(UnknownFigureError, match="fig-missing"):
        figures.save_figure(fig, "fig-missing")
    with pytest.raises(UnknownFigureError, match="fig-example"):
        figures.save_figure(fig, "fig-example")  # only an example inside a code fence
    for label in ("", "../escape", "a/b", ".hidden", "fig beta"):
        with pytest.raises(InvalidFigureLabelError):
            figures.save_figure(fig, label)
    assert not (book / "artifacts" / "figures").exists()


def test_save_figure_names_files_by_label_and_rebuilds_byte_identical(book, fig):
    svg, png = figures.save_figure(fig, "fig-beta")
    phone = figures.phone_figure_file("fig-beta")
    files = (svg, png, phone)
    first = {path: path.read_bytes() for path in files}
    again = figures.save_figure(fig, "fig-beta")  # the figure as it was: a copy went narrow
    assert again == (svg, png)
    assert {path: path.read_bytes() for path in files} == first
    folder = svg.parent
    assert [str(p.relative_to(folder)) for p in files] == [
        "fig-beta.svg",
        "fig-beta.png",
        "phone/fig-beta.png",
    ]
    written = sorted(p for p in folder.rglob("*") if p.is_file())
    assert written == sorted(files)  # no temporaries


def test_metadata_names_the_chapter_and_harness_and_no_date(book, fig):
    svg, png = figures.save_figure(fig, "fig-gamma")
    with Image.open(png) as image:
        assert image.info["Source"] == "chapters/second.md"
        assert f"trainable_harness {__version__}" in image.info["Comment"]
        assert "Software" not in image.info
        assert image.info["dpi"] == pytest.approx((figures.PNG_DPI, figures.PNG_DPI), abs=0.01)
        # Its smallest text, the tick and legend labels of the default style, is recorded.
        assert float(image.info[figures.SMALLEST_TEXT_KEY]) == figures.smallest_text_pt(fig)
    # The phone's drawing says the same, and records its own smallest text.
    with Image.open(figures.phone_figure_file("fig-gamma")) as image:
        assert image.info["Source"] == "chapters/second.md"
        smallest_pt = float(image.info[figures.SMALLEST_TEXT_KEY])
        shown_px_per_pt = PHONE_COLUMN_PX / (image.size[0] / image.info["dpi"][0] * 72)
        assert smallest_pt * shown_px_per_pt >= SMALLEST_TEXT_CSS_PX
    text = svg.read_text(encoding="utf-8")
    ElementTree.fromstring(text)  # well-formed
    assert "chapters/second.md" in text and f"trainable_harness {__version__}" in text
    assert "<dc:date>" not in text


def test_the_driver_variable_overrides_the_search(book, fig, monkeypatch):
    monkeypatch.setenv(figures.CHAPTER_VARIABLE, "first")
    _, png = figures.save_figure(fig, "fig-alpha")
    with Image.open(png) as image:
        assert image.info["Source"] == "chapters/first.md"


def test_a_failed_save_leaves_no_partial_file(book, fig, monkeypatch):
    def broken_savefig(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(fig, "savefig", broken_savefig)
    with pytest.raises(OSError, match="disk full"):
        figures.save_figure(fig, "fig-alpha")
    assert list((book / "artifacts" / "figures").iterdir()) == []


@pytest.fixture
def glued(monkeypatch):
    """What ``myst_nb.glue`` was given, call by call: ``(name, mime bundle, display)``."""
    import myst_nb
    from IPython.core.formatters import format_display_data

    calls = []
    monkeypatch.setattr(
        myst_nb,
        "glue",
        lambda name, value, display=True: calls.append(
            (name, format_display_data(value)[0], display)
        ),
    )
    return calls


def test_glue_figure_glues_the_artifacts_png_and_closes_the_figure(book, fig, glued):
    assert figures.glue_figure(fig, "fig-beta") is None  # a cell ending with it prints nothing
    svg, png = figures.figure_files("fig-beta")
    assert svg.is_file()
    [(name, bundle, display)] = glued
    assert (name, display) == ("fig-beta", True)  # outside a build: shown under the cell
    # The page's image is the artifact's bytes, not another drawing of the figure.
    assert base64.b64decode(bundle["image/png"]) == png.read_bytes()
    assert not plt.fignum_exists(fig.number)


def test_glue_figure_glues_nothing_when_the_save_is_refused(book, fig, glued):
    with pytest.raises(UnknownFigureError):
        figures.glue_figure(fig, "fig-missing")
    assert glued == [] and plt.fignum_exists(fig.number)


def test_one_palette_and_one_style_for_every_chapter():
    assert len(set(figures.PALETTE)) == len(figures.PALETTE) == 4
    assert all(len(colour) == 7 and colour.startswith("#") for colour in figures.PALETTE)
    # Figures are shown at the resolution their PNG is written at.
    assert figures.FIGURE_STYLE["figure.dpi"] == figures.PNG_DPI
    # Chapters reach both through the instruments' package, not a copy.
    from claimbook.chapter import FIGURE_STYLE, PALETTE

    assert PALETTE is figures.PALETTE and FIGURE_STYLE is figures.FIGURE_STYLE


def test_a_source_is_parsed_once_per_content_and_an_edit_is_seen(book, monkeypatch):
    source = book / "chapters" / "second.md"
    figures.locate_figure("fig-gamma")  # every chapter read once
    parses = []
    original = sources.parse_prose
    monkeypatch.setattr(
        sources, "parse_prose", lambda *args: parses.append(args) or original(*args)
    )
    figures.locate_figure("fig-gamma")
    figures.locate_figure("fig-gamma")
    assert parses == []  # the same bytes: served from the first parse
    text = source.read_text().replace(":name: fig-gamma", ":name: fig-delta")
    assert text != source.read_text()
    source.write_text(text)
    assert figures.locate_figure("fig-delta") == "second"  # another content, parsed again
    # Its one markdown cell parsed again, as is each directive body in it (the recursion): once.
    assert len({text for text, _cell in parses}) == len(parses) > 0
    assert len({cell for _text, cell in parses}) == 1
    with pytest.raises(UnknownFigureError, match="fig-gamma"):
        figures.locate_figure("fig-gamma", "second")


def test_a_glued_figure_is_drawn_and_glued_before_it_returns(book, glued):
    for label in ("fig-gamma", "fig-beta"):
        figure, axis = plt.subplots(figsize=(2, 2))
        axis.plot([0, 1], [1, 0])
        figures.glue_figure(figure, label)
        assert not plt.fignum_exists(figure.number)
        assert all(path.is_file() for path in figures.figure_files(label))
    assert [name for name, _, _ in glued] == ["fig-gamma", "fig-beta"]


def test_a_figure_is_displayed_in_a_readers_kernel_and_only_glued_in_a_build(
    book, glued, monkeypatch
):
    for chapter, shown in (("", True), ("first", False)):
        monkeypatch.setenv(figures.CHAPTER_VARIABLE, chapter)
        figure, axis = plt.subplots(figsize=(2, 2))
        axis.plot([0, 1], [1, 0])
        figures.glue_figure(figure, "fig-beta")
        assert glued[-1][0] == "fig-beta" and glued[-1][2] is shown


def test_a_readers_kernel_shows_a_figure_at_the_pages_size(book, monkeypatch):
    """A re-run cell in JupyterLab shows the drawing as wide as the page does, not at the
    PNG's own pixels (drawn at twice that size for HiDPI screens); a build's glue is bare."""
    import myst_nb
    from IPython.core.formatters import format_display_data

    metadata = []
    monkeypatch.setattr(
        myst_nb,
        "glue",
        lambda name, value, display=True: metadata.append(format_display_data(value)[1]),
    )
    for chapter in ("", "first"):
        monkeypatch.setenv(figures.CHAPTER_VARIABLE, chapter)
        figure, axis = plt.subplots(figsize=(5, 2))
        axis.plot([0, 1], [1, 0])
        figures.glue_figure(figure, "fig-beta")
    png = figures.figure_files("fig-beta")[1].read_bytes()
    width = figures.display_width(png)
    assert metadata[0] == {"image/png": {"width": width}}
    assert metadata[1] == {}
    # 5 in at 1.6 CSS px a point, give or take the cropping to the drawing.
    assert 0.8 * 576 < width <= 576


def test_the_display_width_refuses_bytes_that_are_not_a_png():
    with pytest.raises(ValueError, match="png: not the bytes of a PNG file"):
        figures.display_width(b"GIF89a" + bytes(30))
