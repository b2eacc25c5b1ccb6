"""A build that has nothing to do says so in a fraction of a second.

A clean, complete build records the tree (:func:`record_clean_build`): each file's path and
SHA-256 (a link's target, another entry's type; ``.git``, ``.venv``, caches, the record and
the locks skipped) and a stamp of what pages show that is no file of the tree (commit,
``TRAINABLE_BUILD_COMMIT``/``_DATE``, Python, installed distributions, the root, an engine
outside it). The next ``build`` compares before importing anything heavy
(:func:`unchanged_since_clean_build`), newest file first, up to the first difference, which
takes the full path. The driver removes the record when a whole build starts its full path,
and writes it only after a clean end in the book's own environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from claimbook import paths
from claimbook.atomic import write_text_atomically
from claimbook.pipeline import file_digests

RECORD_NAME = "clean-build.json"
_FORMAT = 3  # 3: each file's entry is recorded, and compared one by one
_SKIPPED_DIRECTORIES = frozenset(
    {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache"}
    | {".hypothesis", ".mypy_cache"}
)
_SKIPPED_FILES = frozenset({("_build", RECORD_NAME), ("_build", ".build.lock"), (".setup.lock",)})
_STAMP_VARIABLES = ("TRAINABLE_BUILD_COMMIT", "TRAINABLE_BUILD_DATE")


def _record_path(root: Path) -> Path:
    return root / "_build" / RECORD_NAME


def _commit(root: Path) -> str:
    """HEAD's commit when ``root`` is in a git checkout, else "" (the footer's input)."""
    try:
        found = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return found.stdout.strip() if found.returncode == 0 else ""


def _files(
    root: Path, relative: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], os.DirEntry]]:
    """Every file and symbolic link under ``root`` the digest covers, in a fixed order."""
    found = []
    with os.scandir(root.joinpath(*relative)) as entries:
        for entry in sorted(entries, key=lambda entry: entry.name):
            name = (*relative, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIPPED_DIRECTORIES:
                    found.extend(_files(root, name))
            elif name not in _SKIPPED_FILES:
                found.append((name, entry))
    return found


def _stamp(root: Path) -> dict:
    """What the record covers that is not a file of the tree (see the module doc)."""
    return {
        "format": _FORMAT,
        "root": str(root),
        "python": sys.version,
        "commit": _commit(root),
        "stamp": {name: os.environ.get(name) for name in _STAMP_VARIABLES},
        "engine": _engine_outside(root),
        "distributions": _distributions(),
    }


def _distributions() -> str:
    """SHA-256 of the names of the distributions' metadata folders on ``sys.path``: the names
    carry the versions, so any install, removal or version change takes the full path."""
    hasher = hashlib.sha256()
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as entries:
                names = sorted(
                    item.name
                    for item in entries
                    if item.name.endswith((".dist-info", ".egg-info"))
                )
        except OSError:
            continue
        hasher.update(f"{entry}\0{chr(0).join(names)}\n".encode())
    return hasher.hexdigest()


def _entry(entry: os.DirEntry) -> str:
    """How one listed file enters the record: ``file:size:sha256``, a link's target, or a
    special file's type (never opened)."""
    if entry.is_symlink():
        return f"link:{os.readlink(entry.path)}"
    if not entry.is_file(follow_symlinks=False):
        return f"special:{entry.stat(follow_symlinks=False).st_mode}"
    found = file_digests.sha256(entry.path)
    if found is None:  # gone, or replaced by something else, since it was listed
        return "gone"
    size, digest, steady = found
    return f"file:{size}:{digest.hex()}" + ("" if steady else ":changed while read")


def tree_entries(root: str | Path) -> dict[str, str]:
    """Each file of the book at ``root`` the record covers (relative path, ``/``-separated),
    in a fixed order, with how it enters (:func:`_entry`)."""
    root = Path(root).resolve()
    return {"/".join(name): _entry(entry) for name, entry in _files(root)}


def tree_digest(root: str | Path) -> str:
    """SHA-256 over the stamp, then each file's path and entry (:func:`tree_entries`)."""
    root = Path(root).resolve()
    hasher = hashlib.sha256(json.dumps(_stamp(root), sort_keys=True).encode() + b"\0")
    for path, entry in tree_entries(root).items():
        hasher.update(f"{path}\0{entry}\0".encode())
    return hasher.hexdigest()


def _engine_outside(root: Path) -> str | None:
    """The engine's folder and the SHA-256 of its files when it is outside ``root``; else None."""
    engine = Path(__file__).resolve().parents[1]  # the claimbook package
    if engine.is_relative_to(root):
        return None  # its modules are files of the tree
    hasher = hashlib.sha256()
    for file in sorted(engine.rglob("*")):
        if file.is_file() and "__pycache__" not in file.parts:
            data = file.read_bytes()
            hasher.update(f"{file.relative_to(engine).as_posix()}\0{len(data)}\0".encode())
            hasher.update(data)
    return f"{engine}:{hasher.hexdigest()}"


def record_clean_build(root: str | Path | None = None) -> None:
    """Record the tree after a clean, complete build: the stamp and every file's entry."""
    root = (Path(root) if root is not None else paths.REPO_ROOT).resolve()
    record = {"format": _FORMAT, "stamp": _stamp(root), "files": tree_entries(root)}
    write_text_atomically(_record_path(root), json.dumps(record, sort_keys=True) + "\n")


def forget_clean_build(root: str | Path | None = None) -> None:
    """Remove the record: the build is taking its full path and may end otherwise."""
    root = Path(root) if root is not None else paths.REPO_ROOT
    _record_path(root).unlink(missing_ok=True)


def unchanged_since_clean_build(root: str | Path | None = None) -> bool:
    """True when a clean build's record exists and the tree matches it byte for byte.

    The paths must match; then files are compared newest first (times decide only the order)
    up to the first difference.
    """
    root = (Path(root) if root is not None else paths.REPO_ROOT).resolve()
    try:
        record = json.loads(_record_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or record.get("format") != _FORMAT:
        return False
    recorded = record.get("files")
    listed = {"/".join(name): entry for name, entry in _files(root)}
    if not isinstance(recorded, dict) or set(recorded) != set(listed):
        return False

    def modified(path: str) -> int:
        try:
            return listed[path].stat(follow_symlinks=False).st_mtime_ns
        except OSError:  # gone since it was listed: read first, and found gone
            return 1 << 64

    for path in sorted(listed, key=modified, reverse=True):
        if _entry(listed[path]) != recorded[path]:
            return False
    return record.get("stamp") == _stamp(root)
