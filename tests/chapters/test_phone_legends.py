"""No legend of a figure drawn for a phone covers its data, a text or another legend.

Each chapter's code runs here, in this process, as its kernel runs it (working directory
``chapters/``), with two of its helpers replaced: ``verify_claim`` reads the artifact the
build wrote (so this is a site-tier check: it needs ``make`` to have run), and
``glue_figure`` draws the figure as the build does (once, then
:func:`claimbook.figures.draw_for_phone`) and measures the last phone drawing with
:func:`legend_overlaps.legend_overlaps`, writing nothing.
"""

from __future__ import annotations

import functools
import io
import json

import matplotlib

matplotlib.use("agg")

import matplotlib.pyplot as plt
import pytest
from legend_overlaps import legend_overlaps, legends

from claimbook import chapter, figures, paths
from claimbook.sources import read_chapter

pytestmark = [pytest.mark.site, pytest.mark.chapter_code]

CHAPTERS = sorted(paths.CHAPTERS_DIR.glob("*.md"))


def _artifact(claim_id, *_args, **_options):
    path = paths.artifact_path(claim_id)
    if not path.is_file():
        pytest.fail(f"{paths.shown(path)} is missing: run `make` before this check")
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache
def phone_overlaps(stem: str) -> dict[str, tuple[int, list[str]]]:
    """Each figure of chapter ``stem``: its number of legends and what they overlap, as
    drawn for a phone."""
    found = {}

    def measure(fig, label, *, chapter=None):
        def save(copy, stream, crop="tight"):
            copy.savefig(stream, format="png", dpi=figures.PNG_DPI, bbox_inches=crop)
            found[label] = (len(legends(copy)), legend_overlaps(copy))  # the last drawing

        save(fig, io.BytesIO())  # drawn once, as the build draws it first
        figures.draw_for_phone(fig, save, figures.PNG_DPI)
        plt.close(fig)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chapter, "verify_claim", _artifact)
        patch.setattr(chapter, "glue_figure", measure)
        patch.chdir(paths.CHAPTERS_DIR)
        namespace = {"__name__": "__main__"}
        source = read_chapter(paths.CHAPTERS_DIR / f"{stem}.md")
        for number, (_index, code, _tags) in enumerate(source.code_cells(), start=1):
            exec(compile(code, f"{stem}.md, code cell {number}", "exec"), namespace)
        plt.close("all")
    return found


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda path: path.stem)
def test_no_phone_legend_covers_data_text_or_another_legend(source):
    drawn = phone_overlaps(source.stem)
    assert drawn, f"{source.name} drew no figure"
    assert set(drawn) == set(figures.figure_labels(source))
    assert {label: overlaps for label, (_count, overlaps) in drawn.items() if overlaps} == {}
