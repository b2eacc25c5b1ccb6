"""The book as one PDF, printed from the built site by headless Chromium (``make pdf``).

Usage: ``python -m book_pdf [SITE_DIR OUTPUT_PDF]``; without arguments the built site
``_build/html`` is printed to ``_build/pdf/book.pdf``, which the next build links from every
page (:mod:`claimbook.pdf_link`: ``make pdf`` does both). Needs Debian's ``chromium``
(:data:`CHROMIUM`) or, where there is none (a GitHub runner), the Chromium that
``python -m playwright install chromium`` puts in Playwright's own folder.

The document printed is :func:`book_pdf.document.compose`'s: a title page, the
contents, the book's pages, and an appendix with the claims ledger and every claim page, all
links resolved inside it. It is served together with the site from a local HTTP server (the
site's images, style sheets and MathJax), typeset by MathJax, and printed with Playwright's
``page.pdf`` in print media, under the site's print rules and ``_static/book-print.css``;
each page's footer carries its number.

- **Figures kept whole.** Before printing, a figure taller than a page (a stacked plot with a
  long caption) has its image scaled down until image and caption fit one page, so the
  rule that keeps them together (``break-inside: avoid``) can hold.
- **Contents with page numbers.** Chromium does not implement ``target-counter()`` in print
  (Chromium 156 prints nothing for it), so the book is printed twice. Every
  contents entry links its heading, so Chromium writes a named destination (PDF 32000-1,
  12.3.2.3) for each heading, naming its page; the numbers are read from the first printing
  with pypdf and written into the contents, whose placeholders have the width of the widest
  number, and the book is printed again. The second printing's destinations are checked to
  be the same pages.
- **Reproducible bytes.** Chromium stamps the file with the time it printed it and names
  the tagged structure's elements by DOM node numbers that vary between printings; the dates
  are set to the commit's date (the one the title page names), the node names numbered in
  order of appearance, and the file identifier set to a digest of the rest, in place, so
  printing the same site twice gives the same bytes.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import logging
import os
import re
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright
from pypdf import PdfReader

from book_pdf.document import PAGE_NUMBER_CLASS, compose
from claimbook import paths, pdf_link
from claimbook.atomic import write_bytes_atomically
from claimbook.build_stamp import build_stamp
from claimbook.pipeline.site_outcome import read_outcome, site_dir, site_key

__all__ = ["CHROMIUM", "available", "heading_pages", "main", "print_book"]

CHROMIUM = "/usr/bin/chromium"
PRINT_PATH = "__book_print__.html"
# A4 and the margins of every page, in millimetres; the text block is what is left.
PAGE_MM = (210, 297)
MARGIN_MM = {"top": 15, "bottom": 17, "left": 15, "right": 15}
_PX_PER_MM = 96 / 25.4
TEXT_WIDTH_PX = round((PAGE_MM[0] - MARGIN_MM["left"] - MARGIN_MM["right"]) * _PX_PER_MM)
TEXT_HEIGHT_PX = round((PAGE_MM[1] - MARGIN_MM["top"] - MARGIN_MM["bottom"]) * _PX_PER_MM)

# Scale each figure taller than the text block so that it fits it, caption included.
_FIT_FIGURES = """(height) => {
  for (const figure of document.querySelectorAll("figure")) {
    const image = figure.querySelector("img");
    const over = figure.getBoundingClientRect().height - height;
    if (image && over > 0) {
      const tall = image.getBoundingClientRect().height;
      image.style.maxHeight = Math.max(tall / 3, tall - over) + "px";
    }
  }
}"""
# The contents' page numbers, by the id each entry links.
_FILL_NUMBERS = """([numbers, selector]) => {
  for (const entry of document.querySelectorAll(selector)) {
    const target = entry.closest("a").getAttribute("href").slice(1);
    entry.textContent = numbers[target] ?? "";
  }
}"""
_CONTENTS_TARGETS = """(selector) => [...document.querySelectorAll(selector)]
  .map(entry => entry.closest("a").getAttribute("href").slice(1))"""


def available() -> bool:
    """Whether this machine can print the book (a Chromium is installed)."""
    with sync_playwright() as playwright:
        return _chromium(playwright) is not None


def _chromium(playwright) -> str | None:
    """Debian's ``chromium``, else Playwright's own Chromium, else None."""
    for path in (CHROMIUM, playwright.chromium.executable_path):
        if os.access(path, os.X_OK):
            return path
    return None


def heading_pages(data: bytes) -> dict[str, int]:
    """Each named destination of the PDF ``data`` to its page number (1 = the first page)."""
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # Chromium's xref counts, repaired
    reader = PdfReader(io.BytesIO(data))
    found = {}
    for name, destination in reader.named_destinations.items():
        page = reader.get_destination_page_number(destination)
        if page is not None and page >= 0:
            found[str(name).lstrip("/")] = page + 1
    return found


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
    """Print the site at ``site`` as the book's PDF, written atomically to ``output``.

    ``browser`` is a launched Playwright browser (the test suite passes its own); without it
    :data:`CHROMIUM` is launched. ``before_printing``, if given, is called with the Playwright
    page of the composed book once it is ready in print media, just before it is printed
    (the site tier measures the printed code blocks there); whatever it changes, it must
    undo, or the PDF shows it.

    Raises
    ------
    SystemExit
        If the site is not built, or the second printing moved a heading the contents name.
    """
    site, output = Path(site), Path(output)
    document = compose(site).encode("utf-8")
    handler = type("Handler", (_Handler,), {"document": document})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/{PRINT_PATH}"
    try:
        if browser is not None:
            data = _print(browser, url, before_printing)
        else:
            with sync_playwright() as playwright:
                launched = playwright.chromium.launch(
                    executable_path=_chromium(playwright), args=["--no-sandbox", "--disable-gpu"]
                )
                try:
                    data = _print(launched, url, before_printing)
                finally:
                    launched.close()
    finally:
        server.shutdown()
        server.server_close()
    write_bytes_atomically(output, _reproducible(data))
    return output


def _pdf(page) -> bytes:
    margin = {side: f"{mm}mm" for side, mm in MARGIN_MM.items()}
    return page.pdf(
        width=f"{PAGE_MM[0]}mm",
        height=f"{PAGE_MM[1]}mm",
        margin=margin,
        print_background=True,
        outline=True,
        tagged=True,
        display_header_footer=True,
        header_template="<span></span>",
        footer_template=(
            '<div style="font-size:8px;width:100%;text-align:center;color:#444">'
            '<span class="pageNumber"></span></div>'
        ),
    )


def _print(browser, url: str, before_printing=None) -> bytes:
    page = browser.new_page(viewport={"width": TEXT_WIDTH_PX, "height": TEXT_HEIGHT_PX})
    try:
        page.goto(url, wait_until="networkidle")
        page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise")
        page.evaluate("MathJax.startup.promise")
        page.emulate_media(media="print")
        page.evaluate(_FIT_FIGURES, TEXT_HEIGHT_PX)
        if before_printing is not None:
            before_printing(page)
        selector = "." + PAGE_NUMBER_CLASS
        targets = page.evaluate(_CONTENTS_TARGETS, selector)
        numbers = heading_pages(_pdf(page))
        missing = [target for target in targets if target not in numbers]
        if missing:
            raise SystemExit(f"pdf: no page found for {len(missing)} headings: {missing[:3]}")
        numbers = {target: numbers[target] for target in targets}
        page.evaluate(_FILL_NUMBERS, [numbers, selector])
        data = _pdf(page)
    finally:
        page.close()
    moved = {t: n for t, n in heading_pages(data).items() if t in numbers and numbers[t] != n}
    if moved:
        raise SystemExit(f"pdf: the page numbers moved headings when printed again: {moved}")
    return data


_NODE_ID = re.compile(rb"\(node(\d{8})\)")
_DATES = re.compile(rb"/(CreationDate|ModDate) \(D:(\d{14})([^)]*)\)")
_FILE_ID = re.compile(rb"/ID \[<([0-9A-Fa-f]+)> <([0-9A-Fa-f]+)>\]")


def _reproducible(data: bytes) -> bytes:
    """``data`` with its dates set to the commit's and its identifier a digest of the rest.

    Every replacement has the length of what it replaces, so every byte offset (the
    cross-reference table) holds.
    """
    date = build_stamp(str(paths.REPO_ROOT))["date"].replace("-", "")
    stamp = (date if re.fullmatch(r"\d{8}", date) else "19700101").encode() + b"000000"

    def dated(match):  # the zone as UTC when it has the length of +00'00'
        zone = b"+00'00'" if len(match.group(3)) == 7 else match.group(3)
        return b"/%s (D:%s%s)" % (match.group(1), stamp, zone)

    data = _DATES.sub(dated, data)
    # The structure tree names elements by Chromium's DOM node numbers, which vary from one
    # printing to the next: numbered again in order of first appearance, same width.
    numbers: dict[bytes, bytes] = {}
    data = _NODE_ID.sub(
        lambda m: b"(node%08d)" % int(numbers.setdefault(m.group(1), b"%d" % len(numbers))),
        data,
    )
    digest = hashlib.sha256(_FILE_ID.sub(b"/ID []", data)).hexdigest().upper().encode()

    def identified(match):
        first = digest[: len(match.group(1))]
        return b"/ID [<%s> <%s>]" % (first, digest[: len(match.group(2))])

    return _FILE_ID.sub(identified, data)


def main(argv: list[str]) -> int:
    """``python -m book_pdf [SITE OUTPUT]``: print the site ``SITE`` to ``OUTPUT``. Without
    arguments, print the built site ``_build/html`` to :data:`claimbook.pdf_link.PDF` and
    record the site key it was printed from, so that the next build links it from every page
    (``make pdf``)."""
    if argv:
        if len(argv) != 2:
            raise SystemExit("usage: python -m book_pdf [SITE OUTPUT]")
        path = print_book(Path(argv[0]), Path(argv[1]))
    else:
        key = site_key(with_pdf=False)
        outcome = read_outcome()
        if outcome is None or outcome.get("key") not in (key, site_key()):
            raise SystemExit("pdf: _build/html is not the site of these sources: run `make` first")
        path = print_book(site_dir(), pdf_link.PDF)
        pdf_link.record(path, key)
    print(f"pdf: {path} ({len(PdfReader(path).pages)} pages)")
    return 0
