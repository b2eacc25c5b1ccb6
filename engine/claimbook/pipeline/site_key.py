"""The site key: a SHA-256 over everything a page of the site can show.

That is the book's own files (configuration, table of contents, landing page, bibliography,
``_static``, the chapters' sources and executed notebooks, the claim registry, every regular
file under ``artifacts/``), the engine and the locked environment
(:func:`claimbook.claims.keys.environment_digest`), the current digests of the modules each
claim artifact's key names (so a claim whose computation was edited turns stale on the page),
the last mutate record, the commit, date and "uncommitted changes" flag every page's footer
names, and the state each claim is judged in now. A build whose key equals the stored one
(:mod:`claimbook.pipeline.site_outcome`) does not render again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from claimbook import claims, dependencies, paths, pdf_link
from claimbook.build_stamp import build_stamp
from claimbook.claims.keys import environment_digest
from claimbook.claims.mistakes import BUILD_RECORD, committed_record_path, mistakes_digest
from claimbook.errors import ClaimError
from claimbook.pipeline.keys import file_digest

__all__ = ["judged_states", "pages_digest", "regular_files", "site_key"]

_BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib")
_BOOK_DIRS = ("_static", "_templates", "claims", "artifacts")


def _book_files() -> list[Path]:
    root = paths.REPO_ROOT
    files = [root / name for name in _BOOK_FILES]
    files.extend(sorted(root.glob("*.md")))
    files.extend(sorted(paths.CHAPTERS_DIR.glob("*.ipynb")))
    # A chapter's front matter says where its pages start (claimbook.pages).
    files.extend(sorted(paths.CHAPTERS_DIR.glob("*.md")))
    for directory in _BOOK_DIRS:
        files.extend(regular_files(root / directory))
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


def site_key(with_pdf: bool = True) -> str:
    """The SHA-256 over everything a page can show (see the module doc), and the book's
    PDF when it was printed from the site of that key (:mod:`claimbook.pdf_link`): every
    page then links it. ``with_pdf=False``: the key without the PDF, the one it records."""
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
    # The engine's own code, extensions and templates included: an edit of how a page is
    # drawn renders the site again.
    digest.update(dependencies.package_digest("claimbook").encode())
    digest.update(json.dumps(_build_stamp(), sort_keys=True).encode())
    # What every badge shows: a verdict that changed with no file above changing (a claim
    # judged stale, say) renders the site again, never "unchanged since the last render".
    digest.update(json.dumps(judged_states(), sort_keys=True).encode())
    key = digest.hexdigest()
    pdf = pdf_link.current(pdf_link.PDF, key) if with_pdf else ""
    return hashlib.sha256(f"{key}\0{pdf}".encode()).hexdigest() if pdf else key


def judged_states() -> dict[str, str]:
    """Each registered claim's state as judged now (an unreadable entry: its error); none in
    a book without a registry (a fixture book)."""
    states = {}
    for claim_id in claims.list_claims() if paths.CLAIMS_DIR.is_dir() else []:
        try:
            states[claim_id] = claims.judge(claim_id).state
        except ClaimError as error:
            states[claim_id] = f"unreadable: {type(error).__name__}"
    return states


def _build_stamp() -> dict:
    """The footer's commit, date and dirty flag, as the site extension finds them.

    Every page shows them, so they are part of the site key; the one definition of how
    they are found is :func:`claimbook.build_stamp.build_stamp`.
    """
    # Imported when the key is asked for, after the chapters: the extension imports Sphinx,
    # which a build should not wait for before its kernels start.
    return build_stamp(str(paths.REPO_ROOT))


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
