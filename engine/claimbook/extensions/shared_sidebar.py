"""Draw the navigation sidebar once for all the pages outside the table of contents.

The theme (pydata-sphinx-theme, under sphinx-book-theme) draws each page's sidebar with
``generate_toctree_html``: it resolves the whole table of contents for that page, renders
it and reworks the HTML with BeautifulSoup. That costs time in proportion to the number of
chapters, on every page, so a book's render grows with chapters x pages: in a 100-chapter
generated book it was about half of the render, and more than half of that was spent on the
claim pages.

The sidebar depends on the page in two ways only: which entries are *current* (the page and
the entries that lead to it) and the links, which are relative to the page's folder. A page
no toctree includes -- a claim page, the search page, the general index -- has no current
entry, so every such page in one folder has the same sidebar. Here the theme's function is
wrapped, page by page, so that for those pages a sidebar asked for with the same arguments
is drawn once per folder and build and reused; every other call (a chapter's page, whose
entries are current; ``kind="raw"``, which returns a mutable tree) goes to the theme as
before. The site is byte-identical with or without this extension.
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
    """``generate`` (the theme's ``generate_toctree_html`` for page ``pagename``, outside the
    table of contents) with each sidebar it returns as HTML kept in ``drawn`` under the page's
    folder and the call's arguments, and served from there to the next such page."""
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
