"""What a reader of a chapter page meets (issue 37, points 2 and 4), measured on the built site.

Per page of ``_build/html/chapters/``: words of prose, words about the build in that prose,
claim cards and badges in the running text, imports of the book's plumbing in code a reader
sees without a click, what a screen reader announces about the marks, and sentences that
carry more than two intervals. Run as a script (``.venv/bin/python tests/site/test_reading.py``)
it prints the table; as tests it holds each page to the limits below.

Prose is the article without code, math, heading anchors and the collapsed "Evidence" blocks
(which list a section's claims for a reader who opens them).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from claimbook import paths, sources

pytestmark = pytest.mark.site

SITE = paths.REPO_ROOT / "_build" / "html"
# A reader finishes a page in about twenty minutes (issue 37, point 4).
PAGE_WORDS = 4_000
INTERVALS_PER_SENTENCE = 2
NOT_PROSE = (
    "div.cell_input, div.cell_output, pre, div.highlight, script, style, .math, .headerlink, "
    ".toctree-wrapper, details.claim-evidence"
)
WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
# Words about how the book is built, which a chapter's prose never needs.
BUILD_WORDS = re.compile(
    r"\b(?:registered|registers?|registry|harness\w*|witness\w*|glue\w*|claim ids?|"
    r"instrumented)\b",
    re.I,
)
# An import of the book's plumbing rather than of the science a cell shows.
PLUMBING = re.compile(r"^\s*(?:from|import)\s+(?:trainable_harness\.witnesses|claimbook)\b", re.M)
# A cell whose input a reader does not see without a click (myst-nb's tags as classes).
HIDDEN_INPUT = {"tag_hide-input", "tag_hide-cell", "tag_remove-input", "tag_remove-cell"}
INTERVAL = re.compile(r"\bCI\b|^\[[^\]]+,[^\]]+\]$")
# Ends of sentences: a stop, then space and a capital or an opening bracket; not after the
# abbreviations the chapters use.
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bal)(?<!\bcf)(?<!\bvs)[.!?]\s+(?=[A-Z(\[])")


def chapter_pages() -> list[Path]:
    return sorted((SITE / "chapters").glob("*.html"))


def _article(page: Path) -> BeautifulSoup:
    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select_one(
        "article.bd-article"
    )


def _prose(page: Path) -> BeautifulSoup:
    article = _article(page)
    for element in article.select(NOT_PROSE):
        element.decompose()
    return article


def prose_words(page: Path) -> int:
    return len(WORD.findall(_prose(page).get_text(" ")))


def build_words(page: Path) -> list[str]:
    return [match.group(0) for match in BUILD_WORDS.finditer(_prose(page).get_text(" "))]


def cards_in_running_text(page: Path) -> int:
    """Claim lines and claim badges outside the collapsed Evidence blocks."""
    article = _article(page)
    cards = article.select("p.claim-line, a.claim-badge, .claim-account-refuted")
    return sum(1 for card in cards if card.find_parent("details", class_="claim-evidence") is None)


def visible_plumbing_imports(page: Path) -> int:
    found = 0
    for cell in _article(page).select("div.cell"):
        if HIDDEN_INPUT & set(cell.get("class", [])):
            continue
        for code in cell.select("div.cell_input pre"):
            found += len(PLUMBING.findall(code.get_text()))
    return found


def announcements(page: Path) -> dict[str, int]:
    """What a screen reader hears about the marks: the page's legends, and the words said at
    a number (which a number carries only when it is not a checked measurement)."""
    article = _article(page)
    numbers = article.select(".claim-value")
    return {
        "legends": len(article.select(".claim-legend")),
        "at numbers": sum(1 for number in numbers if _said(number)),
        "at checked numbers": sum(
            1
            for number in numbers
            if _said(number) and number.get("data-claim-state") in {"verified", "refuted"}
        ),
        "numbers": len(numbers),
    }


def _said(number) -> str:
    """What a screen reader hears at a number besides the number (its mark is hidden)."""
    said = number.select_one(".claim-sr")
    return "" if said is None else said.get_text().strip()


def sentences_with_many_intervals(page: Path) -> list[str]:
    """Sentences of the prose that carry more than :data:`INTERVALS_PER_SENTENCE` intervals."""
    article = _prose(page)
    for number in article.select(".claim-value"):
        shown = number.select_one(".claim-number")
        text = shown.get_text() if shown is not None else number.get_text()
        number.replace_with(" \x00 " if INTERVAL.search(text) else f" {text} ")
    long = []
    for block in article.find_all(["p", "li", "td"]):
        if block.find(["p", "li"]):  # a list item's paragraphs are counted on their own
            continue
        text = " ".join(block.get_text(" ").split())
        for sentence in SENTENCE_END.split(text):
            if sentence.count("\x00") > INTERVALS_PER_SENTENCE:
                long.append(sentence.replace("\x00", "[interval]"))
    return long


def legend_marks(page: Path) -> tuple[set[str], set[str]]:
    """The marks the page's numbers and accounts carry, and those its legend explains."""
    article = _article(page)
    carried = {mark.get_text() for mark in article.select(".claim-mark")}
    legend = article.select_one(".claim-legend")
    shown = (
        set() if legend is None else {m.get_text() for m in legend.select(".claim-legend-mark")}
    )
    return carried, shown


def measure(page: Path) -> dict:
    return {
        "prose words": prose_words(page),
        "build words": len(build_words(page)),
        "cards in text": cards_in_running_text(page),
        "plumbing imports": visible_plumbing_imports(page),
        **announcements(page),
        "long sentences": len(sentences_with_many_intervals(page)),
    }


@pytest.fixture(params=[page.name for page in chapter_pages()] or ["(no build)"])
def page(request):
    path = SITE / "chapters" / request.param
    if not path.is_file():
        pytest.fail("no chapter page: run `make` before the site checks")
    return path


def test_a_page_is_read_in_one_sitting(page):
    assert 500 < prose_words(page) <= PAGE_WORDS, f"{page.name}: split it"


def test_every_page_of_a_chapter_is_in_the_site_and_nothing_else():
    declared = set()
    for chapter in (source.stem for source in sources.chapter_sources()):
        later = sources.chapter_pages(paths.CHAPTERS_DIR / f"{chapter}.md")
        declared |= {f"{chapter}.html", *(f"{page.file}.html" for page in later)}
    assert {page.name for page in chapter_pages()} == declared


def test_the_prose_never_talks_about_the_build(page):
    assert not build_words(page), build_words(page)


def test_no_claim_card_or_badge_in_the_running_text(page):
    assert cards_in_running_text(page) == 0


def test_visible_code_shows_the_computation_not_the_plumbing(page):
    assert visible_plumbing_imports(page) == 0


def test_the_marks_are_announced_once_per_page(page):
    heard = announcements(page)
    assert heard["numbers"], f"{page.name} binds no number"
    assert heard["legends"] == 1, heard
    assert heard["at checked numbers"] == 0, heard


def test_no_sentence_carries_more_than_two_intervals(page):
    assert not sentences_with_many_intervals(page), sentences_with_many_intervals(page)


def test_the_legend_explains_every_mark_the_page_carries(page):
    carried, shown = legend_marks(page)
    assert carried and carried == shown, (carried, shown)


if __name__ == "__main__":
    rows = {page.name: measure(page) for page in chapter_pages()}
    if not rows:
        sys.exit("no chapter page: run `make` first")
    columns = list(next(iter(rows.values())))
    print("page".ljust(40) + "".join(column[:12].rjust(14) for column in columns))
    for name, row in rows.items():
        print(name.ljust(40) + "".join(str(row[column]).rjust(14) for column in columns))
    if "-v" in sys.argv:
        for page in chapter_pages():
            for sentence in sentences_with_many_intervals(page):
                print(f"{page.name}: {sentence}\n")
            print(page.name, sorted(set(build_words(page))))
