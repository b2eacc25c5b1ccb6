"""checks.mutate: each claim under the mistakes it names, each in a process of its
own."""

import importlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from checks.__main__ import main as checks_main
from checks.mutate import (
    field_role,
    load_mistakes,
    resolve_perturbation,
    run_mutations,
    write_record,
)
from claimbook import paths
from claimbook.claims.mistakes import (
    committed_record_path,
    current_entry,
    mutation_key,
    mutation_states,
)
from claimbook.claims.registry import list_claims, load_claim
from claimbook.errors import RegistryError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mutations"
CATCHES, BLIND = "t01-catches-001", "t01-blind-001"


def _forget_fixture_modules():
    for name in [n for n in sys.modules if "mutation_fixtures" in n]:
        del sys.modules[name]


@pytest.fixture
def fixture_registry(tmp_path, monkeypatch):
    """A copy of tests/fixtures/mutations/registry, its module imported here (and importable
    in the runner's children); the modules it installs are removed afterwards."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setenv("PYTHONPATH", ":".join(p for p in (str(FIXTURES), *sys.path) if p))
    _forget_fixture_modules()
    importlib.import_module("mutation_fixtures")
    registry = tmp_path / "registry"
    shutil.copytree(FIXTURES / "registry", registry)
    yield registry
    _forget_fixture_modules()


def test_a_claim_that_catches_none_of_its_perturbations_fails_the_run_by_name(
    fixture_registry, tmp_path, capsys
):
    record = tmp_path / "mutations.json"
    status = run_mutations(
        registry_dir=fixture_registry, record=record, jobs=2, imports=["mutation_fixtures"]
    )
    out = capsys.readouterr().out
    assert status == 1
    assert f"catch none of their named perturbations: {BLIND}" in out
    assert f"{CATCHES}: catches 1 of 1" in out
    claims = json.loads(record.read_text())["claims"]
    caught = claims[CATCHES]["catches"][0]
    assert caught["caught"] and caught["status"] == "failed"
    # Which fields went red, why, and whether each measures the claim's subject.
    assert [(r["field"], r["role"]) for r in caught["red"]] == [
        ("mean", "subject"),
        ("median", "subject"),
    ]
    assert caught["red"][0]["expected"] == 0.0
    assert caught["red"][0]["tolerance"] == "abs_tol 1e-12"
    assert caught["red"][0]["got"] > 0.9  # mean(x / rms(x)) of the shifted vector
    missed = claims[BLIND]["catches"][0]
    assert not missed["caught"] and missed["status"] == "verified"
    # No artifact of the claims it ran written into artifacts/ (a rebuild may be writing the
    # book's own beside this test: make test runs them together), and the harness in this
    # process untouched.
    assert not any((paths.CLAIM_ARTIFACTS_DIR / f"{c}.json").exists() for c in (CATCHES, BLIND))
    import mutation_fixtures

    assert mutation_fixtures.centered_shift()["mean"] < 1e-12


def test_a_run_of_the_claim_that_catches_its_perturbation_passes(fixture_registry, tmp_path):
    record = tmp_path / "mutations.json"
    status = run_mutations(
        [CATCHES], registry_dir=fixture_registry, record=record, imports=["mutation_fixtures"]
    )
    assert status == 0
    claim = load_claim(CATCHES, registry_dir=fixture_registry)
    [state] = mutation_states(claim, record)
    assert state["state"] == "caught" and state["enough"] and state["subject_red"] == 2
    assert state["key"] == mutation_key(claim) and state["when"].endswith("Z")


def test_pages_say_not_yet_run_without_a_record_or_after_the_claim_changed(
    fixture_registry, tmp_path
):
    record = tmp_path / "mutations.json"
    claim = load_claim(CATCHES, registry_dir=fixture_registry)
    assert [s["state"] for s in mutation_states(claim, record)] == ["not yet run"]
    assert (
        run_mutations(
            [CATCHES], registry_dir=fixture_registry, record=record, imports=["mutation_fixtures"]
        )
        == 0
    )
    path = fixture_registry / f"{CATCHES}.yaml"
    path.write_text(path.read_text().replace("abs_tol: 1.0e-12", "abs_tol: 2.0e-12", 1))
    changed = load_claim(CATCHES, registry_dir=fixture_registry)
    assert [s["state"] for s in mutation_states(changed, record)] == ["not yet run"]


def test_a_perturbation_that_ends_its_process_is_an_error_and_the_others_are_judged(
    fixture_registry, tmp_path
):
    """Each perturbation runs in a process of its own: one that dies takes nothing else
    with it, and its last words are its error."""
    path = fixture_registry / f"{BLIND}.yaml"
    path.write_text(
        path.read_text().replace(
            "catches:\n",
            "catches:\n  - perturbation: mutation_fixtures.ends_the_process\n"
            "    says: the process ends\n",
        )
    )
    record = tmp_path / "mutations.json"
    status = run_mutations(
        registry_dir=fixture_registry, record=record, jobs=2, imports=["mutation_fixtures"]
    )
    assert status == 1  # the blind claim still catches none of its two
    claims = json.loads(record.read_text())["claims"]
    died, missed = claims[BLIND]["catches"]
    assert died["perturbation"] == "mutation_fixtures.ends_the_process"
    assert not died["caught"] and died["status"] is None
    assert died["error"] == "mutation_fixtures: ending this process"
    assert missed["status"] == "verified" and not missed["caught"]
    assert claims[CATCHES]["catches"][0]["caught"]


def test_a_perturbation_that_does_not_exist_is_refused_by_name_before_anything_runs(
    fixture_registry, tmp_path
):
    path = fixture_registry / f"{CATCHES}.yaml"
    path.write_text(path.read_text().replace("mean_not_subtracted", "mean_not_substracted"))
    record = tmp_path / "mutations.json"
    with pytest.raises(RegistryError, match="mean_not_substracted") as raised:
        run_mutations(registry_dir=fixture_registry, record=record, imports=["mutation_fixtures"])
    message = str(raised.value)
    assert "mistakes/mutation_fixtures.py has no function 'mean_not_substracted'" in message
    assert "mean_not_subtracted" in message  # the functions it has
    assert not record.exists()


def test_a_perturbation_module_that_does_not_exist_is_named_by_its_file():
    with pytest.raises(RegistryError, match=r"chapter99\.nothing.*mistakes/chapter99\.py"):
        resolve_perturbation("chapter99.nothing")


def test_the_mistakes_are_files_beside_the_registry_loaded_by_path(fixture_registry):
    """``<module>.<function>`` is the function of ``<registry>/mistakes/<module>.py``; the
    book's mistakes are ``claims/mistakes/``, not a module of the harness."""
    claim = load_claim(CATCHES, registry_dir=fixture_registry)
    function = resolve_perturbation("mutation_fixtures.mean_not_subtracted", claim)
    module = sys.modules[function.__module__]
    assert Path(module.__file__) == fixture_registry.resolve() / "mistakes/mutation_fixtures.py"
    chapter16 = load_mistakes("chapter16")
    assert Path(chapter16.__file__) == paths.CLAIMS_DIR.resolve() / "mistakes/chapter16.py"
    assert importlib.util.find_spec("trainable_harness.perturbations") is None


def test_the_command_line_exits_2_naming_an_unknown_perturbation(fixture_registry, capsys):
    path = fixture_registry / f"{BLIND}.yaml"
    path.write_text(path.read_text().replace("mean_not_subtracted", "no_such_mistake"))
    status = checks_main(
        ["mutate", "--registry", str(fixture_registry), "--import", "mutation_fixtures", BLIND]
    )
    assert status == 2
    assert "no_such_mistake" in capsys.readouterr().err


def test_every_registered_perturbation_exists():
    for claim_id in list_claims():
        claim = load_claim(claim_id)
        for catch in claim.catches or []:
            assert callable(resolve_perturbation(catch["perturbation"], claim))


def test_the_claims_with_a_perturbation_test_name_their_mistakes():
    named = {c: load_claim(c).catches for c in list_claims()}
    assert len(named["c16-small-batch-001"]) == 5
    assert named["c16-larger-learning-rates-001"][0]["perturbation"] == (
        "chapter16.backward_without_the_variance_term"
    )
    assert named["c16-residual-depth-001"][0]["perturbation"] == "chapter16.no_final_normalization"
    assert len(named["c16-train-mode-output-001"]) == 2
    assert named["c16-activation-drift-001"] and named["c15-cancellation-matrix-001"]


def test_every_registered_claim_names_a_mistake_it_exists_to_catch():
    """Issue 18, point 1: no claim is left that `make mutate` lists as "no mistake named
    yet"; each names at least one perturbation (which of them it catches is the run's)."""
    assert [c for c in list_claims() if not load_claim(c).catches] == []


def test_the_claim_page_lists_what_the_claim_catches_with_the_last_run(fixture_registry, tmp_path):
    from bs4 import BeautifulSoup

    from claimbook.claims import judge
    from claimbook.extensions import claim_pages_model as model
    from claimbook.extensions.claim_pages import claim_page

    def page_text(claim_id):
        claim = load_claim(claim_id, registry_dir=fixture_registry)
        judgement = judge(claim_id, registry_dir=fixture_registry, artifacts_dir=tmp_path / "a")
        info = model.describe(claim, judgement, [], publishable=False)
        body = claim_page(info, lambda node: node.astext())
        return info["catches"], BeautifulSoup(body, "html.parser").get_text()

    says = "The normalization does not subtract the mean."
    catches, text = page_text(CATCHES)
    assert [c["state"] for c in catches] == ["not yet run"]
    assert f"{says} Not run yet for this version of the claim" in text
    run_mutations(registry_dir=fixture_registry, imports=["mutation_fixtures"])
    assert committed_record_path(fixture_registry).is_file()  # the committed record's place
    catches, text = page_text(CATCHES)
    assert f"{says} Caught by" in text
    assert [r["field"] for r in catches[0]["red"]] == ["mean", "median"]
    assert f"{says} Not caught: every field still meets its expectation." in page_text(BLIND)[1]


def test_a_pinned_value_is_not_a_field_that_measures_the_subject():
    assert field_role({"value": 0.19615667770528047, "abs_tol": 1e-12}) == "pinned"
    assert field_role({"mean": {"value": 1.2, "rel_tol": 0.1}}) == "pinned"
    assert field_role({"value": 0.0, "abs_tol": 1e-12}) == "subject"  # an identity
    assert field_role({"interval": [0.0, 1e-13]}) == "subject"
    assert field_role({"ci_within": [1.0, 1.2]}) == "subject"
    assert field_role({"equals": True}) == "subject"
    assert field_role({"fraction": {"below": 1e-14, "at_least": 1.0}}) == "subject"


def test_a_mistake_caught_by_one_subject_field_fails_the_run_by_name(
    fixture_registry, tmp_path, capsys
):
    path = fixture_registry / f"{CATCHES}.yaml"
    text = path.read_text()
    start = text.index("  median:")
    loose = "  median:\n    interval: [0.0, 2.0]\n    reason: A bound the mistake's 0.98 meets.\n"
    path.write_text(text[:start] + loose + text[text.index("  rms:") :])
    status = run_mutations(
        [CATCHES],
        registry_dir=fixture_registry,
        record=tmp_path / "r.json",
        imports=["mutation_fixtures"],
    )
    out = capsys.readouterr().out
    assert status == 1
    assert (
        "caught by fewer than 2 fields that measure the claim's subject: "
        f"{CATCHES}: mutation_fixtures.mean_not_subtracted (1)" in out
    )
    claim = load_claim(CATCHES, registry_dir=fixture_registry)
    [state] = mutation_states(claim, tmp_path / "r.json")
    assert state["state"] == "caught" and not state["enough"]


def test_check_fails_when_the_committed_record_disagrees(fixture_registry, capsys):
    run = {"registry_dir": fixture_registry, "imports": ["mutation_fixtures"]}
    assert run_mutations([CATCHES], **run) == 0  # writes the committed record
    committed = committed_record_path(fixture_registry)
    written = committed.read_bytes()
    assert run_mutations([CATCHES], mode="check", **run) == 0
    assert committed.read_bytes() == written  # a check writes nothing
    document = json.loads(written)
    document["claims"][CATCHES]["catches"][0]["red"] = []
    committed.write_text(json.dumps(document))
    assert run_mutations([CATCHES], mode="check", **run) == 1
    assert f"{CATCHES} (recorded outcome differs" in capsys.readouterr().out
    committed.write_bytes(written)
    path = fixture_registry / f"{CATCHES}.yaml"
    path.write_text(path.read_text().replace("abs_tol: 1.0e-12", "abs_tol: 2.0e-12", 1))
    assert run_mutations([CATCHES], mode="check", **run) == 1
    assert f"{CATCHES} (recorded for other code" in capsys.readouterr().out


def test_stale_runs_only_the_claims_without_a_current_result(fixture_registry, capsys):
    run = {"registry_dir": fixture_registry, "imports": ["mutation_fixtures"]}
    assert run_mutations([CATCHES], **run) == 0  # committed: CATCHES only
    committed = committed_record_path(fixture_registry)
    caught = json.loads(committed.read_text())["claims"][CATCHES]
    # BLIND has no result: it alone runs, into the committed record, and fails by name.
    assert run_mutations(mode="stale", **run) == 1
    assert f"catch none of their named perturbations: {BLIND}" in capsys.readouterr().out
    record = json.loads(committed.read_text())["claims"]
    assert sorted(record) == [BLIND, CATCHES] and record[CATCHES] == caught
    before = committed.read_bytes()
    assert run_mutations(mode="stale", **run) == 0  # nothing left to run
    assert committed.read_bytes() == before
    blind = load_claim(BLIND, registry_dir=fixture_registry)
    assert [s["state"] for s in mutation_states(blind, committed)] == ["not caught"]


def test_a_result_recorded_for_other_code_is_not_yet_run(tmp_path):
    """The pages and ``make uptodate`` read one key: an entry under another is stale."""
    current, old = load_claim("c15-invariance-001"), load_claim("c15-epsilon-001")
    record = tmp_path / "record.json"
    entries = {
        current.id: {"key": mutation_key(current), "when": "2026-01-01T00:00:00Z", "catches": []},
        old.id: {"key": "0" * 64, "when": "2026-01-01T00:00:00Z", "catches": []},  # other code
    }
    write_record(record, entries)
    assert current_entry(current, mutation_key(current), record) == entries[current.id]
    assert current_entry(old, mutation_key(old), record) is None
    assert {s["state"] for s in mutation_states(old, record)} == {"not yet run"}


def test_the_key_follows_the_mistake_files(fixture_registry):
    claim = load_claim(CATCHES, registry_dir=fixture_registry)
    key = mutation_key(claim)
    assert mutation_key(claim) == key
    mistakes = fixture_registry / "mistakes" / "mutation_fixtures.py"
    mistakes.write_text(mistakes.read_text() + "\n# an edit\n")
    assert mutation_key(claim) != key
