"""Render the site with Jupyter Book's Sphinx into a new directory, reusing parsed pages.

Sphinx renders into ``_build/html.new``, reusing its parsed pages (``_build/.doctrees``) and,
when the same pages exist as last time, a copy of the published site (so only changed pages
are written); :func:`claimbook.pipeline.site_outcome.publish` then puts it in place.

Which pages Sphinx reads again is decided by content, not by modification times: every
render records the SHA-256 of each page's source and of the files Sphinx noted it depends on
(registry entries, artifacts, images, the bibliography) as it reads the page, and a page
whose digest differs from that record, or from the one stored with the published site, is
read again (the ``env-get-outdated`` event), whatever its modification time says; and a page
whose digest is both of those is not read again because a file's time is newer. A page of a
chapter cut into pages (:mod:`claimbook.extensions.chapter_pages`) is digested as the page it
serves, so an edit of one page of a chapter reads that page again, not all of them. After an
outcome with warnings the next render re-reads every page (``freshenv``), because Sphinx only
warns about the pages it reads.
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import re
import shutil
import sys
import time
from pathlib import Path

import yaml

from claimbook import cache, paths
from claimbook.errors import BuildError
from claimbook.pipeline import site_record
from claimbook.pipeline.site_key import judged_states
from claimbook.pipeline.site_outcome import OUTDATED_NOTE, site_dir

__all__ = ["SiteRender"]

# The environment's record of the page digests it read (pickled with it in .doctrees).
_READ_DIGESTS = "trainable_page_digests"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


_WARNING_LINE = re.compile(r"(WARNING|ERROR|CRITICAL):")


class _Tee(io.TextIOBase):
    """Keep a copy of what is written (Sphinx's warnings), writing the rest through to a
    stream: the warnings themselves the build prints once, after the render."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text):
        self.copy.write(text)
        if _WARNING_LINE.search(text):  # printed once, by the build, when the render ends
            return len(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()

    def isatty(self):
        return False


def _warnings(text: str) -> list[str]:
    """One entry per Sphinx warning or error (its first line and any continuation lines)."""
    entries: list[str] = []
    for line in _ANSI.sub("", text).splitlines():
        if "WARNING:" in line or "ERROR:" in line or "CRITICAL:" in line:
            entries.append(line.replace(f"{paths.REPO_ROOT}/", ""))
        elif entries and line.strip() and not line.startswith(("Running Sphinx", "loading")):
            entries[-1] += "\n" + line
    return entries


def _source_digest(path) -> str:
    """The digest of a file's bytes (None when absent: distinct from an empty file)."""
    return cache.digest(cache.file_bytes(path))


def _read_digest(env, docname: str) -> str:
    """The digest of what Sphinx reads for a page: the page a chapter serves for it, or the
    bytes of its source file (see :func:`claimbook.extensions.chapter_pages.served_digest`).
    """
    # Sphinx and the extensions are imported once the chapters run (SiteRender), never
    # before the build forks its chapter workers: a second on the path of every code edit.
    from claimbook.extensions.chapter_pages import served_digest

    served = served_digest(env, docname)
    return served if served is not None else _source_digest(env.doc2path(docname))


def _page_digest(env, docname: str, source: str | None = None) -> str:
    """The digest of a page's source (``source``, if known) and of each file it depends on.

    The dependencies are the ones Sphinx noted when it last read the page (absolute, or
    relative to the source directory), as its own modification-time check uses them; each
    is named relative to the source directory, so a digest does not depend on where the
    book lies.
    """
    parts = [source if source is not None else _read_digest(env, docname)]
    found = {os.path.join(env.srcdir, str(name)) for name in env.dependencies.get(docname, ())}
    for dependency in sorted(found):
        parts += [os.path.relpath(dependency, env.srcdir), _source_digest(dependency)]
    return cache.digest(*parts)


def _shown_elsewhere(env, docnames: list[str]) -> tuple:
    """What other pages show of ``docnames``: titles, section tables and labels; and every
    page's section and figure numbers."""
    labels = env.domaindata.get("std", {}).get("labels", {})
    return (
        list(docnames),
        [(str(env.titles.get(name, "")), str(env.tocs.get(name, ""))) for name in docnames],
        sorted((name, *value) for name, value in labels.items() if value[0] in docnames),
        copy.deepcopy((env.toc_secnumbers, env.toc_fignumbers)),
    )


def _has_doctree(env, docname: str) -> bool:
    """Whether the parsed page Sphinx keeps between builds is there (else it must read it)."""
    return os.path.isfile(os.path.join(env.doctreedir, f"{docname}.doctree"))


class SiteRender:
    """A Sphinx application for the whole book, made ready before the chapters finish.

    Constructing the application (Jupyter Book's configuration, every extension's setup, the
    stored environment, the theme) takes about half a second and reads nothing the chapters
    write: executed notebooks, claim artifacts and figures are only read by :meth:`run`. The
    build therefore constructs it while the chapters execute in other processes, and runs it
    once they are done. With ``reuse_pages`` (the same pages exist as in the published site,
    and the last render was clean), the new directory starts as a copy of the published site,
    times kept, so Sphinx writes only the pages whose sources changed; otherwise it starts
    empty and every page is written. ``fresh`` re-reads every page. ``published`` is the
    stored outcome (:func:`read_outcome`): the copy is made only if the published site is
    exactly its record, and a page whose digest differs from the one it stores is read again.

    This mirrors :func:`jupyter_book.sphinx.build_sphinx` (the ``jupyter-book build``
    command), split at the point where the application exists. Warnings go to standard error
    and are kept. An exception while constructing is kept and raised by :meth:`run`.
    """

    def __init__(self, fresh: bool, reuse_pages: bool = False, published: dict | None = None):
        self.fresh = fresh
        self.target = paths.BUILD_DIR / "html.new"
        self.tee = _Tee(sys.stderr)
        self.app = None
        self.error: BaseException | None = None
        self.sources: dict[str, str] = {}  # after run(): docname -> page digest, as read
        self._reading: dict[str, str] = {}  # docname -> its source's digest, before reading
        self._shown_before: tuple | None = None  # what other pages show of the pages read
        self._published_sources = dict(published["sources"]) if published else None
        self._published_states = published.get("states") if published else None
        self.written: list[str] = []  # after run(): the pages (documents) it wrote
        self._contexts = contextlib.ExitStack()
        shutil.rmtree(self.target, ignore_errors=True)
        self._copied = False  # whether the render starts from the published pages
        if reuse_pages and not fresh and published is not None:
            # Only a site exactly as published is carried over (regular files, each matching
            # its record); otherwise the render starts empty and writes every page.
            self._copied = site_record.copy_verified(
                site_dir(), self.target, published["files"], skip={OUTDATED_NOTE}
            )
        try:
            self._construct()
        except Exception as error:  # reported by run(), after the chapters
            self.error = error
            self._contexts.close()

    def _construct(self) -> None:
        # Imported here, while the chapters execute (see _read_digest).
        from jupyter_book.config import get_final_config
        from jupyter_book.pdf import update_latex_documents
        from sphinx.application import Sphinx
        from sphinx.util.docutils import docutils_namespace, patch_docutils

        configuration, meta = get_final_config(
            user_yaml=paths.REPO_ROOT / "_config.yml",
            cli_config={
                "external_toc_path": (paths.REPO_ROOT / "_toc.yml").as_posix(),
                "nitpicky": True,
                "latex_individualpages": False,  # what the jupyter-book command passes
            },
            sourcedir=paths.REPO_ROOT,
            use_external_toc=True,
        )
        # The themes append their template folders to templates_path, and Sphinx's default
        # for it is one list shared by every application: a list of this render's own keeps
        # a second render in this process from inheriting the first one's folders.
        configuration = copy.deepcopy(configuration)
        configuration["templates_path"] = list(configuration.get("templates_path") or [])
        # Docutils' global registries stay patched until run() has built the site.
        self._contexts.enter_context(patch_docutils(None))
        self._contexts.enter_context(docutils_namespace())
        app = Sphinx(
            srcdir=paths.REPO_ROOT,
            confdir=None,
            outdir=self.target,
            doctreedir=paths.BUILD_DIR / ".doctrees",
            buildername="html",
            confoverrides=configuration,
            status=None,
            warning=self.tee,
            freshenv=self.fresh,
            warningiserror=True,
            keep_going=True,
        )
        app.config.latex_documents = update_latex_documents(
            app.config.latex_documents, meta["latex_doc_overrides"]
        )
        if app.config["use_multitoc_numbering"]:
            if "numbered: true" in yaml.dump(app.config.external_site_map.as_json()):
                app.setup_extension("sphinx_multitoc_numbering")
        # After every other handler (the claims extension notes which pages a build reads).
        app.connect("env-before-read-docs", self._note_reading, priority=950)
        app.connect("env-get-outdated", self._outdated_by_content)
        app.connect("doctree-read", self._note_read, priority=900)
        # After Sphinx's own handler, which numbers sections and figures again.
        app.connect("env-get-updated", self._pages_showing_changes, priority=900)
        app.connect("html-page-context", self._note_written)
        self.app = app

    def _outdated_by_content(self, app, env, added, changed, removed) -> list[str]:
        """The pages whose source or dependencies differ from what was read or published.

        Sphinx compares modification times only; a page edited with its old time restored
        (``touch -r``), or whose dependency was, is found here and read again. And the other
        way round: a page Sphinx finds changed only by a file's time, whose digest is the
        one recorded when it was last read and the one published, is taken out of
        ``changed`` (Sphinx passes its own set), so it is neither read nor written again --
        the later pages of a chapter whose last page an edit changed, say. Pages another
        handler asks for are added by Sphinx after every handler has run, and with a
        changed configuration Sphinx has every page in ``added``, which is left alone.
        """
        read = getattr(env, _READ_DIGESTS, None)
        if not isinstance(read, dict):
            read = {}
            setattr(env, _READ_DIGESTS, read)
        for gone in set(read) - set(env.found_docs):
            del read[gone]
        published = self._published_sources
        outdated = []
        for docname in sorted(set(env.found_docs) - set(added)):
            now = _page_digest(env, docname)
            same = (
                read.get(docname) == now
                and published is not None
                and (published.get(docname) == now)
            )
            if docname not in changed:
                if read.get(docname) != now or (
                    published is not None and published.get(docname) != now
                ):
                    outdated.append(docname)
            elif same and docname not in env.reread_always and _has_doctree(env, docname):
                changed.discard(docname)
        return outdated

    def _note_reading(self, app, env, docnames: list[str]) -> None:
        for docname in docnames:
            self._reading[docname] = _read_digest(env, docname)
        self._shown_before = _shown_elsewhere(env, docnames)

    def _pages_showing_changes(self, app, env) -> list[str]:
        """Every page, when what other pages show of a page read again changed (its title,
        sections, labels, or any section or figure number): their navigation and references
        are drawn as they are written. Sphinx itself writes only a changed page's parents."""
        before = self._shown_before
        if before is None or _shown_elsewhere(env, before[0]) == before:
            return []
        return sorted(env.found_docs)

    def _note_written(self, app, pagename, templatename, context, doctree) -> None:
        if doctree is not None:  # a document's page, not the index or the search page
            self.written.append(pagename)

    def _note_read(self, app, doctree) -> None:
        """Record the digest of the page just read (its source as it was before reading)."""
        env = app.env
        docname = env.docname
        read = getattr(env, _READ_DIGESTS, None)
        if not isinstance(read, dict):
            read = {}
            setattr(env, _READ_DIGESTS, read)
        read[docname] = _page_digest(env, docname, self._reading.pop(docname, None))

    def _keep_unchanged_pages(self) -> None:
        """Mark the copied page of each document the edit left as published as newer than
        its sources, so that Sphinx's incremental build does not write it again.

        Sphinx writes a document whose source file is newer than its page, and a chapter's
        pages share one source, the executed notebook: an edit of one page would write the
        chapter's every page. A page is kept only when its content digest is the published
        one, every claim is judged as the published site shows it (badges are drawn as a page
        is written), and no template is newer than the page. Pages Sphinx reads again, the
        ones whose table of contents or numbers change, and every page after a change of
        configuration or footer (Sphinx's build info) are written as Sphinx decides.
        """
        published = self._published_sources
        if not self._copied or published is None or self._published_states != judged_states():
            return
        env, builder = self.app.env, self.app.builder
        templates = builder.templates.newest_template_mtime() if builder.templates else 0
        now = time.time()
        for docname in sorted(set(env.found_docs) & set(env.all_docs) & set(published)):
            page = builder.get_outfilename(docname)
            try:
                unchanged = os.path.getmtime(page) >= templates
            except OSError:
                continue
            if unchanged and _page_digest(env, docname) == published[docname]:
                os.utime(page, (now, now))

    def run(self) -> tuple[Path, list[str]]:
        """Read and write the site; return its directory and the warnings.

        Raises
        ------
        BuildError
            If Sphinx stopped with an exception, here or while constructing (nothing is
            published then).
        """
        saved, sys.stderr = sys.stderr, self.tee  # anything else the render prints, too
        try:
            if self.error is None:
                try:
                    self._keep_unchanged_pages()
                    self.app.build(False, [])
                except Exception as error:
                    self.error = error
        finally:
            sys.stderr = saved
            self._contexts.close()
        if self.error is not None:
            shutil.rmtree(self.target, ignore_errors=True)
            error = self.error
            raise BuildError(f"the site build stopped: {type(error).__name__}: {error}")
        env = self.app.env
        read = getattr(env, _READ_DIGESTS, {})
        self.sources = {name: read[name] for name in sorted(env.found_docs) if name in read}
        warnings = _warnings(self.tee.copy.getvalue())
        status = self.app.statuscode
        if status and not warnings:
            warnings = [f"Sphinx exited with status {status} without a readable warning"]
        return self.target, warnings

    def discard(self) -> None:
        """Give up the render (nothing changed, or a chapter failed): remove its directory."""
        self._contexts.close()
        shutil.rmtree(self.target, ignore_errors=True)
