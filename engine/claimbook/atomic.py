"""Atomic file writes: the one helper every writer of the book uses.

A file is written to a temporary file in the same directory, flushed to disk, given the
permissions of an ordinary file (0644: the site serves it), and renamed over the target.
A crash at any point leaves the old file or the new one, never a torn one, and no
temporary file behind.

Examples
--------
>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as scratch:
...     target = pathlib.Path(scratch) / "a.txt"
...     write_text_atomically(target, "one\\n")
...     target.read_text()
'one\\n'
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_output", "write_bytes_atomically", "write_text_atomically"]


@contextlib.contextmanager
def atomic_output(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Yield a stream whose content replaces ``path`` when the block ends without error.

    Parameters
    ----------
    path : path
        The target; its directory is created if needed.
    mode : {"w", "wb"}
        Text (UTF-8, ``\\n`` line endings) or bytes.

    Raises
    ------
    ValueError
        If ``mode`` is neither ``"w"`` nor ``"wb"``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:  # name the file being written, not the temporary one
        if error.errno is None:
            raise
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        text = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(handle, mode, **text) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)  # mkstemp creates 0600; the site serves these files
        try:
            os.replace(temporary, path)
        except OSError as error:
            if error.errno is None:
                raise
            raise OSError(error.errno, error.strerror, str(path)) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write_text_atomically(path: str | Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically."""
    with atomic_output(path, "w") as stream:
        stream.write(text)


def write_bytes_atomically(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically."""
    with atomic_output(path, "wb") as stream:
        stream.write(data)
