"""Running a claim's computation: per seed, in order, in worker processes when it pays."""

from claimbook.claims import computations
from claimbook.claims.registry import load_claim


def run(monkeypatch, registry, workers: str, threshold: float):
    monkeypatch.setenv(computations.WORKERS_ENVIRONMENT_VARIABLE, workers)
    monkeypatch.setattr(computations, "PARALLEL_THRESHOLD_SECONDS", threshold)
    claim = load_claim("t01-noise-001", registry_dir=registry)
    return computations.run_computation(claim)


def test_seeds_in_worker_processes_give_the_same_results_in_order(monkeypatch, fixture_registry):
    registry = fixture_registry.directory
    serial = run(monkeypatch, registry, "1", threshold=0.0)
    parallel = run(monkeypatch, registry, "2", threshold=0.0)
    assert serial.error is None and parallel.error is None
    assert len(parallel.results) == 20
    assert parallel.results == serial.results
    # Every seed's draws differ, so a reordering of the workers' results would show.
    assert len({result["estimate"] for result in parallel.results}) == 20


def test_fast_seeds_stay_in_process(monkeypatch):
    assert computations._workers(19, first_seconds=0.001) == 0
    assert computations._workers(1, first_seconds=10.0) == 0
    monkeypatch.setenv(computations.WORKERS_ENVIRONMENT_VARIABLE, "3")
    assert computations._workers(19, first_seconds=10.0) == 3
    monkeypatch.setenv(computations.WORKERS_ENVIRONMENT_VARIABLE, "not a number")
    assert computations._workers(19, first_seconds=10.0) == 0
