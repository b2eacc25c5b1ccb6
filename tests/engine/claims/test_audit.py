"""check_artifact: an artifact compared with a fresh recomputation, nothing written."""

import json

import pytest
from claimtools import TOY_CLAIM, TOY_ID, edit_artifact, verify_toy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claimbook.claims import artifact_path, check_artifact, harness_pin, verify_claim
from claimbook.errors import MissingArtifactError, StaleArtifactError, TamperedArtifactError


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
