"""Tests of the claims machinery: registry, verify_claim, pins, artifacts, badges, CLI.

Most tests run against a throwaway registry holding a toy claim whose witness is patched
into ``trainable_harness.witnesses`` for the duration of the test; the real chapter-15
claims are verified into temporary artifact directories so the repository's own
``artifacts/`` is never touched.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainable_harness import claims, witnesses
from trainable_harness.__main__ import main
from trainable_harness.claims import (
    artifact_path,
    badge_state,
    check_artifact,
    claim_seed,
    display_contract,
    harness_pin,
    harness_source_sha256,
    list_claims,
    load_claim,
    repin,
    verify_claim,
)
from trainable_harness.errors import (
    ClaimFailedError,
    MissingArtifactError,
    RegistryError,
    StaleArtifactError,
    StalePinError,
    TamperedArtifactError,
    UnknownClaimError,
    WitnessResultError,
)

TOY_ID = "t01-toy-001"
TOY_CLAIM = """\
id: t01-toy-001
chapter: 1
statement: A toy witness returns a half, three, true and a nested spread of 1.25.
seed:
  policy: derived
  name: toy-seed
contract:
  dtype: FP64
  device: CPU
  estimator: closed form
compute: trainable_harness.witnesses.toy_witness
expect:
  ratio:
    value: 0.5
    abs_tol: 1.0e-12
    reason: a few ulps
  count:
    equals: 3
  flag:
    equals: true
  group.spread:
    interval: [1.0, 1.5]
    reason: anywhere in the band the text claims
"""


class ToyWitness:
    """A witness whose output a test can change; records the seeds it was called with."""

    def __init__(self):
        self.seeds = []
        self.result = {
            "ratio": np.float64(0.5),
            "count": np.int64(3),
            "flag": np.bool_(True),
            "group": {"spread": 1.25},
        }

    def __call__(self, seed):
        self.seeds.append(seed)
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


@pytest.fixture
def toy(monkeypatch):
    witness = ToyWitness()

    def toy_witness(seed):
        return witness(seed)

    toy_witness.__module__ = "trainable_harness.witnesses"  # as if defined there
    monkeypatch.setattr(witnesses, "toy_witness", toy_witness, raising=False)
    return witness


@pytest.fixture
def registry(tmp_path):
    directory = tmp_path / "claims"
    directory.mkdir()
    (directory / f"{TOY_ID}.yaml").write_text(TOY_CLAIM)
    return directory


@pytest.fixture
def artifacts(tmp_path):
    return tmp_path / "artifacts" / "claims"


def verify_toy(registry, artifacts):
    return verify_claim(TOY_ID, harness_pin(), registry_dir=registry, artifacts_dir=artifacts)


def edit_artifact(artifacts, edit):
    path = artifact_path(TOY_ID, artifacts)
    artifact = json.loads(path.read_text())
    edit(artifact)
    path.write_text(json.dumps(artifact, sort_keys=True, indent=2) + "\n")


# --- seeds and pins ---------------------------------------------------------------------------


def test_claim_seed_is_the_registered_value():
    # The first 8 hex digits of sha256(b"c15-running-state") are 12e27b9d.
    assert hashlib.sha256(b"c15-running-state").hexdigest()[:8] == "12e27b9d"
    assert claim_seed("c15-running-state") == 0x12E27B9D == 316832669


def test_harness_pin_is_version_plus_source_hash():
    from trainable_harness import __version__

    version, digest = harness_pin().split("+")
    assert version == __version__
    assert len(digest) == 12 and int(digest, 16) >= 0
    assert digest == harness_source_sha256()[:12]


def test_source_hash_follows_edits_and_renames_but_not_bytecode(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("x = 1\n")
    (package / "schema.json").write_text("{}\n")
    original = harness_source_sha256(package)
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0bytecode")
    (package / "notes.txt").write_text("not a source file")
    assert harness_source_sha256(package) == original
    (package / "a.py").write_text("x = 2\n")
    edited = harness_source_sha256(package)
    assert edited != original
    (package / "a.py").rename(package / "b.py")
    assert harness_source_sha256(package) not in (original, edited)
    (package / "schema.json").write_text('{"changed": true}\n')
    assert harness_source_sha256(package) != edited


# --- the registry ----------------------------------------------------------------------------


def test_real_registry_lists_and_loads_the_chapter_15_claims():
    assert {"c15-invariance-001", "c15-running-state-001"} <= set(list_claims())
    claim = load_claim("c15-running-state-001")
    assert claim.chapter == 15
    assert claim.seed == claim_seed("c15-running-state")
    assert load_claim("c15-invariance-001").seed is None
    assert claim.registry_digest == hashlib.sha256(claim.path.read_bytes()).hexdigest()


def test_display_contract_reads_the_registry(registry):
    assert display_contract(TOY_ID, registry_dir=registry) == {
        "seed": f'claim_seed("toy-seed") = {claim_seed("toy-seed")}',
        "dtype": "FP64",
        "device": "CPU",
        "estimator": "closed form",
    }
    assert display_contract("c15-invariance-001")["dtype"] == (
        "FP64 with paired FP32 cancellation check"
    )


def test_unknown_id_lists_the_nearest_ids(registry):
    with pytest.raises(UnknownClaimError, match="nearest registered ids: t01-toy-001"):
        load_claim("t01-toy-01", registry_dir=registry)
    with pytest.raises(UnknownClaimError, match="c15-invariance-001"):
        verify_claim("c15-invariance-01", harness_pin())


def test_unknown_id_without_near_match_lists_the_registry(registry):
    with pytest.raises(UnknownClaimError, match="registered ids: t01-toy-001"):
        load_claim("zzz", registry_dir=registry)


@pytest.mark.parametrize("claim_id", ["../claims/t01-toy-001", "T01-TOY-001", ""])
def test_ids_that_are_not_plain_names_are_unknown(registry, claim_id):
    with pytest.raises(UnknownClaimError):
        load_claim(claim_id, registry_dir=registry)


MALFORMED = {
    "missing reason": (
        ("    reason: a few ulps\n", ""),
        r"field expect\.ratio: 'reason' is a required property",
    ),
    "YAML 1.1 number as text": (
        ("abs_tol: 1.0e-12", "abs_tol: 1e-12"),
        r"field expect\.ratio\.abs_tol: '1e-12' is not of type 'number'.*write 5\.0e-4",
    ),
    "unknown top-level field": (("chapter: 1\n", "chapter: 1\nauthor: me\n"), r"field author"),
    "two tolerances": (
        ("  count:\n    equals: 3\n", "  count:\n    equals: 3\n    abs_tol: 1.0\n"),
        r"field expect\.count\.abs_tol: not allowed",
    ),
    "seed name missing": (("  name: toy-seed\n", ""), r"field seed: 'name' is a required"),
    "unknown seed policy": (("policy: derived", "policy: random"), r"field seed"),
    "chapter as text": (("chapter: 1\n", "chapter: one\n"), r"field chapter"),
    "two sentences on two lines": (
        ("1.25.\n", "1.25.\n  It is a toy.\n"),
        r"field statement",
    ),
    "compute outside the harness": (
        ("trainable_harness.witnesses.toy_witness", "os.system"),
        r"field compute: 'os\.system' has the wrong form",
    ),
    "id differs from file name": (("id: t01-toy-001", "id: t01-toy-002"), r"field id"),
    "reversed interval": (("[1.0, 1.5]", "[1.5, 1.0]"), r"field expect\[group\.spread\]"),
    "duplicate key": (("chapter: 1\n", "chapter: 1\nchapter: 2\n"), r"duplicate key 'chapter'"),
    "not YAML": (("seed:\n", "seed: [\n"), r"not valid YAML"),
    "empty file": ((TOY_CLAIM, ""), r"field \(top level\): None is not of type 'object'"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_registry_file_names_file_and_field(registry, case):
    (old, new), field_pattern = MALFORMED[case]
    path = registry / f"{TOY_ID}.yaml"
    assert old in TOY_CLAIM  # the mutation must apply, or the test proves nothing
    path.write_text(TOY_CLAIM.replace(old, new, 1))
    with pytest.raises(RegistryError, match=field_pattern) as caught:
        load_claim(TOY_ID, registry_dir=registry)
    assert str(path) in str(caught.value)


def test_chapter_in_id_must_match_chapter_field(registry):
    text = TOY_CLAIM.replace("t01-toy-001", "c16-toy-001")
    (registry / "c16-toy-001.yaml").write_text(text)
    with pytest.raises(RegistryError, match="field chapter is 1 but the id 'c16-toy-001'"):
        load_claim("c16-toy-001", registry_dir=registry)


def test_yml_files_are_refused_rather_than_ignored(registry):
    (registry / "t01-other-001.yml").write_text(TOY_CLAIM)
    with pytest.raises(RegistryError, match=r"must end in \.yaml; rename t01-other-001\.yml"):
        list_claims(registry)


def test_missing_registry_directory_is_named(tmp_path):
    with pytest.raises(RegistryError, match=r"does not exist.*TRAINABLE_ROOT"):
        list_claims(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("compute", "message"),
    [
        ("trainable_harness.claims.sha256", "not a function defined in trainable_harness.claims"),
        ("trainable_harness.witnesses.np", "not a function defined"),
        ("trainable_harness.no_such_module.f", "module trainable_harness.no_such_module"),
        ("trainable_harness.witnesses.no_such_function", "not a function defined"),
    ],
)
def test_compute_must_be_a_function_defined_in_the_harness(registry, artifacts, compute, message):
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(TOY_CLAIM.replace("trainable_harness.witnesses.toy_witness", compute))
    with pytest.raises(RegistryError, match=message):
        verify_toy(registry, artifacts)


def test_compute_outside_the_harness_is_refused_before_importing(registry, monkeypatch):
    imported = []
    monkeypatch.setattr(claims.importlib, "import_module", imported.append)
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(TOY_CLAIM.replace("trainable_harness.witnesses.toy_witness", "os.path.join"))
    with pytest.raises(RegistryError, match="field compute"):
        verify_claim(TOY_ID, harness_pin(), registry_dir=registry)
    assert imported == []


# --- verify_claim ----------------------------------------------------------------------------


def test_verify_returns_and_writes_the_artifact(toy, registry, artifacts):
    artifact = verify_toy(registry, artifacts)
    assert artifact["status"] == "verified"
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
    assert artifact["provenance"]["harness_pin"] == harness_pin()
    assert artifact["provenance"]["numpy"] == np.__version__
    assert set(artifact["provenance"]) == {
        "harness_pin",
        "harness_source_sha256",
        "python",
        "numpy",
        "platform",
        "machine",
    }
    assert artifact["comparisons"]["group.spread"] == {
        "expected": [1.0, 1.5],
        "got": 1.25,
        "tolerance": "closed interval (anywhere in the band the text claims)",
        "passed": True,
    }
    on_disk = json.loads(artifact_path(TOY_ID, artifacts).read_text())
    assert on_disk == artifact
    # numpy scalars are stored as JSON numbers and booleans of the right kind
    assert on_disk["result"] == {"ratio": 0.5, "count": 3, "flag": True, "group": {"spread": 1.25}}
    assert type(on_disk["result"]["count"]) is int and type(on_disk["result"]["flag"]) is bool


def test_derived_seed_is_passed_to_the_witness(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    assert toy.seeds == [claim_seed("toy-seed")]


def test_policy_none_calls_the_witness_without_a_seed(toy, registry, artifacts):
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(TOY_CLAIM.replace("  policy: derived\n  name: toy-seed\n", "  policy: none\n"))
    with pytest.raises(TypeError, match="seed"):  # the toy witness requires one
        verify_toy(registry, artifacts)


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("ratio", 0.5001, "ratio: expected 0.5, got 0.5001, tolerance abs_tol 1e-12 (a few ulps)"),
        ("count", 4, "count: expected 3, got 4, tolerance exact"),
        ("flag", 1, "flag: expected True, got 1, tolerance exact"),  # 1 is not True here
        ("group", {"spread": 2.0}, "group.spread: expected [1.0, 1.5], got 2.0"),
        ("ratio", float("nan"), "ratio: expected 0.5, got 'nan'"),
    ],
)
def test_failing_expectation_raises_and_writes_a_failed_artifact(
    toy, registry, artifacts, field, value, shown
):
    verify_toy(registry, artifacts)  # an earlier verified artifact must not survive
    toy.result = {**toy.result, field: value}
    with pytest.raises(ClaimFailedError) as caught:
        verify_toy(registry, artifacts)
    assert shown in str(caught.value)
    text = artifact_path(TOY_ID, artifacts).read_text()
    assert json.loads(text)["status"] == "failed"
    assert "verified" not in text
    assert badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)[0] == "failed"


def test_relative_tolerance(toy, registry, artifacts):
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(TOY_CLAIM.replace("abs_tol: 1.0e-12", "rel_tol: 1.0e-3"))
    toy.result = {**toy.result, "ratio": 0.5004}  # 8e-4 relative
    assert verify_toy(registry, artifacts)["status"] == "verified"
    toy.result = {**toy.result, "ratio": 0.5006}  # 1.2e-3 relative
    with pytest.raises(ClaimFailedError, match=r"rel_tol 0\.001"):
        verify_toy(registry, artifacts)


def test_result_field_without_expectation_is_a_registry_error(toy, registry, artifacts):
    toy.result = {**toy.result, "surprise": 1.0}
    with pytest.raises(RegistryError, match="result fields without an expectation: surprise"):
        verify_toy(registry, artifacts)
    assert json.loads(artifact_path(TOY_ID, artifacts).read_text())["status"] == "failed"


def test_expectation_naming_an_absent_field_is_a_registry_error(toy, registry, artifacts):
    toy.result = {key: value for key, value in toy.result.items() if key != "group"}
    with pytest.raises(RegistryError, match=r"fields the witness does not return: group\.spread"):
        verify_toy(registry, artifacts)


def test_witness_that_raises_leaves_a_failed_artifact(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    toy.result = ZeroDivisionError("boom")
    with pytest.raises(ZeroDivisionError) as caught:
        verify_toy(registry, artifacts)
    assert any(TOY_ID in note for note in caught.value.__notes__)
    stored = json.loads(artifact_path(TOY_ID, artifacts).read_text())
    assert stored["status"] == "failed" and stored["error"] == "ZeroDivisionError: boom"
    state, _, _ = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "failed"


@pytest.mark.parametrize("result", [[1.0, 2.0], {"ratio": np.array([0.5, 0.5])}])
def test_witness_returning_non_scalars_is_refused(toy, registry, artifacts, result):
    toy.result = result
    with pytest.raises(WitnessResultError, match="toy_witness returned"):
        verify_toy(registry, artifacts)


def test_stale_pin_names_both_pins_and_the_remedy(toy, registry, artifacts):
    old_pin = "0.0.9+000000000000"
    with pytest.raises(StalePinError) as caught:
        verify_claim(TOY_ID, old_pin, registry_dir=registry, artifacts_dir=artifacts)
    message = str(caught.value)
    assert old_pin in message and harness_pin() in message and "make repin" in message
    assert toy.seeds == []  # nothing computed
    assert not artifact_path(TOY_ID, artifacts).exists()


def test_verifying_twice_writes_byte_identical_artifacts(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    first = artifact_path(TOY_ID, artifacts).read_bytes()
    verify_toy(registry, artifacts)
    assert artifact_path(TOY_ID, artifacts).read_bytes() == first
    assert first.endswith(b"}\n")


@pytest.mark.parametrize("crash_in", ["fsync", "replace"])
def test_crash_while_writing_keeps_the_previous_artifact(
    toy, registry, artifacts, monkeypatch, crash_in
):
    verify_toy(registry, artifacts)
    before = artifact_path(TOY_ID, artifacts).read_bytes()
    toy.result = {**toy.result, "ratio": 0.75}  # a failing result that would overwrite it

    def crash(*arguments):
        raise OSError(f"simulated crash in {crash_in}")

    monkeypatch.setattr(claims.os, crash_in, crash)
    with pytest.raises(OSError, match="simulated crash"):
        verify_toy(registry, artifacts)
    monkeypatch.undo()
    assert artifact_path(TOY_ID, artifacts).read_bytes() == before
    assert sorted(path.name for path in artifacts.iterdir()) == [f"{TOY_ID}.json"]


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
    assert badge_state(claim_id, artifacts_dir=tmp_path)[0] == "verified"


# --- badges and artifact checks --------------------------------------------------------------


def test_badge_not_run_without_artifact(registry, artifacts):
    state, artifact, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert (state, artifact) == ("not run", None) and "no artifact" in reason


def test_badge_verified_after_verification(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    state, artifact, _ = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "verified" and artifact["id"] == TOY_ID


def test_badge_failed_for_unreadable_artifact(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    artifact_path(TOY_ID, artifacts).write_text('{"status": "verified"')
    state, artifact, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert (state, artifact) == ("failed", None) and "not readable JSON" in reason


def test_badge_stale_after_registry_edit(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    path = registry / f"{TOY_ID}.yaml"
    path.write_text("# a comment is still an edit\n" + TOY_CLAIM)
    state, _, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "stale" and f"another version of {TOY_ID}.yaml" in reason
    with pytest.raises(StaleArtifactError):
        check_artifact(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)


def test_badge_stale_after_harness_edit(toy, registry, artifacts, monkeypatch):
    verify_toy(registry, artifacts)
    monkeypatch.setattr(claims, "harness_source_sha256", lambda package_dir=None: "f" * 64)
    state, _, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "stale" and "ffffffffffff" in reason


def _set(mapping_of, **values):
    """An artifact edit: update the mapping that ``mapping_of`` picks out of the artifact."""
    return lambda artifact: mapping_of(artifact).update(values)


@pytest.mark.parametrize(
    ("edit", "badge"),
    [
        pytest.param(
            _set(lambda a: a["result"], ratio=0.6), "failed", id="value out of tolerance"
        ),
        pytest.param(_set(lambda a: a, status="failed"), "failed", id="verified made failed"),
        pytest.param(_set(lambda a: a["contract"], device="GPU"), "failed", id="contract edited"),
        pytest.param(
            _set(lambda a: a["comparisons"]["count"], passed=False), "failed", id="comparison"
        ),
        pytest.param(_set(lambda a: a["result"], flag=1), "failed", id="boolean made integer"),
        # Within tolerance and edited consistently: only a recomputation can tell.
        pytest.param(
            lambda a: (
                a["result"].update(ratio=0.5 + 1e-13),
                a["comparisons"]["ratio"].update(got=0.5 + 1e-13),
            ),
            "verified",
            id="value within tolerance",
        ),
    ],
)
def test_tampered_artifact_is_caught(toy, registry, artifacts, edit, badge):
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, edit)
    assert badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)[0] == badge
    with pytest.raises(TamperedArtifactError, match="disagrees with a fresh recomputation"):
        check_artifact(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)


def test_failed_artifact_edited_to_verified_is_caught(toy, registry, artifacts):
    toy.result = {**toy.result, "count": 4}
    with pytest.raises(ClaimFailedError):
        verify_toy(registry, artifacts)
    edit_artifact(artifacts, _set(lambda a: a, status="verified"))
    state, _, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "failed" and 'status: on disk "verified", expected "failed"' in reason
    with pytest.raises(TamperedArtifactError, match="status"):
        check_artifact(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)


def test_check_artifact_missing(registry, artifacts):
    with pytest.raises(MissingArtifactError, match="claims verify"):
        check_artifact(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)


def test_check_artifact_ignores_where_it_ran(toy, registry, artifacts):
    # provenance's python/numpy/platform describe the machine, not the claim.
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a["provenance"].update(platform="elsewhere"))
    assert check_artifact(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)["status"] == (
        "verified"
    )


def _checked_leaves(value, prefix=()):
    """Every leaf of an artifact except the machine description in provenance."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _checked_leaves(item, (*prefix, key))
    elif prefix[:1] != ("provenance",) or prefix[-1] in ("harness_pin", "harness_source_sha256"):
        yield prefix


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_single_edit_of_a_checked_field_is_detected(toy, registry, artifacts, data):
    original = verify_toy(registry, artifacts)
    leaves = sorted(_checked_leaves(original))
    leaf = data.draw(st.sampled_from(leaves))
    replacement = data.draw(
        st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-10, 10), st.text())
    )
    container = original
    for key in leaf[:-1]:
        container = container[key]
    if json.dumps(container[leaf[-1]]) == json.dumps(replacement):
        return  # not an edit
    container[leaf[-1]] = replacement
    artifact_path(TOY_ID, artifacts).write_text(json.dumps(original))
    with pytest.raises((TamperedArtifactError, StaleArtifactError)):
        check_artifact(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)


# --- re-pinning ------------------------------------------------------------------------------


def _chapter(pin):
    return (
        f'---\njupytext: {{}}\n---\n# A chapter\n\n```{{code-cell}} ipython3\npin = "{pin}"\n```\n'
    )


def test_repin_rewrites_pins_and_reports_changed_results(toy, registry, artifacts, tmp_path):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "15-pinned.md").write_text(_chapter("0.0.1+aaaaaaaaaaaa"))
    (chapters / "16-unpinned.md").write_text("# no claims here\n")
    (chapters / "17-current.md").write_text(_chapter(harness_pin()))
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a["result"].update(ratio=0.25))  # an older result
    report = repin(chapters, registry_dir=registry, artifacts_dir=artifacts)
    assert report.all_verified
    assert f'pin = "{harness_pin()}"' in (chapters / "15-pinned.md").read_text()
    assert (chapters / "16-unpinned.md").read_text() == "# no claims here\n"
    assert [update.path.name for update in report.pin_updates] == ["15-pinned.md", "17-current.md"]
    assert [update.changed for update in report.pin_updates] == [True, False]
    (toy_report,) = report.claims
    assert toy_report.changes == ("ratio: 0.25 -> 0.5",)
    # after re-pinning, the chapter's pin verifies
    pin_line = next(
        line for line in (chapters / "15-pinned.md").read_text().splitlines() if "pin" in line
    )
    pin = pin_line.split('"')[1]
    assert verify_claim(TOY_ID, pin, registry_dir=registry, artifacts_dir=artifacts)


def test_repin_keeps_line_endings_and_trailing_comments(tmp_path):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    text = 'a\r\n  pin = "old"  # written against this harness\r\nb\r\n'
    (chapters / "c.md").write_bytes(text.encode())
    claims.repin_chapters(chapters)
    expected = text.replace('"old"', f'"{harness_pin()}"')
    assert (chapters / "c.md").read_bytes() == expected.encode()


# --- command line ----------------------------------------------------------------------------


def run_cli(capsys, registry, artifacts, *arguments):
    status = main(["--registry", str(registry), "--artifacts", str(artifacts), *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_verify_prints_one_line_per_claim(toy, registry, artifacts, capsys):
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "verify")
    assert (status, out) == (0, f"{TOY_ID}: verified\n")


def test_cli_verify_fails_on_a_failing_claim(toy, registry, artifacts, capsys):
    toy.result = {**toy.result, "count": 4}
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "verify", TOY_ID)
    assert status == 1
    assert out.startswith(f"{TOY_ID}: failed") and "count: expected 3, got 4" in out


def test_cli_check_artifacts_reports_tampering(toy, registry, artifacts, capsys):
    run_cli(capsys, registry, artifacts, "claims", "verify")
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "verify", "--check-artifacts")
    assert (status, out) == (0, f"{TOY_ID}: artifact matches a fresh recomputation\n")
    edit_artifact(artifacts, lambda a: a["result"].update(ratio=0.5 + 1e-13))
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "verify", "--check-artifacts")
    assert status == 1 and "TamperedArtifactError" in out and "result.ratio" in out


def test_cli_unknown_id_exits_2_before_computing(toy, registry, artifacts, capsys):
    status, out, err = run_cli(capsys, registry, artifacts, "claims", "verify", TOY_ID, "t01-x")
    assert status == 2 and out == "" and "unknown claim id 't01-x'" in err
    assert toy.seeds == []


def test_cli_list_and_show(toy, registry, artifacts, capsys):
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "list")
    assert status == 0 and out.startswith(f"{TOY_ID}  [not run]  chapter 1: A toy witness")
    run_cli(capsys, registry, artifacts, "claims", "verify")
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "show", TOY_ID)
    assert status == 0
    assert "compute: trainable_harness.witnesses.toy_witness" in out
    assert f"# seed: {claim_seed('toy-seed')}" in out and "# state: verified" in out


def test_cli_repin(toy, registry, artifacts, tmp_path, capsys):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "15.md").write_text(_chapter("0.0.1+aaaaaaaaaaaa"))
    status, out, _ = run_cli(capsys, registry, artifacts, "repin", "--chapters", str(chapters))
    assert status == 0
    assert f"pin 0.0.1+aaaaaaaaaaaa -> {harness_pin()}" in out
    assert f"{TOY_ID}: verified (no previous artifact to compare)" in out
    status, out, _ = run_cli(capsys, registry, artifacts, "repin", "--chapters", str(chapters))
    assert "already pinned" in out and f"{TOY_ID}: verified; result unchanged" in out


def test_cli_as_a_module_from_another_directory(tmp_path):
    environment = {k: v for k, v in os.environ.items() if k != "TRAINABLE_ROOT"}
    completed = subprocess.run(
        [sys.executable, "-m", "trainable_harness", "claims", "list"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "c15-invariance-001  [" in completed.stdout
    assert Path(tmp_path).is_dir() and list(tmp_path.iterdir()) == []
