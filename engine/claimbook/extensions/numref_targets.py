"""Resolve numbered references without unpickling their target pages again and again.

Sphinx resolves each ``{numref}`` by loading the target page's whole doctree (about 60 ms for
a chapter page, dozens of times a render). While pages are written the stored doctrees do not
change, so here the lookup loads each page at most once per build, into a copy only it reads;
the copies are dropped when a build's reading starts and when it ends.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from sphinx.domains.std import StandardDomain

_WRAPPED = "_trainable_numref_targets_wrapped"
# Per environment: docname -> the doctree the numbered-reference lookup loaded this build.
_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def with_pages_loaded_once(resolve: Callable) -> Callable:
    """``resolve`` (``(domain, env, *rest)``) run with an ``env.get_doctree`` that loads each
    page once per build; the environment's own method is restored afterwards."""

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
