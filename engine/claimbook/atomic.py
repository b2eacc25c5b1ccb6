"""Atomic file writes: a temporary file beside the target, flushed, made 0644 (the site serves
it) and renamed over the target; a crash leaves the old file or the new."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def _naming(error: OSError, path: Path) -> OSError:
    """``error`` naming ``path`` rather than the temporary file."""
    return error if error.errno is None else OSError(error.errno, error.strerror, str(path))


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[BinaryIO]:
    """Yield a binary stream whose content replaces ``path`` (its folder made) when the block
    ends without error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise _naming(error, path) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)  # mkstemp creates 0600
        try:
            os.replace(temporary, path)
        except OSError as error:
            raise _naming(error, path) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write_text_atomically(path: str | Path, text: str) -> None:  # UTF-8, "\n" kept
    write_bytes_atomically(path, text.encode("utf-8"))


def write_bytes_atomically(path: str | Path, data: bytes) -> None:
    with atomic_output(path) as stream:
        stream.write(data)
