"""claimbook.pipeline.mutation_runs: a build runs the mistakes of the claims whose result is
not current (claimbook.claims.mistakes's key), and only those."""

from claimbook.claims.mistakes import (
    claim_entry,
    current_entry,
    mutation_key,
    mutation_states,
    write_record,
)
from claimbook.claims.registry import load_claim
from claimbook.pipeline import mutation_runs


def test_stale_claims_are_those_without_a_result_under_todays_key(tmp_path, monkeypatch):
    current, old = load_claim("c15-invariance-001"), load_claim("c15-epsilon-001")
    record = tmp_path / "record.json"
    write_record(
        record,
        {
            current.id: claim_entry(mutation_key(current), "2026-01-01T00:00:00Z", []),
            old.id: claim_entry("0" * 64, "2026-01-01T00:00:00Z", []),  # other code
        },
    )
    monkeypatch.setattr(
        mutation_runs, "current_entry", lambda claim, key: current_entry(claim, key, [record])
    )
    assert mutation_runs.stale_claims([current.id, old.id, "no-such-claim"]) == [old.id]
    # The pages read the same key: the old entry is "not yet run", whatever it says.
    assert {s["state"] for s in mutation_states(old, [record])} == {"not yet run"}


def test_a_build_with_nothing_stale_starts_no_process(monkeypatch):
    lines = []
    monkeypatch.setattr(mutation_runs, "stale_claims", lambda ids: [])
    run = mutation_runs.StaleMutations(["c15-invariance-001"], lines.append)
    assert run.process is None and run.due == []
    run.finish()
    run.stop()
    assert lines == []
