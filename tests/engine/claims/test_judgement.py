"""The one judge: a claim's state, from its artifact alone or against a recomputation."""

import json
import os

import pytest
from claimtools import TOY_CLAIM, TOY_ID, edit_artifact, verify_toy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claimbook import cache, dependencies
from claimbook.claims import (
    STATES,
    Judgement,
    artifact_path,
    harness_pin,
    judge,
    keys,
    state_fails_build,
    verify_claim,
)
from claimbook.claims import judgement as judge_module
from claimbook.claims.judgement import check_artifact
from claimbook.errors import (
    ClaimError,
    MissingArtifactError,
    RegistryError,
    StaleArtifactError,
    TamperedArtifactError,
    UnknownClaimError,
)


def judged(registry, artifacts, claim_id=TOY_ID) -> Judgement:
    return judge(claim_id, registry_dir=registry, artifacts_dir=artifacts)


def test_states_and_which_fail_a_build():
    assert STATES == ("verified", "refuted", "failed", "stale", "not run")
    assert [state_fails_build(s) for s in STATES] == [False, False, True, True, True]
    assert [Judgement(s, None, "").fails_build for s in STATES] == [
        False,
        False,
        True,
        True,
        True,
    ]
    with pytest.raises(ClaimError, match="parameter state must be one of"):
        state_fails_build("green")


def test_not_run_without_artifact(registry, artifacts):
    state, artifact, reason = judged(registry, artifacts)
    assert (state, artifact) == ("not run", None) and "no artifact" in reason


def test_an_unknown_id_or_a_broken_registry_entry_is_raised(registry, artifacts):
    with pytest.raises(UnknownClaimError, match=TOY_ID):
        judged(registry, artifacts, "t01-toy-01")
    (registry / f"{TOY_ID}.yaml").write_text(TOY_CLAIM.replace("chapter: 1", "chapter: one"))
    with pytest.raises(RegistryError, match="chapter"):
        judged(registry, artifacts)


def test_verified_after_verification(toy, registry, artifacts):
    written = verify_toy(registry, artifacts)
    judgement = judged(registry, artifacts)
    assert judgement.state == "verified" and judgement.artifact == written
    assert "verified under harness" in judgement.reason


def test_the_artifact_is_the_callers_own(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    first = judged(registry, artifacts)
    first.artifact["result"]["ratio"] = "mutated by a caller"
    assert judged(registry, artifacts).artifact["result"]["ratio"] == 0.5


def test_failed_for_an_unreadable_artifact(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    artifact_path(TOY_ID, artifacts).write_text('{"status": "verified"')
    state, artifact, reason = judged(registry, artifacts)
    assert (state, artifact) == ("failed", None) and "not readable JSON" in reason


def test_failed_for_an_artifact_lacking_a_field(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a.pop("provenance"))
    state, artifact, reason = judged(registry, artifacts)
    assert (state, artifact) == ("failed", None) and "field provenance" in reason


def test_stale_after_registry_edit(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    (registry / f"{TOY_ID}.yaml").write_text("# a comment is still an edit\n" + TOY_CLAIM)
    state, _, reason = judged(registry, artifacts)
    assert state == "stale" and f"another version of {TOY_ID}.yaml" in reason


def test_stale_after_a_version_change(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a["provenance"].update(version="0.1.0"))
    state, _, reason = judged(registry, artifacts)
    assert state == "stale" and "'0.1.0'" in reason


def _edited_module_digests(monkeypatch):
    real = dependencies.module_digests

    def edited(names):
        digests = real(names)
        name = "trainable_harness.normalization"
        return {k: ("0" * 64 if k == name else v) for k, v in digests.items()}

    monkeypatch.setattr(dependencies, "module_digests", edited)


def test_stale_when_a_module_it_reaches_changes(toy, registry, artifacts, monkeypatch):
    verify_toy(registry, artifacts)
    _edited_module_digests(monkeypatch)
    state, _, reason = judged(registry, artifacts)
    assert state == "stale" and "trainable_harness.normalization" in reason


def test_stale_when_the_lock_changes(toy, registry, artifacts, monkeypatch):
    verify_toy(registry, artifacts)
    monkeypatch.setattr(keys, "environment_digest", lambda root=None: "e" * 64)
    state, _, reason = judged(registry, artifacts)
    assert state == "stale" and "lock" in reason


def _set(mapping_of, **values):
    """An artifact edit: update the mapping that ``mapping_of`` picks out of the artifact."""
    return lambda artifact: mapping_of(artifact).update(values)


@pytest.mark.parametrize(
    ("edit", "state"),
    [
        pytest.param(
            _set(lambda a: a["result"], ratio=0.6), "failed", id="value out of tolerance"
        ),
        pytest.param(_set(lambda a: a, status="failed"), "failed", id="verified made failed"),
        pytest.param(_set(lambda a: a, status="refuted"), "failed", id="verified made refuted"),
        pytest.param(_set(lambda a: a["contract"], device="GPU"), "failed", id="contract edited"),
        pytest.param(
            _set(lambda a: a["comparisons"]["count"], passed=False), "failed", id="comparison"
        ),
        pytest.param(_set(lambda a: a["result"], flag=1), "failed", id="boolean made integer"),
        pytest.param(_set(lambda a: a["key"], digest="0" * 64), "stale", id="key digest"),
        # Within tolerance and edited consistently: only a recomputation can tell (test_audit).
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
def test_an_edited_artifact_is_judged_by_its_own_stored_result(
    toy, registry, artifacts, edit, state
):
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, edit)
    assert judged(registry, artifacts).state == state


def test_a_failed_artifact_edited_to_verified_is_failed(toy, registry, artifacts):
    toy.result = {**toy.result, "count": 4}
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, _set(lambda a: a, status="verified"))
    state, _, reason = judged(registry, artifacts)
    assert state == "failed" and 'status: on disk "verified", expected "failed"' in reason


def test_a_failed_artifact_names_its_first_failure(toy, registry, artifacts):
    toy.result = {**toy.result, "count": 4}
    verify_toy(registry, artifacts)
    state, artifact, reason = judged(registry, artifacts)
    assert state == "failed" and artifact["status"] == "failed"
    assert reason.endswith(
        f"records status failed: {TOY_ID} count: expected 3, got 4, tolerance exact"
    )


def test_a_statistical_artifact_with_an_edited_mean_is_failed(fixture_registry, artifacts):
    registry = fixture_registry.directory
    verify_claim("t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts)
    edit_artifact(
        artifacts, lambda a: a["result"]["estimate"].update(mean=1.5), claim_id="t01-noise-001"
    )
    state, _, reason = judged(registry, artifacts, "t01-noise-001")
    assert state == "failed" and "result.estimate.mean" in reason


def test_refuted_and_statistical_claims_keep_their_status(fixture_registry, artifacts):
    registry = fixture_registry.directory
    for claim_id in ("t01-noise-001", "t01-shift-001"):
        verify_claim(claim_id, harness_pin(), registry_dir=registry, artifacts_dir=artifacts)
    assert judged(registry, artifacts, "t01-noise-001").state == "verified"
    assert judged(registry, artifacts, "t01-shift-001").state == "refuted"


# --- the cache: keyed by the bytes, never by a file's size or time --------------------------


def _count_consistency_checks(monkeypatch) -> list:
    calls = []
    real = judge_module._consistency

    def counted(*arguments):
        calls.append(arguments[0].id)
        return real(*arguments)

    monkeypatch.setattr(judge_module, "_consistency", counted)
    return calls


def test_an_unchanged_artifact_is_not_rebuilt_again(toy, registry, artifacts, monkeypatch):
    verify_toy(registry, artifacts)
    calls = _count_consistency_checks(monkeypatch)
    for _ in range(3):
        assert judged(registry, artifacts).state == "verified"
    assert calls == [TOY_ID]
    cache.reset()  # a new build keeps no verdict: it judges afresh
    assert judged(registry, artifacts).state == "verified"
    assert calls == [TOY_ID, TOY_ID]


def test_a_same_size_edit_with_the_old_time_restored_is_seen(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    path = artifact_path(TOY_ID, artifacts)
    assert judged(registry, artifacts).state == "verified"
    before = path.stat()
    text = path.read_text()
    edited = text.replace('"ratio": 0.5', '"ratio": 0.6')
    assert len(edited) == len(text) and edited != text
    path.write_text(edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    state, artifact, reason = judged(registry, artifacts)
    assert state == "failed" and artifact["result"]["ratio"] == 0.6
    assert "comparisons.ratio.got: on disk 0.5, expected 0.6" in reason


def test_a_harness_edit_is_seen_by_a_cached_judgement(toy, registry, artifacts, monkeypatch):
    verify_toy(registry, artifacts)
    assert judged(registry, artifacts).state == "verified"  # now in the cache
    _edited_module_digests(monkeypatch)
    assert judged(registry, artifacts).state == "stale"  # no reset needed


def test_the_same_bytes_in_another_directory_are_judged_for_their_own_path(
    toy, registry, artifacts, tmp_path
):
    verify_toy(registry, artifacts)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    artifact_path(TOY_ID, elsewhere).write_bytes(artifact_path(TOY_ID, artifacts).read_bytes())
    assert judged(registry, artifacts).reason.startswith(str(artifact_path(TOY_ID, artifacts)))
    assert judged(registry, elsewhere).reason.startswith(str(artifact_path(TOY_ID, elsewhere)))


# --- check_artifact: against a fresh recomputation, nothing written --------------------------


def check(registry, artifacts, claim_id=TOY_ID) -> dict:
    return check_artifact(claim_id, registry_dir=registry, artifacts_dir=artifacts)


def test_a_fresh_artifact_matches_its_recomputation(toy, registry, artifacts):
    written = verify_toy(registry, artifacts)
    before = artifact_path(TOY_ID, artifacts).read_bytes()
    assert check(registry, artifacts) == written
    assert artifact_path(TOY_ID, artifacts).read_bytes() == before  # nothing written
    assert len(toy.seeds) == 2  # it did recompute


def test_check_artifact_missing(registry, artifacts):
    with pytest.raises(MissingArtifactError, match="claims verify"):
        check(registry, artifacts)


def test_check_artifact_stale_after_registry_edit(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    (registry / f"{TOY_ID}.yaml").write_text("# a comment is still an edit\n" + TOY_CLAIM)
    with pytest.raises(StaleArtifactError, match="another version"):
        check(registry, artifacts)


def test_a_value_edited_within_tolerance_is_caught_by_the_recomputation(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    edit_artifact(
        artifacts,
        lambda a: (
            a["result"].update(ratio=0.5 + 1e-13),
            a["comparisons"]["ratio"].update(got=0.5 + 1e-13),
        ),
    )
    with pytest.raises(TamperedArtifactError, match=r"result\.ratio"):
        check(registry, artifacts)


def test_a_changed_result_is_caught(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    toy.result = {**toy.result, "count": 4}  # the computation now gives another result
    with pytest.raises(TamperedArtifactError, match="disagrees with a fresh recomputation"):
        check(registry, artifacts)


def test_check_artifact_ignores_where_it_ran(toy, registry, artifacts):
    # provenance's python/numpy/platform describe the machine, not the claim.
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a["provenance"].update(platform="elsewhere"))
    assert check(registry, artifacts)["status"] == "verified"


def test_a_statistical_artifact_is_checked_seed_by_seed(fixture_registry, artifacts):
    registry = fixture_registry.directory
    verify_claim("t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts)
    assert check(registry, artifacts, "t01-noise-001")["kind"] == "statistical"
    edit_artifact(
        artifacts,
        lambda a: a["result"]["estimate"]["per_seed"].__setitem__(0, 1.0),
        claim_id="t01-noise-001",
    )
    with pytest.raises(TamperedArtifactError, match=r"result\.estimate"):
        check(registry, artifacts, "t01-noise-001")


def _checked_leaves(value, prefix=()):
    """Every leaf of an artifact except the machine description in provenance."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _checked_leaves(item, (*prefix, key))
    elif prefix[:1] != ("provenance",) or prefix[-1] == "version":
        yield prefix


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_single_edit_of_a_checked_field_is_detected(toy, registry, artifacts, data):
    # The fixtures last for every example: the toy is verified by the first, and each
    # example edits a copy of that verified artifact (the check recomputes it every time).
    path = artifact_path(TOY_ID, artifacts)
    verified = artifacts.parent / "verified-toy.json"  # beside the artifacts, not among them
    if not verified.is_file():
        verify_toy(registry, artifacts)
        verified.write_bytes(path.read_bytes())
    original = json.loads(verified.read_text())
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
    path.write_text(json.dumps(original))
    with pytest.raises((TamperedArtifactError, StaleArtifactError)):
        check(registry, artifacts)
