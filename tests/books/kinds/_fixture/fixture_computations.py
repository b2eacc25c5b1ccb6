"""The computations of the fixture registry (tests/fixtures/registry), for fixture books.

A registry names a computation by its dotted path in ``trainable_harness.witnesses``; these
live in the test tree, so :func:`register` puts them there as the module
``trainable_harness.witnesses.fixtures`` (in ``sys.modules``) when the fixture book's build
loads this extension, and the tests call it before they verify the claims in-process.
"""

import sys
import types

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.normalization import centered_normalize

MODULE = "trainable_harness.witnesses.fixtures"


def noise_mean(seed):
    """Mean, sample spread and largest of 100 draws from N(1, 0.1^2)."""
    draws = np.random.default_rng(seed).normal(1.0, 0.1, size=100)
    return {
        "estimate": float(np.mean(draws)),
        "spread": float(np.std(draws, ddof=1)),
        "largest": float(np.max(draws)),
        "draws": int(draws.size),
    }


def shift_change():
    """Largest change of the centered map of (-2, -1, 1, 2) under a shift by 10."""
    x = np.array([-2.0, -1.0, 1.0, 2.0])
    return {
        "centered_shift_deviation": float(
            np.max(np.abs(centered_normalize(x + 10) - centered_normalize(x)))
        )
    }


def witness_module(name: str, functions: dict) -> types.ModuleType:
    """A module ``name`` whose marked claim computations are ``functions`` (name -> callable).

    Each callable is wrapped in a module-level function of that module, so the engine finds
    it from the dotted name alone, exactly as it finds a witness of the book.
    """
    module = types.ModuleType(name)
    for function_name, target in functions.items():

        def witness(*args, _target=target, **kwargs):
            return _target(*args, **kwargs)

        witness.__module__ = name
        witness.__name__ = witness.__qualname__ = function_name
        setattr(module, function_name, claim_computation(witness))
    return module


def register(modules=sys.modules, noise=noise_mean, shift=shift_change):
    """Put ``trainable_harness.witnesses.fixtures`` with the two computations in ``modules``."""
    modules[MODULE] = witness_module(MODULE, {"noise_mean": noise, "shift_change": shift})


def setup(app):
    register()
    return {"parallel_read_safe": True, "version": "1"}
