"""Tests of claimbook.pipeline.clean: build products go, sources stay, never during a build."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from claimbook import paths
from claimbook.errors import BuildLockError
from claimbook.pipeline import clean

HOLD = textwrap.dedent(
    """
    import sys
    from claimbook.pipeline.checkout import build_lock

    with build_lock(sys.argv[1]):
        print("held", flush=True)
        sys.stdin.read()
    """
)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A checkout's build products and sources in ``tmp_path``, and a folder outside it."""
    build, chapters, artifacts = tmp_path / "_build", tmp_path / "chapters", tmp_path / "artifacts"
    for name, value in (
        ("BUILD_DIR", build),
        ("CHAPTERS_DIR", chapters),
        ("ARTIFACTS_DIR", artifacts),
    ):
        monkeypatch.setattr(paths, name, value)
    (build / "html").mkdir(parents=True)
    (build / "html" / "index.html").write_text("site")
    (build / "site.json").write_text("{}")
    chapters.mkdir()
    (chapters / "one.md").write_text("source")
    (chapters / "one.ipynb").write_text("executed")
    (artifacts / "claims").mkdir(parents=True)
    (artifacts / "claims" / "c1.json").write_text("{}")
    (artifacts / "README.md").write_text("what this folder holds")
    (artifacts / ".gitignore").write_text("*")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not a build product")
    (artifacts / "link").symlink_to(outside, target_is_directory=True)
    return tmp_path


def test_clean_removes_build_products_and_keeps_sources_and_what_links_point_at(tree):
    clean.clean()
    assert sorted(p.name for p in (tree / "_build").iterdir()) == [".build.lock"]
    assert sorted(p.name for p in (tree / "chapters").iterdir()) == ["one.md"]
    assert sorted(p.name for p in (tree / "artifacts").iterdir()) == [".gitignore", "README.md"]
    assert (tree / "outside" / "keep.txt").read_text() == "not a build product"


def _listing(root):
    """Every path under ``root`` but the lock file, links not followed."""
    found = []
    for folder, folders, files in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, n), root) for n in folders + files]
    return sorted(name for name in found if not name.endswith(".build.lock"))


def test_clean_during_a_build_is_refused_and_removes_nothing(tree, capsys):
    before = _listing(tree)
    with subprocess.Popen(
        [sys.executable, "-c", HOLD, str(clean.lock_path())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(BuildLockError, match=f"pid {holder.pid}"):
            clean.clean()
        assert clean.main([]) == 3
        holder.stdin.close()
    assert "nothing was removed" in capsys.readouterr().err
    assert _listing(tree) == before


def test_clean_takes_no_arguments(capsys):
    assert clean.main(["--all"]) == 2
    assert "takes no arguments" in capsys.readouterr().err


@pytest.mark.parametrize("top", ["_build", "artifacts"])
def test_a_top_folder_that_links_elsewhere_is_refused_and_nothing_is_removed(
    tree, top, monkeypatch, capsys
):
    # _build/ or artifacts/ replaced by a link to a folder outside the book: removing what
    # it holds would remove the other folder's files.
    elsewhere = tree / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.json").write_text("not a build product")
    if top == "_build":
        (elsewhere / ".build.lock").touch()
    moved = tree / f"{top}.real"
    (tree / top).rename(moved)
    (tree / top).symlink_to(elsewhere, target_is_directory=True)
    before = _listing(tree)
    assert clean.main([]) == 2
    message = capsys.readouterr().err
    assert message.startswith("make clean: ") and message.count("\n") == 1
    assert "is not a build product" in message
    assert (elsewhere / "precious.json").read_text() == "not a build product"
    assert _listing(tree) == before  # not even the executed notebook was removed


def test_every_removal_goes_through_the_build_product_check(tree, monkeypatch):
    checked = []
    real = clean.paths.build_product
    monkeypatch.setattr(clean.paths, "build_product", lambda p: checked.append(p) or real(p))
    removed = clean.clean()
    assert removed and set(removed) <= set(checked)
