"""Tests of claimbook.cache: values keyed by content, emptied once per build."""

from __future__ import annotations

import os
import threading

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


# --- two cores ----------------------------------------------------------------------------------


def _pid_of_each(store):
    """Work that stores, for each item, the process that computed it."""

    def work(items):
        for item in items:
            store.get(cache.digest(str(item)), lambda item=item: (item * item, os.getpid()))

    return work


def test_two_cores_fill_the_cache_with_both_halves():
    store = cache.ContentCache("squares on two cores (a test)")
    items = list(range(40))
    assert cache.fill_on_two_cores(_pid_of_each(store), items, [store], least=2)
    values = {item: store.get(cache.digest(str(item)), lambda: None) for item in items}
    assert all(values[item][0] == item * item for item in items)
    here = {item for item in items if values[item][1] == os.getpid()}
    assert here == set(items[1::2])  # the other half came back from the copy


def test_a_value_already_here_is_kept():
    store = cache.ContentCache("kept values (a test)")
    store.get(cache.digest("0"), lambda: "computed here first")
    cache.fill_on_two_cores(_pid_of_each(store), list(range(8)), [store], least=2)
    assert store.get(cache.digest("0"), lambda: None) == "computed here first"


def test_a_copy_that_fails_loses_only_its_half():
    store = cache.ContentCache("a failing copy (a test)")
    parent = os.getpid()
    work = _pid_of_each(store)

    def failing_in_the_copy(items):
        if os.getpid() != parent:
            raise RuntimeError("the copy fails")
        work(items)

    assert cache.fill_on_two_cores(failing_in_the_copy, list(range(8)), [store], least=2)
    assert len(store) == 4  # this process's half; the copy's is computed on first use
    assert store.get(cache.digest("0"), lambda: "computed now") == "computed now"


def test_the_copy_writes_nothing_of_its_own(capfd):
    store = cache.ContentCache("quiet copy (a test)")
    print("buffered before the fork", end="")
    cache.fill_on_two_cores(_pid_of_each(store), list(range(8)), [store], least=2)
    print()
    assert capfd.readouterr().out.count("buffered before the fork") == 1


def test_with_another_thread_running_everything_is_computed_here():
    store = cache.ContentCache("one core (a test)")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not cache.fill_on_two_cores(_pid_of_each(store), list(range(8)), [store], least=2)
    finally:
        stop.set()
        other.join()
    assert {store.get(cache.digest(str(i)), lambda: None)[1] for i in range(8)} == {os.getpid()}


def test_few_items_are_computed_here():
    store = cache.ContentCache("few items (a test)")
    assert not cache.fill_on_two_cores(_pid_of_each(store), [1, 2], [store], least=3)
    assert len(store) == 2


def test_caches_with_the_same_name_are_refused():
    first, second = cache.ContentCache("twin (a test)"), cache.ContentCache("twin (a test)")
    with pytest.raises(ValueError, match="parameter caches"):
        cache.fill_on_two_cores(lambda items: None, list(range(8)), [first, second], least=2)


# --- kept between builds --------------------------------------------------------------------


@pytest.fixture
def stored(tmp_path, monkeypatch):
    from claimbook import paths

    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path)
    salt = ["lock and engine, version 1"]
    store = cache.StoredCache("cubes (a test)", lambda: salt[0])
    store.salt = salt  # the test changes what the values were computed with
    return store


def _files(store):
    return sorted(store._file("k").parent.glob("*.json"))


def test_a_stored_value_outlives_the_build_that_computed_it(stored):
    assert stored.get(cache.digest("3"), lambda: {"cube": 27, "of": [3.0]}) == {
        "cube": 27,
        "of": [3.0],
    }
    cache.reset()
    assert stored.get(cache.digest("3"), lambda: "computed again") == {"cube": 27, "of": [3.0]}
    assert len(_files(stored)) == 1


def test_another_salt_is_another_value(stored):
    stored.get(cache.digest("3"), lambda: 27)
    cache.reset()
    stored.salt[0] = "lock and engine, version 2"
    assert stored.get(cache.digest("3"), lambda: "computed with version 2") == (
        "computed with version 2"
    )
    assert len(_files(stored)) == 2


@pytest.mark.parametrize(
    "spoil",
    [
        lambda text: text.replace("27", "28"),  # an edited value: its digest no longer matches
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: "[]",  # not what the cache writes
        lambda text: text.replace('"key": "', '"key": "0'),  # stored under another key
    ],
)
def test_a_spoiled_file_is_computed_again_and_replaced(stored, spoil):
    key = cache.digest("3")
    stored.get(key, lambda: 27)
    (path,) = _files(stored)
    path.write_text(spoil(path.read_text()))
    cache.reset()
    assert stored.get(key, lambda: 27.0) == 27.0
    cache.reset()
    assert stored.get(key, lambda: "not computed") == 27.0


@pytest.mark.parametrize(
    "value", [(1, 2), {1: "a key that is no string"}, float("nan"), {"a": object()}]
)
def test_a_value_json_would_change_is_kept_in_this_process_only(stored, value):
    key = cache.digest("odd")
    assert stored.get(key, lambda: value) is value
    assert stored.get(key, lambda: "not computed") is value
    assert _files(stored) == []


def test_a_value_that_raised_is_stored_nowhere(stored):
    def fails():
        raise ValueError("no value")

    with pytest.raises(ValueError):
        stored.get(cache.digest("3"), fails)
    assert _files(stored) == [] and len(stored) == 0


def test_an_unwritable_folder_only_costs_the_computation(stored, tmp_path):
    (tmp_path / ".cache").write_text("a file where the folder would be")
    assert stored.get(cache.digest("3"), lambda: 27) == 27
    cache.reset()
    assert stored.get(cache.digest("3"), lambda: "computed again") == "computed again"
