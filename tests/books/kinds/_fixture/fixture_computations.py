"""The computations of the fixture registry (tests/fixtures/registry), for fixture books.

A registry may name only registered computations; these are registered under
``trainable_harness.witnesses.fixtures.*`` when the fixture book's build loads this
extension, and by the tests (with ``register``) before they verify the claims in-process.
"""

import numpy as np

from trainable_harness.claims import computations
from trainable_harness.normalization import centered_normalize

PREFIX = "trainable_harness.witnesses.fixtures."


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


FUNCTIONS = {PREFIX + "noise_mean": noise_mean, PREFIX + "shift_change": shift_change}


def register(table=computations.COMPUTATIONS):
    table.update(FUNCTIONS)


def setup(app):
    register()
    return {"parallel_read_safe": True, "version": "1"}
