"""A chapter rendered as several pages (claimbook.extensions.chapter_pages) on a fixture book.

``tests/books/pages`` has a first chapter cut into three pages and a second chapter of one.
It is built split and, with the declaration and the table-of-contents entries removed,
unsplit: every section, equation and figure must carry the same number both ways, every
numbered reference the same text, and every internal link must reach an id of its page.
"""

import json
import posixpath
import re
from pathlib import Path
from types import SimpleNamespace

import jupytext
import pytest
from bs4 import BeautifulSoup

pytestmark = pytest.mark.book

PAGES = ["one", "one-more", "one-exercises", "two"]
BOOKS = Path(__file__).resolve().parents[2] / "books"
DECLARATION = (
    "pages:\n- file: one-more\n  starts: sec-one-c\n"
    "- file: one-exercises\n  starts: sec-one-exercises\n"
)
TOC_SECTIONS = (
    "        sections:\n"
    "          - file: chapters/one-more\n"
    "          - file: chapters/one-exercises\n"
)


def _build(copy_book, tmp_path, split=True):
    book = copy_book("pages", tmp_path)
    if not split:
        book.edit("chapters/one.md", DECLARATION, "")
        book.edit("_toc.yml", TOC_SECTIONS, "")
    for source in (book.root / "chapters").glob("*.md"):
        # The "executed" notebooks: no cell here prints anything, so no kernel is needed.
        jupytext.write(jupytext.read(source), source.with_suffix(".ipynb"))
    process = book.build()
    assert process.returncode == 0, process.log
    return book


@pytest.fixture(scope="module")
def books(tmp_path_factory, copy_fixture_book):
    return {
        name: _build(copy_fixture_book, tmp_path_factory.mktemp(name), split=name != "whole")
        for name in ("split", "again", "whole")
    }


def _soups(book):
    return {
        name: BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for name in PAGES
        if (path := book.site / "chapters" / f"{name}.html").exists()
    }


def _numbers(book) -> dict[str, str]:
    """Every section, figure and equation of the chapters: its id -> its number."""
    found = {}
    for soup in _soups(book).values():
        article = soup.select_one("article.bd-article")
        for section in article.select("section[id]"):
            heading = section.find(re.compile("^h[1-6]$"))
            found[f"section {section['id']}"] = heading.get_text(" ", strip=True).split()[0]
        for figure in article.select("figure[id]"):
            found[f"figure {figure['id']}"] = figure.select_one(".caption-number").get_text()
        for number in article.select("span.eqno"):
            found[f"equation {number.parent['id']}"] = number.contents[0].strip()
    return found


def _references(book) -> list[str]:
    """The text of every internal reference in the chapters' prose, in reading order."""
    texts = []
    for name in PAGES:
        soup = _soups(book).get(name)
        if soup is None:
            continue
        for link in soup.select("article.bd-article a.reference.internal"):
            if not link.find_parent(class_="toctree-wrapper"):
                texts.append(" ".join(link.get_text().split()))
    return texts


def test_the_first_chapter_is_three_pages_and_the_second_one(books):
    assert sorted(_soups(books["split"])) == sorted(PAGES)
    assert sorted(_soups(books["whole"])) == ["one", "two"]


def test_every_number_is_the_one_the_unsplit_chapter_gives(books):
    split, whole = _numbers(books["split"]), _numbers(books["whole"])
    assert split == whole
    assert split["section section-c"] == "15.3."
    assert split["section a-part-of-section-c"] == "15.3.1."
    assert split["section exercises"] == "15.5."
    assert split["figure fig-one-c"] == "Fig. 15.2 "
    assert split["equation equation-eq-one-d"] == "(15.4)"
    assert split["section chapter-two"] == "16."
    assert split["figure fig-two-a"] == "Fig. 16.1 "


def test_every_reference_reads_the_same_and_reaches_its_target(books):
    book = books["split"]
    assert _references(book) == _references(books["whole"])
    assert {"(15.1)", "Fig. 15.2", "Section 15.3.1", "Section 15.5"} <= set(_references(book))
    ids = {
        f"chapters/{name}.html": {element["id"] for element in soup.find_all(id=True)}
        for name, soup in _soups(book).items()
    }
    checked = 0
    for name, soup in _soups(book).items():
        for link in soup.select("article.bd-article a.reference.internal[href]"):
            path, _, fragment = link["href"].partition("#")
            target = posixpath.normpath(posixpath.join("chapters", path)) if path else None
            target = target or f"chapters/{name}.html"
            if target in ids and fragment:
                assert fragment in ids[target], (name, link["href"])
                checked += 1
    assert checked >= 8


def test_the_pages_are_linked_in_order_and_in_the_sidebar(books):
    soups = _soups(books["split"])
    nexts = {
        name: soup.select_one("a.right-next")["href"]
        for name, soup in soups.items()
        if soup.select_one("a.right-next")
    }
    assert nexts["one"] == "one-more.html" and nexts["one-more"] == "one-exercises.html"
    assert nexts["one-exercises"] == "two.html"
    sidebar = [a["href"] for a in soups["one-more"].select("nav.bd-docs-nav a.reference")]
    assert sidebar.index("one.html") < sidebar.index("#") < sidebar.index("one-exercises.html")


def test_every_page_launches_and_downloads_the_whole_chapter_notebook(books):
    soup = _soups(books["split"])["one-exercises"]
    hrefs = [a["href"] for a in soup.select("a[href]")]
    assert "../_sources/chapters/one.ipynb" in hrefs
    assert not [href for href in hrefs if "one-exercises.ipynb" in href]
    assert not (books["split"].site / "_sources" / "chapters" / "one-exercises.ipynb").exists()


def test_the_split_renders_the_same_pages_every_time(books):
    for name in PAGES:
        first = (books["split"].site / "chapters" / f"{name}.html").read_bytes()
        assert first == (books["again"].site / "chapters" / f"{name}.html").read_bytes(), name


def _write_notebooks(book):
    """The "executed" notebooks, with the cell ids the build gives (numbered, not random)."""
    from claimbook.sources import read_chapter

    for source in (book.root / "chapters").glob("*.md"):
        jupytext.write(read_chapter(source).notebook, source.with_suffix(".ipynb"))


def _assert_as_rendered_from_nothing(book, copy_fixture_book, tmp_path, old, new) -> None:
    """``book``'s site is, file for file, what a render from nothing writes after the same
    edit: every page, the search index, the rest."""
    fresh = copy_fixture_book("pages", tmp_path / "fresh")
    fresh.edit("chapters/one.md", old, new)
    _write_notebooks(fresh)
    assert fresh.build().returncode == 0

    def files(site):
        return {p.relative_to(site).as_posix(): p for p in site.rglob("*") if p.is_file()}

    ours, theirs = files(book.site), files(fresh.site)
    assert sorted(ours) == sorted(theirs)
    assert [name for name in ours if ours[name].read_bytes() != theirs[name].read_bytes()] == []


def test_only_the_page_whose_cells_changed_is_read_again(copy_fixture_book, tmp_path):
    book = copy_fixture_book("pages", tmp_path / "edited")
    _write_notebooks(book)
    assert book.build(carry_over=True).returncode == 0
    doctrees = book.root / "_build" / ".doctrees" / "chapters"
    before = {name: (doctrees / f"{name}.doctree").stat().st_mtime_ns for name in PAGES}
    # A sentence added to the exercises, the chapter's last page: its source and its
    # executed notebook are written again, so every page of it is newer than its doctree.
    book.edit("chapters/one.md", "Nothing cited.", "Nothing cited, still.")
    _write_notebooks(book)
    edited = book.build(carry_over=True)
    assert edited.returncode == 0, edited.log
    # Read again: that page alone, not those Sphinx finds newer only by their notebook's time
    # (their content digests are unchanged). Written again: that page and the pages that
    # list it (the chapter's first page, the root), not the chapter's other pages.
    assert "chapters/one-exercises" in edited.written
    assert "chapters/one-more" not in edited.written
    read_again = {
        name for name in PAGES if (doctrees / f"{name}.doctree").stat().st_mtime_ns != before[name]
    }
    assert read_again == {"one-exercises"}
    assert "Nothing cited, still." in book.page("chapters/one-exercises.html")
    _assert_as_rendered_from_nothing(
        book, copy_fixture_book, tmp_path, "Nothing cited.", "Nothing cited, still."
    )


def test_a_heading_changed_on_a_page_writes_the_pages_that_show_it(copy_fixture_book, tmp_path):
    book = copy_fixture_book("pages", tmp_path / "edited")
    _write_notebooks(book)
    assert book.build(carry_over=True).returncode == 0
    # The last page's subsection is in the chapter's table of contents (the first page) and
    # in the sidebar of every page, so every page is written, as Sphinx's own rule would.
    book.edit("chapters/one.md", "### Worked solutions", "### Worked solutions, in full")
    _write_notebooks(book)
    edited = book.build(carry_over=True)
    assert edited.returncode == 0
    assert {"chapters/one", "chapters/one-more", "chapters/one-exercises"} <= set(edited.written)
    _assert_as_rendered_from_nothing(
        book, copy_fixture_book, tmp_path, "### Worked solutions", "### Worked solutions, in full"
    )


class _Env:
    """What served_digest reads of Sphinx's environment: the pages and the notebook's path."""

    def __init__(self, notebook, starts=("sec-one-c", "sec-one-exercises")):
        self.notebook = notebook
        self.trainable_chapter_pages = {
            "chapters/one": [
                ("chapters/one-more", starts[0]),
                ("chapters/one-exercises", starts[1]),
            ]
        }

    def doc2path(self, docname):
        return self.notebook


def _cells(path, change):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    change(notebook["cells"])
    path.write_text(json.dumps(notebook), encoding="utf-8")


def test_a_page_digest_follows_what_the_page_shows(tmp_path):
    from claimbook.extensions.chapter_pages import served_digest

    notebook = tmp_path / "one.ipynb"
    from claimbook.sources import read_chapter

    jupytext.write(read_chapter(BOOKS / "pages" / "chapters" / "one.md").notebook, notebook)
    env = _Env(notebook)
    pages = ["chapters/one", "chapters/one-more", "chapters/one-exercises"]
    first = {page: served_digest(env, page) for page in pages}
    assert None not in first.values() and served_digest(env, "chapters/two") is None
    # A cell of the last page changes: only that page.
    _cells(
        notebook, lambda cells: cells[-1].update(source="".join(cells[-1]["source"]) + "\nMore.")
    )
    second = {page: served_digest(env, page) for page in pages}
    assert [second[p] != first[p] for p in pages] == [False, False, True]
    # A value glued by a code cell of the first page is pasted on every page: all change.
    glued = {
        "output_type": "display_data",
        "data": {"text/plain": "2"},
        "metadata": {"scrapbook": {"name": "b", "mime_prefix": ""}},
    }
    code = next(
        i
        for i, cell in enumerate(json.loads(notebook.read_text())["cells"])
        if cell["cell_type"] == "code"
    )
    _cells(notebook, lambda cells: cells[code].update(outputs=[glued]))
    third = {page: served_digest(env, page) for page in pages}
    assert all(third[p] != second[p] for p in pages)
    # Where the pages start is part of each page.
    moved = _Env(notebook, starts=("sec-one-c-part", "sec-one-exercises"))
    assert served_digest(moved, "chapters/one-more") != third["chapters/one-more"]
    # A notebook that cannot be cut into its pages: no digest (its bytes decide).
    notebook.write_text("{not json", encoding="utf-8")
    assert served_digest(env, "chapters/one") is None


def test_a_page_digest_is_the_digest_of_what_sphinx_is_served(tmp_path, monkeypatch):
    from claimbook import cache, paths
    from claimbook.extensions import chapter_pages
    from claimbook.sources import read_chapter

    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path / "_build")
    cache.reset()
    notebook = tmp_path / "one.ipynb"
    jupytext.write(read_chapter(BOOKS / "pages" / "chapters" / "one.md").notebook, notebook)
    env = _Env(notebook)
    text = notebook.read_text(encoding="utf-8")
    pages = ["chapters/one", "chapters/one-more", "chapters/one-exercises"]
    digests = {page: chapter_pages.served_digest(env, page) for page in pages}
    for page in pages:
        served = [text]  # what the source-read handler gives Sphinx for the page
        chapter_pages._serve_page(SimpleNamespace(env=env), page, served)
        assert digests[page] == cache.digest(served[0])
    # Within a build the notebook is cut once; a page asked for again is not cut again.
    monkeypatch.setattr(chapter_pages, "split_notebook", None)
    assert {page: chapter_pages.served_digest(env, page) for page in pages} == digests
