"""The book tier's preloaded build server (``preloaded.py``): which commands run in a fork.

A command runs in a fork only when its environment is the server's but for
``preloaded._PER_COMMAND`` and the engine's ``TRAINABLE_*`` variables; anything else runs as
a plain subprocess, which is correct but pays every import again. pytest renames
``PYTEST_CURRENT_TEST`` in each phase of each test, so a server started in one test must
still fork the commands of the next.
"""

from __future__ import annotations

import os

import preloaded
import pytest


@pytest.fixture
def server():
    started = preloaded.Preloaded(modules=())  # nothing to preload: only who runs what
    yield started
    started.close()


def _help(server, tmp_path):
    # A command that ends before it imports the engine's dependencies (``--help`` imports
    # all of them, over a CPU-second in each test): its one line and status, as run.
    process = server.run(["clean", "--help"], tmp_path, dict(os.environ), timeout=120)
    assert (process.returncode, process.stdout) == (2, ""), process.stderr
    assert process.stderr == "clean: takes no arguments, got --help\n"
    return process


def test_a_command_of_a_later_test_phase_runs_in_a_fork(server, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/elsewhere.py::test_other (call)")
    _help(server, tmp_path)
    assert server.forked == 1


def test_a_command_with_another_engine_setting_runs_in_a_fork(server, tmp_path, monkeypatch):
    # Read by claimbook alone, which the server never imports: the fork sees the new value.
    monkeypatch.setenv("TRAINABLE_KERNEL_SANDBOX", "off")
    _help(server, tmp_path)
    assert server.forked == 1


def test_a_command_with_another_environment_runs_as_a_plain_subprocess(
    server, tmp_path, monkeypatch
):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")  # read by numpy's BLAS when imported
    _help(server, tmp_path)
    assert server.forked == 0
