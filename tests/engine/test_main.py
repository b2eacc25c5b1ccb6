"""Tests of ``python -m claimbook``: every failure is one line, no traceback, status non-zero.

The build driver's ``main`` and the entry point's ``main`` each catch what their command
raises; the messages come from :mod:`claimbook.failures`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys

import pytest

from claimbook import __main__ as entry
from claimbook import paths
from claimbook.errors import RegistryError
from claimbook.pipeline import clean, driver


@pytest.fixture
def failing_build(monkeypatch):
    """Point ``driver.build`` at a callable that raises the exception a test sets."""
    raised = {}

    def build(*_arguments, **_options):
        raise raised["error"]

    monkeypatch.setattr(driver, "build", build)
    monkeypatch.setattr(driver, "build_lock", lambda _path: contextlib.nullcontext())
    monkeypatch.delenv("CLAIMBOOK_TRACEBACK", raising=False)
    return raised


def _one_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err + captured.out
    return captured.err.rstrip("\n")


def test_a_read_only_artifacts_folder_is_one_line_naming_file_and_remedy(failing_build, capsys):
    target = paths.CLAIM_ARTIFACTS_DIR / "c15-invariance-001.json"
    failing_build["error"] = OSError(errno.EROFS, "Read-only file system", str(target))
    assert driver.main(["build"]) == 2
    assert _one_line(capsys) == (
        "make: building the book: artifacts/claims/c15-invariance-001.json: Read-only file "
        "system (the file system is read-only: remount it writable or build in a writable copy)"
    )


def test_a_full_disk_while_publishing_is_one_line(failing_build, capsys):
    site = paths.BUILD_DIR / "html.new" / "index.html"
    failing_build["error"] = OSError(errno.ENOSPC, "No space left on device", str(site))
    assert driver.main(["render"]) == 2
    assert _one_line(capsys).startswith(
        "make: rendering the site: _build/html.new/index.html: No space left on device (the disk"
    )


def test_a_registry_error_in_a_build_is_its_one_line_message(failing_build, capsys):
    failing_build["error"] = RegistryError("claims/c15-x-001.yaml: line 3, column 1: bad\x1b")
    assert driver.main(["execute"]) == 2
    assert _one_line(capsys) == "make: claims/c15-x-001.yaml: line 3, column 1: bad\\u001b"


def test_an_unexpected_error_is_an_internal_error_line(failing_build, capsys):
    failing_build["error"] = AttributeError("'NoneType' object has no attribute 'x'")
    assert driver.main(["build"]) == 1
    assert _one_line(capsys) == (
        "make: internal error: AttributeError: 'NoneType' object has no attribute 'x' "
        "(set CLAIMBOOK_TRACEBACK=1 to see the traceback)"
    )


def test_the_traceback_of_an_unexpected_error_is_there_when_asked_for(
    failing_build, capsys, monkeypatch
):
    monkeypatch.setenv("CLAIMBOOK_TRACEBACK", "1")
    failing_build["error"] = AttributeError("no x")
    assert driver.main(["build"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("make: internal error: AttributeError: no x")
    assert "Traceback (most recent call last):" in error


def test_the_entry_point_catches_what_a_command_module_lets_through(monkeypatch, capsys):
    monkeypatch.delenv("CLAIMBOOK_TRACEBACK", raising=False)

    def full(_argv):
        raise OSError(errno.ENOSPC, "No space left on device", str(paths.BUILD_DIR / "x"))

    monkeypatch.setattr(clean, "main", full)
    assert entry.main(["clean"]) == 2
    assert _one_line(capsys).startswith(
        "make: removing build products: _build/x: No space left on device"
    )

    def broken(_argv):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(clean, "main", broken)
    assert entry.main(["clean"]) == 1
    assert _one_line(capsys).startswith("make: internal error: ZeroDivisionError: division by")


def _run(*arguments: str, **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "claimbook", *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, **environment},
        timeout=120,
    )


def test_a_root_that_does_not_exist_is_one_line_from_the_command_line(tmp_path):
    # paths cannot even be imported: the failure report must not need it.
    process = _run("build", TRAINABLE_ROOT=str(tmp_path / "missing"))
    assert process.returncode == 2
    assert process.stderr.count("\n") == 1 and "Traceback" not in process.stderr
    assert process.stderr.startswith("make: TRAINABLE_ROOT=")


def test_an_unknown_chapter_is_one_line_from_the_command_line(capsys):
    # In this process: the entry point's main is what the command line runs (a fresh
    # interpreter's part, the one line before paths can be imported, is the test above's).
    assert entry.main(["outputs", "../../package"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "make: no chapter named ../../package in _toc.yml (chapters: "
        "normalization-invariance, batch-normalization)\n"
    )
