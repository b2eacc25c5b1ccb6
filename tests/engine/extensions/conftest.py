"""The model tests' fixtures: the claims tests' toy registry and fixture registry."""

from claimtools import artifacts, fixture_registry, registry, toy  # noqa: F401
