"""The published site: its key, the record of its files, its publication, its outcome.

The *site key* (:func:`site_key`) is a SHA-256 over everything a page can show: the book's
files, ``claims/`` and ``artifacts/``, the engine and environment, the digests of the modules
each claim artifact's key names, the mutate records, the footer's stamp and each claim's
judged state. :func:`publish` keeps only regular files and directories, records each file's
SHA-256 and replaces ``_build/html`` by rename (``OUTDATED.txt`` marks the old site meanwhile:
:func:`mark_outdated`). The outcome (the warnings) is stored in ``_build/site.json`` with the
key, that record and the page digests, under a digest of all of them. A build whose key is
the stored one, and whose site still matches the record (:func:`differences`), repeats the
stored warnings without rendering; a render starts from the published pages only if they
match it (:func:`copy_verified`). No file is opened through a link, no walk follows one.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as scratch:
...     site = Path(scratch)
...     _ = (site / "index.html").write_text("7.000")
...     files = scan(site).files
...     _ = (site / "index.html").write_text("7.777")
...     print(differences(site, files))
edited index.html
"""

from __future__ import annotations

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
from claimbook.pipeline import file_digests
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
    """The mutation record the claim pages read, and the mistakes it is keyed on."""
    record = committed_record_path()
    found = [file_digest(record)] if record.is_file() else []
    return ":".join([*found, mistakes_digest()])


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


OUTDATED_NOTE = "OUTDATED.txt"
OUTCOME_FORMAT = 3  # bump when the outcome's fields or their meaning change
_SHOWN = 3  # names shown per kind of difference


class Scan(NamedTuple):
    """A walk of a site: its regular files with their SHA-256, and every other entry."""

    files: dict[str, str]
    others: list[str]


def scan(directory: str | Path, skip: Collection[str] = ()) -> Scan:
    """Walk ``directory`` without following links, leaving out top-level names in ``skip``;
    what cannot be listed or is not a regular file or directory is one of ``others``."""
    files: dict[str, str] = {}
    others: list[str] = []
    folders = [(os.fspath(directory), "")]
    while folders:
        folder, prefix = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            others.append(prefix.rstrip("/") or ".")
            continue
        for entry in entries:
            name = prefix + entry.name
            if not prefix and entry.name in skip:
                continue
            if entry.is_dir(follow_symlinks=False):
                folders.append((entry.path, name + "/"))
                continue
            found = (
                file_digests.sha256(entry.path) if entry.is_file(follow_symlinks=False) else None
            )
            if found is None:
                others.append(name)
            else:
                files[name] = found[1].hex()
    return Scan(dict(sorted(files.items())), sorted(others))


def _names(kind: str, names: list[str]) -> str:
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return f"{kind} {', '.join(names[:_SHOWN])}{more}"


def differences(
    directory: str | Path, record: Mapping[str, str], skip: Collection[str] = ()
) -> str | None:
    """One line naming how ``directory`` differs from ``record``, or None if it matches it."""
    if not os.path.isdir(directory) or os.path.islink(directory):
        return "missing"
    found = scan(directory, skip)
    parts = []
    edited = [name for name, digest in found.files.items() if record.get(name, digest) != digest]
    missing = [name for name in record if name not in found.files]
    extra = [name for name in found.files if name not in record]
    for kind, names in (
        ("edited", edited),
        ("missing", sorted(missing)),
        ("not published by the build:", extra),
        ("not a regular file:", found.others),
    ):
        if names:
            parts.append(_names(kind, names))
    return "; ".join(parts) or None


def copy_verified(
    source: str | Path, target: str | Path, record: Mapping[str, str], skip: Collection[str] = ()
) -> bool:
    """Copy ``source`` into ``target`` (times kept) if it is exactly ``record``; else leave
    ``target`` absent and return False. Each file is written from the bytes it was hashed from.
    """
    source, target = Path(source), Path(target)
    copied = 0
    try:
        for folder, subfolders, names in os.walk(source, followlinks=False):
            here = Path(folder)
            relative = here.relative_to(source)
            (target / relative).mkdir(parents=True, exist_ok=True)
            if relative == Path("."):
                subfolders[:] = [name for name in subfolders if name not in skip]
                names = [name for name in names if name not in skip]
            if any((here / name).is_symlink() for name in subfolders):
                return _give_up(target)
            for name in names:
                key = (relative / name).as_posix()
                descriptor = file_digests.open_regular(here / name)
                if descriptor is None:
                    return _give_up(target)
                with open(descriptor, "rb") as stream:
                    data = stream.read()
                    times = os.fstat(stream.fileno())
                if record.get(key) != hashlib.sha256(data).hexdigest():
                    return _give_up(target)
                (target / key).write_bytes(data)
                os.utime(target / key, ns=(times.st_atime_ns, times.st_mtime_ns))
                copied += 1
    except OSError:
        return _give_up(target)
    if copied != len(record):
        return _give_up(target)
    return True


def _give_up(target: Path) -> bool:
    shutil.rmtree(target, ignore_errors=True)
    return False


def keep_regular(directory: str | Path) -> tuple[dict[str, str], list[str]]:
    """Remove every entry of ``directory`` that is not a regular file or directory; return
    the record of what is left (path -> SHA-256) and the paths removed."""
    found = scan(directory)
    for name in found.others:
        path = Path(directory, name)
        if path.is_dir() and not path.is_symlink():  # a directory that could not be listed
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return found.files, found.others


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
    found = differences(site_dir(), outcome["files"])
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
    directories; return the record of its files (:func:`keep_regular`)."""
    files, _removed = keep_regular(rendered)
    site = site_dir()
    previous = paths.BUILD_DIR / "html.old"
    shutil.rmtree(previous, ignore_errors=True)
    if site.exists():
        site.rename(previous)
    rendered.rename(site)
    shutil.rmtree(previous, ignore_errors=True)
    return files
