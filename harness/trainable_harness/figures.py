"""Save chapter figures as artifacts named for the number the book gives them.

A figure's number is positional, exactly as Sphinx assigns it: the chapter number is the
chapter's position in ``_toc.yml`` counted from ``trainable_first_chapter`` in ``_config.yml``
(declared once, there), and the figure number is the position of the figure's ``:name:``
among the figure directives of the chapter source. Nothing here is typed by hand, so a figure
moved in the text gets a new number and a new file, and the site build checks that the file
it links for each numbered figure exists.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import yaml

from trainable_harness import paths
from trainable_harness.claims import harness_pin
from trainable_harness.errors import TrainableError

__all__ = [
    "UnknownFigureError",
    "chapter_files",
    "chapter_number",
    "figure_labels",
    "figure_number",
    "locate_figure",
    "save_figure",
]


class UnknownFigureError(TrainableError):
    """No chapter of the table of contents has a numbered figure with this label."""


_FIGURE_DIRECTIVE = re.compile(r"^\s*(`{3,}|:{3,})\{(glue:figure|figure)\}")
_NAME_OPTION = re.compile(r"^\s*:name:\s*(\S+)\s*$")


def chapter_files() -> list[str]:
    """Chapter source stems in table-of-contents order, e.g. ``["normalization-invariance"]``."""
    toc = yaml.safe_load((paths.REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = list(toc.get("chapters", []))
    for part in toc.get("parts", []):
        entries.extend(part.get("chapters", []))
    # Other pages of the contents (the claims ledger) are not chapters.
    return [
        Path(entry["file"]).name
        for entry in entries
        if Path(entry["file"]).parent.name == "chapters"
    ]


def first_chapter_number() -> int:
    """The number of the book's first chapter, as declared in ``_config.yml``."""
    config = yaml.safe_load((paths.REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
    return int(config["sphinx"]["config"]["trainable_first_chapter"])


def chapter_number(stem: str) -> int:
    """The number the book gives the chapter whose source is ``chapters/<stem>.md``.

    Raises
    ------
    UnknownFigureError
        If the chapter is not in the table of contents.
    """
    stems = chapter_files()
    if stem not in stems:
        raise UnknownFigureError(f"chapter {stem!r} is not in _toc.yml (chapters: {stems})")
    return first_chapter_number() + stems.index(stem)


def figure_labels(source: str) -> list[str]:
    """Labels of the numbered figures in a MyST chapter source, in order of appearance.

    Examples
    --------
    >>> source = "```{glue:figure} a\\n:name: fig-a\\n```\\n```{figure} b.png\\n```"
    >>> figure_labels(source)
    ['fig-a']
    """
    labels, inside_figure = [], False
    for line in source.splitlines():
        if _FIGURE_DIRECTIVE.match(line):
            inside_figure = True
        elif inside_figure and (match := _NAME_OPTION.match(line)):
            labels.append(match.group(1))
            inside_figure = False
        elif inside_figure and not line.strip().startswith(":"):
            inside_figure = False  # options ended without a name: an unnumbered figure
    return labels


def locate_figure(label: str) -> tuple[str, str]:
    """The chapter source stem holding figure ``label`` and the figure's number.

    Raises
    ------
    UnknownFigureError
        If no chapter in the table of contents has a figure with that ``:name:``.
    """
    for stem in chapter_files():
        source = (paths.CHAPTERS_DIR / f"{stem}.md").read_text(encoding="utf-8")
        labels = figure_labels(source)
        if label in labels:
            return stem, f"{chapter_number(stem)}.{labels.index(label) + 1}"
    raise UnknownFigureError(
        f"no chapter has a figure with ':name: {label}'; save_figure needs the label of a "
        "numbered figure directive"
    )


def figure_number(label: str) -> str:
    """The number of the figure named ``label``, e.g. ``"15.1"`` (see :func:`locate_figure`)."""
    return locate_figure(label)[1]


def save_figure(fig, label: str, *, dpi: int = 150) -> Path:
    """Save ``fig`` as ``artifacts/figures/figure-<number>.png`` and return the path.

    The number comes from :func:`locate_figure`. The PNG's metadata names what made it: the
    chapter source and the harness pin (``Source``, ``Comment``); it carries no timestamp or
    software tag, so the same figure saves to the same bytes. The file is written atomically
    (a partial PNG is never left under the final name).
    """
    stem, number = locate_figure(label)
    metadata = {
        "Software": None,
        "Title": f"Figure {number} ({label})",
        "Source": f"chapters/{stem}.md",
        "Comment": f"drawn by chapters/{stem}.md with trainable_harness {harness_pin()}",
    }
    paths.FIGURES_DIR.mkdir(parents=True, exist_ok=True)
    target = paths.FIGURES_DIR / f"figure-{number}.png"
    handle, temporary = tempfile.mkstemp(dir=paths.FIGURES_DIR, prefix=".figure-", suffix=".png")
    try:
        with os.fdopen(handle, "wb") as stream:
            fig.savefig(stream, format="png", dpi=dpi, metadata=metadata)
        os.chmod(temporary, 0o644)  # mkstemp makes it private; the site serves it to anyone
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
