"""The book's PDF (``book_pdf``, what ``make pdf`` prints), and the site's link to it.

The book is printed once per run (:func:`printed`), from the built site, with the tier's
browser; each test reads that PDF with pypdf: its text, its link annotations and its named
destinations (one per element a link of the document leads to, naming its page).
"""

from __future__ import annotations

import logging
import re
import shutil

import pytest
from bs4 import BeautifulSoup
from pypdf import PdfReader
from pypdf.generic import ArrayObject

from book_pdf import document, printer
from claimbook import claims, instruments, pdf_link, sources
from claimbook.extensions.book_site import build_stamp
from tests.site.test_site import SITE, chapter_stems, chapter_title, site_pages

pytestmark = [pytest.mark.site, pytest.mark.pdf]

# The printed text width (A4 less book_pdf.printer's margins), in CSS px at 96 px per inch.
PRINTED_BLOCKS = """() => [...document.querySelectorAll("main pre, main table")]
  .filter(element => element.offsetParent !== null)
  .map(element => ({text: element.textContent.trim().slice(0, 50), scroll: element.scrollWidth,
    client: element.clientWidth, right: element.getBoundingClientRect().right}))"""
# The whole document as one block: wider than the text, Chromium shrinks every page to fit.
DOCUMENT_WIDTH = """() => ({text: "the document", scroll: document.documentElement.scrollWidth,
  client: document.documentElement.clientWidth, right: document.documentElement.scrollWidth})"""
# A contents line: its text, then the page number.
CONTENTS_LINE = re.compile(r"^(?P<text>.*\S)\s+(?P<page>\d+)$")


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    """The book printed from the built site: its reader, each page's text, and the code
    blocks measured just before printing."""
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed: `make site-check` installs Debian's chromium")
    if not (SITE / "intro.html").exists():
        pytest.fail(f"{SITE} has no intro.html: run `make` before the site checks")
    from playwright.sync_api import sync_playwright

    blocks = []
    output = tmp_path_factory.mktemp("pdf") / "book.pdf"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            printer.print_book(
                SITE,
                output,
                browser=browser,
                before_printing=lambda page: blocks.extend(
                    [*page.evaluate(PRINTED_BLOCKS), page.evaluate(DOCUMENT_WIDTH)]
                ),
            )
        finally:
            browser.close()
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    reader = PdfReader(output)
    texts = [page.extract_text() for page in reader.pages]
    return {"path": output, "reader": reader, "texts": texts, "blocks": blocks}


def test_printed_code_and_tables_fit_the_text_width(printed):
    """Every code block, output and table wraps: none runs past the margin or hides behind a
    scroll bar that paper does not have."""
    blocks = printed["blocks"]
    assert len(blocks) > 10, len(blocks)
    too_wide = [
        f"{block['text']!r} needs {block['scroll']} px of {block['client']} "
        f"(right edge {block['right']:.0f} of {printer.TEXT_WIDTH_PX})"
        for block in blocks
        if block["scroll"] > block["client"] + 1 or block["right"] > printer.TEXT_WIDTH_PX + 1
    ]
    assert not too_wide, "\n".join(too_wide)


def test_the_title_page_names_the_version_and_the_commit(printed):
    title = _words(printed["texts"][0])
    stamp = build_stamp(str(printer.paths.REPO_ROOT))
    assert f"Version {instruments.version()}" in title
    assert f"Built from commit {stamp['commit']} ({stamp['date']})" in title
    # "with uncommitted changes" exactly when the tree has them (claimbook.build_stamp).
    assert ("uncommitted changes" in title) == bool(stamp["dirty"]), title


def _contents(printed) -> list[tuple[str, int]]:
    """The contents' entries as printed: (text, page number), lines wrapped joined again."""
    texts = printed["texts"]
    start = next(i for i, text in enumerate(texts) if text.lstrip().startswith("Contents"))
    entries, pending = [], ""
    for index in range(start, len(texts)):
        lines = texts[index].splitlines()
        if index > start and not any(CONTENTS_LINE.match(line) for line in lines[:3]):
            break  # the first page after the contents
        for line in lines:
            if line.strip() in ("Contents", "Figures") or not line.strip():
                continue
            match = CONTENTS_LINE.match(_words(pending + " " + line))
            if match and line.strip() != match.group("page"):
                entries.append((match.group("text"), int(match.group("page"))))
                pending = ""
            elif not re.fullmatch(r"\d+", line.strip()):  # not the page's own number
                pending = _words(pending + " " + line)
    return entries


def test_the_contents_give_the_page_of_every_heading(printed):
    """Each entry's number is the page its heading (or its figure's caption) is printed on."""
    entries = _contents(printed)
    texts = [_words(text) for text in printed["texts"]]
    titles = {_words(text) for text, _ in entries}
    for stem in chapter_stems():
        number = sources.chapter_number(stem)
        assert f"{number}. {chapter_title(stem)}" in titles, (stem, sorted(titles)[:10])
    claim_ids = claims.list_claims()
    assert {f"Claim {claim_id}" for claim_id in claim_ids} <= titles
    assert "Claims ledger" in titles
    wrong = []
    for text, page in entries:
        # A figure's entry is its caption, shortened: its number is on the page.
        shown = text.split(" ", 2)[:2] if text.startswith("Figure ") else [text]
        if not 1 <= page <= len(texts) or " ".join(shown) not in texts[page - 1]:
            wrong.append(f"{text!r} is not on page {page}")
    assert len(entries) > 60, entries
    assert not wrong, "\n".join(wrong[:10])


def _annotations(reader):
    for number, page in enumerate(reader.pages, start=1):
        for annotation in page.get("/Annots") or []:
            yield number, annotation.get_object()


def test_no_link_leaves_the_file(printed):
    """Every link is to a place in the PDF (a named destination it holds); none is a URI, so
    the file can move and every link still works."""
    reader = printed["reader"]
    names = {str(name).lstrip("/") for name in reader.named_destinations}
    internal, outside = 0, []
    for number, annotation in _annotations(reader):
        if annotation.get("/Subtype") != "/Link":
            continue
        action = annotation.get("/A")
        destination = annotation.get("/Dest")
        if action is not None and action.get("/S") == "/GoTo":
            destination = action.get("/D")
        if destination is None:
            outside.append(f"page {number}: {dict(action or {})}")
        elif not isinstance(destination, ArrayObject) and str(destination)[1:] not in names:
            outside.append(f"page {number}: no destination {destination}")
        else:
            internal += 1
    assert not outside, "\n".join(outside[:10])
    assert internal > 200, internal  # the contents, cross-references, badges, the ledger
    assert b"/URI" not in printed["path"].read_bytes()


def test_every_figure_is_printed_with_its_caption(printed):
    """A figure and its caption start on the same page (the contents' list of figures makes
    both a destination: ``<figure id>`` and ``<figure id>-caption``)."""
    pages = printer.heading_pages(printed["path"].read_bytes())
    captions = {name: page for name, page in pages.items() if name.endswith("-caption")}
    chapter_figures = sum(
        len(soup.select("figure[id] .caption-number"))
        for soup in (
            BeautifulSoup(path.read_text("utf-8"), "html.parser")
            for path in (SITE / "chapters").glob("*.html")
        )
    )
    assert len(captions) == chapter_figures > 5, (len(captions), chapter_figures)
    split = {
        name: (pages.get(name.removesuffix("-caption")), page)
        for name, page in captions.items()
        if pages.get(name.removesuffix("-caption")) != page
    }
    assert not split, f"figure page != caption page: {split}"


def test_the_book_is_all_there_and_no_page_is_blank(printed):
    reader, texts = printed["reader"], [_words(text) for text in printed["texts"]]
    text = " ".join(texts)
    for expected in ("Figure 15.1", "Theorem 15.1", "(15.1)", "Appendix: the claims"):
        assert expected in text, f"{expected!r} is not in the PDF"
    assert "verified" in text
    for chrome in ("Show code cell content", "Show code cell source", "Download: SVG"):
        assert chrome not in text, f"{chrome!r}: the screen's interface, printed"
    # The chips under a chapter's title (its topics and lenses) are navigation on screen.
    for stem in chapter_stems():
        soup = BeautifulSoup(
            (SITE / "chapters" / f"{stem}.html").read_text("utf-8"), "html.parser"
        )
        chips = [_words(chip.get_text()) for chip in soup.select("article a.sd-badge")]
        title = f"{sources.chapter_number(stem)}. {chapter_title(stem)}"
        opening = next(page for page in texts if title in page and "Contents" not in page)
        assert chips and not [chip for chip in chips if chip in opening], (stem, chips)
    # A page with under 80 characters of text (its number included) is a page left blank.
    blank = [n for n, page in enumerate(texts, start=1) if n > 1 and len(page) < 80]
    assert not blank, f"pages with almost nothing on them: {blank}"
    assert reader.outline, "the PDF has no outline (bookmarks)"


def test_every_page_links_the_book_pdf_only_when_the_site_carries_it():
    """The theme's ".pdf" button printed one page; it is gone. Every page links ``book.pdf``
    at the root of the site exactly when the site carries it (the PDF ``make pdf`` printed
    from this site: :mod:`claimbook.pdf_link`), so the link is never broken."""
    carried = (SITE / pdf_link.PDF.name).is_file()
    wrong = []
    for path in site_pages():
        soup = BeautifulSoup(path.read_text("utf-8"), "html.parser")
        if soup.select('[onclick="window.print()"]'):
            wrong.append(f"{path.name}: the one-page print button")
        links = [a["href"] for a in soup.select("a.btn-book-pdf-button[href]")]
        targets = {(path.parent / href).resolve() for href in links}
        if carried != (targets == {(SITE / pdf_link.PDF.name).resolve()}):
            wrong.append(f"{path.relative_to(SITE)}: links {links}, site carries it: {carried}")
    assert not wrong, "\n".join(wrong[:10])
    if carried:
        reader = PdfReader(SITE / pdf_link.PDF.name)
        assert len(reader.pages) > 60
        assert _words(reader.pages[0].extract_text()).count("Built from commit") == 1


def test_the_print_document_names_every_page_once():
    book, appendix = document.page_order(SITE)
    assert book[0] == "intro.html" and appendix[0] == document.LEDGER
    assert len(set(book + appendix)) == len(book + appendix)
    assert {f"claims/{claim_id}.html" for claim_id in claims.list_claims()} == set(appendix[1:])
