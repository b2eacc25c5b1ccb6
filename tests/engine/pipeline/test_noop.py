"""The no-op fast path (``claimbook.pipeline.noop``): a digest of the whole tree, by content."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claimbook import __main__ as command_line
from claimbook.pipeline import noop
from tests.helpers.scratch_book import point_paths_at


@pytest.fixture
def tree(tmp_path, monkeypatch):
    root = point_paths_at(tmp_path / "book", monkeypatch)
    (root / "chapters" / "one.md").write_text("# One\n")
    (root / "artifacts" / "a.json").write_text('{"status": "verified"}\n')
    (root / "_build" / "html").mkdir()
    (root / "_build" / "html" / "index.html").write_text("<p>verified</p>\n")
    for name in ("_config.yml", "_toc.yml"):  # a book, run in its own folder
        (root / name).write_text("")
    monkeypatch.chdir(root)
    monkeypatch.delenv("TRAINABLE_BUILD_COMMIT", raising=False)
    monkeypatch.delenv("TRAINABLE_BUILD_DATE", raising=False)
    return root


def _tree(root) -> tuple:
    """What the clean-build record covers of the book at ``root``: its stamp and files."""
    root = Path(root).resolve()
    return noop._stamp(root), noop.tree_entries(root)


def test_an_edit_with_its_old_time_restored_changes_the_digest(tree):
    before = _tree(tree)
    artifact = tree / "artifacts" / "a.json"
    stat = artifact.stat()
    artifact.write_text('{"status": "failed!"}\n')  # same length
    os.utime(artifact, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _tree(tree) != before


def test_times_alone_do_not_change_the_digest(tree):
    before = _tree(tree)
    os.utime(tree / "chapters" / "one.md", (1, 1))
    assert _tree(tree) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "chapters" / "two.md").write_text(""),  # a new, empty file
        lambda root: (root / "chapters" / "one.md").rename(root / "chapters" / "uno.md"),
        lambda root: (root / "_build" / "html" / "index.html").unlink(),
        lambda root: (root / "_build" / "mutations.json").write_text("{}"),
    ],
)
def test_any_file_added_renamed_or_removed_changes_the_digest(tree, change):
    before = _tree(tree)
    change(tree)
    assert _tree(tree) != before


def test_a_link_is_its_target_not_the_file_it_names(tree):
    (tree / "chapters" / "link.md").symlink_to("one.md")
    before = _tree(tree)
    (tree / "chapters" / "link.md").unlink()
    (tree / "chapters" / "link.md").symlink_to("missing.md")
    assert _tree(tree) != before


def test_a_fifo_is_named_never_opened(tree):
    before = _tree(tree)
    os.mkfifo(tree / "_build" / "html" / "pipe")  # opening it would wait for a writer
    assert _tree(tree) != before


def test_what_no_build_reads_is_not_part_of_it(tree):
    before = _tree(tree)
    for skipped in (".git", ".venv", "node_modules", "chapters/__pycache__"):
        (tree / skipped).mkdir(parents=True, exist_ok=True)
        (tree / skipped / "file").write_text("anything")
    (tree / "_build" / ".build.lock").write_text("pid 1")
    (tree / ".setup.lock").write_text("")
    (tree / "_build" / noop.RECORD_NAME).write_text("{}")
    assert _tree(tree) == before


def test_the_footer_stamp_is_part_of_it(tree, monkeypatch):
    before = _tree(tree)
    monkeypatch.setenv("TRAINABLE_BUILD_COMMIT", "abc1234")
    assert _tree(tree) != before


def test_the_same_files_at_another_root_are_another_tree(tree, tmp_path):
    import shutil

    copy = shutil.copytree(tree, tmp_path / "copy", symlinks=True)
    assert _tree(copy) != _tree(tree)


def test_a_record_holds_until_one_byte_changes_and_is_forgotten_on_demand(tree):
    assert not noop.unchanged_since_clean_build()
    noop.record_clean_build()
    assert noop.unchanged_since_clean_build()
    (tree / "chapters" / "one.md").write_text("# Two\n")
    assert not noop.unchanged_since_clean_build()
    noop.record_clean_build()
    noop.forget_clean_build()
    assert not noop.unchanged_since_clean_build()


@pytest.mark.parametrize(
    "damage",
    ["not json", '{"format": 0, "tree": "x"}', "[]", '{"format": 3, "files": []}'],
)
def test_a_damaged_record_is_no_record(tree, damage):
    noop.record_clean_build()
    (tree / "_build" / noop.RECORD_NAME).write_text(damage)
    assert not noop.unchanged_since_clean_build()


@pytest.mark.parametrize(
    ("argv", "printed"),
    [
        (["build"], "The book is built ("),
        (["build", "--jobs", "2"], "The book is built ("),
        (["build", "--question"], "up to date"),
    ],
)
def test_the_command_line_answers_a_no_op_without_the_engine(tree, capsys, argv, printed):
    noop.record_clean_build()
    assert command_line._nothing_to_do(argv) is True
    assert capsys.readouterr().out.startswith(printed)


@pytest.mark.parametrize("argv", [["build", "--only"], ["execute"], ["render"], ["build", "x"]])
def test_other_commands_take_their_full_path(tree, argv):
    noop.record_clean_build()
    assert command_line._nothing_to_do(argv) is False


def test_a_changed_tree_takes_the_full_path(tree, capsys):
    noop.record_clean_build()
    (tree / "artifacts" / "a.json").write_text("{}")
    assert command_line._nothing_to_do(["build"]) is False
    assert capsys.readouterr().out == ""


def test_another_engine_outside_the_book_takes_the_full_path(tree, monkeypatch):
    """A book outside the engine's checkout (named by TRAINABLE_ROOT) built clean by one
    engine is not up to date for another: the engine's files are not files of its tree."""
    noop.record_clean_build()
    assert noop.unchanged_since_clean_build()
    monkeypatch.setattr(noop, "_engine_outside", lambda root: "/another/engine:0123")
    assert not noop.unchanged_since_clean_build()


def test_the_engine_counts_only_when_it_is_outside_the_book(tree):
    assert noop._engine_outside(tree.resolve()) is not None
    assert noop._engine_outside(Path(noop.__file__).resolve().parents[3]) is None


def _reads(monkeypatch) -> list[str]:
    """The names of the files noop reads from now on, in order."""
    from claimbook.pipeline import file_digests

    read: list[str] = []
    original = file_digests.sha256
    monkeypatch.setattr(
        file_digests, "sha256", lambda path: read.append(os.path.basename(path)) or original(path)
    )
    return read


def _age(tree: Path, seconds: int = 1000) -> None:
    """Every file of the tree ``seconds`` older (the order of the check is by time)."""
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink():
            status = path.stat()
            os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns - seconds * 10**9))


def test_the_check_reads_the_newest_file_first_and_stops_at_a_difference(tree, monkeypatch):
    noop.record_clean_build()
    _age(tree)
    (tree / "chapters" / "one.md").write_text("# Uno\n")  # the same length, newest
    read = _reads(monkeypatch)
    assert not noop.unchanged_since_clean_build()
    assert read == ["one.md"]


def test_an_unchanged_tree_is_read_whole(tree, monkeypatch):
    noop.record_clean_build()
    read = _reads(monkeypatch)
    assert noop.unchanged_since_clean_build()
    assert sorted(read) == sorted(Path(name).name for name in noop.tree_entries(tree))


def test_an_edit_made_to_look_oldest_is_still_found(tree, monkeypatch):
    noop.record_clean_build()
    artifact = tree / "artifacts" / "a.json"
    artifact.write_text('{"status": "failed!"}\n')  # same length
    os.utime(artifact, (1, 1))  # older than every other file: read last
    read = _reads(monkeypatch)
    assert not noop.unchanged_since_clean_build()
    assert read[-1] == "a.json" and len(read) == len(noop.tree_entries(tree))


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "chapters" / "two.md").write_text(""),
        lambda root: (root / "artifacts" / "a.json").unlink(),
    ],
)
def test_a_file_added_or_removed_is_found_without_reading_one(tree, monkeypatch, change):
    noop.record_clean_build()
    change(tree)
    read = _reads(monkeypatch)
    assert not noop.unchanged_since_clean_build()
    assert read == []
