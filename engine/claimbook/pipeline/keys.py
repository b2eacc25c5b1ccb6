"""Chapter keys (docs/keys.md), and ``_build/keys/<stem>.json``, the record of each chapter's
last successful execution: its key, the key's parts and the SHA-256 of every output.
"""

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from claimbook import dependencies, paths
from claimbook.atomic import write_text_atomically
from claimbook.claims.keys import environment_digest
from claimbook.errors import InvalidClaimIdError, KeyRecordError, OutsideBuildProductsError
from claimbook.pipeline import file_digests
from claimbook.sources import Chapter, read_chapter
from claimbook.text import one_line

RECORD_FORMAT = 4  # bump when the record's meaning or the instrumentation changes
MISSING = "missing"
MAX_RECORD_BYTES = 1 << 20  # a record of this book's largest chapter holds about 20 KB
_HEX_DIGEST = re.compile("[0-9a-f]{64}")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")  # a module's name


def file_digest(path: str | Path) -> str:
    """SHA-256 of a regular file's bytes, else ``"missing"``."""
    return file_digests.sha256(path) or MISSING


def _digest(parts: Mapping) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def code_digest(chapter: Chapter) -> str:
    """SHA-256 of what the chapter executes: its code cells (source, tags) and its kernel."""
    cells = [[source, list(tags)] for _index, source, tags in chapter.code_cells()]
    kernel = chapter.notebook.metadata.get("kernelspec", {}).get("name")
    return _digest({"cells": cells, "kernel": kernel})


def chapter_modules(chapter: Chapter) -> list[str]:
    """The first-party modules the chapter's code cells reach (a cell that is not Python: none)."""
    starts: set[str] = set()
    for _index, source, _tags in chapter.code_cells():
        try:
            starts |= dependencies.imports_in_code(source)
        except SyntaxError:
            continue
    return dependencies.modules_reached(starts)


def chapter_key(code: str, claim_ids: Iterable[str], modules: Iterable[str]) -> dict:
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
        "modules": dependencies.module_digests(modules),
        "environment": environment_digest(),
    }
    return {"digest": _digest(parts), "parts": parts}


def record_path(stem: str, build_dir: str | Path | None = None) -> Path:
    """``<build_dir>/keys/<stem>.json`` (default ``_build/``); InvalidChapterStemError for a
    stem that cannot name a chapter."""
    directory = Path(build_dir if build_dir is not None else paths.BUILD_DIR)
    return directory / "keys" / f"{paths.check_chapter_stem(stem)}.json"


def load_record(stem: str) -> dict | None:
    """The chapter's record, or None if there is none; :class:`KeyRecordError` (one line
    naming the record and its first problem) if it is unreadable, too large or malformed."""
    path = record_path(stem)
    where = paths.shown(path)
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_RECORD_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise KeyRecordError(one_line(f"{where} cannot be read ({error.strerror})")) from None
    if len(raw) > MAX_RECORD_BYTES:
        raise KeyRecordError(f"{where} is larger than {MAX_RECORD_BYTES} bytes")
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        problem = f"{type(error).__name__}: {error}"
        raise KeyRecordError(one_line(f"{where} is not readable JSON ({problem})", 300)) from None
    problem = _record_problem(record, stem)
    if problem is not None:
        raise KeyRecordError(one_line(f"{where}: {problem}", 300))
    return record


def read_record(stem: str) -> dict | None:
    """:func:`load_record`, or None when the record is unusable."""
    try:
        return load_record(stem)
    except KeyRecordError:
        return None


def _is_digest(value: object, missing_ok: bool = True) -> bool:
    if missing_ok and value == MISSING:
        return True
    return isinstance(value, str) and _HEX_DIGEST.fullmatch(value) is not None


def _is_dotted(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 300 and bool(_DOTTED.fullmatch(value))


def _is_claim_id(value: object) -> bool:
    try:
        paths.check_claim_id(value)
    except InvalidClaimIdError:
        return False
    return True


def _are_claim_digests(value: object) -> bool:
    keys = {"registry", "artifact"}
    return isinstance(value, dict) and set(value) == keys and all(map(_is_digest, value.values()))


def _record_problem(record: object, stem: str) -> str | None:
    """The first reason the parsed ``record`` of chapter ``stem`` cannot be used, or None."""
    if not isinstance(record, dict):
        return f"holds {type(record).__name__}, not a record"
    if record.get("format") != RECORD_FORMAT:
        return f"has format {record.get('format')!r}; this engine reads format {RECORD_FORMAT}"
    if record.get("stem") != stem:
        return f"field stem is {record.get('stem')!r}, not {stem!r}"
    parts = record.get("parts")
    if not isinstance(parts, dict) or parts.get("format") != RECORD_FORMAT:
        return f"field parts is not a mapping of format {RECORD_FORMAT}"
    for name, value in (
        ("source", record.get("source")),
        ("key", record.get("key")),
        ("parts.code", parts.get("code")),
        ("parts.environment", parts.get("environment")),
    ):
        if not _is_digest(value, missing_ok=name == "source"):
            return f"field {name} is not a digest"
    for name, key_ok, value_ok in (
        ("claims", _is_claim_id, _are_claim_digests),
        ("modules", _is_dotted, _is_digest),
    ):
        entries = parts.get(name)
        if not isinstance(entries, dict):
            return f"field parts.{name} is not a mapping"
        for key, value in entries.items():
            if not key_ok(key) or not value_ok(value):
                return (
                    f"field parts.{name} has an entry {key!r}: {value!r} that is not a name "
                    "and a digest"
                )
    for name, item_ok, what in (
        ("claims", _is_claim_id, "claim ids"),
        ("modules", _is_dotted, "dotted module names"),
    ):
        if not isinstance(record.get(name), list) or not all(map(item_ok, record[name])):
            return f"field {name} is not a list of {what}"
    outputs = record.get("outputs")
    if not isinstance(outputs, dict):
        return "field outputs is not a mapping of paths to digests"
    for name, digest in outputs.items():
        if not isinstance(name, str) or PurePosixPath(name).is_absolute():
            return f"output {name!r} is not a path relative to the book"
        try:
            paths.build_product(name)
        except OutsideBuildProductsError:
            return (
                f"output {name!r} is not a build product (under artifacts/ or _build/, or "
                "chapters/<name>.ipynb)"
            )
        if not _is_digest(digest):
            return f"output {name!r} has {digest!r}, not a digest"
    seconds = record.get("seconds")
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not 0 <= seconds < math.inf
    ):
        return "field seconds is not a duration"
    return None


def write_record(
    source: Path, key: Mapping, claim_ids, modules, outputs: Iterable[Path], seconds: float
) -> dict:
    """Write the record of a successful execution, hashing ``source`` and ``outputs`` now;
    OutsideBuildProductsError for an output that is not a build product."""
    outputs = sorted(outputs)
    for output in outputs:
        paths.build_product(output)
    record = {
        "format": RECORD_FORMAT,
        "stem": source.stem,
        "source": file_digest(source),
        "key": key["digest"],
        "parts": key["parts"],
        "claims": sorted(claim_ids),
        "modules": sorted(modules),
        "outputs": {
            Path(output).relative_to(paths.REPO_ROOT).as_posix(): file_digest(output)
            for output in outputs
        },
        "seconds": round(seconds, 3),
    }
    text = json.dumps(record, indent=2, sort_keys=True) + "\n"
    write_text_atomically(record_path(source.stem), text)
    return record


class ChapterPlan(NamedTuple):
    """What a chapter needs (``"execute"``, ``"reassemble"`` or ``"none"``), and why."""

    stem: str
    source: Path
    action: str
    reason: str

    @property
    def execute(self) -> bool:
        return self.action == "execute"


def plan_chapter(source: Path) -> ChapterPlan:
    """What the chapter at ``source`` needs: an unchanged source is planned from its record,
    unparsed; ChapterSourceError if a changed one cannot be read."""
    stem = source.stem

    def execute(reason: str) -> ChapterPlan:
        return ChapterPlan(stem, source, "execute", reason)

    try:
        record = load_record(stem)
    except KeyRecordError as error:
        return execute(f"record unusable, executing again: {error}")
    if record is None:
        relative = record_path(stem).relative_to(paths.REPO_ROOT).as_posix()
        return execute(f"never executed: no record {relative}")
    code, claim_ids = record["parts"]["code"], record["claims"]
    prose_changed = file_digest(source) != record["source"]
    if prose_changed:
        chapter = read_chapter(source)
        code, claim_ids = code_digest(chapter), chapter.verified_claims
        if code != record["parts"]["code"]:
            return execute("code changed")
    key = chapter_key(code, claim_ids, record["modules"])
    if key["digest"] != record["key"]:
        now, before = key["parts"], record["parts"]
        changed = [
            name
            for name in ("claims", "modules", "environment")
            if now.get(name) != before.get(name)
        ]
        names = [
            name
            for group in ("modules", "claims")
            for name in sorted(set(now[group]) | set(before[group]))
            if now[group].get(name) != before[group].get(name)
        ]
        return execute(f"{', '.join(changed)} changed" + (f": {listed(names)}" if names else ""))
    found = {output: file_digest(paths.REPO_ROOT / output) for output in record["outputs"]}
    problems = [
        f"{output} {'missing' if found[output] == MISSING else 'differs from its record'}"
        for output, digest in sorted(record["outputs"].items())
        if found[output] != digest
    ]
    if problems:
        return execute(", ".join(problems))
    if prose_changed:
        return ChapterPlan(stem, source, "reassemble", "prose changed, code unchanged")
    return ChapterPlan(stem, source, "none", "up to date")


def listed(names: list[str]) -> str:
    """The first three ``names``, and how many more."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
