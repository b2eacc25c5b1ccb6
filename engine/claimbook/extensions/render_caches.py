"""What writing the site repeats for every page, done once per build.

A ``{numref}`` makes Sphinx load its target page's doctree (about 60 ms, dozens of times a
render); the doctrees do not change while pages are written, so each is loaded once. A page no
toctree includes (a claim page, the search page) has a sidebar that depends only on its folder,
so it is drawn once per folder. Both are dropped when reading starts or ends and when the build
ends; the site is byte-identical with or without this module.
"""

from __future__ import annotations

import posixpath
import weakref
from collections.abc import Callable

from sphinx.domains.std import StandardDomain

_WRAPPED = "_trainable_numref_targets_wrapped"
_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> {docname: doctree}
THEME_LISTENER = "pydata_sphinx_theme.toctree.add_toctree_functions"
_DRAWN = "_trainable_shared_sidebars"  # on the application: (contents, {key: sidebar HTML})


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


def pages_in_contents(env) -> frozenset[str]:
    """The root page and every page a toctree includes: the pages a sidebar can mark."""
    return frozenset({env.config.root_doc}.union(*env.toctree_includes.values()))


def with_shared_sidebars(add_toctree_functions: Callable) -> Callable:
    """The theme's ``html-page-context`` handler, whose ``generate_toctree_html`` for a page
    outside the contents is drawn once per folder and arguments (but a ``raw`` tree or a
    subtree found from the page)."""

    def add_toctree_functions_shared(app, pagename, templatename, context, doctree):
        result = add_toctree_functions(app, pagename, templatename, context, doctree)
        if not hasattr(app, _DRAWN):
            setattr(app, _DRAWN, (pages_in_contents(app.env), {}))
        contents, drawn = getattr(app, _DRAWN)
        generate = context.get("generate_toctree_html")
        if pagename in contents or generate is None:
            return result
        folder = posixpath.dirname(pagename)

        def generate_shared(kind, startdepth=1, show_nav_level=1, **kwargs):
            if kind == "raw" or startdepth != 0:
                return generate(kind, startdepth, show_nav_level, **kwargs)
            key = (folder, kind, startdepth, show_nav_level, tuple(sorted(kwargs.items())))
            if key not in drawn:
                drawn[key] = generate(kind, startdepth, show_nav_level, **kwargs)
            return drawn[key]

        context["generate_toctree_html"] = generate_shared
        return result

    return add_toctree_functions_shared


def wrap_theme_listener(app) -> int:
    """Wrap the theme's ``add_toctree_functions`` listener in place; return how many were."""
    listeners = app.events.listeners.get("html-page-context", [])
    wrapped = 0
    for index, listener in enumerate(listeners):
        handler = listener.handler
        if f"{handler.__module__}.{handler.__qualname__}" == THEME_LISTENER:
            listeners[index] = listener._replace(handler=with_shared_sidebars(handler))
            wrapped += 1
    return wrapped


def forget_sidebars(app, *_arguments) -> None:
    if hasattr(app, _DRAWN):
        delattr(app, _DRAWN)


def setup(app):
    if not getattr(StandardDomain, _WRAPPED, False):
        resolve = StandardDomain._resolve_numref_xref
        StandardDomain._resolve_numref_xref = with_pages_loaded_once(resolve)
        setattr(StandardDomain, _WRAPPED, True)
    # After every extension's setup: the theme connects its listener when it is loaded.
    app.connect("builder-inited", wrap_theme_listener)
    app.connect("env-before-read-docs", forget_loaded_pages)
    for event in ("env-updated", "build-finished"):
        app.connect(event, forget_loaded_pages)
        app.connect(event, forget_sidebars)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
