"""Tests of claimbook.claims.record: the build's record, and what a build's kernel may read."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from claimbook.claims import record
from claimbook.claims.record import (
    BUILD_VARIABLE,
    CHAPTER_CLAIMS_VARIABLE,
    DRIVER_VARIABLE,
    RECORD_VARIABLE,
    bytes_digest,
    read_claim_record,
    recorded_artifact,
    write_claim_record,
)
from claimbook.errors import ClaimError, TamperedArtifactError

CLAIM = "c15-invariance-001"
ARTIFACT = b'{"id": "c15-invariance-001", "status": "verified"}\n'


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '{"format": 99, "artifacts": {}}',
        '{"format": 1, "artifacts": []}',
        '{"format": 1, "artifacts": {}, "seconds": "x"}',
    ],
)
def test_a_malformed_record_reads_as_empty(tmp_path, text):
    path = tmp_path / "claims.json"
    path.write_text(text)
    assert read_claim_record(path).artifacts == {}


def test_entries_that_are_not_digests_or_times_are_dropped(tmp_path):
    path = tmp_path / "claims.json"
    path.write_text(
        '{"format": 1, "artifacts": {"a": "' + "0" * 64 + '", "b": "short", "c": 3},'
        ' "seconds": {"a": 1.5, "b": -1, "c": true, "d": "2"}}'
    )
    loaded = read_claim_record(path)
    assert loaded.artifacts == {"a": "0" * 64}
    assert loaded.seconds == {"a": 1.5}


def test_equal_records_are_equal_files(tmp_path):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    write_claim_record(one, {"b": "1" * 64, "a": "0" * 64}, {"a": 1.0}, build="t")
    write_claim_record(two, {"a": "0" * 64, "b": "1" * 64}, {"a": 1.0}, build="t")
    assert one.read_bytes() == two.read_bytes()


@pytest.fixture
def build_kernel(tmp_path, monkeypatch):
    """The environment of a kernel a build started, and the files it reads."""
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    (artifacts / f"{CLAIM}.json").write_bytes(ARTIFACT)
    path = tmp_path / "claims.json"
    monkeypatch.setenv(RECORD_VARIABLE, str(path))
    monkeypatch.setenv(BUILD_VARIABLE, "this-build")
    monkeypatch.setenv(DRIVER_VARIABLE, str(os.getpid()))
    monkeypatch.setenv(CHAPTER_CLAIMS_VARIABLE, f"other-claim {CLAIM}")
    monkeypatch.setattr(record, "WAIT_SECONDS", 0.01)
    return path, artifacts


def test_a_build_kernel_reads_the_recorded_artifact(build_kernel):
    path, artifacts = build_kernel
    write_claim_record(path, {CLAIM: bytes_digest(ARTIFACT)}, {}, build="this-build")
    assert recorded_artifact(CLAIM, artifacts)["status"] == "verified"


def test_a_claim_the_chapter_does_not_name_is_refused(build_kernel, monkeypatch):
    path, artifacts = build_kernel
    write_claim_record(path, {CLAIM: bytes_digest(ARTIFACT)}, {}, build="this-build")
    monkeypatch.setenv(CHAPTER_CLAIMS_VARIABLE, "other-claim")
    with pytest.raises(ClaimError, match="write the id as a literal"):
        recorded_artifact(CLAIM, artifacts)


def test_bytes_that_are_not_the_recorded_ones_are_refused(build_kernel):
    path, artifacts = build_kernel
    write_claim_record(path, {CLAIM: bytes_digest(b"other bytes")}, {}, build="this-build")
    with pytest.raises(TamperedArtifactError, match="not the artifact the build computed"):
        recorded_artifact(CLAIM, artifacts)


def test_a_complete_record_without_the_claim_says_it_was_not_computed(build_kernel):
    path, artifacts = build_kernel
    write_claim_record(path, {}, {}, build="this-build", complete=True)
    with pytest.raises(ClaimError, match="not computed by this build"):
        recorded_artifact(CLAIM, artifacts)


def test_a_kernel_waits_for_its_builds_record_to_name_the_claim(build_kernel):
    path, artifacts = build_kernel
    write_claim_record(path, {CLAIM: bytes_digest(ARTIFACT)}, {}, build="an-earlier-build")

    def later():
        time.sleep(0.2)
        write_claim_record(path, {}, {}, build="this-build", complete=False)  # still computing
        time.sleep(0.2)
        write_claim_record(path, {CLAIM: bytes_digest(ARTIFACT)}, {}, build="this-build")

    writer = threading.Thread(target=later)
    started = time.perf_counter()
    writer.start()
    try:
        assert recorded_artifact(CLAIM, artifacts)["status"] == "verified"
    finally:
        writer.join()
    assert time.perf_counter() - started >= 0.4


def test_a_kernel_whose_build_ended_stops_waiting(build_kernel, monkeypatch):
    _path, artifacts = build_kernel
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    monkeypatch.setenv(DRIVER_VARIABLE, ended.stdout.strip())
    with pytest.raises(ClaimError, match="ended before computing its claims"):
        recorded_artifact(CLAIM, artifacts)
