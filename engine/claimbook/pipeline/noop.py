"""A build that has nothing to do says so in a fraction of a second.

A full no-op build plans every chapter, judges every claim and compares the published site
with its record: about a second and a half of CPU for this book, more with every chapter and
claim, most of it importing the engine and validating registry files. Yet when not one byte
of the book has changed since a clean build, each of those steps must give the answer it
gave then. So a clean, complete build ends by recording the tree: each file's path and
SHA-256 (:func:`record_clean_build`), and the next ``build`` (or ``build --question``) first
compares the tree with it (:func:`unchanged_since_clean_build`), before importing anything
heavy. The comparison reads the most recently modified files first and stops at the first
difference, so a build after an edit pays for reading about one file before it takes its full
path; an unchanged tree is read whole.

The record (:func:`tree_entries`; :func:`tree_digest` is one digest of it) covers the bytes
and relative path of every file under the book's root, build products included (executed
notebooks, keys, artifacts, the published site and its records, the mutate record), except:

- directories no build reads: ``.git``, ``.venv``, ``node_modules`` and the caches of Python
  and its tools (``__pycache__``, ``.pytest_cache``, ``.ruff_cache``, ``.hypothesis``,
  ``.mypy_cache``);
- the record itself and the lock files (``_build/.build.lock``, ``.setup.lock``), which a
  build writes for itself.

Beside the files it covers what a page shows that is not a file of the tree: the commit the
footer names (``git rev-parse HEAD``, or ``TRAINABLE_BUILD_COMMIT`` /
``TRAINABLE_BUILD_DATE``), the Python version, the installed distributions (the names of
their metadata folders, which carry their versions: :func:`_distributions`), the absolute
root (a copied checkout, whose ``.venv`` names the original, takes the full path, which
refuses it), and, when the engine that builds the book lives outside its root (a generated
or fixture book named by ``TRAINABLE_ROOT``), the engine's place and the bytes of its
modules: another engine, or an edited one, takes the full path (inside the root they are
files of the tree). The check hashes contents, never trusting sizes or times (times only
order the reading), so an edit whose old modification time is restored is seen like any
other; any change anywhere in the tree, relevant or not, sends the build down its full path,
which decides. The record, written at a clean build's end, takes the digest of a file the
build read and did not change (the same inode, size and times) from that read (the driver
hashes the tree while its chapters execute: :func:`hash_tree`), and of the site from its
publication (:mod:`claimbook.pipeline.file_digests`): a digest gone stale meanwhile only makes
the next check fail.
The record is removed when a whole build starts its full path and again when it ends other
than clean (a record a chapter's cell wrote meanwhile included), and written by the driver
itself after a clean end: only a build that ended clean leaves one, and never one that ran
in an environment that is not the book's (``--allow-environment-mismatch``), so the next
build compares the environment with the lock again. Like the published site,
it is a build product: whoever can write ``_build/`` can forge either, and the full path,
which judges every claim anew from the registry and the artifacts, is one edit away (any
byte of the tree, the record's own bytes excluded).
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

__all__ = [
    "RECORD_NAME",
    "forget_clean_build",
    "hash_tree",
    "record_clean_build",
    "tree_digest",
    "tree_entries",
    "unchanged_since_clean_build",
]

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
    """SHA-256 of the names of the installed distributions' metadata folders on ``sys.path``.

    Their names carry the versions (``numpy-2.4.6.dist-info``), so a distribution installed,
    removed, upgraded or downgraded since the clean build changes it, and the build takes its
    full path, which compares the environment with the lock (:mod:`claimbook.environment`)
    and refuses a difference; a folder listing per entry of ``sys.path``, well under a
    millisecond, and nothing imported.
    """
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


def _entry(entry: os.DirEntry, reuse: bool = False) -> str:
    """How one listed file enters the record: its kind, and its size and SHA-256 or target.

    A symbolic link enters as its target, never followed; anything else that is not a
    regular file (a FIFO, a socket, a device) as its type, never opened (reading a FIFO
    would wait for a writer); a file that changed while it was read, or went, as such.
    With ``reuse``, a file whose version this process has hashed already (same inode, size
    and times: :mod:`claimbook.pipeline.file_digests`) enters with that digest, unread.
    """
    if entry.is_symlink():
        return f"link:{os.readlink(entry.path)}"
    if not entry.is_file(follow_symlinks=False):
        return f"special:{entry.stat(follow_symlinks=False).st_mode}"
    status = entry.stat(follow_symlinks=False) if reuse else None
    digest = file_digests.known(status) if status is not None else None
    if digest is not None:
        return f"file:{status.st_size}:{digest.hex()}"
    found = file_digests.sha256(entry.path)
    if found is None:  # gone, or replaced by something else, since it was listed
        return "gone"
    size, digest, steady = found
    return f"file:{size}:{digest.hex()}" + ("" if steady else ":changed while read")


def tree_entries(root: str | Path, reuse: bool = False) -> dict[str, str]:
    """Each file of the book at ``root`` the record covers (relative path, ``/``-separated),
    in a fixed order, with how it enters (:func:`_entry`)."""
    root = Path(root).resolve()
    return {"/".join(name): _entry(entry, reuse) for name, entry in _files(root)}


def tree_digest(root: str | Path, reuse: bool = False) -> str:
    """SHA-256 over the book at ``root`` as the module doc describes (64 hex digits): the
    stamp, then each file's path and entry (:func:`tree_entries`)."""
    root = Path(root).resolve()
    hasher = hashlib.sha256(json.dumps(_stamp(root), sort_keys=True).encode() + b"\0")
    for path, entry in tree_entries(root, reuse).items():
        hasher.update(f"{path}\0{entry}\0".encode())
    return hasher.hexdigest()


def hash_tree(root: str | Path | None = None) -> None:
    """Hash every file of the tree now, so that :func:`record_clean_build` reads only the
    files that change after this (a build calls it while its chapters execute)."""
    tree_entries(Path(root) if root is not None else paths.REPO_ROOT)


def _engine_outside(root: Path) -> str | None:
    """The engine's folder and the SHA-256 of its files (modules, schema) when it is outside
    ``root``; None inside it."""
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
    # The files this build did not write were hashed while it ran (hash_tree), and the site
    # it published as it published it: those are not read again (see file_digests for why
    # a digest that went stale meanwhile is harmless here).
    record = {"format": _FORMAT, "stamp": _stamp(root), "files": tree_entries(root, reuse=True)}
    write_text_atomically(_record_path(root), json.dumps(record, sort_keys=True) + "\n")


def forget_clean_build(root: str | Path | None = None) -> None:
    """Remove the record: the build is taking its full path and may end otherwise."""
    root = Path(root) if root is not None else paths.REPO_ROOT
    _record_path(root).unlink(missing_ok=True)


def unchanged_since_clean_build(root: str | Path | None = None) -> bool:
    """True when a clean build's record exists and the tree still matches it, byte for byte.

    The listing must name exactly the recorded paths; then each file is read and compared,
    the most recently modified first, and the first difference ends the check: an edit is
    usually the first file read. The order is all that modification times decide.
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
