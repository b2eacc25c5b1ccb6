"""What axe-core asks of the HTML the theme stack writes, mended on every page.

Each rewrite is a fixed string the stack writes, so a page that lacks it is left as it is:

- **Bibliography entries.** docutils marks each entry of a ``citation-list`` (``role="list"``)
  ``role="doc-biblioentry"``, a role ARIA 1.2 deprecates and that is not a list item, so the
  list has children it does not allow (axe: aria-required-children, critical;
  aria-deprecated-role; aria-allowed-role). Each entry becomes ``role="listitem"``.
- **Hidden code cells.** myst-nb's toggle is ``<summary aria-label="Toggle hidden content">``
  around the visible words "Show code cell source": the accessible name does not contain the
  visible label (axe: label-content-name-mismatch), so a speech user saying what they see
  cannot press it. The ``aria-label`` is dropped; the name is the visible text.
- **Tables that scroll.** pydata-sphinx-theme wraps every table in a
  ``pst-scrollable-table-container``, which scrolls sideways on a phone but cannot be reached
  from the keyboard (axe: scrollable-region-focusable). Each becomes a focusable, labelled
  region (``tabindex="0" role="region" aria-label="Table ..., scrolls sideways"``).

Examples
--------
>>> mend('<div class="citation" id="x" role="doc-biblioentry">')
'<div class="citation" id="x" role="listitem">'
>>> mend('<summary aria-label="Toggle hidden content">')
'<summary>'
>>> mend('<div class="pst-scrollable-table-container"><table class="claim-table">')[:95]
'<div class="pst-scrollable-table-container" tabindex="0" role="region" aria-label="Table 1, scr'
"""

from __future__ import annotations

import re

__all__ = ["mend", "setup"]

_TABLE_CONTAINER = re.compile(r'<div class="pst-scrollable-table-container">')


def mend(body: str) -> str:
    """The page body with the rewrites of the module docstring applied."""
    body = body.replace('role="doc-biblioentry"', 'role="listitem"')
    body = body.replace('<summary aria-label="Toggle hidden content">', "<summary>")
    count = 0

    def region(_match: re.Match) -> str:
        nonlocal count
        count += 1
        return (
            '<div class="pst-scrollable-table-container" tabindex="0" role="region" '
            f'aria-label="Table {count}, scrolls sideways">'
        )

    return _TABLE_CONTAINER.sub(region, body)


def _mend_page(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if isinstance(body, str):
        context["body"] = mend(body)


def setup(app):
    # After the theme and the claim pages have produced the body (default priority 500).
    app.connect("html-page-context", _mend_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
