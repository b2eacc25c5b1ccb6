"""Render the site with Jupyter Book's Sphinx, publish it whole, and remember the outcome.

The **site key** is a SHA-256 over everything a page can show: the book's own files
(configuration, table of contents, landing page, bibliography, ``_static``, the engine), the
executed notebooks, the claim registry, every regular file under ``artifacts/``, the harness
code that decides and draws a badge (the claims package, the chapter-source reader), the
current digests of the functions each claim artifact recorded (so a claim whose computation
was edited turns stale on the page), the locked environment, and the commit, date and
"uncommitted changes" flag the footer of every page names, and the state each claim is
judged in now.

Sphinx renders into a new directory, reusing its parsed pages (``_build/.doctrees``) and,
when the same pages exist as last time, a copy of the published site (so only changed pages
are written), and that directory replaces ``_build/html`` by rename: the site on disk is the
previous complete site or the new complete one, never a mixture. While a build is under way
the previous site carries a file ``_build/html/OUTDATED.txt`` saying so.

Which pages Sphinx reads again is decided by content, not by modification times: every
render records the SHA-256 of each page's source and of the files Sphinx noted it depends on
(registry entries, artifacts, images, the bibliography) as it reads the page, and a page
whose digest differs from that record, or from the one stored with the published site, is
read again (the ``env-get-outdated`` event), whatever its modification time says; and a page
whose digest is both of those is not read again because a file's time is newer. A page of a
chapter cut into pages (:mod:`claimbook.extensions.chapter_pages`) is digested as the page it
serves, so an edit of one page of a chapter reads that page again, not all of them.

The outcome (no warnings, or the warnings) is stored in ``_build/site.json`` with the site
key, the record of the published files (:mod:`claimbook.pipeline.site_record`) and the page
digests, under a SHA-256 of all of them: an outcome that does not match its digest (edited
by hand) is ignored, and the next build renders every page again. A build whose site key
equals the stored one, and whose published site still matches its record, does not render
again, and repeats the stored warnings: a warning fails every ``make`` until its cause is
fixed, not only the first. After any outcome with warnings the next render re-reads every
page (``freshenv``), because Sphinx only warns about the pages it reads. (The claim problems
are judged again by every build from the artifacts; the stored ones are only a record.)
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import re
import shutil
import sys
from pathlib import Path

from claimbook import cache, dependencies, paths
from claimbook.atomic import write_text_atomically
from claimbook.claims.keys import environment_digest
from claimbook.claims.mistakes import mistakes_digest
from claimbook.claims.mutation_record import BUILD_RECORD, committed_record_path
from claimbook.errors import BuildError
from claimbook.pipeline import site_record
from claimbook.pipeline.keys import file_digest

__all__ = [
    "OUTDATED_NOTE",
    "SiteRender",
    "mark_outdated",
    "pages_digest",
    "publish",
    "read_outcome",
    "regular_files",
    "render",
    "site_differences",
    "site_dir",
    "site_key",
    "write_outcome",
]

OUTDATED_NOTE = "OUTDATED.txt"
OUTCOME_FORMAT = 2  # bump when the outcome's fields or their meaning change
# The environment's record of the page digests it read (pickled with it in .doctrees).
_READ_DIGESTS = "trainable_page_digests"
_BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib")
_BOOK_DIRS = ("_static", "_templates", "claims", "artifacts")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def site_dir() -> Path:
    return paths.BUILD_DIR / "html"


def _book_files() -> list[Path]:
    root = paths.REPO_ROOT
    files = [root / name for name in _BOOK_FILES]
    files.extend(sorted(root.glob("*.md")))
    files.extend(sorted(paths.CHAPTERS_DIR.glob("*.ipynb")))
    # A chapter's front matter says where its pages start (claimbook.pages).
    files.extend(sorted(paths.CHAPTERS_DIR.glob("*.md")))
    for directory in _BOOK_DIRS:
        files.extend(regular_files(root / directory))
    # The engine's own code (extensions included) enters through environment_digest().
    return [path for path in files if "__pycache__" not in path.parts]


def regular_files(directory: Path) -> list[Path]:
    """Regular files under ``directory``, sorted; links (to files or folders) are skipped."""
    found = []
    for folder, subfolders, names in os.walk(directory, followlinks=False):
        here = Path(folder)
        subfolders[:] = sorted(name for name in subfolders if not (here / name).is_symlink())
        found.extend(here / name for name in names if (here / name).is_file())
    return sorted(path for path in found if not path.is_symlink())


def _claim_module_digests() -> dict:
    """Today's digests of the modules each claim artifact's key names (its staleness input)."""
    named = set()
    for artifact in sorted(paths.CLAIM_ARTIFACTS_DIR.glob("*.json")):
        try:
            key = json.loads(artifact.read_text(encoding="utf-8")).get("key") or {}
        except (OSError, ValueError, AttributeError):
            continue
        modules = key.get("modules", {}) if isinstance(key, dict) else {}
        named.update(str(name) for name in modules if isinstance(modules, dict))
    return dependencies.module_digests(named)


def mutation_record_digest() -> str:
    """The mutation records the claim pages read, and the mistakes they are keyed on."""
    found = [path for path in (committed_record_path(), BUILD_RECORD) if path.is_file()]
    return ":".join([*(file_digest(path) for path in found), mistakes_digest()])


def site_key() -> str:
    """The SHA-256 over everything a page can show (see the module doc)."""
    digest = hashlib.sha256()
    for path in _book_files():
        name = (
            path.relative_to(paths.REPO_ROOT).as_posix()
            if path.is_relative_to(paths.REPO_ROOT)
            else path.name
        )
        digest.update(f"{name}\0{file_digest(path)}\n".encode())
    digest.update(json.dumps(_claim_module_digests(), sort_keys=True).encode())
    digest.update(mutation_record_digest().encode())  # what the claim pages say each catches
    digest.update(environment_digest().encode())
    digest.update(json.dumps(_build_stamp(), sort_keys=True).encode())
    # What every badge shows: a verdict that changed with no file above changing (a claim
    # judged stale, say) renders the site again, never "unchanged since the last render".
    digest.update(json.dumps(_judged_states(), sort_keys=True).encode())
    return digest.hexdigest()


def _judged_states() -> dict[str, str]:
    """Each registered claim's state as judged now (an unreadable entry: its error)."""
    from claimbook import claims
    from claimbook.errors import ClaimError

    states = {}
    for claim_id in claims.list_claims():
        try:
            states[claim_id] = claims.judge(claim_id).state
        except ClaimError as error:
            states[claim_id] = f"unreadable: {type(error).__name__}"
    return states


def _build_stamp() -> dict:
    """The footer's commit, date and dirty flag, as the site extension finds them.

    Every page shows them, so they are part of the site key; the one definition of how
    they are found is :func:`claimbook.extensions.book_site.build_stamp`.
    """
    from claimbook.extensions.book_site import build_stamp

    return build_stamp(str(paths.REPO_ROOT))


def _outcome_path() -> Path:
    return paths.BUILD_DIR / "site.json"


def _outcome_digest(outcome: dict) -> str:
    """SHA-256 over every field of an outcome but its own digest."""
    fields = {name: value for name, value in outcome.items() if name != "digest"}
    return hashlib.sha256(
        json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def read_outcome(note=None) -> dict | None:
    """The stored outcome of the last render, or None if there is none to trust.

    An outcome is trusted only if it has this engine's format and matches its digest; a
    present one that does not is reported through ``note`` (one line) and ignored, so the
    next build renders every page again.
    """
    path = _outcome_path()
    try:
        outcome = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        outcome = None
    if not isinstance(outcome, dict) or outcome.get("format") != OUTCOME_FORMAT:
        problem = "is unreadable or from another version of the engine"
    elif outcome.get("digest") != _outcome_digest(outcome) or not all(
        isinstance(outcome.get(name), kind)
        for name, kind in (("key", str), ("warnings", list), ("files", dict), ("sources", dict))
    ):
        problem = "does not match its digest (edited by hand?)"
    else:
        return outcome
    if note is not None:
        note(f"{paths.shown(path)} {problem}: it is ignored and every page is rendered again")
    return None


def write_outcome(
    key: str,
    warnings: list[str],
    problems: list[str],
    files: dict[str, str],
    sources: dict[str, str],
) -> None:
    """Store the render's outcome under the site key, with a digest of all it holds.

    ``warnings`` are the render's, ``problems`` the claim problems judged after it (a
    record: every build judges the claims again), ``files`` the published site's record
    (:func:`publish`) and ``sources`` the page digests the render read
    (:attr:`SiteRender.sources`).
    """
    record = {
        "format": OUTCOME_FORMAT,
        "key": key,
        "warnings": warnings,
        "claim_problems": problems,
        "pages": pages_digest(),
        "sources": sources,
        "files": files,
    }
    record["digest"] = _outcome_digest(record)
    write_text_atomically(_outcome_path(), json.dumps(record, indent=2) + "\n")


def site_differences(outcome: dict) -> str | None:
    """How the published site differs from the outcome's record of it (one line), or None.

    ``OUTDATED.txt``, the note a build leaves in the published site, is not in the record:
    a site that carries it is published again.
    """
    found = site_record.differences(site_dir(), outcome["files"])
    return None if found is None else f"{paths.shown(site_dir())}: {found}"


def mark_outdated(reason: str) -> None:
    """Say, inside the published site, that a build of newer sources is under way."""
    site = site_dir()
    if site.is_dir():
        write_text_atomically(
            site / OUTDATED_NOTE,
            "This site is older than its sources: a build started and has not finished "
            f"({reason}). Run `make` to bring it up to date.\n",
        )


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


def pages_digest() -> str:
    """SHA-256 of what decides which pages exist: the table of contents, the claim ids, the
    configuration and the engine (its extensions make pages, and a setting such as
    ``html_use_index`` adds or drops one).

    A render starts from a copy of the published site only while this is unchanged: Sphinx
    writes the pages it makes and never removes one it stopped making.
    """
    digest = hashlib.sha256(file_digest(paths.REPO_ROOT / "_toc.yml").encode())
    digest.update(b"\0config\0" + file_digest(paths.REPO_ROOT / "_config.yml").encode())
    digest.update(b"\0environment\0" + environment_digest().encode())
    for claim in sorted(path.stem for path in paths.CLAIMS_DIR.glob("*.yaml")):
        digest.update(b"\0" + claim.encode())
    return digest.hexdigest()


def _source_digest(path) -> str:
    """The digest of a file's bytes (None when absent: distinct from an empty file)."""
    return cache.digest(cache.file_bytes(path))


def _read_digest(env, docname: str) -> str:
    """The digest of what Sphinx reads for a page: the page a chapter serves for it, or the
    bytes of its source file (see :func:`claimbook.extensions.chapter_pages.served_digest`).
    """
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
        from contextlib import ExitStack

        self.fresh = fresh
        self.target = paths.BUILD_DIR / "html.new"
        self.tee = _Tee(sys.stderr)
        self.app = None
        self.error: BaseException | None = None
        self.sources: dict[str, str] = {}  # after run(): docname -> page digest, as read
        self._reading: dict[str, str] = {}  # docname -> its source's digest, before reading
        self._published_sources = dict(published["sources"]) if published else None
        self.written: list[str] = []  # after run(): the pages (documents) it wrote
        self._structure_changed = False  # a page added or removed
        self._contexts = ExitStack()
        shutil.rmtree(self.target, ignore_errors=True)
        if reuse_pages and not fresh and published is not None:
            # Only a site exactly as published is carried over (regular files, each matching
            # its record); otherwise the render starts empty and writes every page.
            site_record.copy_verified(
                site_dir(), self.target, published["files"], skip={OUTDATED_NOTE}
            )
        try:
            self._construct()
        except Exception as error:  # reported by run(), after the chapters
            self.error = error
            self._contexts.close()

    def _construct(self) -> None:
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
            import yaml

            if "numbered: true" in yaml.dump(app.config.external_site_map.as_json()):
                app.setup_extension("sphinx_multitoc_numbering")
        # After every other handler (the claims extension notes which pages a build reads).
        app.connect("env-before-read-docs", self._note_reading, priority=950)
        app.connect("env-get-outdated", self._outdated_by_content)
        app.connect("doctree-read", self._note_read, priority=900)
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
        self._structure_changed = bool(added or removed)
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


def render(fresh: bool, reuse_pages: bool = False) -> tuple[Path, list[str]]:
    """Render the whole book into a new directory; return it and the warnings.

    See :class:`SiteRender` for ``fresh`` and ``reuse_pages``.

    Raises
    ------
    BuildError
        If Sphinx stops with an exception (nothing is published then).
    """
    return SiteRender(fresh, reuse_pages).run()


def publish(rendered: Path) -> dict[str, str]:
    """Replace ``_build/html`` by ``rendered`` with renames; return the record of its files.

    Only regular files and directories are published: any other entry of ``rendered`` (a
    link, a FIFO, ...) is removed first. The record maps each file's path in the site to its
    SHA-256 (see :mod:`claimbook.pipeline.site_record`).
    """
    files, _removed = site_record.keep_regular(rendered)
    site = site_dir()
    previous = paths.BUILD_DIR / "html.old"
    shutil.rmtree(previous, ignore_errors=True)
    if site.exists():
        site.rename(previous)
    rendered.rename(site)
    shutil.rmtree(previous, ignore_errors=True)
    return files
