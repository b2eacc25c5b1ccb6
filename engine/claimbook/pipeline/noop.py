"""A build that has nothing to do says so in a fraction of a second: a clean build records
every file of the tree and what pages show besides; the next compares, newest file first, before
importing anything heavy."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from claimbook import dependencies, paths
from claimbook.atomic import write_text_atomically
from claimbook.pipeline.file_digests import describe, walk

RECORD_NAME = "clean-build.json"
_FORMAT = 4  # part of the stamp: bump when what the record holds changes
# Folders left out by name, files by their path in the tree.
_SKIPPED = frozenset(
    ".git .venv node_modules __pycache__ .pytest_cache .ruff_cache .hypothesis .mypy_cache "
    f"_build/{RECORD_NAME} _build/.build.lock .setup.lock".split()
)


def tree_entries(root: str | Path) -> dict[str, str]:
    """``{relative path: how it enters (:func:`.file_digests.describe`)}`` of each file the
    record covers."""
    return {name: describe(entry) for name, entry in walk(Path(root).resolve(), _SKIPPED).items()}


def _stamp(root: Path) -> dict:
    """What pages show that is no file of the tree: HEAD's commit, the footer's variables,
    Python, the installed distributions, the root, and an engine outside the root."""
    try:
        found = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        commit = found.stdout.strip() if found.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        commit = ""
    distributions = hashlib.sha256()
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
        distributions.update(f"{entry}\0{chr(0).join(names)}\n".encode())
    return {
        "format": _FORMAT,
        "root": str(root),
        "python": sys.version,
        "commit": commit,
        "stamp": {
            name: os.environ.get(name)
            for name in ("TRAINABLE_BUILD_COMMIT", "TRAINABLE_BUILD_DATE")
        },
        "engine": _engine_outside(root),
        "distributions": distributions.hexdigest(),
    }


def _engine_outside(root: Path) -> str | None:
    """The engine's folder and digest if it is outside ``root`` (else it is in the tree)."""
    engine = dependencies.package_folder("claimbook")
    if engine.is_relative_to(root):
        return None
    return f"{engine}:{dependencies.package_digest('claimbook')}"


def record_clean_build() -> None:
    """Record the tree after a clean, complete build."""
    root = paths.REPO_ROOT.resolve()
    record = {"stamp": _stamp(root), "files": tree_entries(root)}
    write_text_atomically(root / "_build" / RECORD_NAME, json.dumps(record, sort_keys=True) + "\n")


def forget_clean_build() -> None:
    """Remove the record (the build takes its full path and may end otherwise)."""
    (paths.REPO_ROOT.resolve() / "_build" / RECORD_NAME).unlink(missing_ok=True)


def unchanged_since_clean_build() -> bool:
    """True when the tree matches a clean build's record byte for byte (paths first, then the
    files newest first: times decide only the order)."""
    root = paths.REPO_ROOT.resolve()
    try:
        record = json.loads((root / "_build" / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    recorded = record.get("files") if isinstance(record, dict) else None
    listed = walk(root, _SKIPPED)
    if not isinstance(recorded, dict) or set(recorded) != set(listed):
        return False

    def modified(path: str) -> int:
        try:
            return listed[path].stat(follow_symlinks=False).st_mtime_ns
        except (OSError, AttributeError):  # gone since it was listed, or unlistable (None)
            return 1 << 64

    for path in sorted(listed, key=modified, reverse=True):
        if describe(listed[path]) != recorded[path]:
            return False
    return record.get("stamp") == _stamp(root)
