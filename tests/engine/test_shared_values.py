"""Values claim processes keep for kernels (engine/claimbook/shared_values.py, calls.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from claimbook import calls, paths, shared_values
from claimbook.shared_values import SHARED_VARIABLE

COMPUTED: list[int] = []


@calls.cached_with_calls(maxsize=8, shared=True)
def _measured(seed: int, *, scale: float = 1.0):
    COMPUTED.append(seed)
    calls.ran("trainable_harness.probe", "inner")  # a harness function the value needs
    return {"values": np.arange(3.0) * scale + seed, "seed": seed}


@pytest.fixture
def build_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path)
    _measured.cache_clear()
    COMPUTED.clear()
    return tmp_path / shared_values.FOLDER


def _as(role, monkeypatch):
    """Act as another process with ``role``: its own (empty) in-memory cache."""
    _measured.cache_clear()
    if role is None:
        monkeypatch.delenv(SHARED_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(SHARED_VARIABLE, role)


def test_a_kernel_reads_what_a_claim_process_computed(build_dir, monkeypatch):
    _as("write", monkeypatch)
    computed = _measured(3, scale=2.0)
    assert COMPUTED == [3] and len(list(build_dir.iterdir())) == 1
    _as("read", monkeypatch)
    seen = set()
    calls.RECORDING.append(seen)
    try:
        served = _measured(3, scale=2.0)
    finally:
        calls.RECORDING.remove(seen)
    assert COMPUTED == [3]  # not computed again
    np.testing.assert_array_equal(served["values"], computed["values"])
    assert not served["values"].flags.writeable  # as the cache serves its values
    # The kernel's record names the functions the value needed, as computing it would.
    assert seen == {("trainable_harness.probe", "inner")}


def test_other_arguments_or_harness_code_are_another_key(build_dir, monkeypatch):
    _as("write", monkeypatch)
    _measured(3)
    _as("read", monkeypatch)
    _measured(3, scale=2.0)
    _measured(4)
    assert COMPUTED == [3, 3, 4]
    _as("read", monkeypatch)
    shared_values.harness_digest.cache_clear()
    monkeypatch.setattr(shared_values, "harness_digest", lambda: "0" * 64)  # an edit
    _measured(3)
    assert COMPUTED == [3, 3, 4, 3]


def test_a_claim_process_never_reads_a_kept_value(build_dir, monkeypatch):
    _as("write", monkeypatch)
    _measured(5)
    (kept,) = build_dir.iterdir()
    # A value planted under the key (say, by a chapter's code) is not what a claim computes.
    key = kept.stem
    shared_values.write_value(key, {"values": np.zeros(3), "seed": -1}, frozenset())
    _as("write", monkeypatch)
    assert _measured(5)["seed"] == 5 and COMPUTED == [5, 5]
    _as("read", monkeypatch)
    assert _measured(5)["seed"] == 5  # and the claim's computation replaced it


def test_a_kernel_writes_nothing_and_a_plain_process_neither_reads_nor_writes(
    build_dir, monkeypatch
):
    _as("read", monkeypatch)
    _measured(1)
    _as(None, monkeypatch)
    _measured(2)
    assert not build_dir.exists() and COMPUTED == [1, 2]
    _as("write", monkeypatch)
    _measured(2)
    _as(None, monkeypatch)
    _measured(2)
    assert COMPUTED == [1, 2, 2, 2]


def test_an_unknown_role_is_refused_by_name(monkeypatch):
    monkeypatch.setenv(SHARED_VARIABLE, "both")
    with pytest.raises(ValueError, match=f"{SHARED_VARIABLE} must be 'read', 'write'"):
        shared_values.role()


def test_mutates_processes_get_no_role_whatever_the_environment(monkeypatch):
    # Claims under perturbations must never write a value a kernel could read.
    from claimbook.build.claim_runs import _claim_environment
    from claimbook.claims.mutate import _environment

    monkeypatch.setenv(SHARED_VARIABLE, "write")
    assert SHARED_VARIABLE not in _claim_environment(1)
    assert SHARED_VARIABLE not in _environment()
    assert os.environ[SHARED_VARIABLE] == "write"
