"""Draw the navigation sidebar once for all the pages outside the table of contents.

The theme resolves and renders the whole table of contents for every page's sidebar, which
grows with chapters x pages. A page no toctree includes (a claim page, the search page) has
no current entry, so its sidebar depends only on its folder: the theme's function is wrapped
so that such a sidebar is drawn once per folder and build (``kind="raw"`` and calls from the
page's own subtree go to the theme). The site is byte-identical with or without this.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

THEME_LISTENER = "pydata_sphinx_theme.toctree.add_toctree_functions"
_DRAWN = "_trainable_shared_sidebars"  # on the application: key -> the sidebar's HTML


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
    # After every extension's setup: the theme connects its listener when it is loaded.
    app.connect("builder-inited", wrap_theme_listener)
    app.connect("env-updated", forget_sidebars)
    app.connect("build-finished", forget_sidebars)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
