"""claimbook.pdf's link rewriting: the printed book's links into the site, made relative.

The PDFs here are written byte by byte, as Chromium writes its links (a literal string after
``/URI``), with an exact cross-reference table, so the tests can tell a rewrite that keeps
every byte offset from one that does not. Printing itself is the site tier's
(``tests/site/test_site.py::test_the_printed_book``).
"""

from __future__ import annotations

import io
import re

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    DictionaryObject,
    FloatObject,
    NameObject,
    TextStringObject,
)

from claimbook import pdf

PREFIX = "http://127.0.0.1:40123/html/"


def _pdf(uri_strings: list[bytes]) -> bytes:
    """A one-page PDF with a link annotation per entry of ``uri_strings`` (each the bytes of
    a literal string, parentheses included) and an exact cross-reference table."""
    annotations = " ".join(f"{4 + k} 0 R" for k in range(len(uri_strings)))
    bodies = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots [%s] >>"
        % annotations.encode(),
    ]
    for k, string in enumerate(uri_strings):
        bodies.append(
            b"<< /Type /Annot /Subtype /Link /Rect [0 %d 50 %d] /A << /S /URI /URI "
            % (10 * k, 10 * k + 8)
            + string
            + b" >> >>"
        )
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(bodies) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(bodies) + 1,
        xref,
    )
    return bytes(out)


def _offsets_hold(data: bytes) -> bool:
    """Every cross-reference entry points at ``N 0 obj`` for its own N."""
    xref = int(re.search(rb"startxref\s+(\d+)", data).group(1))
    rows = data[xref:].split(b"\n")[3:]
    for number, row in enumerate(rows, start=1):
        if not row.endswith(b" n "):
            break
        if not data[int(row[:10]) :].startswith(b"%d 0 obj" % number):
            return False
    return True


def test_links_into_the_site_become_relative_and_every_byte_offset_holds(tmp_path):
    strings = [
        f"({PREFIX}claims.html#claims-ledger)".encode(),
        f"({PREFIX}chapters/a\\(b\\).html)".encode(),  # escaped parentheses inside
        f"({PREFIX}x (y).html)".encode(),  # balanced parentheses inside
        b"(https://doi.org/10.1000/xyz)",  # another host: kept
    ]
    path = tmp_path / "book.pdf"
    path.write_bytes(_pdf(strings))
    assert _offsets_hold(path.read_bytes())
    before = len(path.read_bytes())
    pdf._relative_links(path, PREFIX, "../html/")
    data = path.read_bytes()
    assert len(data) == before and _offsets_hold(data)
    assert pdf._uris(data) == [
        "../html/claims.html#claims-ledger",
        "../html/chapters/a(b).html",
        "../html/x (y).html",
        "https://doi.org/10.1000/xyz",
    ]
    assert PREFIX.encode() not in data


def test_links_written_otherwise_are_rewritten_by_pypdf(tmp_path):
    """pypdf writes a string's punctuation as octal escapes: the prefix is not found as
    bytes, and the whole file is rewritten instead."""
    writer = PdfWriter()
    page = writer.add_blank_page(200, 200)
    action = DictionaryObject(
        {
            NameObject("/S"): NameObject("/URI"),
            NameObject("/URI"): TextStringObject(PREFIX + "intro.html"),
        }
    )
    annotation = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Annot"),
            NameObject("/Subtype"): NameObject("/Link"),
            NameObject("/Rect"): ArrayObject([FloatObject(0)] * 2 + [FloatObject(9)] * 2),
            NameObject("/A"): action,
        }
    )
    page[NameObject("/Annots")] = ArrayObject([writer._add_object(annotation)])
    stream = io.BytesIO()
    writer.write(stream)
    path = tmp_path / "book.pdf"
    path.write_bytes(stream.getvalue())
    assert PREFIX.encode() not in path.read_bytes()  # escaped, so the fast path finds nothing
    pdf._relative_links(path, PREFIX, "../html/")
    assert pdf._uris(path.read_bytes()) == ["../html/intro.html"]
    assert len(PdfReader(path).pages) == 1


def test_a_replacement_longer_than_the_prefix_is_refused(tmp_path):
    path = tmp_path / "book.pdf"
    path.write_bytes(_pdf([b"(http://a/b)"]))
    with pytest.raises(ValueError, match="longer than prefix"):
        pdf._relative_links(path, "http://a/", "../../html/")
    assert path.read_bytes() == _pdf([b"(http://a/b)"])


@pytest.mark.parametrize(
    ("data", "end"),
    [(b"(abc) x", 5), (b"(a(b)c) x", 7), (b"(a\\)b) x", 6), (b"(a\\\\) x", 5)],
)
def test_a_literal_string_ends_at_its_own_closing_parenthesis(data, end):
    assert pdf._literal_end(data, 0) == end


def test_a_literal_string_that_never_closes_is_an_error():
    with pytest.raises(ValueError, match="never closes"):
        pdf._literal_end(b"(a(b) x", 0)
