"""What writing the site repeats for every page, done once per build.

Numbered references: Sphinx resolves each ``{numref}`` by loading the target page's whole
doctree (about 60 ms for a chapter page, dozens of times a render). The stored doctrees do not
change while pages are written, so the lookup loads each page at most once, into a copy only
it reads.

Sidebars: the theme renders the whole table of contents for every page's sidebar. A page no
toctree includes (a claim page, the search page) has no current entry, so its sidebar depends
only on its folder and is drawn once per folder (``kind="raw"`` and calls from the page's own
subtree go to the theme).

Both are dropped when a build's reading ends and when the build ends (the pages also when its
reading starts); the site is byte-identical with or without this module.
"""

from __future__ import annotations

import posixpath
import weakref
from collections.abc import Callable

from sphinx.domains.std import StandardDomain

_WRAPPED = "_trainable_numref_targets_wrapped"
# Per environment: docname -> the doctree the numbered-reference lookup loaded this build.
_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
THEME_LISTENER = "pydata_sphinx_theme.toctree.add_toctree_functions"
_DRAWN = "_trainable_shared_sidebars"  # on the application: key -> the sidebar's HTML


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


def pages_in_contents(env) -> frozenset[str]:
    """The root page and every page a toctree includes: the pages a sidebar can mark."""
    included = {env.config.root_doc}
    for children in env.toctree_includes.values():
        included.update(children)
    return frozenset(included)


def shared(generate: Callable, pagename: str, drawn: dict) -> Callable:
    """``generate`` (the theme's ``generate_toctree_html`` for ``pagename``, outside the table
    of contents) with each HTML sidebar kept in ``drawn`` by folder and arguments."""
    folder = posixpath.dirname(pagename)

    def generate_shared(kind: str, startdepth: int = 1, show_nav_level: int = 1, **kwargs):
        if kind == "raw" or startdepth != 0:  # a mutable tree; a subtree found from the page
            return generate(kind, startdepth, show_nav_level, **kwargs)
        key = (folder, kind, startdepth, show_nav_level, tuple(sorted(kwargs.items())))
        if key not in drawn:
            drawn[key] = generate(kind, startdepth, show_nav_level, **kwargs)
        return drawn[key]

    return generate_shared


def with_shared_sidebars(add_toctree_functions: Callable) -> Callable:
    """The theme's ``html-page-context`` handler, then :func:`shared` for a page outside the
    table of contents."""

    def add_toctree_functions_shared(app, pagename, templatename, context, doctree):
        result = add_toctree_functions(app, pagename, templatename, context, doctree)
        state = getattr(app, _DRAWN, None)
        if state is None:
            state = (pages_in_contents(app.env), {})
            setattr(app, _DRAWN, state)
        contents, drawn = state
        if pagename not in contents and "generate_toctree_html" in context:
            context["generate_toctree_html"] = shared(
                context["generate_toctree_html"], pagename, drawn
            )
        return result

    return add_toctree_functions_shared


def wrap_theme_listener(app) -> int:
    """Wrap the theme's ``add_toctree_functions`` listener in place; return how many were."""
    wrapped = 0
    listeners = app.events.listeners.get("html-page-context", [])
    for index, listener in enumerate(listeners):
        handler = listener.handler
        if f"{handler.__module__}.{handler.__qualname__}" == THEME_LISTENER:
            listeners[index] = listener._replace(handler=with_shared_sidebars(handler))
            wrapped += 1
    return wrapped


def forget_sidebars(app, *_arguments) -> None:
    """Drop the sidebars drawn for ``app`` (its table of contents may change)."""
    if hasattr(app, _DRAWN):
        delattr(app, _DRAWN)


def setup(app):
    if not getattr(StandardDomain, _WRAPPED, False):
        StandardDomain._resolve_numref_xref = with_pages_loaded_once(
            StandardDomain._resolve_numref_xref
        )
        setattr(StandardDomain, _WRAPPED, True)
    # After every extension's setup: the theme connects its listener when it is loaded.
    app.connect("builder-inited", wrap_theme_listener)
    app.connect("env-before-read-docs", forget_loaded_pages)
    for event in ("env-updated", "build-finished"):
        app.connect(event, forget_loaded_pages)
        app.connect(event, forget_sidebars)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
