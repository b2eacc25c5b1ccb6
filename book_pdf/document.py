"""The built site composed into one HTML document to print: the book's PDF.

:mod:`book_pdf.printer` prints it.

The document is the site's own HTML, so chapter, section, figure, equation and theorem
numbers are the site's ("15.3", "Figure 15.3", "(15.5)"). In order:

1. a title page: the book's title and author, its version (the science package's
   ``__version__``, :func:`claimbook.instruments.version`, the one version the chapters pin),
   and the commit it was built from, "with uncommitted changes" only when the files differ
   from that commit (the stamp every page's footer shows,
   :func:`claimbook.build_stamp.build_stamp`);
2. the contents: every chapter, its sections, and the appendix, each with a page number
   (filled in by :mod:`book_pdf.printer` after a first printing, :data:`PAGE_NUMBER_CLASS`);
3. the landing page, then each chapter's pages in ``_toc.yml`` order;
4. an appendix: the claims ledger, then every claim page in the ledger's order.

Each printed page's article is taken whole, minus what only a screen uses (hidden setup
code, header links, buttons, the chapter chips, scripts). Element ids are prefixed per page
(``p3-``) so that they stay unique, and every link is resolved inside the document: a link to
a printed page (or a place in it) becomes a link to that place; a link to anything else of the
site (an artifact, a source file, a claim's JSON record) and a link to another host become
plain text, and such a host's address is printed after the text unless the text ends it
(a citation's "doi:10.1/x" or "arXiv:1502.03167", or the address itself). So the PDF links nothing
outside itself: it can be moved, mailed or printed, and every link still works.
"""

from __future__ import annotations

import html
import posixpath
import re
from pathlib import Path
from urllib.parse import urlsplit

from bs4 import BeautifulSoup

from claimbook import instruments, paths, sources
from claimbook.build_stamp import build_stamp

__all__ = ["PAGE_NUMBER_CLASS", "compose", "page_order"]

LEDGER = "claims.html"
CLAIM_PAGE = re.compile(r"^claims/[^/]+\.html$")
# The contents' page numbers: a placeholder of the widest number's width until they are known.
PAGE_NUMBER_CLASS = "contents-page"
STYLE_SHEET = "_static/book-print.css"
# What only a screen uses. The chips under a chapter's title (Sphinx-design badges linking to
# the landing page's key) are navigation; the claim badges stay and print as text.
REMOVE = (
    "script",
    "a.headerlink",
    "button",
    ".toggle-button",
    "details.hide",  # hidden code cells (hide-cell, hide-input): setup a reader need not see
    ".tag_remove-cell",
    ".toctree-wrapper",  # the landing page's contents: the PDF has its own
    ".figure-artifact-links",  # "Download: SVG · PNG" under a caption
    "p:has(> a.sd-badge)",
)
# Left out of the claim pages: their provenance, pages of SHA-256 digests of the code each
# claim ran (the appendix's introduction says where to find it).
REMOVE_FROM_CLAIMS = ("section#provenance",)
APPENDIX = (
    '<h1 class="appendix-title" id="appendix">Appendix: the claims</h1>'
    "<p>The claims ledger, then each claim's page as the site shows it, without its provenance "
    "(the machine, the versions and the digest of every module the claim ran), which the "
    "claim's page on the site and its record show.</p>"
)


def page_order(site: Path) -> tuple[list[str], list[str]]:
    """The printed pages, site-relative: the book's (landing page, then every chapter's pages
    in ``_toc.yml`` order) and the appendix's (the ledger, then each claim page it links, in
    its order, then any claim page it does not link, by name).

    Raises
    ------
    SystemExit
        If a page of the book is missing from ``site`` (the site was not built).
    """
    book = ["intro.html"]
    for source in sources.chapter_sources(paths.REPO_ROOT):
        # A chapter's pages follow it (claimbook.pages): its opening, then each later page.
        stems = [source.stem, *(page.file for page in sources.chapter_pages(source))]
        book += [f"chapters/{stem}.html" for stem in stems]
    missing = [page for page in [*book, LEDGER] if not (site / page).is_file()]
    if missing:
        raise SystemExit(f"pdf: {', '.join(missing)} not in {site}: run `make` first")
    ledger = BeautifulSoup((site / LEDGER).read_text("utf-8"), "html.parser")
    claims = []
    for anchor in ledger.select("article a[href]"):
        target = _resolve(LEDGER, anchor["href"])
        if target and CLAIM_PAGE.match(target) and target not in claims:
            claims.append(target)
    rest = sorted(path.relative_to(site).as_posix() for path in (site / "claims").glob("*.html"))
    claims += [page for page in rest if page not in claims]
    return book, [LEDGER, *claims]


def compose(site: Path) -> str:
    """The print document of the site at ``site`` (see the module doc), as HTML text."""
    book, appendix = page_order(site)
    pages = [*book, *appendix]
    prefix = {page: f"p{index}-" for index, page in enumerate(pages)}
    soups = {p: BeautifulSoup((site / p).read_text("utf-8"), "html.parser") for p in pages}
    articles = {page: _article(soups[page], page, prefix) for page in pages}
    for page in appendix[1:]:
        for selector in REMOVE_FROM_CLAIMS:
            for element in articles[page].select(selector.replace("#", f"#{prefix[page]}")):
                element.decompose()
    ids = {element["id"] for a in articles.values() for element in a.find_all(id=True)}
    ids |= {f"{prefix[page]}top" for page in pages}
    for article in articles.values():
        for anchor in article.select('a[href^="#"]'):
            if anchor["href"][1:] not in ids:  # a place the print leaves out
                _unlink(anchor)

    first = soups[book[0]]
    title = first.title.get_text(strip=True).split(" — ")[0] if first.title else "Book"
    contents, body, figures = [], [], []
    chapter_starts = {f"chapters/{s.stem}.html" for s in sources.chapter_sources(paths.REPO_ROOT)}
    for page in pages:
        kind = "chapter" if page in chapter_starts else "section"
        if page == book[0]:
            kind = "page"  # the landing page
        if page == LEDGER:
            body.append(APPENDIX)
            contents.append(_entry("appendix", "Appendix: the claims", "appendix"))
            kind = "ledger"
        if page in appendix and page != LEDGER:
            kind = "claim"
        contents += _contents_entries(articles[page], page, prefix, kind)
        figures += _figure_entries(articles[page])
        body.append(
            f'<section class="print-page print-{kind}" id="{prefix[page]}top">'
            f"{articles[page].decode_contents()}</section>"
        )
    head = _head(first)
    return (
        '<!DOCTYPE html><html lang="en" data-theme="light" data-mode="light"><head>'
        f'<meta charset="utf-8"><title>{html.escape(title)}</title>{head}</head>'
        '<body class="book-print"><main>'
        f"{_title_page(title, first)}"
        '<nav class="print-contents"><h1>Contents</h1>'
        f'<ol class="contents-list">{"".join(contents)}</ol>'
        f'<h2>Figures</h2><ol class="contents-list">{"".join(figures)}</ol></nav>'
        f"{''.join(body)}</main></body></html>"
    )


def _article(soup, page: str, prefix: dict[str, str]):
    article = soup.select_one("article.bd-article")
    if article is None:
        raise SystemExit(f"pdf: {page} has no article (not a page of the built site?)")
    for selector in REMOVE:
        for element in article.select(selector):
            element.decompose()
    for details in article.find_all("details"):
        details["open"] = ""  # dropdowns (proofs, answers) print open
    for element in article.find_all(id=True):
        element["id"] = prefix[page] + element["id"]
    for element in article.find_all(["img", "source"], src=True):
        element["src"] = _root_relative(page, element["src"])
    for anchor in article.find_all("a", href=True):
        href = _print_href(page, anchor["href"], prefix)
        if href is None:
            _unlink(anchor)
        else:
            anchor["href"] = href
            anchor.attrs.pop("target", None)
    return article


def _unlink(anchor) -> None:
    """``anchor`` as plain text; another host's address follows unless the text carries it."""
    url = anchor.get("href", "")
    text = anchor.get_text(" ", strip=True)
    identifier = text.split(":", 1)[-1].strip().lower()
    shown = urlsplit(url).scheme in ("http", "https") and not (
        identifier and url.lower().rstrip("/").endswith(identifier.rstrip("/"))
    )
    anchor.name = "span"
    anchor.attrs = {"class": [*anchor.get("class", []), "print-unlinked"]}
    if shown:
        anchor.append(" ")
        url_text = BeautifulSoup("", "html.parser").new_tag("span", attrs={"class": "print-url"})
        url_text.string = f"<{url}>"
        anchor.append(url_text)


def _resolve(page: str, href: str) -> str | None:
    """The site path ``href`` (written in ``page``) names, or None for another host."""
    parts = urlsplit(href)
    if parts.scheme or href.startswith("//"):
        return None
    if not parts.path:
        return page
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), parts.path))


def _print_href(page: str, href: str, prefix: dict[str, str]) -> str | None:
    """``href`` as a place in the document, or None when it leads out of it."""
    target = _resolve(page, href)
    if target not in prefix:
        return None
    fragment = urlsplit(href).fragment
    return f"#{prefix[target]}{fragment}" if fragment else f"#{prefix[target]}top"


def _root_relative(page: str, url: str) -> str:
    """``url`` as written in ``page``, relative to the site root (the document's place)."""
    if urlsplit(url).scheme or url.startswith(("//", "data:")):
        return url
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), url))


def _text(element) -> str:
    return " ".join(element.get_text(" ", strip=True).split())


def _entry(target: str, text: str, kind: str) -> str:
    return (
        f'<li class="contents-{kind}"><a href="#{target}"><span class="contents-text">'
        f'{html.escape(text)}</span><span class="{PAGE_NUMBER_CLASS}">000</span></a></li>'
    )


def _figure_entries(article) -> list[str]:
    """One entry per numbered figure: its number and caption link the figure, its page number
    the caption (which gives each caption a place of its own, ``<figure id>-caption``, so a
    figure printed apart from its caption shows in the destinations: the test suite's)."""
    entries = []
    for figure in article.select("figure[id]"):
        caption = figure.find("figcaption")
        number = caption.select_one(".caption-number") if caption else None
        if number is None:
            continue
        caption["id"] = f"{figure['id']}-caption"
        text = _text(caption)
        short = text if len(text) <= 90 else text[:87].rsplit(" ", 1)[0] + " …"
        entries.append(
            f'<li class="contents-figure"><a href="#{figure["id"]}"><span class="contents-text">'
            f'{html.escape(short)}</span></a><a href="#{caption["id"]}">'
            f'<span class="{PAGE_NUMBER_CLASS}">000</span></a></li>'
        )
    return entries


def _contents_entries(article, page: str, prefix: dict[str, str], kind: str) -> list[str]:
    """The page's headings as contents entries: a chapter's title and its sections (h2); a
    later page of a chapter, its sections (h1) and their subsections (h2); the ledger's title;
    a claim page's title alone."""
    levels = {
        "chapter": {"h1": "chapter", "h2": "h2"},
        "section": {"h1": "h2", "h2": "h3"},
        "page": {"h1": "h1", "h2": "h2"},
        "ledger": {"h1": "h2"},
        "claim": {"h1": "claim"},
    }[kind]
    entries = []
    for heading in article.find_all(list(levels)):
        # The heading itself, not its section: a section that starts at the foot of a page
        # prints its heading on the next (headings keep with what follows them).
        section = heading.find_parent("section")
        if not heading.get("id") and section is not None and section.get("id"):
            heading["id"] = f"{section['id']}-title"
        if heading.get("id"):
            entries.append(_entry(heading["id"], _text(heading), levels[heading.name]))
    return entries


def _head(first) -> str:
    """The site's style sheets, its MathJax (configuration and script), and the print sheet."""
    head = []
    for link in first.find_all("link", rel="stylesheet"):
        head.append(f'<link rel="stylesheet" href="{_root_relative("intro.html", link["href"])}">')
    for script in first.find_all("script"):
        if script.string and script.string.strip().startswith("window.MathJax"):
            head.append(f"<script>{script.string}</script>")
        elif script.get("src") and "mathjax" in script["src"]:
            source = _root_relative("intro.html", script["src"])
            head.append(f'<script defer src="{source}"></script>')
    head.append(f'<link rel="stylesheet" href="{STYLE_SHEET}">')
    return "".join(head)


def _title_page(title: str, first) -> str:
    stamp = build_stamp(str(paths.REPO_ROOT))
    author = first.select_one(".bd-footer-content__inner p, .footer-item p")
    dirty = " with uncommitted changes" if stamp["dirty"] else ""
    return (
        '<section class="print-title-page">'
        f'<h1 class="print-title">{html.escape(title)}</h1>'
        f'<p class="print-author">{html.escape(_text(author)) if author else ""}</p>'
        f'<p class="print-version">Version {html.escape(instruments.version())}</p>'
        f'<p class="print-commit">Built from commit <code>{html.escape(stamp["commit"])}</code>'
        f" ({html.escape(stamp['date'])}){dirty}.</p>"
        "</section>"
    )
