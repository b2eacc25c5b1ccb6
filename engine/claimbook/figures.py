"""Chapter figures saved as artifacts named by their label (the ``:name:`` of the directive
that shows it), in the book's one style, atomically and with no date or random id."""

from __future__ import annotations

import os
import re
from collections import namedtuple
from collections.abc import Mapping
from pathlib import Path

from claimbook import instruments, paths, sources
from claimbook.atomic import atomic_output
from claimbook.errors import InvalidFigureLabelError, UnknownFigureError
from claimbook.phone_figures import draw_for_phone, smallest_text_pt

CHAPTER_VARIABLE = "TRAINABLE_CHAPTER"
# At most DISPLAY_PX_PER_POINT CSS px a point (576 px for 5 in); 270 dpi gives at least two
# device pixels per CSS pixel (HiDPI) at every width shown.
PNG_DPI = 270
FIGURE_DIRECTIVES = frozenset({"figure", "glue:figure"})
# The book's figure colours: first, second and third series, reference lines and annotations.
Palette = namedtuple("Palette", "ink rust gold slate")
PALETTE = Palette(ink="#1d3557", rust="#b5452b", gold="#c8963e", slate="#6c757d")
# A reader's smallest text, a log axis's exponent (0.7 of its label) included, is at least
# 11 CSS px: on a desktop 10 pt is 16 px and its exponent 11.2 px; phones get another drawing.
# Two panels side by side would be too narrow for 10 pt labels: panels stack in rows.
FIGURE_WIDTH = 5.0
SMALLEST_FONT_PT = 10
DISPLAY_PX_PER_POINT = 1.6
# The PNG text chunk recording the figure's smallest text in points (:func:`smallest_text_pt`).
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


def figure_labels(chapter) -> list[str]:
    """Labels (``:name:``) of the figure directives in ``chapter`` (a
    :class:`~claimbook.sources.Chapter` or its path), in order."""
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
    """The stem of ``chapter`` (default ``$TRAINABLE_CHAPTER``, else every chapter) whose prose
    has a figure directive named ``label``; InvalidFigureLabelError for a label that cannot
    name a file, UnknownFigureError if none has it."""
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
    """``(svg, png)`` artifact paths of figure ``label`` (whether or not they exist yet)."""
    _check_label(label)
    return paths.FIGURES_DIR / f"{label}.svg", paths.FIGURES_DIR / f"{label}.png"


def phone_figure_file(label: str) -> Path:
    """``artifacts/figures/phone/<label>.png`` (a folder of its own: no clash of labels)."""
    _check_label(label)
    return paths.FIGURES_DIR / "phone" / f"{label}.png"


def save_figure(fig, label: str, *, chapter: str | None = None) -> tuple[Path, Path]:
    """Save ``fig`` as figure ``label`` of ``chapter`` (:func:`locate_figure`, raising before
    writing): the PNG (cropped; :data:`SMALLEST_TEXT_KEY` in its metadata), then the SVG of the
    figure as the PNG's drawing left it, then ``phone/<label>.png``; return ``(svg, png)``."""
    import matplotlib  # late: only a chapter that draws needs it

    stem = locate_figure(label, chapter)
    svg, png = figure_files(label)
    drawn_by = f"drawn by chapters/{stem}.md with trainable_harness {instruments.version()}"
    source = f"chapters/{stem}.md"
    png_metadata = {"Software": None, "Title": label, "Source": source, "Comment": drawn_by}

    def save_png(figure, stream, crop="tight") -> None:
        metadata = _AfterDrawing(figure, png_metadata)
        figure.savefig(stream, format="png", dpi=PNG_DPI, metadata=metadata, bbox_inches=crop)

    with atomic_output(png, "wb") as stream:
        save_png(fig, stream)
    svg_metadata = {"Title": label, "Source": source, "Description": drawn_by}
    svg_metadata |= {"Date": None, "Creator": None}
    with matplotlib.rc_context({"svg.hashsalt": label, "svg.fonttype": "path"}):
        with atomic_output(svg, "wb") as stream:
            fig.savefig(stream, format="svg", metadata=svg_metadata)
    with atomic_output(phone_figure_file(label), "wb") as stream:
        stream.write(draw_for_phone(fig, save_png, PNG_DPI))
    return svg, png


class _AfterDrawing(Mapping):
    """PNG metadata whose :data:`SMALLEST_TEXT_KEY` is read at encoding, after Matplotlib has
    drawn the figure (tick labels exist only then)."""

    def __init__(self, fig, fixed: dict):
        self._fig, self._fixed = fig, fixed

    def __getitem__(self, key):
        if key == SMALLEST_TEXT_KEY:
            return f"{smallest_text_pt(self._fig):g}"
        return self._fixed[key]

    def __iter__(self):
        return iter([*self._fixed, SMALLEST_TEXT_KEY])

    def __len__(self) -> int:
        return len(self._fixed) + 1


def glue_figure(fig, label: str, *, chapter: str | None = None) -> None:
    """Save ``fig`` (:func:`save_figure`), glue the PNG's bytes under ``label``, close it; a
    reader's kernel (no ``$TRAINABLE_CHAPTER``) also displays it at the page's size."""
    from IPython.display import Image  # late: only a kernel needs them
    from matplotlib import pyplot
    from myst_nb import glue

    png = save_figure(fig, label, chapter=chapter)[1].read_bytes()
    if os.environ.get(CHAPTER_VARIABLE):
        glue(label, Image(data=png, format="png"), display=False)
    else:
        glue(label, Image(data=png, format="png", width=display_width(png)))
    pyplot.close(fig)


def display_width(png: bytes) -> int:
    """The CSS px width a page shows the PNG ``png`` (its bytes, or the first 24) at;
    ValueError if it is no PNG."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError(f"png: not the bytes of a PNG file (it starts {png[:16]!r})")
    pixels = int.from_bytes(png[16:20], "big")
    return round(pixels / PNG_DPI * 72 * DISPLAY_PX_PER_POINT)
