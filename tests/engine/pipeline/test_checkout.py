"""The engine builds the checkout it belongs to, or refuses in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from claimbook import build_stamp, paths
from claimbook.errors import BuildError, EnvironmentMismatchError
from claimbook.pipeline import checkout, clean
from claimbook.pipeline.checkout import book_holding, check_checkout


def _book(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        (folder / name).write_text("")
    return folder.resolve()


def test_the_book_holding_a_folder_is_the_nearest_with_configuration_and_contents(tmp_path):
    outer = _book(tmp_path / "outer")
    inner = _book(outer / "copies" / "inner")
    (inner / "chapters").mkdir()
    (outer / "notes").mkdir()
    assert book_holding(inner / "chapters") == inner
    assert book_holding(outer / "notes") == outer
    assert book_holding(tmp_path) is None


def test_the_checkout_the_engine_belongs_to_builds():
    check_checkout({}, paths.REPO_ROOT / "chapters")


def test_a_folder_in_no_book_builds_the_engines_checkout(tmp_path):
    check_checkout({}, tmp_path)


def test_another_checkout_is_refused_in_one_line_naming_both(tmp_path):
    copy = _book(tmp_path / "copy")
    with pytest.raises(BuildError) as refused:
        check_checkout({}, copy)
    message = str(refused.value)
    assert "\n" not in message
    assert str(copy) in message and str(paths.REPO_ROOT) in message


def test_a_book_named_by_trainable_root_is_not_checked(tmp_path):
    copy = _book(tmp_path / "copy")
    check_checkout({paths.ROOT_ENVIRONMENT_VARIABLE: str(copy)}, copy)


def _without_root() -> dict:
    return {k: v for k, v in os.environ.items() if k != paths.ROOT_ENVIRONMENT_VARIABLE}


def test_the_command_line_refuses_to_build_a_copy_with_the_originals_engine(
    tmp_path, monkeypatch, capsys
):
    # The entry point's main, in this process: the command line's path from the no-op check
    # to the driver's refusal (a fresh interpreter's is the TRAINABLE_ROOT test's below).
    from claimbook import __main__ as entry

    copy = _book(tmp_path / "copy")
    monkeypatch.delenv(paths.ROOT_ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.chdir(copy)
    assert entry.main(["build", "--question"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert str(copy) in line and str(paths.REPO_ROOT) in line


def test_clean_refuses_to_remove_the_build_products_of_another_checkout(tmp_path, monkeypatch):
    copy = _book(tmp_path / "copy")
    monkeypatch.delenv(paths.ROOT_ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.chdir(copy)
    removed = []
    monkeypatch.setattr(clean, "clean", lambda: removed.append("everything") or [])
    assert clean.main([]) == 1
    assert removed == []
    assert checkout.book_holding(Path.cwd()) == copy


def test_a_copy_is_refused_even_when_the_original_was_built_clean(tmp_path, monkeypatch):
    """The no-op answer reads the original checkout's tree: a copy never gets it, whether or
    not the original's last build was clean (the full path then refuses the copy)."""
    from claimbook import __main__ as entry
    from claimbook.pipeline import noop

    copy = _book(tmp_path / "copy")
    monkeypatch.delenv(paths.ROOT_ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.chdir(copy)
    monkeypatch.setattr(noop, "unchanged_since_clean_build", lambda *a, **k: True)
    assert entry._nothing_to_do(["build", "--question"]) is False
    monkeypatch.chdir(paths.REPO_ROOT)
    assert entry._nothing_to_do(["build", "--question"]) is True


def _clone_with_engine(root: Path) -> Path:
    """Another checkout: a book that holds an engine of its own."""
    clone = _book(root)
    (clone / "engine" / "claimbook").mkdir(parents=True)
    return clone


def test_a_book_with_its_own_engine_built_by_another_is_named(tmp_path):
    clone = _clone_with_engine(tmp_path / "clone")
    running = Path(checkout.__file__).resolve().parents[1]
    assert checkout.foreign_engine(clone) == running
    assert checkout.foreign_engine(paths.REPO_ROOT) is None
    assert checkout.foreign_engine(_book(tmp_path / "fixture")) is None  # no engine of its own
    with pytest.raises(EnvironmentMismatchError) as refused:
        checkout.check_engine(root=clone)
    message = str(refused.value)
    assert "\n" not in message and str(running) in message and str(clone) in message
    assert "--allow-environment-mismatch" in message
    assert checkout.check_engine(allow=True, root=clone) == running


def test_trainable_root_at_another_clone_is_refused_from_the_command_line(tmp_path):
    clone = _clone_with_engine(tmp_path / "clone")
    process = subprocess.run(
        [sys.executable, "-m", "claimbook", "build", "--question"],
        cwd=clone,
        env={**_without_root(), paths.ROOT_ENVIRONMENT_VARIABLE: str(clone)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 2, process.stderr
    assert process.stdout == ""
    (line,) = process.stderr.splitlines()
    assert line.startswith("make: this build would run the engine at ")
    assert f"not the book's own {clone / 'engine' / 'claimbook'}" in line


def test_the_footer_names_a_foreign_engine(tmp_path):
    from claimbook.extensions import book_site

    clone = _clone_with_engine(tmp_path / "clone")
    stamp = build_stamp.build_stamp(str(clone), environ={})
    running = Path(checkout.__file__).resolve().parents[1]
    assert stamp["engine"] == str(running)
    assert (
        f'<span class="build-engine">Built with the engine at <code>{running}</code>, '
        "not this checkout's.</span>"
    ) in book_site.footer_html(stamp)
