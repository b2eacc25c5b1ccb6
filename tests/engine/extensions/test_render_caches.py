"""Tests of claimbook.extensions.render_caches: each numbered reference's target page loaded
once per build, and one sidebar per folder outside the contents."""

from __future__ import annotations

from types import SimpleNamespace

from pydata_sphinx_theme.toctree import add_toctree_functions
from sphinx.events import EventListener

from claimbook.extensions import render_caches


class Environment:
    """An environment whose pages count their loads (a fresh object per load, as Sphinx's)."""

    def __init__(self):
        self.loads = []

    def get_doctree(self, docname):
        self.loads.append(docname)
        return object()


def _lookup(domain, env, *docnames):
    """A stand-in for the numbered-reference lookup: the pages it loads, as loaded."""
    return [env.get_doctree(docname) for docname in docnames]


def test_a_page_is_loaded_once_for_every_lookup_of_a_build():
    env = Environment()
    resolve = render_caches.with_pages_loaded_once(_lookup)
    first = resolve(None, env, "a", "b", "a")
    second = resolve(None, env, "a")
    assert env.loads == ["a", "b"]
    assert first[0] is first[2] is second[0]


def test_the_environments_own_loader_is_back_after_each_lookup_even_one_that_raises():
    env = Environment()

    def failing(domain, env):
        env.get_doctree("a")
        raise ValueError("no such target")

    resolve = render_caches.with_pages_loaded_once(failing)
    try:
        resolve(None, env)
    except ValueError:
        pass
    assert "get_doctree" not in vars(env)
    env.get_doctree("a")  # the environment's own method: a load of its own
    assert env.loads == ["a", "a"]


def test_a_new_build_loads_the_pages_again():
    env = Environment()
    resolve = render_caches.with_pages_loaded_once(_lookup)
    resolve(None, env, "a")
    render_caches.forget_loaded_pages(SimpleNamespace(env=env))
    resolve(None, env, "a")
    assert env.loads == ["a", "a"]


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
    assert render_caches.pages_in_contents(book_app().env) == {
        "intro",
        "chapters/first",
        "claims",
        "chapters/first-more",
    }


def test_pages_outside_the_contents_share_one_sidebar_per_folder_and_arguments():
    drawn = []
    app = book_app()
    handler = render_caches.with_shared_sidebars(theme_handler(drawn))
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
    handler = render_caches.with_shared_sidebars(theme_handler(drawn))
    for _ in range(2):
        sidebar(handler, app, "chapters/first", "sidebar", 0, 1)  # its entry is current
        sidebar(handler, app, "chapters/first-more", "sidebar", 0, 1)
        sidebar(handler, app, "claims/c15-a-001", "raw", 0, 1)  # a mutable tree
        sidebar(handler, app, "claims/c15-a-001", "sidebar", 1, 1)  # found from the page
    assert len(drawn) == 8


def test_the_sidebars_are_forgotten_when_a_build_reads_or_ends():
    drawn = []
    app = book_app()
    handler = render_caches.with_shared_sidebars(theme_handler(drawn))
    sidebar(handler, app, "claims/c15-a-001", "sidebar", 0, 1)
    render_caches.forget_sidebars(app)
    sidebar(handler, app, "claims/c15-b-001", "sidebar", 0, 1)
    assert [page for page, *_ in drawn] == ["claims/c15-a-001", "claims/c15-b-001"]
    render_caches.forget_sidebars(app)
    render_caches.forget_sidebars(app)  # nothing drawn since: nothing to drop


def test_only_the_themes_own_listener_is_wrapped():
    def other(app, pagename, templatename, context, doctree):
        return None

    listeners = [EventListener(1, other, 500), EventListener(2, add_toctree_functions, 500)]
    app = SimpleNamespace(events=SimpleNamespace(listeners={"html-page-context": listeners}))
    # The installed theme still names its handler as this module expects.
    assert render_caches.wrap_theme_listener(app) == 1
    assert listeners[0].handler is other
    assert listeners[1].handler is not add_toctree_functions
    assert listeners[1][::2] == (2, 500)  # same id and priority: same place in the order
