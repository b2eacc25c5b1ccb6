"""Chapter figures are drawn for the width the page shows them at.

The book's figure style (:data:`claimbook.figures.FIGURE_STYLE`) sets every font size,
no text under :data:`~claimbook.figures.SMALLEST_FONT_PT`, for figures
:data:`~claimbook.figures.FIGURE_WIDTH` inches wide. A chapter that passes its own
``fontsize=`` or draws a wider figure shrinks its text on a phone, so neither may appear
in a chapter's code (read through :mod:`claimbook.sources`, as syntax trees); a chapter
names the width as ``FIGURE_WIDTH``, imported. The site tier measures the result on every
page at 390, 800 and 1366 px (``tests/helpers/width_checks.py``).
"""

import ast

import matplotlib as mpl
import pytest
from matplotlib.font_manager import FontProperties

from claimbook import figures, paths
from claimbook.sources import read_chapter

CHAPTERS = sorted(paths.CHAPTERS_DIR.glob("*.md"))
TEXT_SIZES = (
    "font.size",
    "axes.titlesize",
    "axes.labelsize",
    "xtick.labelsize",
    "ytick.labelsize",
    "legend.fontsize",
)


def test_the_style_sets_no_text_under_the_smallest_size():
    with mpl.rc_context(figures.FIGURE_STYLE):
        sizes = {
            key: FontProperties(size=mpl.rcParams[key]).get_size_in_points() for key in TEXT_SIZES
        }
    assert min(sizes.values()) >= figures.SMALLEST_FONT_PT, sizes
    assert figures.FIGURE_STYLE["figure.figsize"][0] == figures.FIGURE_WIDTH


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_chapter_figures_keep_the_style_sizes(path):
    found = []
    for cell, tree in read_chapter(path).code_trees():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                if keyword.arg == "fontsize":
                    found.append((cell, "fontsize"))
                if keyword.arg == "figsize":
                    width = keyword.value.elts[0]
                    if isinstance(width, ast.Name) and width.id == "FIGURE_WIDTH":
                        continue  # the style's width, imported
                    width = ast.literal_eval(width)
                    if width > figures.FIGURE_WIDTH:
                        found.append((cell, f"figsize width {width}"))
    assert found == [], f"{path.name}: text or figures sized past the book's style: {found}"
