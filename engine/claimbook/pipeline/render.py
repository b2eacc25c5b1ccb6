"""Render the site with Jupyter Book's Sphinx into a new directory, reusing parsed pages.

Sphinx renders into ``_build/html.new`` (:func:`.site_outcome.publish` puts it in place),
reusing ``_build/.doctrees`` and, when the same pages exist as last time, a copy of the
published site. Which pages are read again is decided by content, not modification times: a
page whose digest (its source, or the page a chapter serves for it, and every file Sphinx
noted it depends on) differs from the one recorded when it was last read or the one published
is read again, and one matching both is not. After warnings every page is read again
(Sphinx only warns about the pages it reads).
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
from claimbook.pipeline.site_outcome import OUTDATED_NOTE, copy_verified, judged_states, site_dir

# The environment's record of the page digests it read (pickled with it in .doctrees).
_READ_DIGESTS = "trainable_page_digests"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


_WARNING_LINE = re.compile(r"(WARNING|ERROR|CRITICAL):")


class _Tee(io.TextIOBase):
    """Keep a copy of what is written; pass all but warnings through (the build prints them)."""

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
    """The digest of what Sphinx reads for a page: the page a chapter serves for it
    (:func:`claimbook.extensions.chapter_pages.served_digest`), or its source file's bytes."""
    # Sphinx is imported only by a build that renders (a second).
    from claimbook.extensions.chapter_pages import served_digest

    served = served_digest(env, docname)
    return served if served is not None else _source_digest(env.doc2path(docname))


def _page_digest(env, docname: str, source: str | None = None) -> str:
    """The digest of a page's source (``source``, if known) and of each file Sphinx noted it
    depends on, named relative to the source directory."""
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


def _read_digests(env) -> dict:
    """The page digests the environment records as read (pickled with it)."""
    if not isinstance(getattr(env, _READ_DIGESTS, None), dict):
        setattr(env, _READ_DIGESTS, {})
    return getattr(env, _READ_DIGESTS)


def _has_doctree(env, docname: str) -> bool:
    """Whether the parsed page Sphinx keeps between builds is there (else it must read it)."""
    return os.path.isfile(os.path.join(env.doctreedir, f"{docname}.doctree"))


class SiteRender:
    """A Sphinx application for the whole book, run once the chapters are done.

    With ``reuse_pages`` (and not ``fresh``) the new directory starts as a copy of the
    published site, if it is exactly the record in ``published`` (the stored outcome), so
    Sphinx writes only changed pages. ``fresh`` re-reads every page. Mirrors
    :func:`jupyter_book.sphinx.build_sphinx`, split where the application exists; an
    exception while constructing is raised by :meth:`run`.
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
            self._copied = copy_verified(
                site_dir(), self.target, published["files"], skip={OUTDATED_NOTE}
            )
        try:
            self._construct()
        except Exception as error:  # reported by run(), after the chapters
            self.error = error
            self._contexts.close()

    def _construct(self) -> None:
        # Imported here: see _read_digest.
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
        # Themes append to templates_path, whose default list every application shares.
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
        """The pages whose digest differs from the one read or published; and a page Sphinx
        finds changed by time alone, matching both, is taken out of ``changed`` (Sphinx's own
        set). ``added`` (every page after a configuration change) is left alone."""
        read = _read_digests(env)
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
        """Every page, when what other pages show of a page read again changed (title,
        sections, labels, numbers); Sphinx itself writes only a changed page's parents."""
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
        read = _read_digests(env)
        read[docname] = _page_digest(env, docname, self._reading.pop(docname, None))

    def _keep_unchanged_pages(self) -> None:
        """Touch each copied page whose digest is the published one, so that Sphinx does not
        write it again (a chapter's pages share one source, the notebook). Only while every
        claim is judged as published and no template is newer than the page."""
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
        """Read and write the site; return its directory and the warnings. Raises
        :class:`BuildError` if Sphinx stopped with an exception (nothing is published)."""
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
