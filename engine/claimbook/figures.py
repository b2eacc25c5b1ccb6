"""Chapter figures saved as artifacts named by their label (the ``:name:`` of the directive
that shows it), with no date or random id, and each drawn again for a phone's column."""

import functools
import io
import os
import pickle
import re
from collections import UserDict, namedtuple
from pathlib import Path

from claimbook import instruments, paths, sources
from claimbook.atomic import atomic_output
from claimbook.errors import InvalidFigureLabelError, UnknownFigureError

CHAPTER_VARIABLE = "TRAINABLE_CHAPTER"
PNG_DPI = 270  # two device pixels a CSS px (HiDPI) at every width shown
FIGURE_DIRECTIVES = frozenset({"figure", "glue:figure"})
# The book's figure colours: first, second and third series, reference lines and annotations.
Palette = namedtuple("Palette", "ink rust gold slate")
PALETTE = Palette(ink="#1d3557", rust="#b5452b", gold="#c8963e", slate="#6c757d")
# A desktop shows 10 pt at 16 CSS px, a log axis's exponent (0.7 of it) at 11.2 px.
FIGURE_WIDTH = 5.0
SMALLEST_FONT_PT = 10
DISPLAY_PX_PER_POINT = 1.6
SMALLEST_TEXT_KEY = "Smallest text pt"
FIGURE_STYLE = {
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": PNG_DPI,
    "figure.figsize": (FIGURE_WIDTH, 4.0),
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "figure.titlesize": 11,
    "xtick.labelsize": SMALLEST_FONT_PT,
    "ytick.labelsize": SMALLEST_FONT_PT,
    "legend.fontsize": SMALLEST_FONT_PT,
    "legend.title_fontsize": SMALLEST_FONT_PT,
}
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
PHONE_COLUMN_PX = 342  # a 390 px phone's figure column, in CSS px
SMALLEST_TEXT_CSS_PX = 11.0
PHONE_WIDTH = 3.4  # a point is 1.4 CSS px on a phone: lines keep their weight
PHONE_HEIGHT_RATIO = 1.25  # room for the plot beside the grown text
_MARGIN = 1.02  # above the smallest text size by this factor
_DRAWINGS = 3  # the most phone drawings, each narrower than the last


def figure_labels(chapter) -> list[str]:
    """Labels (``:name:``) of the figure directives in ``chapter`` (or at its path), in order."""
    if isinstance(chapter, Path):
        chapter = sources.read_chapter(chapter)
    return [
        str(item.options["name"])
        for item in chapter.directives()
        if item.name in FIGURE_DIRECTIVES and item.options.get("name")
    ]


def _check_label(label: str) -> None:
    if not isinstance(label, str) or not _LABEL.match(label):
        raise InvalidFigureLabelError(
            f"figure label must be letters, digits, '-', '_' or '.', starting with a letter "
            f"or digit (it names the artifact file); got {label!r}"
        )


def locate_figure(label: str, chapter: str | None = None) -> str:
    """The stem of ``chapter`` (default ``$TRAINABLE_CHAPTER``, else every chapter) that has a
    figure directive named ``label``; InvalidFigureLabelError, UnknownFigureError."""
    _check_label(label)
    chapter = chapter or os.environ.get(CHAPTER_VARIABLE) or None
    candidates = [chapter] if chapter else [s.stem for s in sources.chapter_sources()]
    for stem in candidates:
        source = paths.CHAPTERS_DIR / f"{stem}.md"
        if source.is_file() and label in figure_labels(source):
            return stem
    where = f"chapters/{chapter}.md" if chapter else "no chapter in _toc.yml"
    raise UnknownFigureError(
        f"{where} has no figure directive with ':name: {label}'; save_figure needs the "
        "label of the figure that shows it"
    )


def figure_files(label: str) -> tuple[Path, Path]:
    """``(svg, png)`` artifact paths of figure ``label``."""
    _check_label(label)
    return paths.FIGURES_DIR / f"{label}.svg", paths.FIGURES_DIR / f"{label}.png"


def phone_figure_file(label: str) -> Path:
    """``artifacts/figures/phone/<label>.png``."""
    _check_label(label)
    return paths.FIGURES_DIR / "phone" / f"{label}.png"


def save_figure(fig, label: str, *, chapter: str | None = None) -> tuple[Path, Path]:
    """Save ``fig`` as figure ``label`` of ``chapter`` (:func:`locate_figure`, before writing):
    the PNG (cropped), the SVG as the PNG's drawing left it, the phone's PNG; ``(svg, png)``."""
    import matplotlib  # late: only a chapter that draws needs it

    svg, png = figure_files(label)
    source = f"chapters/{locate_figure(label, chapter)}.md"
    drawn_by = f"drawn by {source} with trainable_harness {instruments.version()}"

    def save_png(figure, stream, crop="tight") -> None:
        fixed = {"Software": None, "Title": label, "Source": source, "Comment": drawn_by}
        metadata = _AfterDrawing(figure, fixed)
        figure.savefig(stream, format="png", dpi=PNG_DPI, metadata=metadata, bbox_inches=crop)

    with atomic_output(png) as stream:
        save_png(fig, stream)
    metadata = {"Title": label, "Source": source, "Description": drawn_by}
    with matplotlib.rc_context({"svg.hashsalt": label, "svg.fonttype": "path"}):
        with atomic_output(svg) as stream:
            fig.savefig(stream, format="svg", metadata=metadata | {"Date": None, "Creator": None})
    with atomic_output(phone_figure_file(label)) as stream:
        stream.write(draw_for_phone(fig, save_png, PNG_DPI))
    return svg, png


class _AfterDrawing(UserDict):
    """PNG metadata whose :data:`SMALLEST_TEXT_KEY` is read at encoding, after Matplotlib has
    drawn the figure (tick labels exist only then)."""

    def __init__(self, fig, fixed: dict):
        super().__init__(fixed | {SMALLEST_TEXT_KEY: None})
        self.fig = fig

    def __getitem__(self, key):
        if key == SMALLEST_TEXT_KEY:
            return f"{smallest_text_pt(self.fig):g}"
        return super().__getitem__(key)


def glue_figure(fig, label: str, *, chapter: str | None = None) -> None:
    """Save ``fig`` (:func:`save_figure`), glue the PNG's bytes under ``label``, close it; a
    reader's kernel (no ``$TRAINABLE_CHAPTER``) also displays it at the page's size."""
    from IPython.display import Image  # late: only a kernel needs them
    from matplotlib import pyplot
    from myst_nb import glue

    png = save_figure(fig, label, chapter=chapter)[1].read_bytes()
    reader = not os.environ.get(CHAPTER_VARIABLE)
    width = display_width(png) if reader else None
    glue(label, Image(data=png, format="png", width=width), display=reader)
    pyplot.close(fig)


def display_width(png: bytes) -> int:
    """The CSS px width a page shows PNG ``png`` (or its first 24 bytes) at; ValueError."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError(f"png: not the bytes of a PNG file (it starts {png[:16]!r})")
    pixels = int.from_bytes(png[16:20], "big")
    return round(pixels / PNG_DPI * 72 * DISPLAY_PX_PER_POINT)


@functools.cache
def _parser():
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")  # one parser: it caches its parses


def _glyph_sizes(text) -> list[float]:  # of the letters and digits a ``Text`` draws
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
    """The size (pt) of the smallest letter or digit (mathtext exponents included) drawn
    ``fig`` shows; ValueError if it draws no text."""
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


def _lay_out(fig) -> None:  # a layout engine lays out when drawing
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    if engine is None or isinstance(engine, PlaceHolderLayoutEngine):
        fig.tight_layout()


def _legends_below(fig) -> float:
    """Anchor each legend under its x axis (grown, it would cover curves); return the legends'
    total height in inches."""
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
    """The PNG of a copy of drawn ``fig``, :data:`PHONE_WIDTH` wide, its text scaled to
    :data:`SMALLEST_TEXT_CSS_PX` and its legends below their axes, as ``save(fig, stream,
    crop)`` writes it at ``dpi`` (``crop``: None for the whole figure, else a box in inches).
    A drawing reaching past the edge is cropped, and drawn narrower while the crop makes the
    text too small; ValueError if it stays too small."""
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
