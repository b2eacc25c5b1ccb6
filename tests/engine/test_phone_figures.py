"""A figure drawn again for a phone (engine/claimbook/figures.py)."""

import io

import matplotlib

matplotlib.use("agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from legend_overlaps import legend_overlaps, legends
from PIL import Image

from claimbook import figures

TARGET = figures.SMALLEST_TEXT_CSS_PX


class Saver:
    """``save`` for :func:`draw_for_phone` that keeps the figures it was given (the copy)."""

    def __init__(self, **options):
        self.options = options
        self.drawn = []

    def __call__(self, fig, stream, crop="tight"):
        self.drawn.append(fig)
        fig.savefig(stream, format="png", dpi=figures.PNG_DPI, bbox_inches=crop, **self.options)


def _width_in(data):
    with Image.open(io.BytesIO(data)) as image:
        return image.size[0] / figures.PNG_DPI


def _shown_px(data, smallest_pt):
    """CSS px of ``smallest_pt`` when the PNG ``data`` fills a phone's column."""
    return smallest_pt * figures.PHONE_COLUMN_PX / (_width_in(data) * 72)


def _log_figure():
    """Two stacked panels in the book's style, log axes: exponents at 0.7 of 10 pt."""
    with matplotlib.rc_context(figures.FIGURE_STYLE):
        fig, axes = plt.subplots(2, 1, figsize=(figures.FIGURE_WIDTH, 6.0), layout="constrained")
        for ax in axes:
            ax.plot([1, 10, 100], [1e-3, 1e-2, 1e-1], label="a series")
            ax.set(xscale="log", yscale="log", xlabel="batch size", ylabel="error")
            ax.legend()
        Saver()(fig, io.BytesIO())  # drawn once, as save_figure draws it before
    return fig


@pytest.fixture
def log_figure():
    fig = _log_figure()
    yield fig
    plt.close(fig)


@pytest.fixture(scope="module")
def phone_drawing():
    """A log figure, the saver given to :func:`draw_for_phone` and the PNG it returned: one
    drawing (half a CPU-second) for the tests of what it is and that it repeats."""
    fig = _log_figure()
    save = Saver()
    data = figures.draw_for_phone(fig, save, figures.PNG_DPI)
    yield fig, save, data
    plt.close(fig)


def test_the_smallest_text_is_the_smallest_letter_an_exponent_included(log_figure):
    assert figures.smallest_text_pt(log_figure) == pytest.approx(0.7 * 10)
    fig, ax = plt.subplots()
    ax.set_xlabel(r"rate $\eta_t$", fontsize=12)  # a subscript at 0.7 of 12 pt
    ax.tick_params(labelsize=9)
    fig.canvas.draw()
    assert figures.smallest_text_pt(fig) == pytest.approx(min(9, 0.7 * 12))
    plt.close(fig)


def test_a_radical_sign_is_not_text_its_letters_are():
    fig, ax = plt.subplots()
    ax.set_xlabel(r"branch $\times 1/\sqrt{L}$", fontsize=12)  # the sign drawn at 6.8 pt
    ax.tick_params(labelsize=12)
    fig.canvas.draw()
    assert figures.smallest_text_pt(fig) == 12
    plt.close(fig)


def test_a_figure_with_no_text_is_refused():
    fig, ax = plt.subplots()
    ax.axis("off")
    with pytest.raises(ValueError, match="no text"):
        figures.smallest_text_pt(fig)
    plt.close(fig)


def test_the_phone_drawing_is_narrow_and_its_smallest_text_readable(phone_drawing):
    log_figure, save, data = phone_drawing
    wide = io.BytesIO()
    Saver()(log_figure, wide)
    assert _shown_px(wide.getvalue(), 7.0) < TARGET  # the wide drawing on a phone: 6.7 px
    # The phone's width (less the crop's margins), from a copy: the figure is as it was.
    assert 0.9 * figures.PHONE_WIDTH < _width_in(data) <= 1.01 * figures.PHONE_WIDTH
    assert log_figure.get_size_inches()[0] == figures.FIGURE_WIDTH
    assert save.drawn and all(fig is not log_figure for fig in save.drawn)
    assert not plt.fignum_exists(save.drawn[-1].number)  # the copy is closed
    phone = save.drawn[-1]
    smallest_pt = figures.smallest_text_pt(phone)
    # Every text scaled by one factor: the tick labels stay 1/0.7 of their exponents.
    tick = phone.axes[0].yaxis.get_ticklabels()[0].get_fontsize()
    assert tick == pytest.approx(smallest_pt / 0.7)
    assert TARGET <= _shown_px(data, smallest_pt) < 1.2 * TARGET  # readable, not blown up


def test_a_figure_whose_text_reaches_past_its_edge_is_drawn_again_narrower():
    fig, ax = plt.subplots(figsize=(figures.FIGURE_WIDTH, 3.0))
    ax.plot([0, 1], [0, 1])
    fig.text(0.8, 0.5, "a note, longer")  # no layout engine moves a figure's own text
    Saver()(fig, io.BytesIO())
    save = Saver()
    data = figures.draw_for_phone(fig, save, figures.PNG_DPI)
    # Drawn whole, found to reach past the edge, then cropped and narrowed until the crop is
    # about the phone's width.
    assert len(save.drawn) >= 3
    assert save.drawn[-1].get_size_inches()[0] < figures.PHONE_WIDTH
    assert _width_in(data) <= figures.PHONE_WIDTH * figures._MARGIN
    assert _shown_px(data, figures.smallest_text_pt(save.drawn[-1])) >= TARGET
    plt.close(fig)


@pytest.mark.filterwarnings("ignore:Tight layout not applied")
def test_text_that_reaches_past_the_edge_and_grows_with_the_text_is_an_error():
    fig, ax = plt.subplots(figsize=(figures.FIGURE_WIDTH, 3.0))
    ax.plot([0, 1], [0, 1])
    fig.text(0.5, 0.5, "a note as wide as the wide figure, which a phone cannot hold")
    Saver()(fig, io.BytesIO())
    with pytest.raises(ValueError, match="reaches past its edge"):
        figures.draw_for_phone(fig, Saver(), figures.PNG_DPI)
    plt.close(fig)


def test_the_phone_drawing_is_the_same_bytes_twice(phone_drawing):
    log_figure, _, first = phone_drawing
    assert figures.draw_for_phone(log_figure, Saver(), figures.PNG_DPI) == first
    other = _log_figure()  # the same figure drawn anew
    assert figures.draw_for_phone(other, Saver(), figures.PNG_DPI) == first
    plt.close(other)


def _crowded_figure():
    """Two stacked panels whose curves fill each axes, each with a legend the chapter left to
    ``loc="best"``, and a title on the lower panel: at a phone's text size a legend inside
    covers a curve (before the engine moved legends, 2 and 3 curves)."""
    steps = np.linspace(0, 1, 200)
    with matplotlib.rc_context(figures.FIGURE_STYLE):
        fig, axes = plt.subplots(2, 1, figsize=(figures.FIGURE_WIDTH, 6.0), layout="constrained")
        for ax in axes:
            for level in (0.2, 0.5, 0.8):
                ax.plot(steps, level + 0.15 * np.sin(12 * steps), label=f"a series at {level:g}")
            ax.set(xlabel="step", ylabel="value")
            ax.legend(frameon=False)
        axes[1].set_title("a title")
        Saver()(fig, io.BytesIO())
    return fig


def test_a_phone_drawing_s_legends_cover_no_curve_text_or_other_legend():
    fig = _crowded_figure()
    measured = []

    def save(copy, stream, crop="tight"):
        Saver()(copy, stream, crop)
        measured.append((len(legends(copy)), legend_overlaps(copy)))

    figures.draw_for_phone(fig, save, figures.PNG_DPI)
    plt.close(fig)
    assert measured[-1] == (2, [])
    # The wide drawing keeps its legends where the chapter put them, inside the axes.
    assert all(ax.get_legend().get_bbox_to_anchor().height > 0 for ax in fig.axes)
