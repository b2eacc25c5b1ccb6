"""A figure drawn again for a phone's column, and the size of a figure's smallest text.

On a phone's column the desktop drawing would show a point at 0.95 CSS px:
:func:`draw_for_phone` draws a narrower copy whose smallest glyph is legible.
"""

from __future__ import annotations

import functools
import io
import pickle

# The column a 390 px phone gives a figure, in CSS px, and the smallest text a reader gets.
PHONE_COLUMN_PX = 342
SMALLEST_TEXT_CSS_PX = 11.0
# 3.4 in wide, a point is 1.4 CSS px on a phone (1.6 on a desktop): lines keep their weight.
# Taller than the wide drawing scaled down, to keep room for the plot beside the grown text.
PHONE_WIDTH = 3.4
PHONE_HEIGHT_RATIO = 1.25
# Above the smallest size by this factor, and the most drawings (each narrower than the last).
_MARGIN = 1.02
_DRAWINGS = 3


@functools.cache
def _parser():
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")  # one parser: its cache of parses is per parser


def _glyph_sizes(text) -> list[float]:
    """The font sizes (pt) of the letters and digits a :class:`matplotlib.text.Text` draws."""
    from matplotlib import cbook

    size = float(text.get_fontsize())
    string = text.get_text()
    if text.get_usetex() or not cbook.is_math_text(string):
        return [size]
    try:
        parsed = _parser().parse(string, dpi=72, prop=text.get_fontproperties())
    except ValueError:  # not mathtext after all: Matplotlib draws it as plain text
        return [size]
    # Letters and digits: a radical or a stretched bracket is drawn from a smaller size.
    sizes = [float(size) for _, size, code, *_ in parsed.glyphs if chr(code).isalnum()]
    return sizes or [size]


def smallest_text_pt(fig) -> float:
    """The size (pt) of the smallest letter or digit any visible text of drawn ``fig`` shows
    (a mathtext exponent at 0.7 of its label's); ValueError if the figure draws no text."""
    from matplotlib.text import Text

    sizes = [
        size
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip()
        for size in _glyph_sizes(text)
    ]
    if not sizes:
        raise ValueError("the figure draws no text")
    return min(sizes)


def _scale_text(fig, factor: float) -> None:
    """Scale every text of ``fig`` by ``factor``, tick labels to come included."""
    from matplotlib.text import Text

    tick_sizes = [
        (axis, which, max(label.get_fontsize() for label in labels))
        for axes in fig.axes
        for axis in (axes.xaxis, axes.yaxis)
        for which in ("major", "minor")
        if (labels := axis.get_ticklabels(which=which))
    ]
    for text in fig.findobj(Text):
        text.set_fontsize(text.get_fontsize() * factor)
    for axis, which, size in tick_sizes:  # the ticks a new layout makes take the new size too
        axis.set_tick_params(which=which, labelsize=size * factor)


def _lay_out(fig) -> None:
    """Lay ``fig`` out again: its layout engine does when drawing; else ``tight_layout``."""
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    if engine is None or isinstance(engine, PlaceHolderLayoutEngine):
        fig.tight_layout()


def _legends_below(fig) -> float:
    """Anchor each axes' legend under its x axis (grown, it would cover curves); return the
    legends' total height in inches (the book stacks its panels)."""
    from matplotlib.transforms import ScaledTranslation

    _lay_out(fig)
    fig.draw_without_rendering()  # tick labels where the new size puts them
    renderer, height = fig.canvas.get_renderer(), 0.0
    for ax in fig.axes:
        if (legend := ax.get_legend()) is None:
            continue
        axis = ax.xaxis.get_tightbbox(renderer) or ax.bbox  # what the x axis draws below
        drop = max(0.0, ax.bbox.y0 - axis.y0) / fig.dpi
        below = ax.transAxes + ScaledTranslation(0, -drop, fig.dpi_scale_trans)
        legend.set_loc("upper center")
        legend.set_bbox_to_anchor((0.5, 0.0), transform=below)
        height += legend.get_window_extent(renderer).height / fig.dpi
    return height


def _drawn(fig, save, crop) -> bytes:
    stream = io.BytesIO()
    save(fig, stream, crop)
    return stream.getvalue()


def draw_for_phone(fig, save, dpi: float) -> bytes:
    """The PNG of a copy of drawn ``fig`` for a phone, as ``save(fig, stream, crop)`` writes
    it at ``dpi`` (the whole figure when ``crop`` is None, else that box in inches).

    The copy is :data:`PHONE_WIDTH` wide, its text scaled to :data:`SMALLEST_TEXT_CSS_PX` at
    :data:`PHONE_COLUMN_PX`, its legends below their axes; ``fig`` is unchanged. A drawing
    reaching past the figure's edge is cropped to it, and drawn again narrower while the crop
    makes the text too small; ValueError if it stays too small.
    """
    import matplotlib.pyplot as plt

    fig = pickle.loads(pickle.dumps(fig))  # a copy, which pyplot holds open
    try:
        width, height = fig.get_size_inches()
        height *= PHONE_WIDTH / width * PHONE_HEIGHT_RATIO
        fig.set_size_inches(PHONE_WIDTH, height)
        smallest_px = smallest_text_pt(fig) * PHONE_COLUMN_PX / (PHONE_WIDTH * 72)
        _scale_text(fig, SMALLEST_TEXT_CSS_PX * _MARGIN / smallest_px)
        height += _legends_below(fig)
        drawn_width = PHONE_WIDTH
        for _ in range(_DRAWINGS):
            fig.set_size_inches(drawn_width, height)
            _lay_out(fig)
            data = _drawn(fig, save, None)  # one drawing, the whole figure
            drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # laid out: cached
            right, top = fig.get_size_inches() + 1 / dpi  # a pixel's slack
            if min(drawn.x0, drawn.y0) >= -1 / dpi and drawn.x1 <= right and drawn.y1 <= top:
                return data
            crop = drawn.padded(plt.rcParams["savefig.pad_inches"])  # as the wide PNG's crop
            smallest_px = smallest_text_pt(fig) * PHONE_COLUMN_PX / (crop.width * 72)
            if smallest_px >= SMALLEST_TEXT_CSS_PX:
                return _drawn(fig, save, crop)
            # Narrower by what reaches past the edge: the crop is then about the phone's width.
            drawn_width -= crop.width - PHONE_WIDTH
    finally:
        plt.close(fig)
    raise ValueError(
        f"drawn for a phone, the figure is {crop.width:.2f} in wide once cropped, not "
        f"{PHONE_WIDTH} in: something reaches past its edge and its smallest text is "
        f"{smallest_px:.1f} CSS px on a phone, under {SMALLEST_TEXT_CSS_PX:g} (a label or "
        "legend too long for a phone's column?)"
    )
