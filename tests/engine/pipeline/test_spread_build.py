"""A build spread over machines, the engine's part: the list of a chapter's outputs
(``outputs``) and the render-only mode (``render``), as the CI workflow's jobs run them
(``make matrix-check`` runs those jobs locally: tests/checks/test_matrix.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claimbook.pipeline.failed_build import BANNER_ID


@pytest.mark.book
def test_outputs_lists_the_files_of_the_record_and_the_record(tiny_book):
    process = tiny_book.run("outputs", "alpha")
    assert process.returncode == 0, process.stderr
    record = json.loads(tiny_book.path("_build/keys/alpha.json").read_text(encoding="utf-8"))
    assert process.stdout.split() == [*sorted(record["outputs"]), "_build/keys/alpha.json"]
    assert "chapters/alpha.ipynb" in record["outputs"]
    tiny_book.path("chapters/alpha.ipynb").unlink()
    process = tiny_book.run("outputs", "alpha")
    assert process.returncode == 1
    assert "chapters/alpha.ipynb missing" in process.stderr


def _site_files(book) -> dict:
    site = book.path("_build/html")
    return {path: path.stat().st_mtime_ns for path in site.rglob("*")}


def _missing_everything(book, listed):  # alpha's upload never arrived
    for name in listed:
        book.path(name).unlink()
    return "never executed: no record _build/keys/alpha.json"


def _missing_artifact(book, listed):
    artifact = next(name for name in listed if name.startswith("artifacts/claims/"))
    book.path(artifact).unlink()
    # The chapter's key covers its claims' artifacts: the reason names the claim.
    return f"claims changed: {Path(artifact).stem}"


def _edited_artifact(book, listed):
    artifact = next(name for name in listed if name.startswith("artifacts/claims/"))
    with book.path(artifact).open("a", encoding="utf-8") as stream:
        stream.write(" ")
    return f"claims changed: {Path(artifact).stem}"


@pytest.mark.book
@pytest.mark.parametrize("damage", [_missing_everything, _missing_artifact, _edited_artifact])
def test_render_only_fails_naming_the_chapter_and_executes_nothing(tiny_book, damage):
    assert tiny_book.run("render").returncode == 0  # a current book renders (nothing changed)
    listed = tiny_book.run("outputs", "alpha").stdout.split()
    reason = damage(tiny_book, listed)
    before = {name: tiny_book.path(name).is_file() for name in listed}
    contents = {name: tiny_book.path(name).read_bytes() for name in listed if before[name]}
    site = _site_files(tiny_book)
    process = tiny_book.run("render")
    assert process.returncode == 1, process.stdout
    chapter_lines = [line for line in process.stdout.splitlines() if line.startswith("chapters/")]
    assert chapter_lines == [
        f"chapters/alpha.md: would execute ({reason}); render starts no kernel"
    ]
    assert "nothing was executed or rendered" in process.stdout
    assert tiny_book.executed(process) == []
    # Nothing was written: no output came back and none changed. The kept site was only
    # marked: every page carries the failed build's banner (claimbook.pipeline.failed_build).
    assert {name: tiny_book.path(name).is_file() for name in listed} == before
    assert {name: tiny_book.path(name).read_bytes() for name in contents} == contents
    assert set(_site_files(tiny_book)) - set(site) == {tiny_book.path("_build/html/OUTDATED.txt")}
    site_dir = tiny_book.path("_build/html")
    pages = [page for page in site_dir.rglob("*.html") if "_static" not in page.parts]
    assert pages
    for page in pages:
        assert BANNER_ID in page.read_text(encoding="utf-8"), page
