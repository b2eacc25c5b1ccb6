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

The caches, each a :class:`ContentCache` held in memory by one process (nothing is kept
between builds, so nothing a chapter's kernel writes can be read back as a cached value):

- ``registry entries`` (:mod:`claimbook.claims.registry`): a validated ``claims/<id>.yaml``,
  by its name and bytes;
- ``judgements`` (:mod:`claimbook.claims.judgement`): whether a current artifact agrees with its
  own stored result, by the bytes of the registry entry and of the artifact;
- ``chapter sources``, ``prose blocks`` (:mod:`claimbook.sources`) and ``chapter pages``
  (:mod:`claimbook.extensions.chapter_pages`): a parsed chapter and its pages, by its bytes;
- ``glue checks`` (:mod:`claimbook.settings`): the results a chapter pastes with plain glue,
  by the chapter source's bytes.

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
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

__all__ = [
    "ContentCache",
    "digest",
    "file_bytes",
    "one_build",
    "reset",
    "reset_for_application",
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

    def holds(self, key: str) -> bool:
        """Whether a value is stored under ``key``."""
        return key in self._values

    def clear(self) -> None:
        self._values.clear()

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"<ContentCache {self.name!r}: {len(self)} values>"


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
