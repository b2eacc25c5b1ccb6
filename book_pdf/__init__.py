"""The book as one PDF, printed from the built site (``make pdf``): a tool beside the engine.

:mod:`book_pdf.document` composes the site's pages into one HTML document, and
:mod:`book_pdf.printer` prints it with headless Chromium. Which printed PDF the site links is
the engine's to decide (:mod:`claimbook.pdf_link`), since every page shows the link.
"""
