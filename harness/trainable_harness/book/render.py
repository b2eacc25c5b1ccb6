"""Render the site with Jupyter Book's Sphinx, publish it whole, and remember the outcome.

The **site key** is a SHA-256 over everything a page can show: the book's own files
(configuration, table of contents, landing page, bibliography, ``_ext``, ``_static``), the
executed notebooks, the claim registry, every regular file under ``artifacts/``, the harness
code that decides and draws a badge (the claims package, the chapter-source reader), the
current digests of the functions each claim artifact recorded (so a claim whose computation
was edited turns stale on the page), the locked environment, and the commit, date and
"uncommitted changes" flag the footer of every page names.

Sphinx renders into a new directory, reusing its parsed pages (``_build/.doctrees``) and,
when the same pages exist as last time, a copy of the published site (so only changed pages
are written), and that directory replaces ``_build/html`` by rename: the site on disk is the
previous complete site or the new complete one, never a mixture. While a build is under way
the previous site carries a file ``_build/html/OUTDATED.txt`` saying so.

The outcome (no warnings, or the warnings) is stored in ``_build/site.json`` with the site
key. A build whose site key equals the stored one does not render again, and repeats the
stored outcome: a warning fails every ``make`` until its cause is fixed, not only the first.
After any outcome with warnings the next render re-reads every page (``freshenv``), because
Sphinx only warns about the pages it reads.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import sys
from pathlib import Path

from trainable_harness import paths
from trainable_harness.atomic import write_text_atomically
from trainable_harness.book.keys import file_digest
from trainable_harness.claims.keys import environment_digest, function_digests
from trainable_harness.errors import BuildError

__all__ = [
    "OUTDATED_NOTE",
    "mark_outdated",
    "pages_digest",
    "publish",
    "read_outcome",
    "regular_files",
    "render",
    "site_dir",
    "site_key",
    "warm_up",
    "write_outcome",
]

OUTDATED_NOTE = "OUTDATED.txt"
_BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib")
_BOOK_DIRS = ("_ext", "_static", "_templates", "claims", "artifacts")
_HARNESS_PARTS = ("claims", "sources.py", "settings.py", "figures.py", "paths.py")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def site_dir() -> Path:
    return paths.BUILD_DIR / "html"


def _book_files() -> list[Path]:
    root = paths.REPO_ROOT
    files = [root / name for name in _BOOK_FILES]
    files.extend(sorted(root.glob("*.md")))
    files.extend(sorted(paths.CHAPTERS_DIR.glob("*.ipynb")))
    for directory in _BOOK_DIRS:
        files.extend(regular_files(root / directory))
    harness = Path(__file__).resolve().parents[1]
    for part in _HARNESS_PARTS:
        target = harness / part
        files.extend(sorted(target.rglob("*.py")) if target.is_dir() else [target])
    return [path for path in files if "__pycache__" not in path.parts]


def regular_files(directory: Path) -> list[Path]:
    """Regular files under ``directory``, sorted; links (to files or folders) are skipped."""
    found = []
    for folder, subfolders, names in os.walk(directory, followlinks=False):
        here = Path(folder)
        subfolders[:] = sorted(name for name in subfolders if not (here / name).is_symlink())
        found.extend(here / name for name in names if (here / name).is_file())
    return sorted(path for path in found if not path.is_symlink())


def _claim_function_digests() -> dict:
    """Today's digests of the functions each claim artifact recorded (its staleness input)."""
    recorded = set()
    for artifact in sorted(paths.CLAIM_ARTIFACTS_DIR.glob("*.json")):
        try:
            key = json.loads(artifact.read_text(encoding="utf-8")).get("key") or {}
        except (OSError, ValueError, AttributeError):
            continue
        for name in key.get("functions", {}) if isinstance(key, dict) else ():
            module, _, qualname = str(name).partition(":")
            recorded.add((module, qualname))
    return function_digests(sorted(recorded))


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
    digest.update(json.dumps(_claim_function_digests(), sort_keys=True).encode())
    digest.update(environment_digest().encode())
    digest.update(json.dumps(_build_stamp(), sort_keys=True).encode())
    return digest.hexdigest()


def _build_stamp() -> dict:
    """The footer's commit, date and dirty flag, from the book's own ``_ext/book_site.py``.

    Every page shows them, so they are part of the site key; the one definition of how they
    are found is the extension's, loaded here from its file (absent in a fixture book).
    """
    path = paths.REPO_ROOT / "_ext" / "book_site.py"
    if not path.is_file():
        return {}
    specification = importlib.util.spec_from_file_location("_trainable_book_site", path)
    module = importlib.util.module_from_spec(specification)
    specification.loader.exec_module(module)
    return module.build_stamp(str(paths.REPO_ROOT))


def _outcome_path() -> Path:
    return paths.BUILD_DIR / "site.json"


def read_outcome() -> dict | None:
    """The stored outcome of the last render (``key``, ``warnings``), or None."""
    try:
        outcome = json.loads(_outcome_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return outcome if isinstance(outcome, dict) else None


def write_outcome(key: str, warnings: list[str], problems: list[str] | None = None) -> None:
    """Store the render's outcome under the site key: its warnings and the claim problems.

    Every claim's state is a function of what the site key covers (registry, artifacts,
    function digests, lock), so an unchanged key repeats the stored problems too.
    """
    record = {"key": key, "warnings": warnings, "pages": pages_digest()}
    if problems is not None:
        record["claim_problems"] = problems
    write_text_atomically(_outcome_path(), json.dumps(record, indent=2) + "\n")


def mark_outdated(reason: str) -> None:
    """Say, inside the published site, that a build of newer sources is under way."""
    site = site_dir()
    if site.is_dir():
        write_text_atomically(
            site / OUTDATED_NOTE,
            "This site is older than its sources: a build started and has not finished "
            f"({reason}). Run `make` to bring it up to date.\n",
        )


class _Tee(io.TextIOBase):
    """Write through to a stream while keeping a copy (Sphinx's warnings)."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text):
        self.copy.write(text)
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


def warm_up() -> None:
    """Import what a render needs (Jupyter Book, Sphinx, the configured extensions).

    The build calls this while the chapters execute in other processes, so the imports are
    off the path from the last chapter to the published site. An extension that cannot be
    imported here is left for the render to report.
    """
    import importlib

    from jupyter_book.config import get_final_config

    configuration, _ = get_final_config(
        user_yaml=paths.REPO_ROOT / "_config.yml",
        cli_config={"latex_individualpages": False},
        sourcedir=paths.REPO_ROOT,
        use_external_toc=True,
    )
    for extension in configuration.get("extensions", []):
        try:
            importlib.import_module(extension)
        except Exception:  # a local extension (on the render's path only) or a broken one
            continue


def pages_digest() -> str:
    """SHA-256 of what decides which pages exist: the table of contents and the claim ids."""
    digest = hashlib.sha256(file_digest(paths.REPO_ROOT / "_toc.yml").encode())
    for claim in sorted(path.stem for path in paths.CLAIMS_DIR.glob("*.yaml")):
        digest.update(b"\0" + claim.encode())
    return digest.hexdigest()


def render(fresh: bool, reuse_pages: bool = False) -> tuple[Path, list[str]]:
    """Render the whole book into a new directory; return it and the warnings.

    With ``reuse_pages`` (the same pages exist as in the published site, and the last render
    was clean), the new directory starts as a copy of the published site, times kept, so
    Sphinx writes only the pages whose sources changed; otherwise it starts empty and every
    page is written.

    Raises
    ------
    BuildError
        If Sphinx stops with an exception (nothing is published then).
    """
    from jupyter_book.sphinx import build_sphinx

    target = paths.BUILD_DIR / "html.new"
    shutil.rmtree(target, ignore_errors=True)
    if reuse_pages and not fresh and site_dir().is_dir():
        shutil.copytree(site_dir(), target, symlinks=True)
        (target / OUTDATED_NOTE).unlink(missing_ok=True)
    tee = _Tee(sys.stderr)
    saved, sys.stderr = sys.stderr, tee
    try:
        result = build_sphinx(
            paths.REPO_ROOT,
            target,
            noconfig=True,
            path_config=str(paths.REPO_ROOT / "_config.yml"),
            confoverrides={
                "external_toc_path": (paths.REPO_ROOT / "_toc.yml").as_posix(),
                "nitpicky": True,
                "latex_individualpages": False,  # what the jupyter-book command passes
            },
            doctreedir=paths.BUILD_DIR / ".doctrees",
            builder="html",
            warningiserror=True,
            keep_going=True,
            freshenv=fresh,
            quiet=True,
        )
    finally:
        sys.stderr = saved
    if isinstance(result, Exception):
        shutil.rmtree(target, ignore_errors=True)
        raise BuildError(f"the site build stopped: {type(result).__name__}: {result}")
    warnings = _warnings(tee.copy.getvalue())
    if result and not warnings:
        warnings = [f"Sphinx exited with status {result} without a readable warning"]
    return target, warnings


def publish(rendered: Path) -> Path:
    """Replace ``_build/html`` by ``rendered`` with renames; return the published path."""
    site = site_dir()
    previous = paths.BUILD_DIR / "html.old"
    shutil.rmtree(previous, ignore_errors=True)
    if site.exists():
        site.rename(previous)
    rendered.rename(site)
    shutil.rmtree(previous, ignore_errors=True)
    return site
