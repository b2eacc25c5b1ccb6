"""claimbook: the engine that builds *Trainable* and checks every claim it states.

Imports go one way, from the engine to the science (``trainable_harness``), which it reaches
only through the names the registry gives it. Subpackages: :mod:`claimbook.claims` (registry,
judging, keys, artifacts), :mod:`claimbook.pipeline` (the build), :mod:`claimbook.extensions`
(Sphinx); the map of modules is ``docs/engine.md``.
"""
