"""Badges and artifact checks: what a page may show, judged from the artifact."""

import json

import pytest
from claimtools import TOY_CLAIM, TOY_ID, edit_artifact, verify_toy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claimbook.claims import (
    BADGE_STATES,
    artifact_path,
    badge_state,
    badge_summary,
    check_artifact,
    harness_pin,
    state_fails_build,
    verify_claim,
)
from claimbook.errors import (
    ClaimError,
    MissingArtifactError,
    StaleArtifactError,
    TamperedArtifactError,
)


def test_badge_states_and_which_fail_a_build():
    assert BADGE_STATES == ("verified", "refuted", "failed", "stale", "not run")
    assert [state_fails_build(s) for s in BADGE_STATES] == [False, False, True, True, True]
    with pytest.raises(ClaimError, match="parameter state must be one of"):
        state_fails_build("green")


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


def test_badge_stale_after_a_version_change(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a["provenance"].update(version="0.1.0"))
    state, _, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "stale" and "'0.1.0'" in reason


def test_badge_stale_when_a_function_it_ran_changes(toy, registry, artifacts, monkeypatch):
    from claimbook.claims import keys

    verify_toy(registry, artifacts)
    real = keys.function_digests

    def edited(functions, package_dir=None):
        digests = real(functions, package_dir)
        name = "trainable_harness.normalization:centered_normalize"
        return {k: ("0" * 64 if k == name else v) for k, v in digests.items()}

    monkeypatch.setattr(keys, "function_digests", edited)
    state, _, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "stale" and "trainable_harness.normalization:centered_normalize" in reason


def test_badge_stale_when_the_lock_changes(toy, registry, artifacts, monkeypatch):
    from claimbook.claims import keys

    verify_toy(registry, artifacts)
    monkeypatch.setattr(keys, "environment_digest", lambda root=None: "e" * 64)
    state, _, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "stale" and "lock" in reason


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
        pytest.param(_set(lambda a: a, status="refuted"), "failed", id="verified made refuted"),
        pytest.param(_set(lambda a: a["contract"], device="GPU"), "failed", id="contract edited"),
        pytest.param(
            _set(lambda a: a["comparisons"]["count"], passed=False), "failed", id="comparison"
        ),
        pytest.param(_set(lambda a: a["result"], flag=1), "failed", id="boolean made integer"),
        pytest.param(_set(lambda a: a["key"], digest="0" * 64), "stale", id="key digest"),
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
    with pytest.raises((TamperedArtifactError, StaleArtifactError)):
        check_artifact(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)


def test_failed_artifact_edited_to_verified_is_caught(toy, registry, artifacts):
    toy.result = {**toy.result, "count": 4}
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, _set(lambda a: a, status="verified"))
    state, _, reason = badge_state(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "failed" and 'status: on disk "verified", expected "failed"' in reason
    with pytest.raises(TamperedArtifactError, match="status"):
        check_artifact(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)


def test_statistical_artifact_with_an_edited_mean_is_caught(fixture_registry, artifacts):
    registry = fixture_registry.directory
    verify_claim("t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts)
    edit_artifact(
        artifacts, lambda a: a["result"]["estimate"].update(mean=1.5), claim_id="t01-noise-001"
    )
    state, _, reason = badge_state("t01-noise-001", registry_dir=registry, artifacts_dir=artifacts)
    assert state == "failed" and "result.estimate.mean" in reason


def test_badge_summary_shows_the_interval_of_each_statistical_field(fixture_registry, artifacts):
    registry = fixture_registry.directory
    artifact = verify_claim(
        "t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    summary = badge_summary(artifact)
    low, high = artifact["result"]["estimate"]["ci"]
    mean = artifact["result"]["estimate"]["mean"]
    assert summary.startswith(artifact["statement"])
    assert f"estimate: mean {mean:.4g}, 95% CI [{low:.4g}, {high:.4g}] over 20 seeds (t)." in (
        summary
    )
    assert "draws: mean 100, 95% CI [100, 100] over 20 seeds (t)." in summary


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
    elif prefix[:1] != ("provenance",) or prefix[-1] == "version":
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
