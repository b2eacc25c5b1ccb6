"""Print the built site as one PDF with headless Chromium (``make pdf``).

Usage: ``python -m claimbook pdf [SITE_DIR] [OUTPUT_PDF]`` (defaults ``_build/html`` and
``_build/pdf/book.pdf``); needs ``make`` to have built the site and Debian's ``chromium``.

How: the landing page and the chapters (in ``_toc.yml`` order) are read from the built
site and composed into one print document -- a title page, a table of contents linking every
chapter and section, then each page's article -- served together with the site from a local
HTTP server, typeset by the site's own MathJax, and printed with Playwright's ``page.pdf``
under the site's ``@media print`` style sheet (``_static/site.css``). Because the chapters
are the site's own HTML, chapter, section, figure, equation and theorem numbers are exactly
the site's (15, 16, "Figure 15.1", ...). In the composition:

- dropdowns (proofs, answers) are opened; hidden setup code (``hide-cell`` / ``hide-input``
  blocks) is left out, outputs stay;
- element ids are prefixed per page and links between the printed pages become links inside
  the PDF;
- other links of the site (claim pages, artifacts) are kept as links relative to the PDF's
  place: ``_build/pdf/book.pdf`` links ``../html/<path>``, the built site beside it; links
  to other hosts are kept as they are;
- claim badges print as text: the claim id and its state in brackets.
"""

from __future__ import annotations

import functools
import http.server
import io
import logging
import posixpath
import re
import threading
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup

from claimbook import paths

REPO_ROOT = paths.REPO_ROOT
PRINT_PATH = "__book_print__.html"
REMOVE = (
    "details.hide",  # hidden code cells (hide-cell, hide-input): code a reader need not see
    ".tag_remove-cell",
    "a.headerlink",
    "script",
    ".toggle-button",
)


def page_order(site: Path) -> list[str]:
    """Site-relative paths of the printed pages: the landing page, then the chapters."""
    from claimbook import sources

    pages = ["intro.html"]
    for source in sources.chapter_sources(REPO_ROOT):
        # A chapter's pages follow it (claimbook.pages): its opening, then each later page.
        stems = [source.stem, *(page.file for page in sources.chapter_pages(source))]
        pages += [f"chapters/{stem}.html" for stem in stems]
    missing = [page for page in pages if not (site / page).is_file()]
    if missing:
        raise SystemExit(f"book_pdf: {', '.join(missing)} not in {site}: run `make` first")
    return pages


def _compose(site: Path, pages: list[str]) -> str:
    soups = {
        page: BeautifulSoup((site / page).read_text("utf-8"), "html.parser") for page in pages
    }
    prefix = {page: f"p{index}-" for index, page in enumerate(pages)}
    first = soups[pages[0]]
    title = first.title.get_text(strip=True).split(" — ")[0] if first.title else "Book"
    head = []
    for link in first.find_all("link", rel="stylesheet"):
        head.append(f'<link rel="stylesheet" href="{_root_relative("intro.html", link["href"])}">')
    for script in first.find_all("script"):
        if script.string and script.string.strip().startswith("window.MathJax"):
            head.append(f"<script>{script.string}</script>")
        elif script.get("src") and "mathjax" in script["src"]:
            src = _root_relative("intro.html", script["src"])
            head.append(f'<script defer src="{src}"></script>')

    articles, toc = [], []
    for page in pages:
        article = soups[page].select_one("article.bd-article")
        for selector in REMOVE:
            for element in article.select(selector):
                element.decompose()
        for details in article.find_all("details"):
            details["open"] = ""
        for toctree in article.select(".toctree-wrapper"):
            toctree.decompose()  # the landing page's contents: the PDF has its own
        for element in article.find_all(id=True):
            element["id"] = prefix[page] + element["id"]
        for element in article.find_all(["img", "source"]):
            if element.get("src"):
                element["src"] = _root_relative(page, element["src"])
        for anchor in article.find_all("a", href=True):
            anchor["href"] = _print_href(page, anchor["href"], prefix)
        # One entry per top-level heading (a chapter's later page has several: 16.6, 16.7,
        # ...), each with the sections under it.
        headings = article.find_all("h1") or [None]
        for index, h1 in enumerate(headings):
            target = f"{prefix[page]}top" if index == 0 else _section_id(h1)
            entry = f'<li><a href="#{target}">{_text(h1) if h1 else page}</a>'
            sections = [
                h2 for h2 in article.find_all("h2") if h1 is None or h2.find_previous("h1") is h1
            ]
            if sections:
                items = "".join(
                    f'<li><a href="#{_section_id(h2)}">{_text(h2)}</a></li>' for h2 in sections
                )
                entry += f"<ul>{items}</ul>"
            toc.append(entry + "</li>")
        articles.append(
            f'<section class="book-print-page" id="{prefix[page]}top">{article.decode_contents()}'
            "</section>"
        )
    stamp = first.select_one(".build-stamp")
    author = first.select_one(".bd-footer-content__inner p, .footer-item p")
    title_page = (
        '<section class="book-print-page book-title-page">'
        f"<h1 class='book-title'>{title}</h1>"
        f"<p class='book-author'>{_text(author) if author else ''}</p>"
        f"<p class='book-stamp'>{_text(stamp) if stamp else ''}</p>"
        "</section>"
    )
    contents = (
        '<nav class="book-print-page book-contents"><h1>Contents</h1>'
        f"<ul>{''.join(toc)}</ul></nav>"
    )
    style = """
      <style>
        .book-title-page { text-align: center; padding-top: 30vh; }
        .book-title { font-size: 2.4em; margin-bottom: 1em; }
        .book-contents ul { list-style: none; padding-left: 0; }
        .book-contents ul ul { padding-left: 1.5em; font-size: 0.95em; }
        .book-contents li { margin: 0.25em 0; }
        main.book-print-main { display: block; max-width: 100%; }
        .book-print-page { display: block; width: 100%; }
      </style>"""
    return (
        '<!DOCTYPE html><html lang="en" data-theme="light" data-mode="light"><head>'
        f'<meta charset="utf-8"><title>{title}</title>{"".join(head)}{style}</head>'
        f'<body class="book-print"><main class="book-print-main">'
        f"{title_page}{contents}{''.join(articles)}</main></body></html>"
    )


def _text(element) -> str:
    return " ".join(element.get_text(" ", strip=True).replace("#", "").split())


def _section_id(h2) -> str:
    section = h2.find_parent("section")
    return section["id"] if section is not None and section.get("id") else h2.get("id", "")


def _root_relative(page: str, url: str) -> str:
    """``url`` as written in ``page``, relative to the site root."""
    if urlsplit(url).scheme or url.startswith(("//", "#", "data:")):
        return url
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), url)).lstrip("./") or url


def _print_href(page: str, href: str, prefix: dict[str, str]) -> str:
    parts = urlsplit(href)
    if parts.scheme or href.startswith("//"):
        return href
    if not parts.path:  # a fragment on the same page
        return f"#{prefix[page]}{parts.fragment}" if parts.fragment else href
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), parts.path))
    if target in prefix:
        return f"#{prefix[target]}{parts.fragment or 'top'}"
    # Another file of the site (a claim page, an artifact): relative to the printed PDF.
    return "../html/" + target + (f"#{parts.fragment}" if parts.fragment else "")


# A link's action as Chromium writes it: /URI and a literal string (PDF 32000-1, 7.3.4.2).
_URI_STRING = re.compile(rb"/URI\s*\(")


def _literal_end(data: bytes, opening: int) -> int:
    """The index just past the literal string whose ``(`` is at ``data[opening]``: balanced
    parentheses may appear inside, and a backslash escapes the byte after it.

    Raises
    ------
    ValueError
        If the string never closes.
    """
    depth, index = 0, opening
    while index < len(data):
        byte = data[index]
        if byte == 0x5C:  # backslash: the next byte is escaped
            index += 2
            continue
        if byte == 0x28:
            depth += 1
        elif byte == 0x29:
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    raise ValueError(f"a literal string at byte {opening} never closes")


def _uris(data: bytes) -> list[str]:
    """Every link URI of the PDF ``data``, as pypdf reads it."""
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # see _relative_links_by_pypdf
    uris = []
    for page in PdfReader(io.BytesIO(data)).pages:
        for annotation in page.get("/Annots") or []:
            action = annotation.get_object().get("/A")
            uri = action.get("/URI") if action is not None else None
            if isinstance(uri, str):
                uris.append(uri)
    return uris


def _relative_links(pdf_path: Path, prefix: str, replacement: str) -> None:
    """Rewrite the PDF's links that start with ``prefix`` to start with ``replacement``.

    In place, byte offsets kept: each ``/URI (prefix...)`` string gives up the bytes
    ``prefix`` has beyond ``replacement`` and the same number of spaces follow it
    (whitespace between tokens), so the cross-reference table stays exact and nothing else
    of the file changes (pypdf rewrote all 24 726 objects of the book to change 307 strings:
    6 s). A link written another way (a hex string, or inside a compressed object stream,
    which Chromium does not write) is still found by pypdf afterwards: then pypdf rewrites
    the file. ``replacement`` is at most as long as ``prefix``; both are ASCII.
    """
    old, new = prefix.encode("ascii"), replacement.encode("ascii")
    if len(new) > len(old):
        raise ValueError(f"replacement {replacement!r} is longer than prefix {prefix!r}")
    data = pdf_path.read_bytes()
    pieces, done = [], 0
    for match in _URI_STRING.finditer(data):
        opening = match.end() - 1
        if not data.startswith(old, opening + 1):
            continue
        end = _literal_end(data, opening)
        pieces += [data[done : opening + 1], new, data[opening + 1 + len(old) : end]]
        pieces.append(b" " * (len(old) - len(new)))
        done = end
    pieces.append(data[done:])
    rewritten = b"".join(pieces)
    if any(uri.startswith(prefix) for uri in _uris(rewritten)):
        rewritten = _relative_links_by_pypdf(data, prefix, replacement)
    pdf_path.write_bytes(rewritten)  # the caller's temporary file, replaced when complete


def _relative_links_by_pypdf(data: bytes, prefix: str, replacement: str) -> bytes:
    """:func:`_relative_links` for any PDF: pypdf reads and writes every object."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject, TextStringObject

    # Chromium's cross-reference table is slightly off by pypdf's count; pypdf repairs it.
    logging.getLogger("pypdf").setLevel(logging.ERROR)

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    for page in writer.pages:
        for annotation in page.get("/Annots") or []:
            action = annotation.get_object().get("/A")
            uri = action.get("/URI") if action is not None else None
            if isinstance(uri, str) and uri.startswith(prefix):
                action[NameObject("/URI")] = TextStringObject(replacement + uri[len(prefix) :])
    stream = io.BytesIO()
    writer.write(stream)
    return stream.getvalue()


class _Handler(http.server.SimpleHTTPRequestHandler):
    document = b""

    def do_GET(self):
        if self.path.split("?")[0] == "/" + PRINT_PATH:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(self.document)))
            self.end_headers()
            self.wfile.write(self.document)
        else:
            super().do_GET()

    def log_message(self, *args):
        pass


def print_book(site: Path, output: Path, browser=None, before_printing=None) -> Path:
    """Write the PDF of the site at ``site`` to ``output``; returns ``output``.

    ``browser`` is a launched Playwright browser (the test suite passes its own); without it
    Debian's ``/usr/bin/chromium`` is launched. ``before_printing``, if given, is called with
    the Playwright page of the composed book once it is ready in print media, just before
    it is printed (the site tier measures the printed code blocks there); whatever it
    changes, it must undo, or the PDF shows it.
    """
    site, output = Path(site), Path(output)
    pages = page_order(site)
    handler = type("Handler", (_Handler,), {"document": _compose(site, pages).encode("utf-8")})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    output.parent.mkdir(parents=True, exist_ok=True)
    temporary = output.with_name(f".{output.name}.tmp")
    try:
        if browser is None:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                launched = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
                )
                try:
                    _print(launched, base, temporary, before_printing)
                finally:
                    launched.close()
        else:
            _print(browser, base, temporary, before_printing)
        # Links into the site were resolved against the local server: make them relative.
        _relative_links(temporary, urljoin(base, "html/"), "../html/")
        temporary.replace(output)
    finally:
        temporary.unlink(missing_ok=True)
        server.shutdown()
        server.server_close()
    return output


def _print(browser, base: str, output: Path, before_printing=None) -> None:
    page = browser.new_page()
    try:
        page.goto(base + PRINT_PATH, wait_until="networkidle")
        page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise")
        page.evaluate("MathJax.startup.promise")
        page.emulate_media(media="print")
        if before_printing is not None:
            before_printing(page)
        page.pdf(
            path=str(output),
            format="A4",
            print_background=True,
            outline=True,
            tagged=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=(
                '<div style="font-size:8px;width:100%;text-align:center;color:#555">'
                '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
            ),
            margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"},
        )
    finally:
        page.close()


def main(argv: list[str]) -> int:
    """``pdf [SITE [OUTPUT]]``: print the built site (default ``_build/html``) to a PDF."""
    site = Path(argv[0]) if len(argv) > 0 else REPO_ROOT / "_build" / "html"
    output = Path(argv[1]) if len(argv) > 1 else REPO_ROOT / "_build" / "pdf" / "book.pdf"
    path = print_book(site, output)
    from pypdf import PdfReader

    print(f"pdf: {path} ({len(PdfReader(path).pages)} pages)")
    return 0
