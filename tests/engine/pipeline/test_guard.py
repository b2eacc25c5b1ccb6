"""Tests of claimbook.pipeline.guard: what only the build writes, kept as the build wrote it.

The unit tests run the guard on a scratch book; the book tests are cells that write where
only the build writes, on the tiny fixture book.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from claimbook import paths
from claimbook.pipeline.guard import ChapterGuard

# --- the guard -----------------------------------------------------------------------------


def _guard(held: dict[str, bytes]) -> ChapterGuard:
    """A guard holding ``held`` (claim id -> bytes) and the claim record as they are now."""
    computed = SimpleNamespace(artifacts=dict(held), others={})
    guard = ChapterGuard(SimpleNamespace(finish=lambda: computed), [])
    guard.final_check()  # it reads the record at its first check
    return guard


def test_the_guard_finds_nothing_when_nothing_changed(artifacts):
    guard = _guard(artifacts)
    assert guard.final_check() == []
    assert guard.seconds >= 0


def test_the_guard_puts_back_a_changed_a_removed_and_removes_an_added_artifact(artifacts):
    guard = _guard(artifacts)
    paths.artifact_path("c1-a-001").write_bytes(b'{"status": "forged"}\n')
    paths.artifact_path("c1-b-001").unlink()
    paths.artifact_path("c1-c-001").write_bytes(b"{}")
    (paths.BUILD_DIR / "claims.json").write_text("{}")
    assert sorted(guard.final_check()) == [
        "_build/claims.json changed",
        "artifacts/claims/c1-a-001.json changed",
        "artifacts/claims/c1-b-001.json removed",
        "artifacts/claims/c1-c-001.json added",
    ]
    for claim_id, data in artifacts.items():
        assert paths.artifact_path(claim_id).read_bytes() == data
    assert not paths.artifact_path("c1-c-001").exists()
    assert (paths.BUILD_DIR / "claims.json").read_text() == '{"format": 1}\n'
    assert guard.final_check() == []  # put back: the next check finds nothing


def test_the_final_check_covers_the_build_after_its_last_chapter(artifacts):
    """An artifact rewritten after every chapter ended (while the site renders) is found and
    put back by the check the build makes once the site is published."""
    computed = SimpleNamespace(artifacts=dict(artifacts), others={})
    guard = ChapterGuard(SimpleNamespace(finish=lambda: computed), [])
    assert guard.final_check() == []
    paths.artifact_path("c1-a-001").write_bytes(b'{"status": "verified", "forged": true}\n')
    assert guard.final_check() == ["artifacts/claims/c1-a-001.json changed"]
    assert paths.artifact_path("c1-a-001").read_bytes() == artifacts["c1-a-001"]


def test_the_guard_replaces_a_link_even_to_identical_bytes(artifacts, tmp_path):
    guard = _guard(artifacts)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(artifacts["c1-a-001"])
    paths.artifact_path("c1-a-001").unlink()
    paths.artifact_path("c1-a-001").symlink_to(elsewhere)
    assert guard.final_check() == ["artifacts/claims/c1-a-001.json changed"]
    assert not paths.artifact_path("c1-a-001").is_symlink()
    assert paths.artifact_path("c1-a-001").read_bytes() == artifacts["c1-a-001"]


# --- cells that write where only the build writes ---------------------------------------------


def _append_cell(book, chapter: str, cell: str) -> None:
    path = book.path(f"chapters/{chapter}")
    path.write_text(path.read_text(encoding="utf-8") + cell, encoding="utf-8")


FORGE = """
```{code-cell} ipython3
:tags: [remove-cell]

import json as _json
from claimbook import paths as _paths

_path = _paths.artifact_path("c15-invariance-001")
_forged = _json.loads(_path.read_text())
_forged["result"]["rms_shift_deviation"] = 7.777
_path.write_text(_json.dumps(_forged))
```
"""


@pytest.mark.book
def test_a_cell_that_forges_an_artifact_fails_its_chapter_on_every_build(tiny_book, monkeypatch):
    # The guard where kernels run without their read-only sandbox (claimbook.pipeline.sandbox).
    monkeypatch.setenv("TRAINABLE_KERNEL_SANDBOX", "off")
    artifact = tiny_book.path("artifacts/claims/c15-invariance-001.json")
    computed = artifact.read_bytes()
    _append_cell(tiny_book, "alpha.md", FORGE)
    for _attempt in range(2):  # sticky: the chapter executes again, and fails again
        process = tiny_book.build()
        assert process.returncode == 1, process.stdout
        assert "chapters/alpha.md: FAILED" in process.stdout
        assert "artifacts/claims/c15-invariance-001.json changed" in process.stdout
        assert "put back as the build computed them" in process.stdout
        assert tiny_book.executed(process) == ["alpha.md"]
        assert artifact.read_bytes() == computed
    assert tiny_book.build("--question").returncode == 1
    tiny_book.edit("chapters/alpha.md", FORGE, "")
    assert tiny_book.build().returncode == 0


REWRITE_OTHER = """
```{code-cell} ipython3
:tags: [remove-cell]

from pathlib import Path as _Path

_other = _Path("beta.ipynb")
_other.write_text(_other.read_text().replace("verified", "VERIFIED BY ALPHA"))
```
"""


@pytest.mark.book
def test_a_cell_that_rewrites_another_chapters_page_fails_and_the_page_is_put_back(
    tiny_book, monkeypatch
):
    monkeypatch.setenv("TRAINABLE_KERNEL_SANDBOX", "off")  # the guard, without the sandbox
    other = tiny_book.path("chapters/beta.ipynb")
    before = other.read_bytes()
    _append_cell(tiny_book, "alpha.md", REWRITE_OTHER)
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    assert "chapters/alpha.md: FAILED" in process.stdout
    assert "chapters/beta.ipynb changed" in process.stdout
    assert tiny_book.executed(process) == ["alpha.md"]
    assert other.read_bytes() == before


@pytest.mark.book
def test_in_the_sandbox_a_forging_cell_cannot_write_the_artifact(tiny_book):
    from sandboxed import sandbox_or_skip

    sandbox_or_skip()
    artifact = tiny_book.path("artifacts/claims/c15-invariance-001.json")
    computed = artifact.read_bytes()
    _append_cell(tiny_book, "alpha.md", FORGE)
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    assert "chapters/alpha.md: FAILED" in process.stdout
    assert "Read-only file system" in process.stdout
    assert artifact.read_bytes() == computed
