"""The build's record of the claim artifacts it computed: what a chapter may show.

Claims are computed by the engine in processes of its own (:mod:`claimbook.pipeline.claim_runs`),
never in a chapter's kernel. After computing them the build writes ``_build/claims.json``::

    {"format": 1, "build": "<token of the build that wrote it>", "complete": true,
     "artifacts": {"<id>": "<sha256 of artifacts/claims/<id>.json>", ...},
     "seconds": {"<id>": <seconds its last computation took>, ...}}

Each chapter's kernel starts with :data:`RECORD_VARIABLE` naming that file,
:data:`BUILD_VARIABLE` the build's token, :data:`DRIVER_VARIABLE` the build's process and
:data:`CHAPTER_CLAIMS_VARIABLE` the ids the chapter's source verifies. In such a kernel
:func:`claimbook.claims.verify.verify_claim` computes nothing: it waits until the record
carries the build's token (the claims compute while the chapters start) and returns the
artifact whose bytes the record names (:func:`recorded_artifact`). Whatever a chapter
writes, the build compares the artifacts with the bytes it holds in memory after every
chapter.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as scratch:
...     path = Path(scratch) / "claims.json"
...     write_claim_record(path, {"c15-invariance-001": "ab" * 32}, {"c15-invariance-001": 0.5})
...     read_claim_record(path).artifacts
{'c15-invariance-001': 'abababababababababababababababababababababababababababababababab'}
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from claimbook import paths
from claimbook.atomic import write_text_atomically
from claimbook.errors import ClaimError, TamperedArtifactError
from claimbook.paths import artifact_path, shown

__all__ = [
    "BUILD_VARIABLE",
    "CHAPTER_CLAIMS_VARIABLE",
    "CLAIM_WAIT_VARIABLE",
    "DRIVER_VARIABLE",
    "RECORD_FORMAT",
    "RECORD_VARIABLE",
    "ClaimRecord",
    "build_is_running",
    "bytes_digest",
    "read_claim_record",
    "record_path",
    "recorded_artifact",
    "write_claim_record",
]

RECORD_FORMAT = 1
RECORD_VARIABLE = "CLAIMBOOK_CLAIM_RECORD"
CHAPTER_CLAIMS_VARIABLE = "CLAIMBOOK_CHAPTER_CLAIMS"
BUILD_VARIABLE = "CLAIMBOOK_BUILD"  # a token naming one build; its record carries it
DRIVER_VARIABLE = "CLAIMBOOK_DRIVER_PID"
WAIT_SECONDS = 0.05  # how often a kernel looks whether the build's record is written
_SHA256_LENGTH = 64


class ClaimRecord(NamedTuple):
    """``artifacts``: claim id -> SHA-256 of its artifact; ``seconds``: id -> compute time;
    ``build``: the token of the build that wrote it (``""`` if none)."""

    artifacts: dict[str, str]
    seconds: dict[str, float]
    build: str = ""
    complete: bool = True


def record_path(build_dir: str | Path | None = None) -> Path:
    """``<build_dir>/claims.json``; by default under ``_build/``."""
    return Path(build_dir if build_dir is not None else paths.BUILD_DIR) / "claims.json"


def bytes_digest(data: bytes) -> str:
    """SHA-256 of ``data``, in hex: how the record names an artifact's bytes."""
    return hashlib.sha256(data).hexdigest()


def read_claim_record(path: str | Path | None = None) -> ClaimRecord:
    """The record at ``path`` (default :func:`record_path`); empty when absent or malformed.

    An empty record means that no artifact is known to be the build's own, so every claim
    is computed again: a damaged record costs time, never trust.
    """
    empty = ClaimRecord({}, {})
    try:
        data = json.loads(Path(path or record_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return empty
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        return empty
    artifacts, seconds = data.get("artifacts"), data.get("seconds", {})
    if not isinstance(artifacts, dict) or not isinstance(seconds, dict):
        return empty
    valid = {
        claim_id: digest
        for claim_id, digest in artifacts.items()
        if isinstance(claim_id, str)
        and isinstance(digest, str)
        and len(digest) == _SHA256_LENGTH
        and all(c in "0123456789abcdef" for c in digest)
    }
    times = {
        claim_id: float(value)
        for claim_id, value in seconds.items()
        if isinstance(claim_id, str)
        and isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0 <= value < float("inf")
    }
    build = data.get("build", "")
    complete = data.get("complete", True)
    return ClaimRecord(
        valid, times, build if isinstance(build, str) else "", complete is not False
    )


def write_claim_record(
    path: str | Path,
    artifacts: Mapping[str, str],
    seconds: Mapping[str, float],
    build: str = "",
    complete: bool = True,
) -> None:
    """Write the record atomically (sorted keys, so equal records are equal files)."""
    text = json.dumps(
        {
            "format": RECORD_FORMAT,
            "build": build,
            "complete": bool(complete),
            "artifacts": dict(sorted(artifacts.items())),
            "seconds": {k: round(float(v), 3) for k, v in sorted(seconds.items())},
        },
        indent=2,
    )
    write_text_atomically(path, text + "\n")


def build_is_running() -> bool:
    """True in a chapter kernel the build started (it names its claim record)."""
    return bool(os.environ.get(RECORD_VARIABLE))


# Variable naming how long, in seconds, a kernel waits for the record to change (set by the
# build, claimbook.pipeline.limits.CLAIM_WAIT_VARIABLE); without it, this default.
CLAIM_WAIT_VARIABLE = "CLAIMBOOK_CLAIM_WAIT"
DEFAULT_CLAIM_WAIT = 630.0


def _wait_for_record(claim_id: str) -> ClaimRecord:
    """The record of the build that started this kernel, once it names ``claim_id`` or is
    complete without it.

    The wait is limited: the build rewrites the record as each claim is computed, and kills
    a claim that computes longer than ``trainable_claim_timeout``, so a record unchanged for
    longer than that (and a margin; :data:`CLAIM_WAIT_VARIABLE`) means the build is stuck.

    Raises
    ------
    ClaimError
        If the build's process ended before writing it, or the record did not change for
        the wait's limit.
    """
    token = os.environ.get(BUILD_VARIABLE, "")
    driver = int(os.environ.get(DRIVER_VARIABLE, "0") or 0)
    try:
        limit = float(os.environ.get(CLAIM_WAIT_VARIABLE) or DEFAULT_CLAIM_WAIT)
    except ValueError:
        limit = DEFAULT_CLAIM_WAIT
    last, changed = None, time.monotonic()
    while True:
        record = read_claim_record(os.environ[RECORD_VARIABLE])
        if record.build == token and (claim_id in record.artifacts or record.complete):
            return record
        if record != last:
            last, changed = record, time.monotonic()
        elif time.monotonic() - changed > limit:
            raise ClaimError(
                f"claim {claim_id}: the build's claim record did not change for {limit:g} s "
                "(longer than a claim may compute, trainable_claim_timeout); the build is stuck"
            )
        try:
            if driver:
                os.kill(driver, 0)
        except ProcessLookupError:
            raise ClaimError(
                "the build that started this kernel ended before computing its claims"
            ) from None
        except PermissionError:  # alive, another user's: keep waiting
            pass
        time.sleep(WAIT_SECONDS)


def recorded_artifact(claim_id: str, artifacts_dir: str | Path | None = None) -> dict:
    """In a kernel the build started: the artifact the build computed for ``claim_id``.

    ``claim_id`` must be a registered id (the caller has loaded it) and one the chapter's
    source names literally (:data:`CHAPTER_CLAIMS_VARIABLE`): the chapter's key covers only
    the claims its source names, so a claim reached by a computed name is refused.

    Raises
    ------
    ClaimError
        If the chapter's source does not name the claim, or the build has no record of it
        (its registry entry could not be read: the build reports why).
    TamperedArtifactError
        If the artifact's bytes are not those the build recorded.
    """
    named = os.environ.get(CHAPTER_CLAIMS_VARIABLE, "").split()
    if claim_id not in named:
        raise ClaimError(
            f"claim {claim_id} is verified under a name the book cannot read from the "
            f"chapter's source; write the id as a literal: verify_claim({claim_id!r}, ...)"
        )
    record = _wait_for_record(claim_id)
    expected = record.artifacts.get(claim_id)
    if expected is None:
        raise ClaimError(
            f"claim {claim_id} was not computed by this build; the build names the reason"
        )
    path = artifact_path(claim_id, artifacts_dir)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TamperedArtifactError(
            f"{shown(path)} cannot be read ({exc.strerror}); the build computed it"
        ) from None
    if bytes_digest(data) != expected:
        raise TamperedArtifactError(
            f"{shown(path)} is not the artifact the build computed for {claim_id}"
        )
    return json.loads(data)
