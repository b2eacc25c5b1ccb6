"""``verify_claim``: a claim's artifact, the one the build recorded or one computed here.

The build computes claims in processes of its own and writes ``_build/claims.json``:
``{"format": 1, "build": token, "complete": bool, "artifacts": {id: sha256 of the bytes},
"seconds": {id: seconds}}``. In a chapter's kernel, started with the variables below,
:func:`recorded_artifact` waits for the record and returns the artifact whose bytes it names;
elsewhere (Jupyter, ``claims verify``) the claim is computed and its artifact written.
"""

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from claimbook import instruments, paths
from claimbook.atomic import write_text_atomically
from claimbook.claims.keys import claim_key
from claimbook.claims.registry import load_claim, run_computation
from claimbook.claims.store import artifact_text, build_artifact, failure_summary, provenance
from claimbook.errors import (
    ClaimError,
    ClaimFailedError,
    RegistryError,
    StalePinError,
    TamperedArtifactError,
)
from claimbook.paths import artifact_path, shown

RECORD_FORMAT = 1
RECORD_VARIABLE = "CLAIMBOOK_CLAIM_RECORD"
CHAPTER_CLAIMS_VARIABLE = "CLAIMBOOK_CHAPTER_CLAIMS"
BUILD_VARIABLE = "CLAIMBOOK_BUILD"  # a token naming one build; its record carries it
DRIVER_VARIABLE = "CLAIMBOOK_DRIVER_PID"
# How long, in seconds, a kernel waits for the record to change (set by the build).
CLAIM_WAIT_VARIABLE = "CLAIMBOOK_CLAIM_WAIT"
DEFAULT_CLAIM_WAIT = 630.0
WAIT_SECONDS = 0.05  # how often a kernel looks at the record

_MISMATCHES = {  # a comparison's missing side: what it says of the registry and computation
    "expected": "result fields without an expectation",
    "got": "expectations naming fields the witness does not return",
}


class ClaimRecord(NamedTuple):
    """The record's fields; ``build`` is ``""`` when it names no build."""

    artifacts: dict[str, str]
    seconds: dict[str, float]
    build: str = ""
    complete: bool = True


def record_path() -> Path:
    """``_build/claims.json``."""
    return paths.BUILD_DIR / "claims.json"


def bytes_digest(data: bytes) -> str:
    """SHA-256 of ``data`` in hex: how the record names an artifact's bytes."""
    return hashlib.sha256(data).hexdigest()


def read_claim_record(path: str | Path | None = None) -> ClaimRecord:
    """The record at ``path`` (default :func:`record_path`); empty when absent or malformed
    (a damaged record costs recomputation, never trust)."""
    try:
        data = json.loads(Path(path or record_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        return ClaimRecord({}, {})
    artifacts, seconds = data.get("artifacts"), data.get("seconds", {})
    if not isinstance(artifacts, dict) or not isinstance(seconds, dict):
        return ClaimRecord({}, {})
    build = data.get("build", "")
    return ClaimRecord(
        artifacts={
            claim_id: digest
            for claim_id, digest in artifacts.items()
            if isinstance(digest, str) and re.fullmatch("[0-9a-f]{64}", digest)
        },
        seconds={  # JSON's keys are strings; its numbers may be NaN or infinite
            claim_id: float(value)
            for claim_id, value in seconds.items()
            if isinstance(value, int | float) and not isinstance(value, bool)
            if 0 <= value < math.inf
        },
        build=build if isinstance(build, str) else "",
        complete=data.get("complete", True) is not False,
    )


def write_claim_record(
    path: str | Path,
    artifacts: Mapping[str, str],
    seconds: Mapping[str, float],
    build: str = "",
    complete: bool = True,
) -> None:
    """Write the record atomically (sorted keys, so equal records are equal files)."""
    record = {
        "format": RECORD_FORMAT,
        "build": build,
        "complete": bool(complete),
        "artifacts": dict(sorted(artifacts.items())),
        "seconds": {k: round(float(v), 3) for k, v in sorted(seconds.items())},
    }
    write_text_atomically(path, json.dumps(record, indent=2) + "\n")


def _wait_for_record(claim_id: str) -> ClaimRecord:
    """The record of this kernel's build once it names ``claim_id`` or is complete;
    :class:`ClaimError` if the build's process ended first, or the record (rewritten after
    each claim) did not change for :data:`CLAIM_WAIT_VARIABLE` seconds."""
    token = os.environ.get(BUILD_VARIABLE, "")
    driver = int(os.environ.get(DRIVER_VARIABLE, "0") or 0)
    limit = float(os.environ.get(CLAIM_WAIT_VARIABLE) or DEFAULT_CLAIM_WAIT)  # set by the build
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
    """In a build's kernel: the artifact the build computed for ``claim_id``; :class:`ClaimError`
    unless the chapter's source names the claim literally and the build computed it,
    :class:`TamperedArtifactError` if its bytes are not those recorded."""
    if claim_id not in os.environ.get(CHAPTER_CLAIMS_VARIABLE, "").split():
        raise ClaimError(
            f"claim {claim_id} is verified under a name the book cannot read from the "
            f"chapter's source; write the id as a literal: verify_claim({claim_id!r}, ...)"
        )
    expected = _wait_for_record(claim_id).artifacts.get(claim_id)
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


class ComputedHere(dict):
    """An artifact computed in the calling process, not by a build."""


def harness_pin() -> str:
    """The pin of a current chapter: the harness version."""
    return instruments.version()


def _coverage_message(artifact: Mapping, claim) -> str | None:
    """The registry and computation mismatches of a failed artifact (none when the computation
    raised: it has no comparisons), or None."""
    parts = []
    for missing, said in _MISMATCHES.items():
        fields = sorted(f for f, r in artifact["comparisons"].items() if r[missing] is None)
        if fields:
            parts.append(f"{said}: {', '.join(fields)}")
    if not parts:
        return None
    return f"{claim.path}: field expect does not match {claim.compute}: " + "; ".join(parts)


def compute_artifact(claim) -> dict:
    """``claim``'s artifact computed here, with this machine's provenance; writes nothing."""
    results, error = run_computation(claim)
    return build_artifact(
        claim, results, error=error, key=claim_key(claim), provenance=provenance()
    )


def verify_claim(
    claim_id: str,
    expected_harness: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
    strict: bool = False,
) -> dict:
    """A claim's artifact (status verified, refuted or failed): the running build's, or
    computed here and written (a :class:`ComputedHere`). ``expected_harness`` (a chapter's
    ``pin``) must equal :func:`harness_pin`, else :class:`StalePinError`. A failure is
    returned, unless ``strict``: then :class:`ClaimFailedError` (after writing), or
    :class:`RegistryError` when the fields and expectations do not match one to one."""
    claim = load_claim(claim_id, registry_dir=registry_dir)
    current = harness_pin()
    if expected_harness != current:
        raise StalePinError(
            f"claim {claim.id} was asked for harness {str(expected_harness)[:80]!r}, but the "
            f"running harness is {current!r}; run `make repin` to re-pin every chapter (it "
            "re-verifies the claims first and reports which results changed)"
        )
    if os.environ.get(RECORD_VARIABLE):  # a chapter kernel the build started
        artifact, written = recorded_artifact(claim.id, artifacts_dir), ""
    else:
        artifact = ComputedHere(compute_artifact(claim))
        path = artifact_path(claim.id, artifacts_dir)
        write_text_atomically(path, artifact_text(artifact))
        written = f"; artifact written with status failed to {shown(path)}"
    if strict and artifact["status"] == "failed":
        coverage = _coverage_message(artifact, claim)
        if coverage is not None:
            raise RegistryError(coverage)
        raise ClaimFailedError(
            f"claim {claim.id} failed ({claim.compute}){written}:\n  "
            + "\n  ".join(failure_summary(artifact))
        )
    return artifact


def claim_status_line(artifact: Mapping) -> str:
    """``"claim <id>: <status>"``, a failure's first line, and ``" (computed in this
    kernel)"`` for a :class:`ComputedHere`: what a chapter prints after verifying."""
    line = f"claim {artifact['id']}: {artifact['status']}"
    failures = failure_summary(artifact) if artifact["status"] == "failed" else []
    if failures:
        line += f": {failures[0]}"
    if isinstance(artifact, ComputedHere):
        line += " (computed in this kernel)"
    return line
