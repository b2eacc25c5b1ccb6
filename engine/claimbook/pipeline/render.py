"""Render the site with Jupyter Book's Sphinx into a new directory, reusing parsed pages:
a page is read again when its content digest (source and dependencies) changed, and the render
starts from a copy of the published site, whose unchanged pages are not rewritten."""

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

_READ_DIGESTS = "trainable_page_digests"  # the environment's record (pickled with it)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_WARNING_LINE = re.compile(r"(WARNING|ERROR|CRITICAL):")


class _Tee(io.StringIO):
    """Sphinx's warning stream and stderr: all kept, all but the warnings passed on."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream

    def write(self, text):
        if not _WARNING_LINE.search(text):
            self.stream.write(text)
        return super().write(text)


def _warnings(text: str) -> list[str]:
    """One entry per Sphinx warning or error (its first line and any continuation lines)."""
    entries: list[str] = []
    for line in _ANSI.sub("", text).splitlines():
        if _WARNING_LINE.search(line):
            entries.append(line.replace(f"{paths.REPO_ROOT}/", ""))
        elif entries and line.strip() and not line.startswith(("Running Sphinx", "loading")):
            entries[-1] += "\n" + line
    return entries


def _source_digest(env, docname: str) -> str:
    """The digest of what Sphinx reads for a page: the chapter page served, or its file."""
    from claimbook.extensions.chapter_pages import served_digest  # Sphinx: only to render

    served = served_digest(env, docname)
    return served or cache.digest(cache.file_bytes(env.doc2path(docname)))


def _page_digest(env, docname: str, source: str | None = None) -> str:
    """The digest of a page's source (``source``, if known) and of each file Sphinx noted it
    depends on, by relative path."""
    parts = [source or _source_digest(env, docname)]
    found = {os.path.join(env.srcdir, str(name)) for name in env.dependencies.get(docname, ())}
    for dependency in sorted(found):
        parts += [
            os.path.relpath(dependency, env.srcdir),
            cache.digest(cache.file_bytes(dependency)),
        ]
    return cache.digest(*parts)


def _shown_elsewhere(env, docnames: list[str]) -> tuple:
    """What other pages show of ``docnames`` (titles, section tables, labels), and every page's
    section and figure numbers."""
    labels = env.domaindata.get("std", {}).get("labels", {})
    return (
        list(docnames),
        [(str(env.titles.get(name, "")), str(env.tocs.get(name, ""))) for name in docnames],
        sorted((name, *value) for name, value in labels.items() if value[0] in docnames),
        copy.deepcopy((env.toc_secnumbers, env.toc_fignumbers)),
    )


class SiteRender:
    """The whole book rendered by one Sphinx application. Unless ``fresh`` (every page read
    again), the new directory starts as a copy of the published site if it is exactly the
    stored outcome ``published``. After :meth:`run`, ``sources`` holds each page's digest as
    read and ``written`` the pages written."""

    def __init__(self, fresh: bool, published: dict | None = None):
        self.fresh, self.published = fresh, published
        self.target = paths.BUILD_DIR / "html.new"
        self.sources: dict[str, str] = {}
        self.written: list[str] = []
        self._reading: dict[str, str] = {}  # docname -> what Sphinx reads, before it reads
        self._shown_before: tuple | None = None

    def run(self) -> tuple[Path, list[str]]:
        """Read and write the site; return its directory and the warnings. BuildError if
        Sphinx stopped with an exception."""
        from sphinx.util.docutils import docutils_namespace, patch_docutils

        shutil.rmtree(self.target, ignore_errors=True)
        published = self.published
        copied = (
            not self.fresh
            and published is not None
            and copy_verified(site_dir(), self.target, published["files"], skip={OUTDATED_NOTE})
        )
        tee = _Tee(sys.stderr)
        try:
            with contextlib.redirect_stderr(tee), patch_docutils(None), docutils_namespace():
                app = self._sphinx(tee)
                # Pages are kept only while every claim is judged as they show it.
                if copied and published.get("states") == judged_states():
                    _keep_unchanged_pages(app, published["sources"])
                app.build(False, [])
        except Exception as error:
            shutil.rmtree(self.target, ignore_errors=True)
            raise BuildError(f"the site build stopped: {type(error).__name__}: {error}") from error
        read = getattr(app.env, _READ_DIGESTS, {})
        self.sources = {name: read[name] for name in sorted(app.env.found_docs) if name in read}
        warnings = _warnings(tee.getvalue())
        if app.statuscode and not warnings:
            warnings = [f"Sphinx exited with status {app.statuscode} without a readable warning"]
        return self.target, warnings

    def _sphinx(self, tee):
        """The HTML application :func:`jupyter_book.sphinx.build_sphinx` makes, with our events."""
        from jupyter_book.config import get_final_config
        from sphinx.application import Sphinx

        configuration, _meta = get_final_config(
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
        app = Sphinx(
            srcdir=paths.REPO_ROOT,
            confdir=None,
            outdir=self.target,
            doctreedir=paths.BUILD_DIR / ".doctrees",
            buildername="html",
            confoverrides=configuration,
            status=None,
            warning=tee,
            freshenv=self.fresh,
            warningiserror=True,
            keep_going=True,
        )
        if app.config["use_multitoc_numbering"]:
            if "numbered: true" in yaml.dump(app.config.external_site_map.as_json()):
                app.setup_extension("sphinx_multitoc_numbering")
        app.connect("env-get-outdated", self._outdated_by_content)
        # After every other handler (the claims extension notes which pages a build reads).
        app.connect("env-before-read-docs", self._note_reading, priority=950)
        # After Sphinx's own handler, which numbers sections and figures again.
        app.connect("env-get-updated", self._note_read, priority=900)
        app.connect("html-page-context", self._note_written)
        return app

    def _outdated_by_content(self, app, env, added, changed, removed) -> list[str]:
        """The pages whose digest differs from the one read or published; a page in ``changed``
        (by time) matching both is taken out of it."""
        read = env.__dict__.setdefault(_READ_DIGESTS, {})
        for gone in set(read) - env.found_docs:
            del read[gone]
        published = self.published["sources"] if self.published else None
        outdated = []
        for docname in sorted(env.found_docs - added):
            now = _page_digest(env, docname)
            same = read.get(docname) == now and (
                published is None or published.get(docname) == now
            )
            if docname not in changed:
                if not same:
                    outdated.append(docname)
            elif (
                same
                and published is not None
                and docname not in env.reread_always
                and os.path.isfile(os.path.join(env.doctreedir, f"{docname}.doctree"))
            ):
                changed.discard(docname)
        return outdated

    def _note_reading(self, app, env, docnames: list[str]) -> None:
        self._reading = {docname: _source_digest(env, docname) for docname in docnames}
        self._shown_before = _shown_elsewhere(env, docnames)

    def _note_read(self, app, env) -> list[str]:
        """Record each page read's digest (its source as before reading); return every page when
        what others show of one read changed (Sphinx writes only a changed page's parents)."""
        read = env.__dict__.setdefault(_READ_DIGESTS, {})
        for docname, source in self._reading.items():
            read[docname] = _page_digest(env, docname, source)
        before = self._shown_before
        if before is None or _shown_elsewhere(env, before[0]) == before:
            return []
        return sorted(env.found_docs)

    def _note_written(self, app, pagename, templatename, context, doctree) -> None:
        if doctree is not None:  # a document's page, not the index or the search page
            self.written.append(pagename)


def _keep_unchanged_pages(app, published: dict[str, str]) -> None:
    """Touch each copied page whose digest is the ``published`` one and no template is newer
    than, so that Sphinx does not write it again."""
    env, builder = app.env, app.builder
    templates = builder.templates.newest_template_mtime() if builder.templates else 0
    now = time.time()
    for docname in sorted(env.found_docs & set(env.all_docs) & set(published)):
        page = builder.get_outfilename(docname)
        try:
            unchanged = os.path.getmtime(page) >= templates
        except OSError:
            continue
        if unchanged and _page_digest(env, docname) == published[docname]:
            os.utime(page, (now, now))
