"""``python -m book_pdf [SITE OUTPUT]``: print the built site to one PDF (``make pdf``).

See :func:`book_pdf.printer.main`. A failure ends in one line on standard error, as the
engine's commands do (:func:`claimbook.failures.report`).
"""

from __future__ import annotations

import sys

from book_pdf.printer import main
from claimbook.failures import report

if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
    except Exception as error:
        status = report(error, "printing the book to PDF")
    raise SystemExit(status)
