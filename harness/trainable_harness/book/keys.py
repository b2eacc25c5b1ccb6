"""Chapter keys and the records of the last successful execution of each chapter.

A chapter's **key** is a SHA-256 over four things, and nothing else:

- ``source``: the bytes of ``chapters/<stem>.md``;
- ``claims``: the bytes of each registry entry ``claims/<id>.yaml`` the chapter verifies
  (which ids: :attr:`trainable_harness.sources.Chapter.verified_claims`, read from its code);
- ``functions``: the digest of each harness function the chapter ran the last time it
  executed, cells and claim computations alike, recorded by
  :class:`trainable_harness.claims.keys.HarnessCallRecorder` and digested from today's
  sources by :func:`trainable_harness.claims.keys.function_digests`;
- ``environment``: the lock ``requirements.txt`` and the Python version.

So a README, CLI, test or build-tool edit changes no key, and neither does an edit of a
harness function the chapter never runs; an edit of one it runs changes its key.

After a successful execution the build writes ``_build/keys/<stem>.json``: the key, its
parts, the recorded functions, and the SHA-256 of every output (the executed notebook, the
claim artifacts, the figures). The chapter executes again when its key differs, when that
record is missing, or when an output is missing or differs from what was recorded (a
deleted or hand-edited artifact is recomputed, never trusted).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from trainable_harness import paths
from trainable_harness.atomic import write_text_atomically
from trainable_harness.claims.keys import environment_digest, function_digests

__all__ = [
    "RECORD_FORMAT",
    "ChapterPlan",
    "chapter_key",
    "file_digest",
    "plan_chapter",
    "read_record",
    "record_path",
    "write_record",
]

# Bump when the record's meaning or the instrumentation changes: every chapter re-executes.
RECORD_FORMAT = 1
MISSING = "missing"


def file_digest(path: str | Path) -> str:
    """SHA-256 of a regular file's bytes; ``"missing"`` if it is absent or not a regular file."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        return MISSING
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _digest(parts: Mapping) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chapter_key(
    source: Path, claim_ids: Iterable[str], functions: Iterable[tuple[str, str]]
) -> dict:
    """The key of the chapter at ``source``: ``{"digest", "parts"}`` (see the module doc)."""
    parts = {
        "format": RECORD_FORMAT,
        "source": file_digest(source),
        "claims": {
            claim_id: file_digest(paths.CLAIMS_DIR / f"{claim_id}.yaml")
            for claim_id in sorted(claim_ids)
        },
        "functions": function_digests([tuple(function) for function in functions]),
        "environment": environment_digest(),
    }
    return {"digest": _digest(parts), "parts": parts}


def record_path(stem: str) -> Path:
    """``_build/keys/<stem>.json``."""
    return paths.BUILD_DIR / "keys" / f"{stem}.json"


def read_record(stem: str) -> dict | None:
    """The record of the chapter's last successful execution, or None (absent or unreadable)."""
    try:
        record = json.loads(record_path(stem).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        return None
    return record


def write_record(
    stem: str, key: Mapping, claim_ids, functions, outputs: Iterable[Path], seconds: float
) -> dict:
    """Write the record of a successful execution; ``outputs`` are hashed now."""
    record = {
        "format": RECORD_FORMAT,
        "stem": stem,
        "key": key["digest"],
        "parts": key["parts"],
        "claims": sorted(claim_ids),
        "functions": [list(function) for function in sorted(map(tuple, functions))],
        "outputs": {
            Path(output).relative_to(paths.REPO_ROOT).as_posix(): file_digest(output)
            for output in sorted(outputs)
        },
        "seconds": round(seconds, 3),
    }
    write_text_atomically(record_path(stem), json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


@dataclass(frozen=True)
class ChapterPlan:
    """Whether a chapter must execute, and why (one line for the progress output)."""

    stem: str
    source: Path
    execute: bool
    reason: str


def plan_chapter(source: Path) -> ChapterPlan:
    """Decide whether the chapter at ``source`` must execute (see the module doc).

    The claim ids come from the last record while the source is unchanged, so an
    unchanged chapter is planned without parsing its source.
    """
    stem = source.stem
    record = read_record(stem)
    if record is None:
        return ChapterPlan(stem, source, True, "never executed")
    if file_digest(source) != record["parts"]["source"]:
        return ChapterPlan(stem, source, True, "source changed")
    key = chapter_key(source, record["claims"], record["functions"])
    if key["digest"] != record["key"]:
        changed = [
            name
            for name in ("claims", "functions", "environment", "format")
            if key["parts"].get(name) != record["parts"].get(name)
        ]
        detail = _changed_names(key["parts"], record["parts"])
        return ChapterPlan(stem, source, True, f"{', '.join(changed)} changed{detail}")
    for output, digest in record["outputs"].items():
        if file_digest(paths.REPO_ROOT / output) != digest:
            return ChapterPlan(stem, source, True, f"{output} missing or changed")
    return ChapterPlan(stem, source, False, "up to date")


def _changed_names(now: Mapping, before: Mapping) -> str:
    """`` (harness function x, claim y)``: the first few names whose digest moved."""
    names = [
        name
        for group in ("functions", "claims")
        for name in sorted(set(now.get(group, {})) | set(before.get(group, {})))
        if now.get(group, {}).get(name) != before.get(group, {}).get(name)
    ]
    if not names:
        return ""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f": {shown}"
