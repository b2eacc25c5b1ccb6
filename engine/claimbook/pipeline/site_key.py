"""The site key: a SHA-256 over everything a page of the site can show.

The book's files (configuration, table of contents, landing page, bibliography, ``_static``,
``_templates``, the chapters' sources and notebooks, ``claims/``, ``artifacts/``), the engine
and the locked environment, today's digests of the modules each claim artifact's key names,
the mutate records, the footer's commit, date and dirty flag, and each claim's judged state.
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
        files.extend(_regular_files(root / directory))
    return [path for path in files if "__pycache__" not in path.parts]


def _regular_files(directory: Path) -> list[Path]:
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


def _mutation_record_digest() -> str:
    """The mutation records the claim pages read, and the mistakes they are keyed on."""
    found = [path for path in (committed_record_path(), BUILD_RECORD) if path.is_file()]
    return ":".join([*(file_digest(path) for path in found), mistakes_digest()])


def site_key(with_pdf: bool = True) -> str:
    """The SHA-256 over everything a page can show, and the book's PDF when it was printed
    from the site of that key (:mod:`claimbook.pdf_link`); ``with_pdf=False``: without it."""
    digest = hashlib.sha256()
    for path in _book_files():
        name = (
            path.relative_to(paths.REPO_ROOT).as_posix()
            if path.is_relative_to(paths.REPO_ROOT)
            else path.name
        )
        digest.update(f"{name}\0{file_digest(path)}\n".encode())
    digest.update(json.dumps(_claim_module_digests(), sort_keys=True).encode())
    digest.update(_mutation_record_digest().encode())  # what the claim pages say each catches
    digest.update(environment_digest().encode())
    digest.update(dependencies.package_digest("claimbook").encode())
    digest.update(json.dumps(build_stamp(str(paths.REPO_ROOT)), sort_keys=True).encode())
    # A verdict can change with no file changing (a claim judged stale).
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


def pages_digest() -> str:
    """SHA-256 of what decides which pages exist: the table of contents, the claim ids, the
    configuration and the environment. A render starts from the published site only while
    this is unchanged (Sphinx never removes a page it stopped making)."""
    digest = hashlib.sha256(file_digest(paths.REPO_ROOT / "_toc.yml").encode())
    digest.update(b"\0config\0" + file_digest(paths.REPO_ROOT / "_config.yml").encode())
    digest.update(b"\0environment\0" + environment_digest().encode())
    for claim in sorted(path.stem for path in paths.CLAIMS_DIR.glob("*.yaml")):
        digest.update(b"\0" + claim.encode())
    return digest.hexdigest()
