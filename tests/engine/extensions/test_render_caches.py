"""Tests of claimbook.extensions.render_caches: each numbered reference's target page loaded
once per build."""

from __future__ import annotations

from types import SimpleNamespace

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
