"""The claims tests' fixtures live in ``claimtools`` (importable by the test modules too)."""

from claimtools import artifacts, fixture_registry, registry, toy  # noqa: F401
