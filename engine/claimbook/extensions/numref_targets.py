"""Resolve numbered references without unpickling their target pages again and again.

Sphinx's standard domain resolves a numbered reference (``{numref}``, "Figure 16.3",
"Section 16.6") by loading the whole doctree of the page that holds its target
(``env.get_doctree``: an unpickling) to read that one node's class and ids. A chapter page
of this book takes about 60 ms to unpickle and is the target of dozens of references, so a
render unpickled the same pages again and again: 48 loads, 2.8 of the 15.8 s a render took
under cProfile after a code edit of chapter 16.

While pages are written the stored doctrees do not change (reading is over), so here the
lookup loads each target page at most once per build and reads that copy. The copy is handed
to nothing else: only the numbered-reference lookup sees it, and it only reads a node's
class and ids. The copies are dropped when a build's reading ends and when it finishes.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from sphinx.domains.std import StandardDomain

_WRAPPED = "_trainable_numref_targets_wrapped"
# Per environment: docname -> the doctree the numbered-reference lookup loaded this build.
_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def with_pages_loaded_once(resolve: Callable) -> Callable:
    """``resolve`` (a bound-method-shaped ``(domain, env, *rest)`` function) run with an
    ``env.get_doctree`` that loads each page once per build; the environment's own method is
    restored afterwards, whatever ``resolve`` does."""

    def resolve_with_pages_loaded_once(domain, env, *rest, **options):
        loaded = _LOADED.setdefault(env, {})
        load = env.get_doctree

        def get_doctree(docname):
            if docname not in loaded:
                loaded[docname] = load(docname)
            return loaded[docname]

        env.get_doctree = get_doctree  # this instance, this call only
        try:
            return resolve(domain, env, *rest, **options)
        finally:
            del env.get_doctree

    return resolve_with_pages_loaded_once


def forget_loaded_pages(app, *_arguments) -> None:
    """Drop the pages loaded for ``app``'s environment (its pages may be read again)."""
    _LOADED.pop(app.env, None)


def setup(app):
    if not getattr(StandardDomain, _WRAPPED, False):
        StandardDomain._resolve_numref_xref = with_pages_loaded_once(
            StandardDomain._resolve_numref_xref
        )
        setattr(StandardDomain, _WRAPPED, True)
    app.connect("env-before-read-docs", forget_loaded_pages)
    app.connect("env-updated", forget_loaded_pages)
    app.connect("build-finished", forget_loaded_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
