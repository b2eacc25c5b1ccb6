"""The engine's caches: one rule, one helper, one reset.

The rule: a cached value is stored under the SHA-256 of every byte it was computed from --
the files it read and the text of its other inputs (:func:`digest`) -- never under a file's
name, size, inode or modification time. An edited file is therefore never served the old
value, whatever the filesystem says about it (a same-size edit with its old time restored
included), and an unchanged one costs a read and a hash. Every cache is emptied at the start
of each build (:func:`reset`, which the build driver and the claims command line call, and
:func:`reset_for_application` when a Sphinx application is made outside a driver build), so
a long-lived process keeps the values of one build at most. The driver's render is part of
its build (:func:`one_build`): the registry entries it validated and the judgements it made
while planning are the render's too, still keyed by the bytes they came from.

The caches, each a :class:`ContentCache`:

- ``registry entries`` (:mod:`claimbook.claims.registry`): a validated ``claims/<id>.yaml``,
  by its name and bytes (a :class:`StoredCache`, see below);
- ``harness modules`` (:mod:`claimbook.claims.keys`): a parsed instrument module (and the
  digests of its functions), by its bytes;
- ``judgements`` (:mod:`claimbook.claims.judgement`): whether a current artifact agrees with its
  own stored result, by the bytes of the registry entry and of the artifact (whose key,
  found current first, covers the functions it ran, the lock and the engine);
- ``glue checks`` (:mod:`claimbook.settings`): the results a chapter pastes with plain glue,
  by the chapter source's bytes.

A :class:`StoredCache` also keeps its values between builds, one JSON file a value in
``_build/.cache/<name>/``, named by the digest of its key and of the environment that computed
it (the lock, Python and the engine: :func:`claimbook.claims.keys.environment_digest`). The
same rule holds: an edited input is another key, so it is never served the old value. Only
``registry entries`` is stored so: validating a registry file (PyYAML, then the JSON schema)
costs about 7 ms, and every build, and every process that computes a claim, validates every
entry again (125 files: 0.7 s of a 100-chapter book's prose edit).

:func:`fill_on_two_cores` fills caches with half the work done in a forked copy of the
process: only values the copy stored under its own content keys come back, so a value is
exactly what this process would have computed from the same bytes (a file changed in
between is read again here, under another key, and computed again).

Examples
--------
>>> squares = ContentCache("squares (an example)")
>>> squares.get(digest("3"), lambda: 3 * 3)
9
>>> squares.get(digest("3"), lambda: "not computed again")
9
>>> reset()
>>> squares.get(digest("3"), lambda: "computed again after a reset")
'computed again after a reset'
>>> digest("ab", "c") == digest("a", "bc")
False
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

__all__ = [
    "ContentCache",
    "StoredCache",
    "digest",
    "file_bytes",
    "fill_on_two_cores",
    "one_build",
    "reset",
    "reset_for_application",
    "stored_root",
]

T = TypeVar("T")
_CACHES: weakref.WeakSet[ContentCache] = weakref.WeakSet()
_BUILDS_RUNNING = [0]  # driver builds running in this process (one, or none)


def digest(*parts: bytes | str | None) -> str:
    """SHA-256 over ``parts``, each with its length (``("ab", "c")`` and ``("a", "bc")`` differ).

    A part is bytes, text (UTF-8) or None (an absent file, distinct from an empty one).
    """
    hasher = hashlib.sha256()
    for part in parts:
        if part is None:
            hasher.update(b"-\0")
            continue
        data = part.encode("utf-8") if isinstance(part, str) else bytes(part)
        hasher.update(f"{len(data)}\0".encode())
        hasher.update(data)
    return hasher.hexdigest()


def file_bytes(path: str | Path) -> bytes | None:
    """The bytes of a regular file, or None when it is absent or cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


class ContentCache:
    """Values keyed by :func:`digest` of what they were computed from; emptied by :func:`reset`.

    A cached value is shared by every caller: one that needs to change it copies it first.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._values: dict[str, object] = {}
        _CACHES.add(self)

    def get(self, key: str, compute: Callable[[], T]) -> T:
        """The value stored under ``key``, computing and storing it on a miss.

        An exception raised by ``compute`` is not stored: the next call computes again.
        """
        try:
            return self._values[key]  # type: ignore[return-value]
        except KeyError:
            value = self._values[key] = compute()
            return value

    def clear(self) -> None:
        self._values.clear()

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"<ContentCache {self.name!r}: {len(self)} values>"


def stored_root() -> Path:
    """The folder of the values kept between builds: ``<build dir>/.cache``."""
    from claimbook import paths

    return paths.BUILD_DIR / ".cache"


class StoredCache(ContentCache):
    """A :class:`ContentCache` whose values are also kept between builds, as JSON files.

    ``salt()`` names what else decides a value than the bytes its key covers (the code that
    computes it, the libraries it uses); a value is stored in
    ``<build dir>/.cache/<name>/<digest of salt and key>.json`` with its key and its own
    digest, and read back only when both match and the file parses: a file cut short, edited
    or left by other code is a miss, computed again and replaced (atomically). A value that
    JSON would not give back equal (a tuple, a key that is not a string, a NaN) is kept in
    this process only. The folder is a build product: ``make clean`` empties it.
    """

    def __init__(self, name: str, salt: Callable[[], str]) -> None:
        super().__init__(name)
        self._salt = salt

    def _file(self, key: str) -> Path:
        folder = "-".join(self.name.split())
        return stored_root() / folder / f"{digest(self._salt(), key)}.json"

    def holds(self, key: str) -> bool:
        """Whether a value for ``key`` is at hand without computing it: in this process, or
        in a file (which :meth:`get` may still find unusable, and then compute again)."""
        return key in self._values or self._file(key).is_file()

    def get(self, key: str, compute: Callable[[], T]) -> T:
        """The value stored under ``key`` in this process, else in its file, else computed.

        An exception raised by ``compute`` is stored nowhere.
        """
        try:
            return self._values[key]  # type: ignore[return-value]
        except KeyError:
            pass
        path = self._file(key)
        value = _stored_value(path, key)
        if value is _MISSING:
            value = compute()
            _store(path, key, value)
        self._values[key] = value
        return value  # type: ignore[return-value]


_MISSING = object()


def _stored_value(path: Path, key: str) -> object:
    """The value a :class:`StoredCache` file holds for ``key``, or ``_MISSING``."""
    try:
        stored = json.loads(path.read_bytes())
        text = json.dumps(stored["value"], sort_keys=True)
        if stored["key"] == key and stored["digest"] == digest(text):
            return stored["value"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return _MISSING


def _store(path: Path, key: str, value: object) -> None:
    """Write ``value`` for ``key`` at ``path`` if JSON gives it back equal; never raises."""
    from claimbook.atomic import write_text_atomically

    try:
        text = json.dumps(value, sort_keys=True, allow_nan=False)
        if json.loads(text) != value:
            return
        write_text_atomically(
            path, json.dumps({"key": key, "digest": digest(text), "value": value}, sort_keys=True)
        )
    except (OSError, TypeError, ValueError):  # not JSON, or the folder is not writable
        return


def reset() -> None:
    """Empty every cache: called at the start of each build."""
    for cache in list(_CACHES):
        cache.clear()


@contextmanager
def one_build() -> Iterator[None]:
    """A driver build: every cache emptied at its start, and not again by the Sphinx
    application it makes (:func:`reset_for_application`), whose render belongs to it."""
    reset()
    _BUILDS_RUNNING[0] += 1
    try:
        yield
    finally:
        _BUILDS_RUNNING[0] -= 1


def reset_for_application() -> None:
    """Empty every cache for a Sphinx application made on its own (``jupyter-book build``, a
    test's render); inside a driver build (:func:`one_build`) they were emptied at its start.
    """
    if not _BUILDS_RUNNING[0]:
        reset()


def fill_on_two_cores(
    work: Callable[[Sequence[T]], object],
    items: Sequence[T],
    caches: Sequence[ContentCache],
    *,
    least: int = 32,
) -> bool:
    """Run ``work`` over ``items`` on two cores, keeping in ``caches`` what it computed.

    ``work`` is called with every other item in a forked copy of this process and with the
    rest here, at the same time; afterwards the values the copy stored in ``caches`` (keys
    this process lacks) are added to them, so a later lookup of any item is a hit. What
    ``work`` returns is dropped: only cached values come back, each stored under the digest
    of the bytes it was computed from, so it is the value this process would compute for
    them. ``work`` must catch its own per-item errors (one raised in the copy loses the
    copy's half, which is then computed here on first use).

    Falls back to ``work(items)`` here, returning False, with fewer than ``least`` items
    (a fork is not worth it), without ``os.fork`` (not POSIX), with one core, or with another
    thread running (forking a threaded process may copy a lock held mid-operation).
    Returns True when the two halves ran side by side.
    """
    names = [cache.name for cache in caches]
    if len(set(names)) != len(names):
        raise ValueError(f"parameter caches must have distinct names, got {names}")
    if (
        len(items) < least
        or not hasattr(os, "fork")
        or (os.cpu_count() or 1) < 2
        or threading.active_count() > 1
    ):
        work(items)
        return False
    sys.stdout.flush()
    sys.stderr.flush()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: its half, its new values pickled into the pipe, and out
        status = 1
        try:
            os.close(reader)
            known = {cache.name: set(cache._values) for cache in caches}
            work(items[0::2])
            found = {
                cache.name: {k: v for k, v in cache._values.items() if k not in known[cache.name]}
                for cache in caches
            }
            with os.fdopen(writer, "wb") as stream:
                pickle.dump(found, stream, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:  # never the parent's exit handlers or buffers, whatever happened
            os._exit(status)
    os.close(writer)
    try:
        work(items[1::2])
    finally:
        with os.fdopen(reader, "rb") as stream:
            data = stream.read()  # to the end: the copy may block until it is read
        _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or not data:
        return True  # the copy's half is computed here, on first use
    found = pickle.loads(data)
    for cache in caches:
        for key, value in found.get(cache.name, {}).items():
            cache._values.setdefault(key, value)
    return True
