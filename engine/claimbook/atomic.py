"""Atomic file writes: a temporary file beside the target, flushed, made 0644 (the site serves
it) and renamed over the target; a crash leaves the old file or the new."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _naming(error: OSError, path: Path) -> OSError:
    """``error`` naming ``path`` rather than the temporary file."""
    return error if error.errno is None else OSError(error.errno, error.strerror, str(path))


@contextlib.contextmanager
def atomic_output(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Yield a stream whose content replaces ``path`` (its folder made) when the block ends
    without error; ``mode`` "w" (UTF-8, ``\\n``) or "wb", else ValueError."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise _naming(error, path) from None
    try:
        text = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(handle, mode, **text) as stream:
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


def write_text_atomically(path: str | Path, text: str) -> None:
    with atomic_output(path, "w") as stream:
        stream.write(text)


def write_bytes_atomically(path: str | Path, data: bytes) -> None:
    with atomic_output(path, "wb") as stream:
        stream.write(data)
