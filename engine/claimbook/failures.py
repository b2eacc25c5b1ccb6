"""How the command line ends on a failure: one line, no traceback, a non-zero exit status."""

import errno
import os
import sys
import traceback
from pathlib import Path

from claimbook.errors import BookError, BuildError, BuildLockError, ChapterSourceError
from claimbook.text import one_line

TRACEBACK_VARIABLE = "CLAIMBOOK_TRACEBACK"
# What each command of ``python -m claimbook`` is doing, as a failure line says it.
DOING = {
    "build": "building the book",
    "execute": "executing chapters",
    "render": "rendering the site",
    "outputs": "listing a chapter's outputs",
    "chapters": "listing the chapters",
    "claims": "checking claims",
    "repin": "re-pinning the chapters",
    "clean": "removing build products",
}
_HINTS = {
    errno.EROFS: "the file system is read-only: remount it writable or build in a writable copy",
    errno.ENOSPC: "the disk is full: free some space and run make again",
    errno.EDQUOT: "the disk quota is used up: free some space and run make again",
    errno.EACCES: "permission denied: make the file and its folder writable (chmod)",
    errno.EPERM: "the file or its folder may be immutable (lsattr; chattr -i) or another's",
    errno.ENOTDIR: "a file stands where a folder should be: remove it and run make again",
    errno.EISDIR: "a folder stands where a file should be: remove it and run make again",
}
# Frame locals that name the file a parser was reading, innermost frame first.
_FILE_LOCALS = ("path", "source", "filename")


def _shown(filename: object) -> str:
    if isinstance(filename, bytes):
        filename = filename.decode("utf-8", "backslashreplace")
    if not isinstance(filename, str | Path):
        return str(filename)
    try:  # not at import: the failure may be that paths cannot be imported
        from claimbook import paths
    except BookError:  # TRAINABLE_ROOT names no folder: nothing to be relative to
        return Path(filename).as_posix()
    return paths.shown(filename)


def _file_being_read(error: BaseException) -> str | None:
    """The file the innermost frame of ``error``'s traceback that names one was reading."""
    frames = [frame for frame, _line in traceback.walk_tb(error.__traceback__)]
    for frame in reversed(frames):
        for name in _FILE_LOCALS:
            value = frame.f_locals.get(name)
            if isinstance(value, Path) or (isinstance(value, str) and "/" in value):
                return _shown(value)
    return None


def failure_line(error: BaseException, doing: str) -> str:
    """The one line that reports ``error``, raised while ``doing`` (e.g. "building the book")."""
    if isinstance(error, BookError):
        return f"make: {one_line(error)}"
    if isinstance(error, OSError):
        names = [_shown(name) for name in (error.filename, error.filename2) if name is not None]
        where = " -> ".join(names) + ": " if names else ""
        reason = error.strerror or str(error) or type(error).__name__
        hint = _HINTS.get(error.errno)
        return one_line(f"make: {doing}: {where}{reason}" + (f" ({hint})" if hint else ""))
    if isinstance(error, RecursionError | MemoryError):
        where = _file_being_read(error)
        if where is not None:
            return one_line(
                f"make: {doing}: {where}: too deeply nested or too large to read "
                f"({type(error).__name__}); simplify the file"
            )
    return one_line(
        f"make: internal error: {type(error).__name__}: {error} "
        f"(set {TRACEBACK_VARIABLE}=1 to see the traceback)"
    )


def failure_status(error: BaseException) -> int:
    """3 for the build lock, 1 for a chapter or build failure or an internal error, else 2."""
    if isinstance(error, BuildLockError):
        return 3
    if isinstance(error, BuildError | ChapterSourceError):
        return 1
    return 2 if isinstance(error, BookError | OSError | RecursionError | MemoryError) else 1


def report(error: BaseException, doing: str, stream=None) -> int:
    """Print :func:`failure_line` (and the traceback if ``CLAIMBOOK_TRACEBACK`` is set, not
    ``0``) to ``stream`` (standard error); return :func:`failure_status`."""
    stream = sys.stderr if stream is None else stream
    print(failure_line(error, doing), file=stream, flush=True)
    if os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0"):
        traceback.print_exception(error, file=stream)
    return failure_status(error)
