"""The claim pages in the site's search index.

A claim page is no Sphinx document: :mod:`~claimbook.extensions.claim_pages` writes it at
``html-collect-pages``, and only when its inputs changed. Sphinx's index keeps only
documents and the pages it rewrites, so a claim page's entry is fed here when the page is
made (what a reader searches for: statement, account, fields, reasons; not what
:data:`NOT_SEARCHED` holds) and kept through the index's loading and last pruning when it
is not.
"""

from __future__ import annotations

from docutils import nodes
from docutils.utils import new_document

from claimbook import claims as claim_registry
from claimbook.extensions import claim_pages_model as model

__all__ = [
    "NOT_SEARCHED",
    "feed_search_index",
    "index_claim_pages",
    "keep_claim_pages_in_search_index",
    "searched_copy",
]

# The ids of a claim page's parts that are not indexed (claim_page_body): the numbers of
# its seeds, its contract, provenance and digests, and the commands that re-verify it.
NOT_SEARCHED = {"details", "re-verify"}


def searched_copy(node: nodes.Node) -> nodes.Node:
    """A deep copy of ``node`` without its parts in :data:`NOT_SEARCHED`."""
    if not isinstance(node, nodes.Element):
        return node.deepcopy()
    copied = node.copy()
    for child in node.children:
        if isinstance(child, nodes.Element) and set(child["ids"]) & NOT_SEARCHED:
            continue
        copied += searched_copy(child)
    return copied


def _claim_pagenames(app) -> set[str]:
    """The page names of every claim in the registry (``claims/<id>``)."""
    return {
        model.page_path(claim_id).removesuffix(".html")
        for claim_id in claim_registry.list_claims()
    }


def keep_claim_pages_in_search_index(app) -> None:
    """Let the claim pages' entries in the last build's search index survive its loading.

    Sphinx loads the index the last build wrote and drops every page that is not one of its
    documents and is not rewritten; a claim page is neither. The index is loaded again in
    each build, so the builder's loading is wrapped once: while it runs, the index keeps the
    pages of the registry's claims. :func:`index_claim_pages` then drops the ones that
    changed, which are indexed afresh, and those of claims no longer registered.
    """
    builder = app.builder
    if not hasattr(builder, "load_indexer"):  # not an HTML builder
        return
    load = builder.load_indexer

    def load_indexer(docnames):
        indexer = builder.indexer
        prune = indexer.prune
        claim_pages = _claim_pagenames(app)
        indexer.prune = lambda names: prune(set(names) | claim_pages)
        try:
            load(docnames)
        finally:
            indexer.prune = prune

    builder.load_indexer = load_indexer


def index_claim_pages(app, current: list[str], changed: list[tuple]) -> None:
    """Keep the unchanged claim pages' index entries; drop the changed and unregistered ones.

    Every current claim page is kept through the index's last pruning (at the end of the
    build, which drops what is not a document), fed this build or not.
    """
    indexer = getattr(app.builder, "indexer", None)
    if indexer is None:
        return
    redo = {pagename for _, pagename, _ in changed}
    current = set(current)
    # The index's pages are the keys of its titles (sphinx.search.IndexBuilder); pruning to
    # all but the changed claim pages and the unregistered ones removes their old words.
    indexed = set(indexer._titles)
    stale = {name for name in indexed if name.startswith(f"{model.CLAIM_PAGES}/")} - current
    if redo or stale:
        indexer.prune(indexed - redo - stale)
    kept = getattr(indexer, "_trainable_pages", None)
    if kept is None:
        kept = indexer._trainable_pages = set()
        prune = indexer.prune
        indexer.prune = lambda docnames: prune(set(docnames) | kept)
    kept.update(current)


def feed_search_index(app, pagename: str, title: str, body: nodes.Node) -> None:
    """Index a claim page (:func:`index_claim_pages` keeps it through the last pruning)."""
    indexer = getattr(app.builder, "indexer", None)
    if indexer is None:
        return
    # A reader searches for what a claim says (statement, account, fields, reasons), not for
    # the numbers of its seeds, its contract, provenance and raw record, which the page shows
    # and which would only make the index larger and slower to build. Only the searched
    # parts are copied (the others are most of the page: copying them cost more than
    # indexing the rest).
    document = new_document(pagename)
    document += searched_copy(body)
    indexer.feed(pagename, "", title, document)
