"""The book's PDF without a browser: links resolved inside the document, reproducible bytes,
page numbers from named destinations, and which PDF the site links.

Printing itself is the site tier's (``tests/site/test_book_pdf.py``).
"""

from __future__ import annotations

import io

from bs4 import BeautifulSoup
from pypdf import PdfReader, PdfWriter

from book_pdf import document, printer
from claimbook import pdf_link

PREFIX = {"intro.html": "p0-", "chapters/a.html": "p1-", "claims/c-1.html": "p2-"}


def test_links_to_printed_pages_become_places_in_the_document():
    href = document._print_href
    assert href("chapters/a.html", "#eq-1", PREFIX) == "#p1-eq-1"
    assert href("chapters/a.html", "../claims/c-1.html", PREFIX) == "#p2-top"
    assert href("chapters/a.html", "../intro.html#chip-ns", PREFIX) == "#p0-chip-ns"
    assert href("claims/c-1.html", "../chapters/a.html#s", PREFIX) == "#p1-s"


def test_links_out_of_the_document_are_none():
    href = document._print_href
    for target in (
        "../artifacts/figures/fig.svg",  # a file of the site that is not printed
        "c-1.json",
        "../_sources/chapters/a.ipynb",
        "https://doi.org/10.1/x",
        "//example.org/x",
        "mailto:someone@example.org",
    ):
        assert href("claims/c-1.html", target, PREFIX) is None, target


def _unlinked(markup: str) -> str:
    soup = BeautifulSoup(markup, "html.parser")
    document._unlink(soup.a)
    return str(soup)


def test_an_address_is_printed_unless_the_text_carries_it():
    doi = _unlinked('<a class="reference" href="https://doi.org/10.1/xy">doi:10.1/xy</a>')
    assert doi == '<span class="reference print-unlinked">doi:10.1/xy</span>'
    named = _unlinked('<a href="https://github.com/pytorch/pytorch/tree/v2">pytorch</a>')
    assert "&lt;https://github.com/pytorch/pytorch/tree/v2&gt;" in named
    assert "<a" not in named
    local = _unlinked('<a href="c-1.json">the record</a>')  # a site file: text alone
    assert local == '<span class="print-unlinked">the record</span>'


def _chromium_like(
    creation: bytes, file_id: bytes, nodes: tuple[int, int] = (9801, 9802)
) -> bytes:
    """A PDF written as Chromium writes one: dates in the information dictionary, structure
    elements named by DOM node numbers, and an identifier in the trailer, with an exact
    cross-reference table."""
    bodies = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
        b"<< /Producer (Skia/PDF m131) /CreationDate (D:%s+00'00') /ModDate (D:%s+00'00') >>"
        % (creation, creation),
        b"<< /Type /StructElem /ID (node%08d) >>" % nodes[0],
        b"<< /Type /StructElem /ID (node%08d) /Headers [(node%08d)] >>" % (nodes[1], nodes[0]),
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 7\n0000000000 65535 f \n"
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size 7 /Root 1 0 R /Info 4 0 R /ID [<%s> <%s>] >>\n" % (
        file_id,
        file_id,
    )
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def test_two_printings_of_one_site_give_the_same_bytes():
    first = _chromium_like(b"20261205142233", b"0123456789ABCDEF0123456789ABCDEF")
    second = _chromium_like(
        b"20261205150001", b"FEDCBA9876543210FEDCBA9876543210", nodes=(9803, 9810)
    )
    assert first != second
    made = printer._reproducible(first)
    assert made == printer._reproducible(second)
    assert len(made) == len(first)  # every byte offset holds
    # Node names numbered by first appearance; a reference follows its element.
    assert b"/ID (node00000000) /Headers [(node00000001)]" not in made
    assert b"/ID (node00000001) /Headers [(node00000000)]" in made
    info = PdfReader(io.BytesIO(made)).metadata
    date = printer.build_stamp(str(printer.paths.REPO_ROOT))["date"].replace("-", "")
    assert info["/CreationDate"].startswith(f"D:{date}000000")
    # Another document (another page size here) gets another identifier.
    other = printer._reproducible(first.replace(b"200 200", b"300 300"))
    assert other[-120:] != made[-120:]


def test_heading_pages_reads_the_named_destinations():
    writer = PdfWriter()
    for _ in range(3):
        writer.add_blank_page(100, 100)
    writer.add_named_destination("p1-top", 0)
    writer.add_named_destination("p4-fig-a-caption", 2)
    stream = io.BytesIO()
    writer.write(stream)
    assert printer.heading_pages(stream.getvalue()) == {"p1-top": 1, "p4-fig-a-caption": 3}


def test_the_site_links_only_the_pdf_printed_from_it(tmp_path):
    book = tmp_path / "book.pdf"
    assert pdf_link.current(book, "key") == ""  # nothing printed
    book.write_bytes(b"%PDF-1.4 one")
    assert pdf_link.current(book, "key") == ""  # printed, not recorded
    pdf_link.record(book, "key")
    digest = pdf_link.current(book, "key")
    assert len(digest) == 64
    assert pdf_link.current(book, "another key") == ""  # the site changed since
    book.write_bytes(b"%PDF-1.4 two")
    assert pdf_link.current(book, "key") == ""  # the file changed since
    book.with_suffix(".json").write_text("not json")
    assert pdf_link.current(book, "key") == ""
