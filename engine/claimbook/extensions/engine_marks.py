"""Only the engine draws claim marks: a page that draws one itself fails the build.

A claim mark is what tells a reader a claim's state: a badge, a bound number, the mark after
it, a sample of the legend (the classes :data:`MARK_CLASSES`: ``claim-badge``,
``claim-value``, ``claim-mark``, ``claim-legend-mark`` and a state class such as
``claim-verified``), or the ``data-claim-state`` attribute. The engine draws them from the
judged state (:mod:`claimbook.extensions.claims`, ``claim_nodes``, ``claim_ledger``) and flags
each node it makes with :data:`DRAWN` (:func:`drawn`). Any other element that carries one --
raw HTML in a page's prose, a notebook's ``text/html`` output (myst-nb makes both docutils
``raw`` nodes), a directive's ``:class:`` option -- would show a green mark for a claim the
build never judged, so each is refused in one warning naming the source file, which the
strict build turns into a failure, and the mark is written as inert text::

    chapters/x.md: raw HTML draws a claim mark (class claim-badge); only the engine draws
    claim marks

(one line). The check runs on every page Sphinx writes, after every other handler of
``doctree-resolved`` (the ledger and the legend are drawn there).
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

from claimbook.extensions.chapter_pages import chapter_docname
from claimbook.extensions.claim_pages_model import STATE_CLASSES

__all__ = ["DRAWN", "MARK_CLASSES", "drawn", "foreign_mark"]

logger = logging.getLogger(__name__)

DRAWN = "trainable-drawn-mark"  # the node attribute of a mark the engine drew
MARK_CLASSES = frozenset(
    {"claim-badge", "claim-value", "claim-mark", "claim-legend-mark", *STATE_CLASSES.values()}
)
_ATTRIBUTE = re.compile(r"\bdata-claim-state\b", re.I)


def drawn(node: nodes.Element) -> nodes.Element:
    """Flag ``node`` as a claim mark the engine drew (from a judged state); return it."""
    node[DRAWN] = True
    return node


def foreign_mark(html: str) -> str | None:
    """What in ``html`` draws a claim mark ("class claim-badge"), or None.

    >>> foreign_mark('<span class="claim-badge claim-verified">x</span>')
    'class claim-badge'
    >>> foreign_mark("<p class='claim-line'>a claim-verified word</p>") is None
    True
    """
    if "claim-" not in html and "data-claim" not in html.lower():
        return None
    from bs4 import BeautifulSoup

    for element in BeautifulSoup(html, "html.parser").find_all(True):
        classes = element.get("class") or []
        found = [name for name in classes if name in MARK_CLASSES]
        if found:
            return f"class {found[0]}"
        if any(_ATTRIBUTE.fullmatch(name) for name in element.attrs):
            return "attribute data-claim-state"
    return None


def _source(app, docname: str) -> str:
    """The file a page comes from, as the book names it (a chapter's ``.md``)."""
    srcdir = Path(app.srcdir)
    chapter = chapter_docname(app.env, docname)
    for candidate in (srcdir / f"{chapter}.md", Path(app.env.doc2path(docname))):
        if candidate.is_file():
            return candidate.relative_to(srcdir).as_posix()
    return docname


def _refuse_foreign_marks(app, doctree, docname) -> None:
    """Warn, once per page, for the first claim mark the engine did not draw; every such mark
    is written as inert text (raw HTML shown as code, a class dropped), never as a mark."""
    first = None
    for node in list(doctree.findall(nodes.Element)):
        if isinstance(node, nodes.raw):
            if "html" not in str(node.get("format", "")).split():
                continue
            what = foreign_mark(node.astext())
            if what is None:
                continue
            output = "output" in node.get("classes", [])
            kind = "an HTML output of a code cell" if output else "raw HTML"
            inert = (
                nodes.literal
                if isinstance(node.parent, nodes.TextElement)
                else nodes.literal_block
            )
            node.replace_self(inert(node.astext(), node.astext()))
        else:
            found = [name for name in node.get("classes", []) if name in MARK_CLASSES]
            if not found or node.get(DRAWN):
                continue
            what, kind = f"class {found[0]}", f"a {node.tagname} element"
            node["classes"] = [name for name in node["classes"] if name not in MARK_CLASSES]
        first = first or (kind, what)
    if first is not None:
        logger.warning(
            "%s: %s draws a claim mark (%s); only the engine draws claim marks",
            _source(app, docname),
            *first,
            type="trainable",
            subtype="claim-mark",
        )


def setup(app):
    app.connect("doctree-resolved", _refuse_foreign_marks, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
