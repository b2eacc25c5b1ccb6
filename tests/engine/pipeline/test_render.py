"""The stored outcome of a render (``_build/site.json``): trusted only as it was written."""

from __future__ import annotations

import json
import os

import pytest

from claimbook import paths
from claimbook.pipeline import render, site_outcome


@pytest.fixture
def outcome_path(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path / "_build")
    return tmp_path / "_build" / "site.json"


def _write() -> None:
    site_outcome.write_outcome(
        "key",
        ["intro.md:3: WARNING: unknown claim"],
        {"index.html": "0" * 64},
        {"intro": "1" * 64},
    )


def test_an_outcome_reads_back_as_it_was_written(outcome_path):
    _write()
    outcome = site_outcome.read_outcome()
    assert outcome["key"] == "key"
    assert outcome["warnings"] == ["intro.md:3: WARNING: unknown claim"]
    assert outcome["files"] == {"index.html": "0" * 64}
    assert outcome["sources"] == {"intro": "1" * 64}


def test_no_outcome_is_none_without_a_note(outcome_path):
    notes = []
    assert site_outcome.read_outcome(note=notes.append) is None
    assert notes == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("warnings", []),
        ("states", {"c15-invariance-001": ["failed", "edited"]}),
        ("files", {}),
        ("sources", {}),
        ("key", "another key"),
    ],
)
def test_an_outcome_edited_by_hand_is_ignored_with_a_one_line_note(outcome_path, field, value):
    _write()
    outcome = json.loads(outcome_path.read_text())
    outcome[field] = value
    outcome_path.write_text(json.dumps(outcome))
    notes = []
    assert site_outcome.read_outcome(note=notes.append) is None
    assert len(notes) == 1 and "\n" not in notes[0]
    assert "does not match its digest" in notes[0]


@pytest.mark.parametrize("text", ["{not json", "[]", '{"key": "key", "warnings": []}'])
def test_an_unreadable_or_older_outcome_is_ignored_with_a_note(outcome_path, text):
    outcome_path.parent.mkdir(parents=True)
    outcome_path.write_text(text)
    notes = []
    assert site_outcome.read_outcome(note=notes.append) is None
    assert len(notes) == 1 and "unreadable or from another version" in notes[0]


def test_publish_keeps_only_regular_files_and_records_them(outcome_path, tmp_path):
    rendered = paths.BUILD_DIR / "html.new"
    (rendered / "chapters").mkdir(parents=True)
    (rendered / "index.html").write_text("index")
    (rendered / "chapters" / "alpha.html").write_text("alpha")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the site")
    os.symlink(secret, rendered / "planted.html")
    os.symlink(tmp_path, rendered / "chapters" / "linked")
    os.symlink(rendered / "index.html", rendered / "chapters" / "again.html")
    os.mkfifo(rendered / "pipe")
    files = site_outcome.publish(rendered)
    site = paths.BUILD_DIR / "html"
    assert sorted(files) == ["chapters/alpha.html", "index.html"]
    assert site_outcome.scan(site) == (files, [])
    assert sorted(os.listdir(site)) == ["chapters", "index.html"]
    assert secret.read_text() == "not for the site"  # a link's target is untouched
    assert not rendered.exists()


def _page_env(root):
    from types import SimpleNamespace

    (root / "claims").mkdir(parents=True)
    (root / "intro.md").write_text("# Intro\n")
    (root / "claims" / "c.yaml").write_text("id: c\n")
    return SimpleNamespace(
        srcdir=root,
        doc2path=lambda docname: root / f"{docname}.md",
        dependencies={"intro": {str(root / "claims" / "c.yaml"), "claims/missing.json"}},
    )


def test_a_page_digest_covers_its_dependencies_by_content_not_by_place(tmp_path):
    here, there = _page_env(tmp_path / "here"), _page_env(tmp_path / "there")
    digest = render._page_digest(here, "intro")
    assert digest == render._page_digest(there, "intro")
    dependency = tmp_path / "here" / "claims" / "c.yaml"
    before = dependency.stat()
    dependency.write_text("id: d\n")
    os.utime(dependency, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert render._page_digest(here, "intro") != digest


def test_the_pages_that_exist_follow_the_contents_the_claims_and_the_configuration(
    tmp_path, monkeypatch
):
    # Sphinx never removes a page it stopped making, so a render starts from the published
    # site only while what decides the pages is as it was (a setting such as html_use_index
    # drops genindex.html).
    for name in ("REPO_ROOT", "CLAIMS_DIR"):
        monkeypatch.setattr(paths, name, tmp_path if name == "REPO_ROOT" else tmp_path / "claims")
    (tmp_path / "claims").mkdir()
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    (tmp_path / "_config.yml").write_text("title: A book\n")
    (tmp_path / "claims" / "c1-a-001.yaml").write_text("id: c1-a-001\n")
    before = site_outcome.pages_digest()
    assert site_outcome.pages_digest() == before
    edits = [
        ("_config.yml", "title: A book\nsphinx:\n  config:\n    html_use_index: false\n"),
        ("_toc.yml", "root: intro\nchapters: [{file: one}]\n"),
        ("claims/c1-b-001.yaml", "id: c1-b-001\n"),
    ]
    for name, text in edits:
        (tmp_path / name).write_text(text)
        after = site_outcome.pages_digest()
        assert after != before, name
        before = after
    (tmp_path / "claims" / "c1-a-001.yaml").write_text("id: c1-a-001\nstatement: edited\n")
    assert site_outcome.pages_digest() == before  # an entry's text shows on pages, not which exist
