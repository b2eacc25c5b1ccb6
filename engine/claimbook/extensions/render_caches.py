"""Each page a ``{numref}`` points to, loaded once while the site is written.

Resolving a numbered reference unpickles its target page's doctree (about 60 ms, dozens of times
a render); the doctrees do not change while pages are written, so each is loaded once, and
dropped when reading starts or ends and when the build ends.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from sphinx.domains.std import StandardDomain

_WRAPPED = "_trainable_numref_targets_wrapped"
_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> {docname: doctree}


def with_pages_loaded_once(resolve: Callable) -> Callable:
    """``resolve(domain, env, ...)`` with an ``env.get_doctree`` that loads each page once per
    build; the environment's own method is back afterwards."""

    def resolve_with_pages_loaded_once(domain, env, *rest, **options):
        loaded, load = _LOADED.setdefault(env, {}), env.get_doctree

        def get_doctree(name):
            if name not in loaded:
                loaded[name] = load(name)
            return loaded[name]

        env.get_doctree = get_doctree  # this instance, this call only
        try:
            return resolve(domain, env, *rest, **options)
        finally:
            del env.get_doctree

    return resolve_with_pages_loaded_once


def forget_loaded_pages(app, *_arguments) -> None:
    _LOADED.pop(app.env, None)


def setup(app):
    if not getattr(StandardDomain, _WRAPPED, False):
        resolve = StandardDomain._resolve_numref_xref
        StandardDomain._resolve_numref_xref = with_pages_loaded_once(resolve)
        setattr(StandardDomain, _WRAPPED, True)
    for event in ("env-before-read-docs", "env-updated", "build-finished"):
        app.connect(event, forget_loaded_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
