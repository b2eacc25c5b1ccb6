"""The published site and the stored outcome of the render that made it.

:func:`publish` replaces ``_build/html`` by rename, so the site on disk is always a complete
one; while a build runs the old one carries ``OUTDATED.txt`` (:func:`mark_outdated`). The
outcome (the warnings, or none) is stored in ``_build/site.json`` with the site key
(:mod:`.site_key`), the record of the published files (:mod:`.site_record`) and the page
digests, under a SHA-256 of all of them (an edited outcome is ignored). A build whose site key
is the stored one and whose site matches its record does not render and repeats the stored
warnings; claim problems are judged again by every build.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from claimbook import paths
from claimbook.atomic import write_text_atomically
from claimbook.pipeline import site_record
from claimbook.pipeline.site_key import pages_digest

__all__ = [
    "OUTDATED_NOTE",
    "mark_outdated",
    "publish",
    "read_outcome",
    "site_differences",
    "site_dir",
    "write_outcome",
]

OUTDATED_NOTE = "OUTDATED.txt"
OUTCOME_FORMAT = 3  # bump when the outcome's fields or their meaning change


def site_dir() -> Path:
    return paths.BUILD_DIR / "html"


def _outcome_path() -> Path:
    return paths.BUILD_DIR / "site.json"


def _outcome_digest(outcome: dict) -> str:
    """SHA-256 over every field of an outcome but its own digest."""
    fields = {name: value for name, value in outcome.items() if name != "digest"}
    return hashlib.sha256(
        json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def read_outcome(note=None) -> dict | None:
    """The stored outcome of the last render, or None if there is none to trust (another
    format or digest: said through ``note`` in one line, and every page is rendered again)."""
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
    states: dict[str, str] | None = None,
) -> None:
    """Store the render's outcome under the site key, with a digest of all it holds:
    its ``warnings``, the claim ``problems`` (a record only), the published ``files``
    (:func:`publish`), the page digests read (``sources``) and the claims' ``states``."""
    record = {
        "format": OUTCOME_FORMAT,
        "key": key,
        "warnings": warnings,
        "claim_problems": problems,
        "pages": pages_digest(),
        "sources": sources,
        "states": states or {},
        "files": files,
    }
    record["digest"] = _outcome_digest(record)
    write_text_atomically(_outcome_path(), json.dumps(record, indent=2) + "\n")


def site_differences(outcome: dict) -> str | None:
    """How the published site differs from the outcome's record (one line), or None; a site
    carrying ``OUTDATED.txt`` differs."""
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


def publish(rendered: Path) -> dict[str, str]:
    """Replace ``_build/html`` by ``rendered`` with renames, keeping only regular files and
    directories; return the record of its files (:func:`.site_record.keep_regular`)."""
    files, _removed = site_record.keep_regular(rendered)
    site = site_dir()
    previous = paths.BUILD_DIR / "html.old"
    shutil.rmtree(previous, ignore_errors=True)
    if site.exists():
        site.rename(previous)
    rendered.rename(site)
    shutil.rmtree(previous, ignore_errors=True)
    return files
