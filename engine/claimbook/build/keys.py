"""Chapter keys and the records of the last successful execution of each chapter.

A chapter's **key** is a SHA-256 over four things, and nothing else:

- ``code``: its code cells (source and tags, in order) and its kernel, as jupytext reads
  them from ``chapters/<stem>.md`` -- not its prose, which executes nothing;
- ``claims``: the bytes of each registry entry ``claims/<id>.yaml`` the chapter verifies
  and of the artifact the build computed for it (which ids:
  :attr:`claimbook.sources.Chapter.verified_claims`, read from its code; the chapter shows
  what the artifact says, and computes no claim itself);
- ``functions``: the digest of each harness function the chapter's cells ran the last time
  it executed, recorded by
  :class:`claimbook.claims.keys.HarnessCallRecorder` and digested from today's
  sources by :func:`claimbook.claims.keys.function_digests`;
- ``environment``: the lock ``requirements.txt`` and the Python version.

So a README, CLI, test or build-tool edit changes no key, and neither does an edit of a
harness function the chapter never runs; an edit of one it runs changes its key.

After a successful execution the build writes ``_build/keys/<stem>.json``: the key, its
parts, the recorded functions, and the SHA-256 of every output (the executed notebook, the
claim artifacts, the figures). The chapter executes again when its key differs, when that
record is missing, or when an output is missing or differs from what was recorded (a
deleted or hand-edited artifact is recomputed, never trusted). An edit of the prose alone
leaves the key as it was: the executed notebook is then *reassembled* from the new source's
cells and the stored outputs of its unchanged code cells, without running a kernel.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from claimbook import paths
from claimbook.atomic import write_text_atomically
from claimbook.claims.keys import environment_digest, function_digests
from claimbook.sources import Chapter, read_chapter

__all__ = [
    "RECORD_FORMAT",
    "ChapterPlan",
    "chapter_key",
    "code_digest",
    "file_digest",
    "output_problems",
    "plan_chapter",
    "read_record",
    "record_path",
    "write_record",
]

# Bump when the record's meaning or the instrumentation changes: every chapter re-executes.
RECORD_FORMAT = 3
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


def code_digest(chapter: Chapter) -> str:
    """SHA-256 of what the chapter executes: its code cells (source, tags) and its kernel."""
    cells = [[source, list(tags)] for _index, source, tags in chapter.code_cells()]
    kernel = chapter.notebook.metadata.get("kernelspec", {}).get("name")
    return _digest({"cells": cells, "kernel": kernel})


def chapter_key(code: str, claim_ids: Iterable[str], functions: Iterable[tuple[str, str]]) -> dict:
    """The key of a chapter whose code digests to ``code``: ``{"digest", "parts"}``."""
    parts = {
        "format": RECORD_FORMAT,
        "code": code,
        "claims": {
            claim_id: {
                "registry": file_digest(paths.registry_path(claim_id)),
                "artifact": file_digest(paths.artifact_path(claim_id)),
            }
            for claim_id in sorted(claim_ids)
        },
        "functions": function_digests([tuple(function) for function in functions]),
        "environment": environment_digest(),
    }
    return {"digest": _digest(parts), "parts": parts}


def record_path(stem: str, build_dir: str | Path | None = None) -> Path:
    """``<build_dir>/keys/<stem>.json``; by default under ``_build/``."""
    return Path(build_dir if build_dir is not None else paths.BUILD_DIR) / "keys" / f"{stem}.json"


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
    source: Path, key: Mapping, claim_ids, functions, outputs: Iterable[Path], seconds: float
) -> dict:
    """Write the record of a successful execution; ``source`` and ``outputs`` are hashed now."""
    stem = source.stem
    record = {
        "format": RECORD_FORMAT,
        "stem": stem,
        "source": file_digest(source),
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
    """What a chapter needs (``"execute"``, ``"reassemble"`` or ``"none"``), and why."""

    stem: str
    source: Path
    action: str
    reason: str

    @property
    def execute(self) -> bool:
        return self.action == "execute"


def plan_chapter(source: Path) -> ChapterPlan:
    """Decide what the chapter at ``source`` needs (see the module doc).

    While the source file is byte for byte what the record saw, its code digest and claim ids
    come from the record, so an unchanged chapter is planned without parsing it.

    Raises
    ------
    ChapterSourceError
        If the source changed and cannot be read.
    """
    stem = source.stem
    record = read_record(stem)
    if record is None:
        relative = record_path(stem).relative_to(paths.REPO_ROOT).as_posix()
        return ChapterPlan(stem, source, "execute", f"never executed: no record {relative}")
    action = "none"
    code, claim_ids = record["parts"]["code"], record["claims"]
    if file_digest(source) != record["source"]:
        chapter = read_chapter(source)
        code, claim_ids = code_digest(chapter), chapter.verified_claims
        if code != record["parts"]["code"]:
            return ChapterPlan(stem, source, "execute", "code changed")
        action = "reassemble"
    key = chapter_key(code, claim_ids, record["functions"])
    if key["digest"] != record["key"]:
        changed = [
            name
            for name in ("claims", "functions", "environment", "format")
            if key["parts"].get(name) != record["parts"].get(name)
        ]
        detail = _changed_names(key["parts"], record["parts"])
        return ChapterPlan(stem, source, "execute", f"{', '.join(changed)} changed{detail}")
    problems = output_problems(record)
    if problems:
        return ChapterPlan(stem, source, "execute", ", ".join(problems))
    if action == "reassemble":
        return ChapterPlan(stem, source, action, "prose changed, code unchanged")
    return ChapterPlan(stem, source, "none", "up to date")


def output_problems(record: Mapping) -> list[str]:
    """``"<path> missing"`` or ``"<path> differs from its record"`` for each output the
    record lists that is not on disk byte for byte as recorded (paths relative to the root).
    """
    problems = []
    for output, digest in sorted(record["outputs"].items()):
        found = file_digest(paths.REPO_ROOT / output)
        if found == MISSING:
            problems.append(f"{output} missing")
        elif found != digest:
            problems.append(f"{output} differs from its record")
    return problems


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
