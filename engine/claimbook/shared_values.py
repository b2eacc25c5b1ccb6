"""Values a build's claim processes computed, kept for its chapter kernels to read.

A chapter often draws a figure from the very computation a claim makes: chapter 16's
learning-rate figure plots the sweeps its claim reads thresholds from, and its small-batch
figure the measurements its claim fits. Claims are computed by the build in fresh processes
(:mod:`claimbook.build.claim_runs`), never in a kernel, so without this the kernel trains
the same networks again. A function decorated ``cached_with_calls(shared=True)``
(:mod:`claimbook.calls`) is kept here, by the role the build gives a process in
:data:`SHARED_VARIABLE`:

- ``"write"``, in the claim processes: each value computed is also written to
  ``_build/shared-values/<key>.pickle``, atomically;
- ``"read"``, in the chapter kernels: a value the process has not computed is read from
  there when present, else computed as anywhere else;
- unset (a reader's notebook, Binder, a test): nothing is read or written.

**A claim never reads a value from here.** Its results are computed in its own process each
time it is due, so no file here can change a claim's status or its numbers; a file here can
change only what a kernel draws or prints, and the kernel runs the chapter's code anyway.
(Reading a pickle runs the code it names: the files are the build's own, in its folder.)

**The key is content.** :func:`value_key` hashes the function's module and qualified name,
the ``repr`` of its arguments, the bytes of every ``*.py`` file of the harness package and
the environment digest (the lock, the Python version and the engine's code,
:func:`claimbook.claims.keys.environment_digest`), so an edit anywhere in the harness or the
lock gives new keys, whatever the files' modification times say. Each file holds the value
and the harness functions it needed, which the cache notes into the active recorders when it
serves the value, so a chapter's key is the one computing it would give.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from pathlib import Path

import numpy as np

from claimbook import instruments, paths
from claimbook.atomic import write_bytes_atomically

__all__ = ["SHARED_VARIABLE", "harness_digest", "read_value", "role", "value_key", "write_value"]

SHARED_VARIABLE = "CLAIMBOOK_SHARED_VALUES"
ROLES = ("read", "write")
FOLDER = "shared-values"


def role() -> str | None:
    """``"read"``, ``"write"`` or None: what this process does with shared values.

    Raises
    ------
    ValueError
        If :data:`SHARED_VARIABLE` is set to anything else.
    """
    value = os.environ.get(SHARED_VARIABLE) or None
    if value is not None and value not in ROLES:
        raise ValueError(f"{SHARED_VARIABLE} must be 'read', 'write' or unset, got {value!r}")
    return value


@functools.cache
def harness_digest() -> str:
    """SHA-256 of every ``*.py`` file of the harness package (paths and bytes), once a process."""
    package = instruments.package_dir()
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(package).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def value_key(function, args: tuple, kwargs: dict) -> str:
    """The content key of ``function(*args, **kwargs)`` (see the module's doc)."""
    from claimbook.claims.keys import environment_digest  # late: the harness imports this

    parts = [
        f"{function.__module__}.{function.__qualname__}",
        repr(args),
        repr(sorted(kwargs.items())),
        harness_digest(),
        environment_digest(),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _path(key: str) -> Path:
    return paths.BUILD_DIR / FOLDER / f"{key}.pickle"


def write_value(key: str, value, needed: frozenset) -> None:
    """Keep ``value`` and the functions it ``needed`` under ``key`` (replaced atomically)."""
    data = pickle.dumps((value, sorted(needed)), protocol=pickle.HIGHEST_PROTOCOL)
    write_bytes_atomically(_path(key), data)


def read_value(key: str):
    """``(value, needed)`` kept under ``key``, or None when there is none.

    The arrays in the value are read-only, as the cache serves them.
    """
    try:
        data = _path(key).read_bytes()
    except FileNotFoundError:
        return None
    value, needed = pickle.loads(data)
    return _read_only(value), frozenset(tuple(entry) for entry in needed)


def _read_only(value):
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, dict):
        for item in value.values():
            _read_only(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _read_only(item)
    return value
