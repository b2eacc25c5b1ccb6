"""A figure drawn a second time for a phone's column, and the size of a figure's text.

A page shows a figure drawn :data:`~claimbook.figures.FIGURE_WIDTH` (5 in) wide at most
:data:`~claimbook.figures.DISPLAY_PX_PER_POINT` CSS px a point. A phone's column
(:data:`PHONE_COLUMN_PX`, 342 CSS px at 390 px) would shrink that drawing to 0.95 px a point:
10 pt tick labels would read at 9.5 px and their exponents at 6.7 px. So the page serves
phones another drawing of the same figure (:func:`draw_for_phone`): :data:`PHONE_WIDTH` wide,
laid out again at that size, every text scaled by one factor so that the smallest glyph it
draws is at least :data:`SMALLEST_TEXT_CSS_PX` when the image fills the phone's column.

The smallest glyph is not the smallest font size: mathtext sets a superscript (the exponent
of a log axis's ``10^{-3}``) and a subscript at 0.7 of its text's size, so
:func:`smallest_text_pt` reads the size of every glyph a mathtext label draws.
"""

from __future__ import annotations

import functools
import io
import pickle

__all__ = [
    "PHONE_COLUMN_PX",
    "PHONE_HEIGHT_RATIO",
    "PHONE_WIDTH",
    "SMALLEST_TEXT_CSS_PX",
    "draw_for_phone",
    "smallest_text_pt",
]

# The column a 390 px phone gives a figure, in CSS px, and the smallest text a reader gets.
PHONE_COLUMN_PX = 342
SMALLEST_TEXT_CSS_PX = 11.0
# Drawn 3.4 in (245 pt) wide, a point is 342 / 245 = 1.4 CSS px on a phone, what it is on a
# desktop (1.6): lines and markers keep their weight. The text is scaled so its smallest glyph
# is 11 px at least (tick labels 16 px, their exponents 11). A taller figure than the wide
# drawing scaled down (x 1.25) keeps room for the plot beside text that grew relative to it.
PHONE_WIDTH = 3.4
PHONE_HEIGHT_RATIO = 1.25
# Above the smallest size by this factor (the record keeps 6 digits of a size), and the most
# drawings it takes (each narrower by what reached past the edge of the one before).
_MARGIN = 1.02
_DRAWINGS = 3


@functools.cache
def _parser():
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")  # one parser: its cache of parses is per parser


def _glyph_sizes(text) -> list[float]:
    """The font sizes (pt) of the letters and digits ``text`` (a :class:`matplotlib.text.Text`)
    draws."""
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
    """The size, in points, of the smallest letter or digit of the text ``fig`` draws.

    Every visible, non-empty text artist counts: titles, axis labels, tick labels, legend
    entries, annotations; in a mathtext label, each letter and digit at its own size (an
    exponent at 0.7 of the label's; not a radical sign, which mathtext draws from a smaller
    size of the font). Tick labels exist once the figure has been drawn (saving draws it).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.set_xlabel("x", fontsize=12)
    >>> ax.tick_params(labelsize=9)
    >>> fig.canvas.draw()
    >>> smallest_text_pt(fig)
    9.0
    >>> ax.set_yscale("log")  # its tick labels are 10^k: exponents at 0.7 x 9 pt
    >>> fig.canvas.draw()
    >>> round(smallest_text_pt(fig), 2)
    6.3
    >>> plt.close(fig)
    """
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
    """Lay ``fig`` out again at its new size: its layout engine does when it draws; a figure
    that ran ``tight_layout`` once has no engine left, so it runs once more."""
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    if engine is None or isinstance(engine, PlaceHolderLayoutEngine):
        fig.tight_layout()


def _legends_below(fig) -> float:
    """Anchor each axes' legend under its axes, below its tick labels and x label; return
    the legends' height (inches: the book stacks its panels, so they add up).

    Its text grown, a legend left in its axes covers curves. The anchor's offset is in
    inches, which the layout keeps (it moves axes, not text).
    """
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


def _drawing_box(fig, dpi: float):
    """The box (inches) of the drawing of ``fig`` just saved, or None when it lies inside the
    figure (to a pixel)."""
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # text laid out already: cached
    width, height = fig.get_size_inches()
    pixel = 1 / dpi
    inside = min(drawn.x0, drawn.y0) >= -pixel
    if inside and drawn.x1 <= width + pixel and drawn.y1 <= height + pixel:
        return None
    return drawn


def draw_for_phone(fig, save, dpi: float) -> bytes:
    """Draw ``fig`` again for a phone's column; the PNG that ``save(fig, stream, crop)`` writes.

    ``save`` writes the PNG at ``dpi``, the whole figure when ``crop`` is None, else the box
    ``crop`` (inches). ``fig`` must have been drawn once (its tick labels are measured).
    It becomes :data:`PHONE_WIDTH` wide and :data:`PHONE_HEIGHT_RATIO` times its height scaled
    alike; every text is scaled by one factor so that its smallest glyph
    (:func:`smallest_text_pt`) is :data:`SMALLEST_TEXT_CSS_PX` (and 2 %) when the image is
    shown :data:`PHONE_COLUMN_PX` wide; and its layout engine (or ``tight_layout``) lays it
    out again. All this is done to a copy of ``fig`` (pickled and read back): ``fig`` is left
    as it was. The PNG is the whole figure, one drawing, when everything drawn lies inside it.

    Otherwise something reaches past its edge: the PNG is cropped to the drawing (padded as
    Matplotlib's tight crop), and when the crop is wider than the figure, which makes the text
    smaller as shown, the figure is drawn again, narrower by what reached past its edge (at
    most :data:`_DRAWINGS` times). An
    axes' legend goes under its axes, the figure taller by it (:func:`_legends_below`); its
    columns are the chapter's: one with entries side by side can be too wide.

    Raises
    ------
    ValueError
        If the text is still under :data:`SMALLEST_TEXT_CSS_PX` as shown: what reaches past
        the figure's edge does not shrink with it (a label too long for a phone's column).
    """
    import matplotlib.pyplot as plt

    copy = pickle.loads(pickle.dumps(fig))  # unpickled, pyplot holds it open
    try:
        return _draw_narrow(copy, save, dpi)
    finally:
        plt.close(copy)


def _draw_narrow(fig, save, dpi: float) -> bytes:
    from matplotlib import rcParams

    width, height = fig.get_size_inches()
    height *= PHONE_WIDTH / width * PHONE_HEIGHT_RATIO
    fig.set_size_inches(PHONE_WIDTH, height)
    smallest_px = smallest_text_pt(fig) * PHONE_COLUMN_PX / (PHONE_WIDTH * 72)
    _scale_text(fig, SMALLEST_TEXT_CSS_PX * _MARGIN / smallest_px)
    height += _legends_below(fig)
    fig.set_size_inches(PHONE_WIDTH, height)
    drawn_width = PHONE_WIDTH
    for _ in range(_DRAWINGS):
        _lay_out(fig)
        data = _drawn(fig, save, None)  # one drawing, the whole figure
        drawn = _drawing_box(fig, dpi)
        if drawn is None:
            return data
        crop = drawn.padded(rcParams["savefig.pad_inches"])  # as the wide PNG's crop
        smallest_px = smallest_text_pt(fig) * PHONE_COLUMN_PX / (crop.width * 72)
        if smallest_px >= SMALLEST_TEXT_CSS_PX:
            return _drawn(fig, save, crop)
        # Narrower by what reaches past the edge: the crop is then about the phone's width.
        drawn_width -= crop.width - PHONE_WIDTH
        fig.set_size_inches(drawn_width, height)
    shown_pt = crop.width * 72
    raise ValueError(
        f"drawn for a phone, the figure is {shown_pt / 72:.2f} in wide once cropped, not "
        f"{PHONE_WIDTH} in: something reaches past its edge and its smallest text is "
        f"{smallest_px:.1f} CSS px on a phone, under {SMALLEST_TEXT_CSS_PX:g} (a label or "
        "legend too long for a phone's column?)"
    )
