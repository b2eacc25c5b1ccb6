"""verify_claim: recompute a claim, compare it with its registry, write its artifact."""

import hashlib
import json

import numpy as np
import pytest
from claimtools import TOY_CLAIM, TOY_ID, verify_toy

from claimbook.claims import (
    artifact_path,
    claim_seed,
    failure_summary,
    harness_pin,
    judge,
    verify_claim,
)
from claimbook.claims.judgement import check_artifact
from claimbook.claims.record import claim_status_line
from claimbook.errors import ClaimFailedError, RegistryError, StalePinError
from trainable_harness import __version__

ARTIFACT_KEYS = {
    "id",
    "chapter",
    "kind",
    "refutes",
    "statement",
    "status",
    "error",
    "compute",
    "result",
    "expected",
    "comparisons",
    "contract",
    "seeds",
    "statistics",
    "key",
    "registry_digest",
    "provenance",
}


def test_verify_returns_and_writes_the_artifact(toy, registry, artifacts):
    artifact = verify_toy(registry, artifacts)
    assert set(artifact) == ARTIFACT_KEYS
    assert artifact["status"] == "verified" and artifact["kind"] == "deterministic"
    assert artifact["refutes"] is None and artifact["seeds"] is None
    assert artifact["statistics"] is None and artifact["error"] is None
    assert artifact["id"] == TOY_ID and artifact["chapter"] == 1
    assert artifact["statement"].startswith("A toy witness")
    assert artifact["contract"] == {
        "seed": claim_seed("toy-seed"),
        "dtype": "FP64",
        "device": "CPU",
        "estimator": "closed form",
    }
    registry_bytes = (registry / f"{TOY_ID}.yaml").read_bytes()
    assert artifact["registry_digest"] == hashlib.sha256(registry_bytes).hexdigest()
    assert artifact["key"]["registry_digest"] == artifact["registry_digest"]
    assert "trainable_harness.normalization" in artifact["key"]["modules"]
    assert artifact["provenance"]["version"] == __version__
    assert artifact["provenance"]["numpy"] == np.__version__
    assert set(artifact["provenance"]) == {"version", "python", "numpy", "platform", "machine"}
    assert artifact["comparisons"]["group.spread"] == {
        "expected": [1.0, 1.5],
        "got": 1.25,
        "tolerance": "closed interval",
        "reason": "Anywhere in the band the text claims.",
        "passed": True,
    }
    on_disk = json.loads(artifact_path(TOY_ID, artifacts).read_text())
    assert on_disk == artifact
    # numpy scalars are stored as JSON numbers and booleans of the right kind
    assert on_disk["result"] == {"ratio": 0.5, "count": 3, "flag": True, "group": {"spread": 1.25}}
    assert type(on_disk["result"]["count"]) is int and type(on_disk["result"]["flag"]) is bool
    # Computed here, not by a build: the line says so; the file on disk is the plain artifact.
    assert claim_status_line(artifact) == f"claim {TOY_ID}: verified (computed in this kernel)"
    assert claim_status_line(on_disk) == f"claim {TOY_ID}: verified"


def test_derived_seed_is_passed_to_the_witness(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    assert toy.seeds == [claim_seed("toy-seed")]


def test_policy_none_calls_the_witness_without_a_seed(toy, registry, artifacts):
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(TOY_CLAIM.replace("  policy: derived\n  name: toy-seed\n", "  policy: none\n"))
    artifact = verify_toy(registry, artifacts)  # the toy witness requires a seed
    assert artifact["status"] == "failed" and "TypeError" in artifact["error"]
    assert "seed" in artifact["error"]


FAILURES = [
    (
        "ratio",
        0.5001,
        "ratio: expected 0.5, got 0.5001, tolerance abs_tol 1e-12 (A few ulps.)",
    ),
    ("count", 4, "count: expected 3, got 4, tolerance exact"),
    ("flag", 1, "flag: expected True, got 1, tolerance exact"),  # 1 is not True here
    ("group", {"spread": 2.0}, "group.spread: expected [1.0, 1.5], got 2.0"),
    ("ratio", float("nan"), "ratio: expected 0.5, got 'nan'"),
]


@pytest.mark.parametrize(("field", "value", "shown"), FAILURES)
def test_a_missed_expectation_is_recorded_and_returned(
    toy, registry, artifacts, field, value, shown
):
    verify_toy(registry, artifacts)  # an earlier verified artifact must not survive
    toy.result = {**toy.result, field: value}
    artifact = verify_toy(registry, artifacts)  # no exception: the chapter goes on
    assert artifact["status"] == "failed"
    (line,) = failure_summary(artifact)
    assert line.startswith(f"{TOY_ID} {shown}")
    assert claim_status_line(artifact) == (
        f"claim {TOY_ID}: failed: {line} (computed in this kernel)"
    )
    text = artifact_path(TOY_ID, artifacts).read_text()
    assert json.loads(text)["status"] == "failed"
    assert "verified" not in text
    assert judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)[0] == "failed"


@pytest.mark.parametrize(("field", "value", "shown"), FAILURES)
def test_strict_raises_after_writing_a_failed_artifact(
    toy, registry, artifacts, field, value, shown
):
    toy.result = {**toy.result, field: value}
    with pytest.raises(ClaimFailedError) as caught:
        verify_toy(registry, artifacts, strict=True)
    assert shown in str(caught.value)
    assert json.loads(artifact_path(TOY_ID, artifacts).read_text())["status"] == "failed"


def test_relative_tolerance(toy, registry, artifacts):
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(TOY_CLAIM.replace("abs_tol: 1.0e-12", "rel_tol: 1.0e-3"))
    toy.result = {**toy.result, "ratio": 0.5004}  # 8e-4 relative
    assert verify_toy(registry, artifacts)["status"] == "verified"
    toy.result = {**toy.result, "ratio": 0.5006}  # 1.2e-3 relative
    artifact = verify_toy(registry, artifacts)
    assert artifact["status"] == "failed"
    assert "rel_tol 0.001" in failure_summary(artifact)[0]


def test_result_field_without_expectation_fails_and_strict_names_it(toy, registry, artifacts):
    toy.result = {**toy.result, "surprise": 1.0}
    artifact = verify_toy(registry, artifacts)
    assert artifact["status"] == "failed"
    assert failure_summary(artifact) == [
        f"{TOY_ID} surprise: expected None, got 1.0, tolerance no expectation registered"
    ]
    with pytest.raises(RegistryError, match="result fields without an expectation: surprise"):
        verify_toy(registry, artifacts, strict=True)


def test_expectation_naming_an_absent_field_fails(toy, registry, artifacts):
    toy.result = {key: value for key, value in toy.result.items() if key != "group"}
    assert verify_toy(registry, artifacts)["status"] == "failed"
    with pytest.raises(RegistryError, match=r"fields the witness does not return: group\.spread"):
        verify_toy(registry, artifacts, strict=True)


def test_a_computation_that_raises_is_recorded_as_failed(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    toy.result = ZeroDivisionError("boom")
    artifact = verify_toy(registry, artifacts)
    assert artifact["status"] == "failed" and artifact["error"] == "ZeroDivisionError: boom"
    assert failure_summary(artifact) == [f"{TOY_ID} error: ZeroDivisionError: boom"]
    stored = json.loads(artifact_path(TOY_ID, artifacts).read_text())
    assert stored == artifact
    state, _, _ = judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "failed"
    with pytest.raises(ClaimFailedError, match="ZeroDivisionError: boom"):
        verify_toy(registry, artifacts, strict=True)


@pytest.mark.parametrize("result", [[1.0, 2.0], {"ratio": np.array([0.5, 0.5])}])
def test_witness_returning_non_scalars_is_recorded_as_failed(toy, registry, artifacts, result):
    toy.result = result
    artifact = verify_toy(registry, artifacts)
    assert artifact["status"] == "failed"
    assert artifact["error"].startswith("WitnessResultError: ")
    assert "toy_witness returned" in artifact["error"]


def test_stale_pin_names_both_pins_and_the_remedy(toy, registry, artifacts):
    old_pin = "0.1.0+f5d27deff4da"
    with pytest.raises(StalePinError) as caught:
        verify_claim(TOY_ID, old_pin, registry_dir=registry, artifacts_dir=artifacts)
    message = str(caught.value)
    assert old_pin in message and __version__ in message and "make repin" in message
    assert toy.seeds == []  # nothing computed
    assert not artifact_path(TOY_ID, artifacts).exists()


def test_the_pin_is_the_harness_version(toy, registry, artifacts):
    assert harness_pin() == __version__ == "0.2.0"
    assert (
        verify_claim(
            TOY_ID, expected_harness="0.2.0", registry_dir=registry, artifacts_dir=artifacts
        )["status"]
        == "verified"
    )


def test_works_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    artifact = verify_claim("c15-invariance-001", harness_pin(), artifacts_dir=tmp_path / "out")
    assert artifact["status"] == "verified"
    assert (tmp_path / "out" / "c15-invariance-001.json").is_file()
    assert list(tmp_path.iterdir()) == [tmp_path / "out"]


@pytest.mark.parametrize("claim_id", ["c15-invariance-001", "c15-running-state-001"])
def test_chapter_15_claims_verify_and_check(tmp_path, claim_id):
    artifact = verify_claim(claim_id, harness_pin(), artifacts_dir=tmp_path)
    assert artifact["status"] == "verified"
    assert all(record["passed"] for record in artifact["comparisons"].values())
    assert check_artifact(claim_id, artifacts_dir=tmp_path) == artifact
    assert judge(claim_id, artifacts_dir=tmp_path)[0] == "verified"


# --- statistical and refuted claims (the fixture registry) ---------------------------------------


def test_statistical_expectations_can_fail(fixture_registry, artifacts):
    registry = fixture_registry.directory
    path = registry / "t01-noise-001.yaml"
    text = path.read_text()
    path.write_text(
        text.replace("ci_within: [0.98, 1.02]", "ci_within: [0.999, 1.001]")
        .replace("above: 1.1", "above: 1.3")
        .replace("value: 0.1\n", "value: 0.2\n")
    )
    artifact = verify_claim(
        "t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    assert artifact["status"] == "failed"
    failed = {line.split(":")[0] for line in failure_summary(artifact)}
    assert failed == {"t01-noise-001 estimate", "t01-noise-001 largest", "t01-noise-001 spread"}


def test_refuted_claim_end_to_end(fixture_registry, artifacts):
    registry = fixture_registry.directory
    artifact = verify_claim(
        "t01-shift-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    assert artifact["status"] == "refuted"
    assert artifact["refutes"] == {
        "account": (
            "A common account says that shifting every input coordinate changes what a "
            "centered normalization outputs."
        ),
        "source": "a toy account written for this test fixture",
    }
    assert claim_status_line(artifact) == "claim t01-shift-001: refuted (computed in this kernel)"
    state, _, _ = judge("t01-shift-001", registry_dir=registry, artifacts_dir=artifacts)
    assert state == "refuted"


def test_a_refuted_claim_whose_measurement_supports_the_account_fails(fixture_registry, artifacts):
    registry = fixture_registry.directory
    fixture_registry.shift_result = {"centered_shift_deviation": 0.5}  # the account holds
    artifact = verify_claim(
        "t01-shift-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    assert artifact["status"] == "failed"
    state, _, reason = judge("t01-shift-001", registry_dir=registry, artifacts_dir=artifacts)
    assert state == "failed" and "centered_shift_deviation" in reason
    with pytest.raises(ClaimFailedError, match=r"expected 0\.0, got 0\.5"):
        verify_claim(
            "t01-shift-001",
            harness_pin(),
            registry_dir=registry,
            artifacts_dir=artifacts,
            strict=True,
        )
