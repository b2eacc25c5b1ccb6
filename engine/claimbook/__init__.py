"""claimbook: the engine that builds *Trainable* and checks every claim it states.

A separate package from the science the chapters import (``trainable_harness``, a plain
numpy library that knows nothing of the book): imports go one way, from the engine to the
science, which the engine reaches through the names the registry gives it (see
:mod:`claimbook.instruments`). This module imports nothing. One module per job:

- :mod:`claimbook.paths` -- every path the book uses; :mod:`claimbook.atomic` -- atomic writes.
- :mod:`claimbook.dependencies` -- the book's modules a piece of code reaches, and their
  digests (what keys are made of); :mod:`claimbook.chapter` -- the names a chapter imports.
- :mod:`claimbook.instruments` -- the instrument package, found without importing it.
- :mod:`claimbook.claims` -- the registry, claim kinds and judging, keys, artifacts, repin.
- :mod:`claimbook.sources` -- the one reader of chapter sources; :mod:`claimbook.settings`
  and :mod:`claimbook.figures` -- what chapters glue and save, and the figures' palette;
  :mod:`claimbook.listings` -- a function's own source, shown on a page.
- :mod:`claimbook.pipeline` -- the build driver: lock, keys, execution, render, publish.
- :mod:`claimbook.extensions` -- the Sphinx extensions the site is rendered with.
- :mod:`claimbook.pdf_link` -- which printed PDF the site links (``book_pdf`` prints it).
"""
