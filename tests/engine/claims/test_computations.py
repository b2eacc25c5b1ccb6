"""Running a claim's computation: once per seed, in the seeds' order."""

from claimbook.claims import registry
from claimbook.claims.registry import load_claim


def test_a_statistical_claim_runs_once_per_seed_in_order(fixture_registry):
    claim = load_claim("t01-noise-001", registry_dir=fixture_registry.directory)
    results, error = registry.run_computation(claim)
    assert error is None and len(results) == len(claim.seeds) == 20
    # Every seed's draws differ, so a result out of its seed's place would show.
    assert len({result["estimate"] for result in results}) == 20
