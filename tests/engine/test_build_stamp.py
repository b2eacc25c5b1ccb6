"""claimbook.build_stamp: "uncommitted changes" is the content compared with HEAD, whatever
git's index says."""

from __future__ import annotations

import os
import subprocess

import pytest

from claimbook import build_stamp


@pytest.fixture
def git(tmp_path):
    """``git`` in the repository of :func:`repository`; its output."""
    root = tmp_path / "book"
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.org"]

    def git(*arguments):
        return subprocess.run(
            ["git", "-C", str(root), *identity, *arguments],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    return git


@pytest.fixture
def repository(tmp_path, git):
    """A committed book: a harness module, a lock and a link."""
    root = tmp_path / "book"
    root.mkdir()
    git("init", "-q")
    (root / "harness").mkdir()
    (root / "harness" / "f.py").write_text("def f():\n    return 1\n")
    (root / "requirements.txt").write_text("numpy==2.4.6\n")
    os.symlink("harness/f.py", root / "link")
    git("add", ".")
    git("commit", "-qm", "a")
    return root


def test_a_clean_checkout_has_no_uncommitted_changes(repository):
    assert build_stamp.uncommitted_files(repository) == []
    assert build_stamp.build_stamp(str(repository), environ={})["dirty"] == ""


def test_a_file_replaced_by_a_link_to_the_same_content_is_a_change(repository):
    (repository / "copy").write_bytes((repository / "requirements.txt").read_bytes())
    (repository / "requirements.txt").unlink()
    os.symlink("copy", repository / "requirements.txt")
    assert build_stamp.uncommitted_files(repository) == ["copy", "requirements.txt"]


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_hidden_from_git_status_is_an_uncommitted_change(repository, git, flag):
    git("update-index", flag, "harness/f.py")
    (repository / "harness" / "f.py").write_text("def f():\n    return 2\n")
    assert git("status", "--porcelain") == ""  # git itself sees nothing
    assert build_stamp.uncommitted_files(repository) == ["harness/f.py"]
    stamp = build_stamp.build_stamp(str(repository), environ={})
    assert stamp["dirty"] == "uncommitted changes"


def test_a_removed_file_or_a_retargeted_link_is_a_change(repository):
    (repository / "requirements.txt").unlink()
    os.remove(repository / "link")
    os.symlink("elsewhere", repository / "link")
    assert build_stamp.uncommitted_files(repository) == ["link", "requirements.txt"]


def test_an_untracked_file_is_still_a_change(repository):
    (repository / "harness" / "new.py").write_text("x = 1\n")
    assert build_stamp.uncommitted_files(repository) == ["harness/new.py"]
    assert build_stamp.build_stamp(str(repository), environ={})["dirty"] == "uncommitted changes"


def test_a_file_git_converts_is_compared_as_git_stores_it(repository, git):
    """A checkout with CRLF line ends that git stores as LF is not a change."""
    (repository / ".gitattributes").write_text("*.md text eol=crlf\n")
    (repository / "a.md").write_bytes(b"one\r\ntwo\r\n")
    git("add", ".")
    git("commit", "-qm", "crlf")
    assert build_stamp.uncommitted_files(repository) == []


def test_outside_a_repository_nothing_is_uncommitted(tmp_path):
    assert build_stamp.uncommitted_files(tmp_path) is None
    assert build_stamp.build_stamp(str(tmp_path), environ={})["dirty"] == ""
