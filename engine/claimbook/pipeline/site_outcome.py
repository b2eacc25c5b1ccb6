"""The published site: its key, the record of its files, its publication, its outcome.

A build whose key is the one ``_build/site.json`` stores, its site still that record, repeats
the stored warnings without rendering. No walk follows a link.
"""

import hashlib
import json
import os
import shutil
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import NamedTuple

from claimbook import claims, dependencies, paths, pdf_link
from claimbook.atomic import write_text_atomically
from claimbook.build_stamp import build_stamp
from claimbook.claims.keys import environment_digest
from claimbook.claims.mistakes import committed_record_path, mistakes_digest
from claimbook.errors import ClaimError
from claimbook.pipeline.file_digests import describe, walk
from claimbook.pipeline.keys import file_digest

OUTDATED_NOTE = "OUTDATED.txt"
OUTCOME_FORMAT = 5  # bump when the outcome's fields or their meaning change
_SHOWN = 3  # names shown per kind of difference


def _book_files() -> dict[str, str]:
    """``{path relative to the root: SHA-256}`` of each source file a page can show."""
    root = paths.REPO_ROOT
    found = [root / name for name in ("_config.yml", "_toc.yml", "references.bib")]
    found += sorted(root.glob("*.md"))
    # A chapter's front matter says where its pages start (claimbook.pages).
    found += sorted(paths.CHAPTERS_DIR.glob("*.ipynb")) + sorted(paths.CHAPTERS_DIR.glob("*.md"))
    files = {os.path.relpath(path, root): file_digest(path) for path in found}
    for directory in ("_static", "_templates", "claims", "artifacts"):
        for name, digest in scan(root / directory, {"__pycache__"}).files.items():
            files[f"{directory}/{name}"] = digest
    return files


def site_key(with_pdf: bool = True) -> str:
    """The SHA-256 over everything a page can show: the book's files, the mutation record, the
    engine, the environment, the footer's stamp, each claim's judged state and reason; and the
    PDF printed from the site of that key, if any."""
    parts = {
        "files": _book_files(),
        "mutations": [file_digest(committed_record_path()), mistakes_digest()],
        "environment": environment_digest(),
        "engine": dependencies.package_digest("claimbook"),
        "stamp": build_stamp(str(paths.REPO_ROOT)),
        "states": judged_states(),
    }
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    pdf = pdf_link.current(pdf_link.PDF, key) if with_pdf else ""
    return hashlib.sha256(f"{key}\0{pdf}".encode()).hexdigest() if pdf else key


def judged_states() -> dict[str, list[str]]:
    """Each registered claim's state and reason as judged now (an unreadable entry: its error);
    the reason of a stale claim names the modules changed since its artifact was computed."""
    states = {}
    for claim_id in claims.list_claims() if paths.CLAIMS_DIR.is_dir() else []:
        try:
            judgement = claims.judge(claim_id)
        except ClaimError as error:
            states[claim_id] = ["unreadable", type(error).__name__]
        else:
            states[claim_id] = [judgement.state, judgement.reason]
    return states


def pages_digest() -> str:
    """SHA-256 of what decides which pages exist: contents, configuration, environment, claim
    ids (a render starts from the published site only while it holds: Sphinx removes no page)."""
    parts = [
        file_digest(paths.REPO_ROOT / "_toc.yml"),
        file_digest(paths.REPO_ROOT / "_config.yml"),
        environment_digest(),
        *sorted(path.stem for path in paths.CLAIMS_DIR.glob("*.yaml")),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class Scan(NamedTuple):
    files: dict[str, str]  # each regular file's SHA-256
    others: list[str]  # every entry neither a regular file nor a directory, or unlistable


def scan(directory: str | Path, skipped: Collection[str] = ()) -> Scan:
    """Walk ``directory`` without following links (:func:`.file_digests.walk`)."""
    found = {name: describe(entry) for name, entry in walk(directory, skipped).items()}
    files = {name: said[5:] for name, said in found.items() if said.startswith("file:")}
    return Scan(dict(sorted(files.items())), sorted(found.keys() - files.keys()))


def differences(directory: str | Path, record: Mapping[str, str]) -> str | None:
    """One line naming how ``directory`` differs from ``record``, or None if it matches it."""
    if not os.path.isdir(directory) or os.path.islink(directory):
        return "missing"
    found = scan(directory)
    kinds = {
        "edited": [
            name for name, digest in found.files.items() if record.get(name, digest) != digest
        ],
        "missing": sorted(name for name in record if name not in found.files),
        "not published by the build:": [name for name in found.files if name not in record],
        "not a regular file:": found.others,
    }
    parts = []
    for kind, names in kinds.items():
        if names:
            more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
            parts.append(f"{kind} {', '.join(names[:_SHOWN])}{more}")
    return "; ".join(parts) or None


def copy_verified(
    source: str | Path, target: str | Path, record: Mapping[str, str], skip: Collection[str] = ()
) -> bool:
    """Copy ``source`` into ``target`` (times kept, links as links); keep the copy only if it is
    exactly ``record``, else remove it and return False."""
    top = os.fspath(source)
    try:
        shutil.copytree(
            source,
            target,
            symlinks=True,
            ignore=lambda folder, names: [n for n in names if n in skip and folder == top],
        )
        if scan(target) == (record, []):
            return True
    except OSError:  # a FIFO, or a file that cannot be read (shutil.Error is an OSError)
        pass
    shutil.rmtree(target, ignore_errors=True)
    return False


def site_dir() -> Path:
    return paths.BUILD_DIR / "html"


def _outcome_digest(outcome: dict) -> str:
    fields = {name: value for name, value in outcome.items() if name != "digest"}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def read_outcome(note=None) -> dict | None:
    """The stored outcome of the last render, or None if there is none to trust (said through
    ``note`` in one line)."""
    path = paths.BUILD_DIR / "site.json"
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
    files: dict[str, str],
    sources: dict[str, str],
    states: dict[str, list[str]] | None = None,
) -> None:
    """Store the render's outcome under the site ``key``, with a digest of all it holds."""
    record = {
        "format": OUTCOME_FORMAT,
        "key": key,
        "warnings": warnings,
        "pages": pages_digest(),
        "sources": sources,
        "states": states or {},
        "files": files,
    }
    record["digest"] = _outcome_digest(record)
    write_text_atomically(paths.BUILD_DIR / "site.json", json.dumps(record, indent=2) + "\n")


def site_differences(outcome: dict) -> str | None:
    """How the published site differs from the outcome's record (one line), or None."""
    found = differences(site_dir(), outcome["files"])
    return None if found is None else f"{paths.shown(site_dir())}: {found}"


def mark_outdated(reason: str) -> None:
    """Say, inside the published site, that a build of newer sources is under way."""
    if site_dir().is_dir():
        write_text_atomically(
            site_dir() / OUTDATED_NOTE,
            "This site is older than its sources: a build started and has not finished "
            f"({reason}). Run `make` to bring it up to date.\n",
        )


def publish(rendered: Path) -> dict[str, str]:
    """Replace ``_build/html`` by ``rendered`` (renames), keeping only regular files and
    directories; return the record of its files."""
    found = scan(rendered)
    for name in found.others:
        path = Path(rendered, name)
        if path.is_dir() and not path.is_symlink():  # a directory that could not be listed
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    previous = paths.BUILD_DIR / "html.old"
    shutil.rmtree(previous, ignore_errors=True)
    if site_dir().exists():
        site_dir().rename(previous)
    rendered.rename(site_dir())
    shutil.rmtree(previous, ignore_errors=True)
    return found.files
