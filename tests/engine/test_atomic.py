"""Tests of claimbook.atomic: a write leaves the old file or the new one, never a torn one.

Crashes are injected by making one step of the write (the caller's own writing, the flush
to disk, the permission change, the rename, the temporary file itself) raise midway; after
each, the target must hold its old bytes and the directory no temporary file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from claimbook import atomic
from claimbook.atomic import atomic_output, write_bytes_atomically, write_text_atomically

OLD = b"the old content\n"


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """A file that already holds :data:`OLD`, alone in its directory."""
    path = tmp_path / "out" / "artifact.json"
    path.parent.mkdir()
    path.write_bytes(OLD)
    return path


def left_in(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- what a completed write leaves ----------------------------------------------------------


def test_text_is_written_as_utf8_with_the_line_endings_given(tmp_path):
    path = tmp_path / "a.txt"
    write_text_atomically(path, "one\nδύο\r\nthree")
    assert path.read_bytes() == "one\nδύο\r\nthree".encode()  # no newline translation


def test_bytes_replace_the_old_file_and_nothing_else_is_left(target):
    write_bytes_atomically(target, b"\x00new\xff")
    assert target.read_bytes() == b"\x00new\xff"
    assert left_in(target.parent) == [target.name]


def test_the_directory_is_created_and_a_string_path_is_accepted(tmp_path):
    path = tmp_path / "a" / "b" / "c.txt"
    write_text_atomically(str(path), "deep\n")
    assert path.read_text() == "deep\n"


@pytest.mark.parametrize("old_mode", [None, 0o600, 0o755])
def test_the_written_file_is_0644_whatever_the_umask_and_the_old_mode(tmp_path, old_mode):
    path = tmp_path / "served.html"
    if old_mode is not None:
        path.write_bytes(OLD)
        path.chmod(old_mode)
    previous = os.umask(0o077)  # mkstemp's 0600 and a strict umask are both overridden
    try:
        write_text_atomically(path, "<p>hi</p>\n")
    finally:
        os.umask(previous)
    assert mode_of(path) == 0o644


def test_the_inputs_are_not_changed(tmp_path):
    data = bytearray(b"payload")
    path = tmp_path / "x.bin"
    write_bytes_atomically(path, data)
    assert data == bytearray(b"payload")
    assert path.read_bytes() == b"payload"
    assert path == tmp_path / "x.bin"


def test_the_temporary_file_is_beside_the_target_and_flushed_before_the_rename(
    target, monkeypatch
):
    # The rename is atomic only within one file system, and only a synced file can be
    # renamed over the old one without risking an empty file after a power cut.
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor):
        events.append("fsync")
        real_fsync(descriptor)

    def replace(source, destination):
        events.append(("replace", Path(source).parent, Path(destination)))
        real_replace(source, destination)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    monkeypatch.setattr(atomic.os, "replace", replace)
    write_text_atomically(target, "new\n")
    assert events == ["fsync", ("replace", target.parent, target)]


# --- crashes midway ---------------------------------------------------------------------------


@pytest.mark.parametrize("step", ["fsync", "chmod", "replace"])
def test_a_crash_in_a_step_of_the_write_keeps_the_old_file(target, monkeypatch, step):
    def crash(*arguments, **options):
        raise OSError(f"simulated crash in {step}")

    monkeypatch.setattr(atomic.os, step, crash)
    with pytest.raises(OSError, match=f"simulated crash in {step}"):
        write_text_atomically(target, "the new content, never seen\n")
    monkeypatch.undo()
    assert target.read_bytes() == OLD
    assert left_in(target.parent) == [target.name]


def test_a_crash_while_the_caller_writes_keeps_the_old_file(target):
    with pytest.raises(RuntimeError, match="midway"), atomic_output(target) as stream:
        stream.write(b"half of the new")
        stream.flush()
        raise RuntimeError("crash midway")
    assert target.read_bytes() == OLD
    assert left_in(target.parent) == [target.name]


def test_an_interrupt_is_cleaned_up_and_passed_on(target):
    # BaseException too: Ctrl-C during a write must not leave a temporary file behind.
    with pytest.raises(KeyboardInterrupt), atomic_output(target) as stream:
        stream.write(b"partial")
        raise KeyboardInterrupt
    assert target.read_bytes() == OLD
    assert left_in(target.parent) == [target.name]


def test_a_write_that_cannot_encode_keeps_the_old_file(target):
    with pytest.raises(UnicodeEncodeError):
        write_text_atomically(target, "a lone surrogate \ud800")
    assert target.read_bytes() == OLD
    assert left_in(target.parent) == [target.name]


def test_a_temporary_file_removed_by_someone_else_does_not_hide_the_crash(target, monkeypatch):
    def vanish_then_crash(source, destination):
        os.unlink(source)
        raise OSError("simulated crash in replace")

    monkeypatch.setattr(atomic.os, "replace", vanish_then_crash)
    with pytest.raises(OSError, match="simulated crash"):
        write_text_atomically(target, "new\n")
    monkeypatch.undo()
    assert target.read_bytes() == OLD
    assert left_in(target.parent) == [target.name]


def test_no_temporary_file_means_no_write_at_all(target, monkeypatch):
    def denied(*arguments, **options):
        raise PermissionError(13, "Permission denied", str(target.parent))

    monkeypatch.setattr(atomic.tempfile, "mkstemp", denied)
    with pytest.raises(PermissionError):
        write_text_atomically(target, "new\n")
    monkeypatch.undo()
    assert target.read_bytes() == OLD
    assert left_in(target.parent) == [target.name]
