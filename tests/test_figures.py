"""Figure numbering and saving (harness/trainable_harness/figures.py)."""

import matplotlib

matplotlib.use("agg")

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from trainable_harness import figures, harness_pin, paths
from trainable_harness.figures import UnknownFigureError

CONFIG = "sphinx:\n  config:\n    trainable_first_chapter: 15\n"
TOC = """format: jb-book
root: intro
chapters:
  - file: chapters/first
  - file: chapters/second
"""
FIRST = """# First
```{glue:figure} a
:name: fig-alpha

caption
```
```{figure} plain.png
```
```{glue:figure} b
:figwidth: 80%
:name: fig-beta
```
"""
SECOND = "# Second\n:::{figure} c.png\n:name: fig-gamma\n:::\n"


@pytest.fixture
def book(tmp_path, monkeypatch):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "_config.yml").write_text(CONFIG)
    (tmp_path / "_toc.yml").write_text(TOC)
    (tmp_path / "chapters" / "first.md").write_text(FIRST)
    (tmp_path / "chapters" / "second.md").write_text(SECOND)
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(paths, "CHAPTERS_DIR", tmp_path / "chapters")
    monkeypatch.setattr(paths, "FIGURES_DIR", tmp_path / "artifacts" / "figures")
    return tmp_path


def test_chapters_are_numbered_by_position_from_the_declared_first(book):
    assert figures.chapter_number("first") == 15
    assert figures.chapter_number("second") == 16


def test_unnamed_figures_are_not_counted_and_options_may_precede_the_name(book):
    assert figures.figure_labels(FIRST) == ["fig-alpha", "fig-beta"]
    assert figures.figure_number("fig-beta") == "15.2"
    assert figures.figure_number("fig-gamma") == "16.1"


def test_unknown_labels_and_chapters_are_refused(book):
    with pytest.raises(UnknownFigureError, match="fig-missing"):
        figures.figure_number("fig-missing")
    with pytest.raises(UnknownFigureError, match=r"not in _toc\.yml"):
        figures.chapter_number("third")


def test_save_figure_names_the_file_for_its_number_and_is_repeatable(book):
    fig, axis = plt.subplots(figsize=(2, 2))
    axis.plot([0, 1], [1, 0])
    first = figures.save_figure(fig, "fig-beta")
    first_bytes = first.read_bytes()
    second = figures.save_figure(fig, "fig-beta")
    plt.close(fig)
    assert first.name == "figure-15.2.png"
    assert first_bytes[:8] == b"\x89PNG\r\n\x1a\n"
    assert second.read_bytes() == first_bytes
    assert [p.name for p in first.parent.iterdir()] == ["figure-15.2.png"]
    with Image.open(first) as image:
        assert image.info["Source"] == "chapters/first.md"
        assert harness_pin() in image.info["Comment"]


def test_a_failed_save_leaves_no_partial_file(book, monkeypatch):
    fig, _ = plt.subplots(figsize=(2, 2))

    def broken_savefig(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(fig, "savefig", broken_savefig)
    with pytest.raises(OSError, match="disk full"):
        figures.save_figure(fig, "fig-alpha")
    plt.close(fig)
    assert list((book / "artifacts" / "figures").iterdir()) == []
