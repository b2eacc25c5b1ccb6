"""The kernels' sandbox in tests: required in CI, skipped (with its reason) elsewhere."""

import os

import pytest

from claimbook.pipeline import sandbox


def sandbox_or_skip(sockets=None) -> list[str]:
    """The sandbox command (:func:`claimbook.pipeline.sandbox.sandbox_prefix`); in CI, which
    installs bubblewrap (the Makefile's ``sandbox`` target), its absence fails the test."""
    found = sandbox.sandbox_prefix(sockets)
    if found is None:
        assert not os.environ.get("CI"), "bubblewrap is missing in CI"
        assert sandbox.notice() is not None  # the build says so in one line
        pytest.skip("bubblewrap is not installed here; the build says so in one line")
    return found
