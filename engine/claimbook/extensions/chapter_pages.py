"""Serve a chapter's pages to Sphinx, each a view of the chapter's one executed notebook: a
chapter whose front matter declares ``pages:`` is one document per page (``_toc.yml``'s
``sections``), whose download and launch buttons offer the chapter's reader notebook."""

import json
from pathlib import Path
from typing import ClassVar

from sphinx.project import Project
from sphinx.util import logging

from claimbook import cache
from claimbook.errors import ChapterSourceError
from claimbook.pages import split_notebook
from claimbook.reader_notebooks import write_reader_notebooks
from claimbook.sources import chapter_pages, chapter_sources

logger = logging.getLogger(__name__)

# A chapter's pages and their digests, by the notebook's text and the page starts.
_PAGES = cache.ContentCache("chapter pages")
_SERVED_DIGESTS = cache.ContentCache("served page digests")


class PagedProject(Project):
    """Sphinx's project, whose discovery adds each chapter page (``trainable_pages``: page
    docname -> chapter docname) as a name of its notebook."""

    trainable_pages: ClassVar[dict[str, str]] = {}

    def discover(self, exclude_paths=(), include_paths=("**",)) -> set[str]:
        docnames = super().discover(exclude_paths, include_paths)
        for page, chapter in self.trainable_pages.items():
            if chapter in docnames:
                docnames.add(page)
                self._docname_to_path[page] = self._docname_to_path[chapter]
        return docnames


def _setup_pages(app) -> None:
    """Find the chapters' pages (``env.trainable_chapter_pages``: chapter -> [(page, start
    label)]), have discovery add them, and check ``_toc.yml`` lists them in order."""
    try:
        declared = {
            f"chapters/{source.stem}": [(f"chapters/{page.file}", page.starts) for page in pages]
            for source in chapter_sources(app.srcdir)
            if (pages := chapter_pages(source))
        }
    except ChapterSourceError as error:
        logger.warning("%s", error, type="trainable", subtype="pages")
        declared = {}
    app.env.trainable_chapter_pages = declared
    app.project.__class__ = PagedProject
    app.project.trainable_pages = {
        page: chapter for chapter, pages in declared.items() for page, _start in pages
    }
    site_map = getattr(app.config, "external_site_map", None) or {}
    for chapter, pages in declared.items():
        if chapter not in site_map:
            continue
        listed = [name for tree in site_map[chapter].subtrees for name in tree.files()]
        wanted = [page for page, _start in pages]
        if listed != wanted:
            logger.warning(
                "_toc.yml lists %s under %s; its source's front matter `pages:` declares %s "
                "(list the same pages, in the same order)",
                listed or "no sections",
                chapter,
                wanted,
                type="trainable",
                subtype="pages",
            )


def _chapter_of(env, docname: str) -> tuple[str, int] | None:
    """(chapter docname, page index) of a chapter that has pages, or None."""
    declared = getattr(env, "trainable_chapter_pages", {})
    if docname in declared:
        return docname, 0
    for chapter, pages in declared.items():
        for index, (page, _start) in enumerate(pages, start=1):
            if page == docname:
                return chapter, index
    return None


def chapter_docname(env, docname: str) -> str:
    """The chapter a page belongs to (a page that is no later page is its own chapter)."""
    found = _chapter_of(env, docname)
    return found[0] if found is not None else docname


def _pages(env, chapter: str, text: str) -> tuple[str, list[dict]]:
    """The cache key and pages of a chapter's notebook ``text``; raises ValueError or
    ChapterSourceError."""
    starts = [start for _page, start in env.trainable_chapter_pages[chapter]]
    key = cache.digest(text, *starts)
    return key, _PAGES.get(key, lambda: split_notebook(json.loads(text), starts))


def served_digest(env, docname: str) -> str | None:
    """The digest of what Sphinx reads for ``docname`` if it is a chapter's page (it changes
    only when the page would read differently); else None."""
    found = _chapter_of(env, docname)
    if found is None:
        return None
    chapter, index = found
    try:
        key, pages = _pages(env, chapter, cache.file_bytes(env.doc2path(docname)).decode())
        digests = _SERVED_DIGESTS.get(
            key, lambda: [cache.digest(json.dumps(page, ensure_ascii=False)) for page in pages]
        )
        return digests[index]
    except (AttributeError, IndexError, UnicodeDecodeError, ValueError, ChapterSourceError):
        return None


def _serve_page(app, docname: str, source: list[str]) -> None:
    # No dependency on the chapter's source: served_digest covers the page starts it declares.
    found = _chapter_of(app.env, docname)
    if found is not None:
        try:
            page = _pages(app.env, found[0], source[0])[1][found[1]]
            source[0] = json.dumps(page, ensure_ascii=False)
        except (ValueError, ChapterSourceError) as error:
            logger.warning("%s: %s", found[0], error, location=docname, type="trainable")


def _chapter_source_name(app, pagename, templatename, context, doctree) -> None:
    """Before the theme's buttons: a page's source (download) is the chapter's notebook."""
    found = _chapter_of(app.env, pagename)
    if found is None or not context.get("sourcename"):
        return
    # Sphinx cuts the page's name off the notebook's path, which only the chapter's prefixes.
    chapter_path = app.env.doc2path(found[0], False)
    context["page_source_suffix"] = Path(chapter_path).suffix
    context["sourcename"] = Path(chapter_path).as_posix()


def _chapter_launch(app, pagename, templatename, context, doctree) -> None:
    """After the theme's buttons: launch the chapter's notebook, not the page's name."""
    found = _chapter_of(app.env, pagename)
    if found is None or found[1] == 0 or "header_buttons" not in context:
        return
    buttons = json.dumps(context["header_buttons"])
    launched = buttons.replace(f"/{pagename}.ipynb", f"/{found[0]}.ipynb")
    context["header_buttons"] = json.loads(launched)


def _reader_downloads(app, exception) -> None:
    """The download button's notebooks (``_sources/chapters/<stem>.ipynb``) as a reader reads
    them, unless myst-nb executed the chapters."""
    if app.config.nb_execution_mode != "off":
        logger.info("reader notebooks: not written (myst-nb executed the chapters)")
    elif exception is None and app.builder.format == "html":
        srcdir = Path(app.srcdir)
        outdir = Path(app.outdir) / "_sources" / "chapters"
        write_reader_notebooks(srcdir / "chapters", outdir, root=srcdir)


def setup(app):
    app.connect("builder-inited", _setup_pages, priority=400)
    app.connect("build-finished", _reader_downloads)
    app.connect("source-read", _serve_page, priority=400)
    app.connect("html-page-context", _chapter_source_name, priority=400)
    app.connect("html-page-context", _chapter_launch, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
