"""A chapter's kernel runs with the book read-only, where bubblewrap is installed."""

import os
import subprocess
import sys

import pytest
from sandboxed import sandbox_or_skip

from claimbook import paths

PROBE = """
import sys
for target in sys.argv[1:]:
    try:
        open(target, "w").close()
        print("wrote", target)
    except OSError:
        print("refused", target)
"""


@pytest.fixture
def prefix(tmp_path):
    return sandbox_or_skip(tmp_path / "sockets")


def _tried(prefix, *targets):
    done = subprocess.run(
        [*prefix, sys.executable, "-c", PROBE, *map(str, targets)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1)[::-1] for line in done.stdout.splitlines())


def test_the_book_is_read_only_and_the_kernels_folders_are_not(prefix, tmp_path):
    (tmp_path / "sockets").mkdir()
    harness = paths.REPO_ROOT / "harness" / "sandbox-probe"
    figures = paths.REPO_ROOT / "artifacts" / "figures" / "sandbox-probe"
    try:
        found = _tried(prefix, harness, figures, tmp_path / "sockets" / "x", "/tmp/own")
    finally:
        figures.unlink(missing_ok=True)
        harness.unlink(missing_ok=True)
    assert found == {
        str(harness): "refused",
        str(figures): "wrote",
        str(tmp_path / "sockets" / "x"): "wrote",
        "/tmp/own": "wrote",
    }
    assert not os.path.exists("/tmp/own")  # its /tmp is its own, discarded with it


def test_a_book_under_tmp_stays_read_only(tmp_path, monkeypatch):
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    monkeypatch.setattr(paths, "REPO_ROOT", book)
    monkeypatch.setattr(paths, "BUILD_DIR", book / "_build")
    (tmp_path / "sockets").mkdir()
    prefix = sandbox_or_skip(tmp_path / "sockets")
    found = _tried(prefix, book / "chapters" / "x", book / "artifacts" / "figures" / "y")
    assert found == {
        str(book / "chapters" / "x"): "refused",
        str(book / "artifacts" / "figures" / "y"): "wrote",
    }
