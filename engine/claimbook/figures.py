"""Save chapter figures as artifacts named by their label.

A figure's artifacts are ``artifacts/figures/<label>.svg`` (vector: crisp at any zoom, what a
reader downloads or opens with a tap), ``artifacts/figures/<label>.png`` (raster at
:data:`PNG_DPI`, twice the size a page shows it at) and ``artifacts/figures/phone/<label>.png``
(the same figure drawn again for a phone's column, :mod:`claimbook.phone_figures`), where
``label`` is the ``:name:`` of the figure directive that shows it. The number Sphinx gives
the figure is Sphinx's business: no second count of the source is kept here, so a figure
moved, an unnamed figure added or a ``{figure}`` example inside a code fence can never make a
file carry the wrong number.

Each file says what drew it -- the chapter source and the harness version -- in its
metadata, and carries no date, no random id and no software tag that changes between runs, so
drawing the same figure twice writes the same bytes. Each is written atomically.

Which chapter drew a figure: the build driver names it in the environment variable
:data:`CHAPTER_VARIABLE` (``TRAINABLE_CHAPTER=<stem>``) while it executes that chapter; when
the variable is unset (a reader running the notebook by hand, Binder), the chapter is found by
reading the sources (:mod:`claimbook.sources`) for a figure directive with that label.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from claimbook import instruments, paths, sources
from claimbook.atomic import atomic_output
from claimbook.errors import ChapterSourceError, InvalidFigureLabelError, UnknownFigureError
from claimbook.phone_figures import draw_for_phone, smallest_text_pt

__all__ = [
    "CHAPTER_VARIABLE",
    "DISPLAY_PX_PER_POINT",
    "FIGURE_STYLE",
    "FIGURE_WIDTH",
    "PALETTE",
    "PNG_DPI",
    "SMALLEST_TEXT_KEY",
    "Palette",
    "chapter_files",
    "chapter_number",
    "display_width",
    "figure_files",
    "figure_labels",
    "glue_figure",
    "locate_figure",
    "phone_figure_file",
    "save_figure",
    "smallest_text_pt",
]

CHAPTER_VARIABLE = "TRAINABLE_CHAPTER"
# Figures are drawn FIGURE_WIDTH (5 in) wide and shown at the column's width, at most
# DISPLAY_PX_PER_POINT CSS px per point (576 px on a desktop, 115 per inch); a phone gets the
# figure drawn 3.4 in wide and shown about 342 CSS px wide (100 per inch). 270 dpi gives at
# least two device pixels per CSS pixel (HiDPI) at every width.
PNG_DPI = 270
FIGURE_DIRECTIVES = frozenset({"figure", "glue:figure"})


class Palette(NamedTuple):
    """The book's figure colours, one per role, the same in every chapter."""

    ink: str  # first series in every figure
    rust: str  # second series
    gold: str  # third series
    slate: str  # reference lines and annotations


PALETTE = Palette(ink="#1d3557", rust="#b5452b", gold="#c8963e", slate="#6c757d")
# Matplotlib settings every chapter applies before drawing: no top or right spine, and
# figures shown at the PNG's resolution (the page shows them at most at half their pixel
# size, so they stay sharp on HiDPI screens).
# The sizes a figure is drawn for, in one place. A reader's smallest text, a log axis's
# exponent included (mathtext draws it at 0.7 of its label), must be at least 11 CSS px at
# every width. On a desktop the page shows the figure at most DISPLAY_PX_PER_POINT CSS px per
# point (576 px for 5 in: 10 pt tick labels 16 px, beside 16 px body text, their exponents
# 11.2 px), not blown up to the column's width. A phone's column (342 CSS px at 390 px) would
# make a point 0.95 px (exponents 6.7 px): phones get another drawing
# (:func:`claimbook.phone_figures.draw_for_phone`). Panels side by side would be 2.5 in each,
# too narrow for 10 pt labels: a figure with two or three panels stacks them in rows.
FIGURE_WIDTH = 5.0
SMALLEST_FONT_PT = 10
DISPLAY_PX_PER_POINT = 1.6
# The PNG text chunk that records the smallest text of the figure, in points
# (:func:`smallest_text_pt`), which the site tier turns into CSS px at the width shown.
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


def chapter_files() -> list[str]:
    """Chapter source stems in table-of-contents order, e.g. ``["normalization-invariance"]``."""
    return [source.stem for source in sources.chapter_sources()]


def chapter_number(stem: str) -> int:
    """The number the book gives chapter ``stem`` (see :func:`sources.chapter_number`)."""
    return sources.chapter_number(stem)


def figure_labels(chapter) -> list[str]:
    """Labels (``:name:``) of the figure directives in a chapter's prose, in order.

    ``chapter`` is a :class:`~claimbook.sources.Chapter`, a path to a chapter source,
    or the MyST text of one. Figures inside code fences are examples and do not count.

    Examples
    --------
    >>> text = "```{glue:figure} a\\n:name: fig-a\\n```\\n```{figure} b.png\\n```"
    >>> figure_labels(text)
    ['fig-a']
    >>> figure_labels("````\\n```{figure} c.png\\n:name: fig-c\\n```\\n````")
    []
    """
    if isinstance(chapter, Path):
        chapter = sources.read_chapter(chapter)
    elif isinstance(chapter, str):
        import jupytext  # late: importing the harness (the build's planning) skips it

        notebook = jupytext.reads(chapter, fmt="md:myst")
        chapter = sources.Chapter(path=Path("<text>.md"), notebook=notebook)
    return [
        str(directive.options["name"])
        for directive in chapter.directives()
        if directive.name in FIGURE_DIRECTIVES and directive.options.get("name")
    ]


def _check_label(label: str) -> str:
    if not isinstance(label, str) or not _LABEL.match(label):
        raise InvalidFigureLabelError(
            f"figure label must be letters, digits, '-', '_' or '.', starting with a letter "
            f"or digit (it names the artifact file); got {label!r}"
        )
    return label


# Figure labels of the chapter sources read, keyed by the SHA-256 of the bytes they were
# parsed from: a chapter that saves seven figures parses its prose once (about 0.3 s of CPU
# a parse), and an edited source has another digest, so a stale entry is never served.
_LABELS_BY_CONTENT: dict[str, tuple[str, ...]] = {}
_LABELS_KEPT = 16  # sources whose labels are kept (a book has a few chapters)


def _source_labels(source: Path) -> tuple[str, ...]:
    """:func:`figure_labels` of the chapter source at ``source``, parsed once per content.

    The bytes read are the bytes parsed (as :func:`sources.read_chapter` parses a file: by
    its extension, then its jupytext header), so the key is the content of the parse.
    """
    data = source.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    labels = _LABELS_BY_CONTENT.get(digest)
    if labels is None:
        import jupytext  # late: importing the harness (the build's planning) skips it

        try:
            notebook = jupytext.reads(data.decode("utf-8"), fmt=source.suffix.lstrip("."))
        except Exception as exc:  # as sources.read_chapter reports it
            raise ChapterSourceError(f"{source}: jupytext cannot read it ({exc})") from exc
        labels = tuple(figure_labels(sources.Chapter(path=source, notebook=notebook)))
        if len(_LABELS_BY_CONTENT) >= _LABELS_KEPT:
            _LABELS_BY_CONTENT.clear()
        _LABELS_BY_CONTENT[digest] = labels
    return labels


def locate_figure(label: str, chapter: str | None = None) -> str:
    """The stem of the chapter whose prose has a figure directive named ``label``.

    Parameters
    ----------
    label : str
        The figure's ``:name:``.
    chapter : str, optional
        The chapter stem that drew the figure; defaults to ``$TRAINABLE_CHAPTER``. When given
        (or set), only that chapter is read; otherwise every chapter in ``_toc.yml``.

    Raises
    ------
    InvalidFigureLabelError
        If ``label`` cannot name a file.
    UnknownFigureError
        If the chapter (or no chapter) has a figure directive with ``:name: label``.
    """
    _check_label(label)
    chapter = chapter or os.environ.get(CHAPTER_VARIABLE) or None
    candidates = [chapter] if chapter else chapter_files()
    for stem in candidates:
        source = paths.CHAPTERS_DIR / f"{stem}.md"
        if source.is_file() and label in _source_labels(source):
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
    """The path of figure ``label`` drawn for a phone, ``artifacts/figures/phone/<label>.png``
    (a folder of its own: no label's file can be another's phone drawing)."""
    _check_label(label)
    return paths.FIGURES_DIR / "phone" / f"{label}.png"


def save_figure(fig, label: str, *, chapter: str | None = None) -> tuple[Path, Path]:
    """Save ``fig`` as ``artifacts/figures/<label>.svg``, ``.png`` and ``phone/<label>.png``.

    The chapter that drew it is ``chapter``, else ``$TRAINABLE_CHAPTER``, else found by label
    (:func:`locate_figure`). Metadata: title (the label), source (``chapters/<stem>.md``) and
    a description naming the harness version; no date, and SVG ids hashed from a salt fixed to
    the label, so the same figure gives the same bytes on every run. The PNG is drawn first,
    at :data:`PNG_DPI` and cropped to the drawing (``bbox_inches="tight"``); the page shows it
    (:func:`glue_figure`). Its metadata also records the figure's smallest text in points
    (:data:`SMALLEST_TEXT_KEY`, :func:`smallest_text_pt`). Then the SVG, from the figure as
    the PNG left it (a constrained layout can settle differently on a second draw, so one
    order is kept everywhere). Last, the figure drawn again for a phone
    (:func:`~claimbook.phone_figures.draw_for_phone`, :func:`phone_figure_file`), its PNG
    with the same metadata, drawn from a copy of ``fig``. Each file is replaced
    atomically, all before this returns.

    Returns
    -------
    (pathlib.Path, pathlib.Path)
        The SVG and PNG paths.

    Raises
    ------
    InvalidFigureLabelError, UnknownFigureError
        See :func:`locate_figure`; nothing is written.
    """
    files = figure_job(label, chapter)
    files.draw(fig)
    return files.svg, files.png


class FigureJob(NamedTuple):
    """The artifacts of one figure: where they go and the metadata each carries."""

    label: str
    svg: Path
    png: Path
    svg_metadata: dict
    png_metadata: dict
    source: Path  # the chapter source whose figure it is
    phone: Path  # the PNG drawn for a phone

    def draw(self, fig) -> None:
        """Write the PNG, the SVG, then the phone's PNG of ``fig`` (see :func:`save_figure`)."""
        import matplotlib  # late: only a chapter that draws needs it

        with atomic_output(self.png, "wb") as stream:
            self._save_png(fig, stream)
        with matplotlib.rc_context({"svg.hashsalt": self.label, "svg.fonttype": "path"}):
            with atomic_output(self.svg, "wb") as stream:
                fig.savefig(stream, format="svg", metadata=self.svg_metadata)
        with atomic_output(self.phone, "wb") as stream:
            stream.write(draw_for_phone(fig, self._save_png, PNG_DPI))

    def _save_png(self, fig, stream, crop="tight") -> None:
        metadata = _AfterDrawing(fig, self.png_metadata)
        fig.savefig(stream, format="png", dpi=PNG_DPI, metadata=metadata, bbox_inches=crop)


def figure_job(label: str, chapter: str | None = None) -> FigureJob:
    """The :class:`FigureJob` of figure ``label`` of ``chapter`` (see :func:`save_figure`).

    Raises
    ------
    InvalidFigureLabelError, UnknownFigureError
        See :func:`locate_figure`.
    """
    stem = locate_figure(label, chapter)
    drawn_by = f"drawn by chapters/{stem}.md with trainable_harness {instruments.version()}"
    svg, png = figure_files(label)
    svg_metadata = {
        "Title": label,
        "Source": f"chapters/{stem}.md",
        "Description": drawn_by,
        "Date": None,
        "Creator": None,
    }
    png_metadata = {
        "Software": None,
        "Title": label,
        "Source": f"chapters/{stem}.md",
        "Comment": drawn_by,
    }
    source = paths.CHAPTERS_DIR / f"{stem}.md"
    return FigureJob(label, svg, png, svg_metadata, png_metadata, source, phone_figure_file(label))


class _AfterDrawing(Mapping):
    """A PNG's metadata whose :data:`SMALLEST_TEXT_KEY` entry is read from the drawn figure.

    Tick labels exist only once a figure is drawn, and Matplotlib draws the canvas before
    it encodes the PNG with its metadata; this mapping is read at the encoding, so the entry
    is the figure's own smallest text without a drawing of its own (the tests read it back
    from the file, and :func:`smallest_text_pt` raises for a figure that draws no text).
    """

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
    """Save ``fig``'s artifacts, glue the PNG under ``label``, close the figure.

    The ``{glue:figure}`` directive named ``label`` then shows the artifact's own bytes: the
    page's image and ``artifacts/figures/<label>.png`` are one file, and the figure is drawn
    twice (SVG and PNG) rather than a third time by the notebook's display machinery. The
    glued value is not displayed in the notebook (``display=False``), and ``fig`` is closed
    so the notebook does not draw it at the end of the cell either. It returns nothing, so a
    cell that ends with it prints nothing (the files are :func:`figure_files` of ``label``).

    Raises as :func:`save_figure`; nothing is glued when it raises.
    """
    files = figure_job(label, chapter)
    files.draw(fig)
    glue_png(files)
    import matplotlib.pyplot as plt

    plt.close(fig)


def glue_png(files: FigureJob) -> None:
    """Glue the bytes of ``files.png`` under ``files.label`` (``myst_nb.glue``).

    In a build's kernel (``$TRAINABLE_CHAPTER`` set) the figure is glued only: the page shows
    it where its ``{glue:figure}`` directive stands. In a reader's kernel (Binder, JupyterLab)
    it is displayed under the cell too, so the notebook shows every figure it draws.
    """
    from IPython.display import Image  # late: as myst-nb, only a kernel needs it
    from myst_nb import glue

    png = files.png.read_bytes()
    if os.environ.get(CHAPTER_VARIABLE):
        glue(files.label, Image(data=png, format="png"), display=False)
    else:  # at the page's size, not at the PNG's twice-as-large pixels
        glue(files.label, Image(data=png, format="png", width=display_width(png)))


def display_width(png: bytes) -> int:
    """The widest, in CSS px, that a page shows the drawing ``png`` (the file's bytes, or its
    first 24): :data:`DISPLAY_PX_PER_POINT` a point of a PNG drawn at :data:`PNG_DPI`.

    Raises
    ------
    ValueError
        ``png`` does not start as a PNG file does.
    """
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError(f"png: not the bytes of a PNG file (it starts {png[:16]!r})")
    pixels = int.from_bytes(png[16:20], "big")
    return round(pixels / PNG_DPI * 72 * DISPLAY_PX_PER_POINT)
