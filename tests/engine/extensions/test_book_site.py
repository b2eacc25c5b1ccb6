"""claimbook.extensions.book_site: the footer's build stamp, the page assets it keeps, and the
theme stack's HTML mended for axe-core."""

import os
import subprocess
from types import SimpleNamespace

import pytest

from claimbook import build_stamp
from claimbook.extensions import book_site
from claimbook.extensions.book_site import mend


def _repository(root):
    def git(*arguments):
        return subprocess.run(
            ["git", "-C", str(root), *arguments], check=True, capture_output=True, text=True
        ).stdout.strip()

    root.mkdir()
    git("init", "-q")
    (root / "a.md").write_text("a\n")
    git("add", "a.md")
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(
        ["git", "-C", str(root), *identity, "commit", "-qm", "a"],
        check=True,
        env={**os.environ, "GIT_COMMITTER_DATE": "2026-11-30T12:00:00Z"},
    )
    return git


def test_the_stamp_is_the_commit_and_its_date_not_the_clock(tmp_path):
    git = _repository(tmp_path / "book")
    stamp = build_stamp.build_stamp(str(tmp_path / "book"), environ={})
    commit = git("rev-parse", "--short", "HEAD")
    assert stamp == {"commit": commit, "date": "2026-11-30", "dirty": ""}


def test_an_uncommitted_change_is_said_in_the_stamp(tmp_path):
    _repository(tmp_path / "book")
    (tmp_path / "book" / "a.md").write_text("changed\n")
    assert build_stamp.build_stamp(str(tmp_path / "book"), environ={})["dirty"] == (
        "uncommitted changes"
    )


def test_the_environment_states_commit_and_date_instead_of_git(tmp_path):
    environ = {build_stamp.COMMIT_VARIABLE: "abc1234", build_stamp.DATE_VARIABLE: "2026-12-01"}
    stamp = build_stamp.build_stamp(str(tmp_path), environ=environ)  # not a repository
    assert stamp == {"commit": "abc1234", "date": "2026-12-01", "dirty": ""}


def test_outside_a_repository_the_stamp_says_unknown(tmp_path):
    assert build_stamp.build_stamp(str(tmp_path), environ={}) == {
        "commit": "unknown",
        "date": "unknown",
        "dirty": "",
    }


def test_the_footer_escapes_what_it_shows():
    clean = book_site.footer_html({"commit": "abc1234", "date": "2026-12-01", "dirty": ""})
    assert clean == (
        '<p class="build-stamp">Built from commit <code class="build-commit">abc1234</code>'
        ' (<span class="build-date">2026-12-01</span>).</p>'
    )
    dirty = book_site.footer_html({"commit": "<b>", "date": "&", "dirty": "uncommitted changes"})
    assert "&lt;b&gt;" in dirty and '(<span class="build-date">&amp;</span>)' in dirty
    assert dirty.endswith('with <span class="build-dirty">uncommitted changes</span>.</p>')


def test_configuring_twice_leaves_one_footer_line(tmp_path, monkeypatch):
    monkeypatch.setattr(
        book_site, "build_stamp", lambda srcdir: {"commit": "c1", "date": "d", "dirty": ""}
    )
    config = SimpleNamespace(html_context={}, html_theme_options={"extra_footer": "<p>own</p>"})
    app = SimpleNamespace(srcdir=str(tmp_path))
    book_site._configure(app, config)
    book_site._configure(app, config)
    footer = config.html_theme_options["extra_footer"]
    assert footer.startswith("<p>own</p>") and footer.count("build-stamp") == 1
    assert config.html_context["default_mode"] == "auto"


def _script(filename="", **attributes):
    return SimpleNamespace(filename=filename, attributes=attributes)


def test_page_assets_lose_thebe_and_duplicates_and_keep_their_order():
    kept_first = _script("_static/a.js")
    scripts = [
        kept_first,
        _script("_static/sphinx-thebe.js"),
        _script("", body="const THEBE_JS_URL = 'x'"),
        _script("_static/a.js"),  # the same script twice
        _script("_static/a.js", defer="defer"),  # the same file, other attributes: kept
    ]
    styles = ["_static/sphinx-thebe.css", "_static/b.css"]
    context = {"script_files": scripts, "css_files": styles}
    book_site._clean_assets(None, "intro", "page.html", context, None)
    assert [(s.filename, s.attributes) for s in scripts] == [
        ("_static/a.js", {}),
        ("_static/a.js", {"defer": "defer"}),
    ]
    assert scripts[0] is kept_first and styles == ["_static/b.css"]


@pytest.mark.parametrize(
    ("script", "thebe"),
    [
        (_script("_static/sphinx-thebe.js"), True),
        (_script("", body="THEBE_JS_URL"), True),
        (_script("_static/thebe-notes.js"), False),
        ("plain-string.js", False),
    ],
)
def test_what_counts_as_thebe(script, thebe):
    assert book_site._is_thebe(script) is thebe


def _header(pdf_digest: str) -> list[dict]:
    """The header buttons of a page after the extension's handler, for a linked PDF's
    digest ("" when the site links none)."""
    context = {
        "header_buttons": [
            {
                "label": "download-buttons",
                "buttons": [{"label": "download-source-button"}, {"label": "download-pdf-button"}],
            },
            {"label": "fullscreen-button"},
        ],
        "pathto": lambda name, resource: f"../{name}",
    }
    app = SimpleNamespace(config=SimpleNamespace(trainable_book_pdf=pdf_digest))
    book_site._pdf_button(app, "chapters/a", "page.html", context, None)
    return context["header_buttons"]


def test_the_one_page_print_button_goes_and_the_book_pdf_is_linked_only_when_current():
    without = _header("")
    assert [b["label"] for b in without] == ["download-buttons", "fullscreen-button"]
    assert [b["label"] for b in without[0]["buttons"]] == ["download-source-button"]
    linked = _header("ab" * 32)
    assert [b["label"] for b in linked] == [
        "download-buttons",
        "book-pdf-button",
        "fullscreen-button",
    ]
    assert linked[1]["url"] == "../book.pdf" and linked[1]["type"] == "link"
    assert [b["label"] for b in linked[0]["buttons"]] == ["download-source-button"]


BIBLIOGRAPHY = (
    '<div role="list" class="citation-list">\n'
    '<div class="citation" id="id45" role="doc-biblioentry">\n'
    '<span class="label"><a role="doc-backlink" href="#id9">Arora et al., 2019</a></span>\n'
    "</div>\n"
    '<div class="citation" id="id31" role="doc-biblioentry"></div>\n'
    "</div>"
)


def test_bibliography_entries_become_list_items():
    mended = mend(BIBLIOGRAPHY)
    assert "doc-biblioentry" not in mended
    assert mended.count('role="listitem"') == 2
    assert 'role="doc-backlink"' in mended  # inside an entry, where it is allowed


def test_a_hidden_cell_toggle_is_named_by_its_visible_words():
    toggle = (
        '<summary aria-label="Toggle hidden content">\n'
        '<p class="collapsed admonition-title">Show code cell content</p>\n</summary>'
    )
    mended = mend(toggle)
    assert mended.startswith("<summary>\n") and "aria-label" not in mended
    assert "Show code cell content" in mended


def test_every_table_container_is_a_focusable_labelled_region():
    body = '<div class="pst-scrollable-table-container"><table></table></div>' * 3
    mended = mend(body)
    assert mended.count('tabindex="0" role="region"') == 3
    labels = [f'aria-label="Table {k}, scrolls sideways"' for k in (1, 2, 3)]
    assert all(label in mended for label in labels)


def test_a_page_without_these_is_unchanged():
    body = '<p>A <a href="#x">link</a> and <summary>Proof</summary></p>'
    assert mend(body) == body
