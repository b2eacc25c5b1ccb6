"""The engine's in-memory caches: values keyed by :func:`digest` of every byte they came from
(never a file's name, size or time), emptied when a build starts and when a Sphinx application
is made outside one.

>>> digest("ab", "c") == digest("a", "bc")
False
"""

import hashlib
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
_CACHES: "weakref.WeakSet[ContentCache]" = weakref.WeakSet()
_BUILDS_RUNNING = [0]  # driver builds running in this process (one, or none)


def digest(*parts: bytes | str | None) -> str:
    """SHA-256 over ``parts``, each with its length; text is UTF-8, None an absent file."""
    hasher = hashlib.sha256()
    for part in parts:
        if part is None:
            hasher.update(b"-\0")
            continue
        data = part.encode("utf-8") if isinstance(part, str) else bytes(part)
        hasher.update(b"%d\0%s" % (len(data), data))
    return hasher.hexdigest()


def file_bytes(path: str | Path) -> bytes | None:
    """The bytes of a regular file, or None when it is absent or cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


class ContentCache:
    """Values keyed by :func:`digest`, shared by every caller (copy one before changing it)."""

    def __init__(self, name: str) -> None:
        self.name, self._values = name, {}
        _CACHES.add(self)

    def get(self, key: str, compute: Callable[[], T]) -> T:
        if key not in self._values:
            self._values[key] = compute()
        return self._values[key]

    def __len__(self) -> int:
        return len(self._values)


def reset() -> None:
    for cache in list(_CACHES):
        cache._values.clear()


@contextmanager
def one_build() -> Iterator[None]:
    """A driver build: every cache emptied at its start, not again by its Sphinx application."""
    reset()
    _BUILDS_RUNNING[0] += 1
    try:
        yield
    finally:
        _BUILDS_RUNNING[0] -= 1


def reset_for_application() -> None:
    """Empty every cache for a Sphinx application made outside a driver build."""
    if not _BUILDS_RUNNING[0]:
        reset()
