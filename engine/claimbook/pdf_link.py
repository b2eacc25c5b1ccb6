"""Which printed PDF of the book the site links: only one printed from the site as it is.

``make pdf`` prints the built site (``python -m book_pdf``, a tool beside the engine; a minute
or more, so ``make`` does not print it) to ``_build/pdf/book.pdf`` and records beside it, in
``book.json``, the site key it was printed from (:func:`claimbook.pipeline.site_key.site_key`
without this module's part) and the PDF's SHA-256. The PDF is *current* while both still hold.
Then, and only then, the site key includes the PDF's digest, every page's header links
``book.pdf`` and the render copies the PDF to the root of the site
(:mod:`claimbook.extensions.book_site`), so a link is never broken and never leads to a book
printed from other sources: an edit changes the site key, and the next ``make`` renders the
site without the link until ``make pdf`` prints it again.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as scratch:
...     pdf = Path(scratch) / "book.pdf"
...     _ = pdf.write_bytes(b"%PDF-1.4")
...     record(pdf, "key-a")
...     current(pdf, "key-a") == file_digest(pdf), current(pdf, "key-b")
(True, '')
"""

from __future__ import annotations

import json
from pathlib import Path

from claimbook import paths
from claimbook.atomic import write_text_atomically
from claimbook.pipeline.keys import file_digest

__all__ = ["PDF", "current", "record"]

PDF = paths.BUILD_DIR / "pdf" / "book.pdf"


def _record_path(pdf: Path) -> Path:
    return pdf.with_suffix(".json")


def record(pdf: Path, site_key: str) -> None:
    """Record that ``pdf`` was printed from the site whose key is ``site_key``."""
    text = json.dumps({"site_key": site_key, "sha256": file_digest(pdf)}, indent=1)
    write_text_atomically(_record_path(pdf), text + "\n")


def current(pdf: Path, site_key: str) -> str:
    """``pdf``'s SHA-256 if it is the one printed from the site whose key is ``site_key``,
    else "" (no PDF, no record, another site, or the file changed since)."""
    try:
        recorded = json.loads(_record_path(pdf).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if not isinstance(recorded, dict) or recorded.get("site_key") != site_key:
        return ""
    digest = file_digest(pdf) if pdf.is_file() else ""
    return digest if digest and digest == recorded.get("sha256") else ""
