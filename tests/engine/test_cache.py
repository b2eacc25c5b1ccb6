"""Tests of claimbook.cache: values keyed by content, emptied once per build."""

from __future__ import annotations

import pytest

from claimbook import cache


@pytest.fixture
def squares():
    store = cache.ContentCache("squares (a test)")
    store.get(cache.digest("3"), lambda: 9)
    return store


def test_a_build_empties_every_cache_at_its_start(squares):
    with cache.one_build():
        assert len(squares) == 0


def test_an_application_made_inside_a_build_keeps_the_builds_values(squares):
    with cache.one_build():
        squares.get(cache.digest("4"), lambda: 16)
        cache.reset_for_application()
        assert squares.get(cache.digest("4"), lambda: "computed again") == 16


def test_an_application_made_on_its_own_starts_empty(squares):
    cache.reset_for_application()
    assert len(squares) == 0


def test_after_a_build_an_application_empties_the_caches_again(squares):
    with pytest.raises(RuntimeError), cache.one_build():
        raise RuntimeError("a build that stops")
    squares.get(cache.digest("5"), lambda: 25)
    cache.reset_for_application()
    assert len(squares) == 0


def test_a_value_is_stored_under_what_it_was_computed_from(squares):
    assert squares.get(cache.digest("3"), lambda: "not computed") == 9
    assert squares.get(cache.digest("3 "), lambda: "computed") == "computed"


def test_nothing_is_kept_between_processes(squares, tmp_path):
    # A value lives in the process that computed it: no file anywhere holds it.
    before = {path for path in tmp_path.rglob("*")}
    squares.get(cache.digest("6"), lambda: 36)
    assert {path for path in tmp_path.rglob("*")} == before
    assert not hasattr(cache, "StoredCache")
