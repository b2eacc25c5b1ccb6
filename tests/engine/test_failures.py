"""Tests of claimbook.failures: any exception becomes one line and an exit status."""

from __future__ import annotations

import errno
import io
from pathlib import Path

import pytest

from claimbook import failures, paths
from claimbook.errors import (
    BuildError,
    BuildLockError,
    ChapterSourceError,
    OutsideBuildProductsError,
    RegistryError,
)


def _line(error: BaseException, doing: str = "building the book") -> str:
    line = failures.failure_line(error, doing)
    assert "\n" not in line and "\x1b" not in line
    return line


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (BuildLockError("another build (pid 7) holds _build/.build.lock"), 3),
        (BuildError("a chapter failed"), 1),
        (ChapterSourceError("chapters/x.md: bad"), 1),
        (RegistryError("claims/x.yaml: line 1, column 1: bad"), 2),
        (OutsideBuildProductsError("'x' is not a build product"), 2),
    ],
)
def test_an_engine_error_is_its_message(error, status):
    assert _line(error) == f"make: {error}"
    assert failures.failure_status(error) == status


@pytest.mark.parametrize(
    ("number", "strerror", "hint"),
    [
        (errno.EROFS, "Read-only file system", "the file system is read-only"),
        (errno.ENOSPC, "No space left on device", "the disk is full"),
        (errno.EPERM, "Operation not permitted", "may be immutable (lsattr; chattr -i)"),
        (errno.EACCES, "Permission denied", "make the file and its folder writable"),
        (errno.ENOTDIR, "Not a directory", "a file stands where a folder should be"),
    ],
)
def test_a_filesystem_error_names_what_was_done_the_file_and_a_hint(number, strerror, hint):
    error = OSError(number, strerror, str(paths.ARTIFACTS_DIR / "claims" / "c1.json"))
    line = _line(error)
    assert line.startswith(f"make: building the book: artifacts/claims/c1.json: {strerror} (")
    assert hint in line
    assert failures.failure_status(error) == 2


def test_a_failed_rename_names_both_files():
    error = OSError(errno.ENOSPC, "No space left on device", "/x/a", None, "/x/b")
    line = _line(error, "rendering the site")
    assert line.startswith("make: rendering the site: /x/a -> /x/b: No space left on device (")


def _parse_deeply(path: Path, depth: int):
    def nest(level):
        return nest(level + 1) if level < depth else None

    return nest(0)


def test_a_recursion_error_while_reading_a_file_names_the_file():
    path = paths.REPO_ROOT / "_toc.yml"
    with pytest.raises(RecursionError) as caught:
        _parse_deeply(path, 10**6)
    line = _line(caught.value)
    assert line == (
        "make: building the book: _toc.yml: too deeply nested or too large to read "
        "(RecursionError); simplify the file"
    )
    assert failures.failure_status(caught.value) == 2


def test_any_other_error_is_an_internal_error_with_the_way_to_its_traceback(monkeypatch):
    monkeypatch.delenv(failures.TRACEBACK_VARIABLE, raising=False)
    error = RuntimeError("parts\x1b[31m")
    stream = io.StringIO()
    assert failures.report(error, "building the book", stream) == 1
    assert stream.getvalue() == (
        "make: internal error: RuntimeError: parts\\u001b[31m (set CLAIMBOOK_TRACEBACK=1 to "
        "see the traceback)\n"
    )


@pytest.mark.parametrize(("value", "shown"), [("1", True), ("0", False), ("", False)])
def test_the_traceback_is_printed_only_when_asked_for(monkeypatch, value, shown):
    monkeypatch.setenv(failures.TRACEBACK_VARIABLE, value)
    try:
        raise KeyError("parts")
    except KeyError as error:
        stream = io.StringIO()
        failures.report(error, "building the book", stream)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("make: internal error: KeyError")
    assert ("Traceback (most recent call last):" in lines) is shown


def test_a_message_is_escaped_and_cut():
    error = BuildError("chapters/x.md: cell raised\nValueError: \u202egnp.exe " + "x" * 5000)
    line = _line(error)
    assert "\\u000a" in line and "\\u202e" in line
    assert len(line) <= len("make: ") + 1000
