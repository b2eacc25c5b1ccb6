"""Tests of claimbook.extensions.shared_sidebar: one sidebar per folder outside the contents."""

from __future__ import annotations

from types import SimpleNamespace

from pydata_sphinx_theme.toctree import add_toctree_functions
from sphinx.events import EventListener

from claimbook.extensions import shared_sidebar

CONTENTS = {"intro": ["chapters/first", "claims"], "chapters/first": ["chapters/first-more"]}


def book_app():
    """An application whose table of contents is :data:`CONTENTS` (root ``intro``)."""
    env = SimpleNamespace(config=SimpleNamespace(root_doc="intro"), toctree_includes=CONTENTS)
    return SimpleNamespace(env=env)


def theme_handler(drawn: list):
    """A stand-in for the theme's handler: its sidebars name the page they were drawn for."""

    def add(app, pagename, templatename, context, doctree):
        def generate_toctree_html(kind, startdepth=1, show_nav_level=1, **kwargs):
            drawn.append((pagename, kind, startdepth, kwargs))
            return f"<nav>{pagename} {kind} {startdepth} {sorted(kwargs.items())}</nav>"

        context["generate_toctree_html"] = generate_toctree_html

    return add


def sidebar(handler, app, pagename, *args, **kwargs):
    context = {}
    handler(app, pagename, "page.html", context, None)
    return context["generate_toctree_html"](*args, **kwargs)


def test_the_contents_are_the_root_and_every_page_a_toctree_includes():
    assert shared_sidebar.pages_in_contents(book_app().env) == {
        "intro",
        "chapters/first",
        "claims",
        "chapters/first-more",
    }


def test_pages_outside_the_contents_share_one_sidebar_per_folder_and_arguments():
    drawn = []
    app = book_app()
    handler = shared_sidebar.with_shared_sidebars(theme_handler(drawn))
    first = sidebar(handler, app, "claims/c15-a-001", "sidebar", 0, 1, maxdepth=4)
    assert sidebar(handler, app, "claims/c15-b-001", "sidebar", 0, 1, maxdepth=4) == first
    assert [page for page, *_ in drawn] == ["claims/c15-a-001"]  # drawn once, for both
    # Another folder (other relative links) or other arguments: drawn again.
    assert sidebar(handler, app, "search", "sidebar", 0, 1, maxdepth=4) != first
    assert sidebar(handler, app, "claims/c15-b-001", "sidebar", 0, 1, maxdepth=2) != first
    assert [page for page, *_ in drawn] == ["claims/c15-a-001", "search", "claims/c15-b-001"]


def test_pages_in_the_contents_raw_trees_and_subtrees_are_drawn_for_their_page():
    drawn = []
    app = book_app()
    handler = shared_sidebar.with_shared_sidebars(theme_handler(drawn))
    for _ in range(2):
        sidebar(handler, app, "chapters/first", "sidebar", 0, 1)  # its entry is current
        sidebar(handler, app, "chapters/first-more", "sidebar", 0, 1)
        sidebar(handler, app, "claims/c15-a-001", "raw", 0, 1)  # a mutable tree
        sidebar(handler, app, "claims/c15-a-001", "sidebar", 1, 1)  # found from the page
    assert len(drawn) == 8


def test_the_sidebars_are_forgotten_when_a_build_reads_or_ends():
    drawn = []
    app = book_app()
    handler = shared_sidebar.with_shared_sidebars(theme_handler(drawn))
    sidebar(handler, app, "claims/c15-a-001", "sidebar", 0, 1)
    shared_sidebar.forget_sidebars(app)
    sidebar(handler, app, "claims/c15-b-001", "sidebar", 0, 1)
    assert [page for page, *_ in drawn] == ["claims/c15-a-001", "claims/c15-b-001"]
    shared_sidebar.forget_sidebars(app)
    shared_sidebar.forget_sidebars(app)  # nothing drawn since: nothing to drop


def test_only_the_themes_own_listener_is_wrapped():
    def other(app, pagename, templatename, context, doctree):
        return None

    listeners = [EventListener(1, other, 500), EventListener(2, add_toctree_functions, 500)]
    app = SimpleNamespace(events=SimpleNamespace(listeners={"html-page-context": listeners}))
    # The installed theme still names its handler as this module expects.
    assert shared_sidebar.wrap_theme_listener(app) == 1
    assert listeners[0].handler is other
    assert listeners[1].handler is not add_toctree_functions
    assert listeners[1][::2] == (2, 500)  # same id and priority: same place in the order
