"""The benchmark's meter (``bench.meter``): what a timed command reports."""

from __future__ import annotations

import sys

import pytest

from bench import meter as bench_meter
from bench.meter import BenchCommandError, is_loaded, load_threshold, measure


def test_the_threshold_is_the_cores_plus_one():
    assert load_threshold(2) == 3.0
    assert load_threshold(8) == 9.0


@pytest.mark.parametrize(
    ("load", "loaded"), [(0.0, False), (2.5, False), (3.0, False), (3.01, True), (19.0, True)]
)
def test_a_round_is_loaded_only_above_the_cores_plus_one(load, loaded):
    assert is_loaded(load, cores=2) is loaded


@pytest.mark.parametrize("load", [float("nan"), -0.5])
def test_a_load_that_is_not_a_load_average_is_refused(load):
    with pytest.raises(ValueError, match="load_max"):
        is_loaded(load, cores=2)


def test_cores_must_be_positive():
    with pytest.raises(ValueError, match="cores"):
        load_threshold(0)


def test_the_cpu_time_of_the_command_is_counted(tmp_path):
    # The child burns 0.3 s of its own CPU time, whatever the machine's load.
    burn = (
        "import time\nstart = time.process_time()\n"
        "while time.process_time() - start < 0.3:\n    pass\n"
    )
    measured = measure([sys.executable, "-c", burn], tmp_path, cores=2)
    assert measured["cpu"] >= 0.3
    assert measured["wall"] >= 0.3 * 0.99
    assert measured["peak_rss"] > 0
    assert measured["returncode"] == 0
    load = measured["load"]
    assert 0 <= load["mean"] <= load["max"] and load["start"] <= load["max"]
    assert measured["loaded"] is is_loaded(load["max"], cores=2)


def test_a_loaded_round_is_flagged(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_meter.os, "getloadavg", lambda: (7.5, 7.0, 6.0))
    measured = measure([sys.executable, "-c", "pass"], tmp_path, cores=2)
    assert measured["load"]["max"] == 7.5 and measured["loaded"] is True


def test_a_failing_command_raises_with_its_output(tmp_path):
    command = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
    with pytest.raises(BenchCommandError, match="exited 3:\nboom"):
        measure(command, tmp_path)
    assert measure(command, tmp_path, check=False)["returncode"] == 3


def test_the_interval_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="interval"):
        measure([sys.executable, "-c", "pass"], tmp_path, interval=0)


class _Clock:
    """A 1-minute load read from ``loads`` (the last repeats), and a clock the polls advance."""

    def __init__(self, loads):
        self.loads, self.now = list(loads), 0.0

    def getloadavg(self):
        return (self.loads[0] if len(self.loads) == 1 else self.loads.pop(0), 0.0, 0.0)

    def sleep(self, seconds):
        self.now += seconds

    def monotonic(self):
        return self.now


def _with_clock(monkeypatch, clock):
    monkeypatch.setattr(bench_meter.os, "getloadavg", clock.getloadavg)
    monkeypatch.setattr(bench_meter.time, "sleep", clock.sleep)
    monkeypatch.setattr(bench_meter.time, "monotonic", clock.monotonic)


def test_a_round_waits_until_the_load_has_settled(monkeypatch):
    clock = _Clock([2.9, 2.1, 1.4, 0.9, 0.3])
    _with_clock(monkeypatch, clock)
    assert bench_meter.settle(below=1.0, poll=2.0) == 6.0  # three polls above 1.0


def test_a_settled_machine_starts_at_once_and_a_busy_one_after_the_timeout(monkeypatch):
    _with_clock(monkeypatch, _Clock([0.2]))
    assert bench_meter.settle(below=1.0) == 0.0
    _with_clock(monkeypatch, _Clock([3.5]))  # other work: it does not fall
    assert bench_meter.settle(below=1.0, timeout=10.0, poll=2.0) == 10.0


@pytest.mark.parametrize("arguments", [{"below": 0}, {"timeout": -1}, {"poll": 0}])
def test_settle_refuses_what_cannot_be_waited_for(arguments):
    with pytest.raises(ValueError):
        bench_meter.settle(**{"below": 1.0, **arguments})
