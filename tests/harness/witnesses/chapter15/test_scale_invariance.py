"""Tests of trainable_harness.witnesses.chapter15.scale_invariance."""

import numpy as np

from claimbook.chapter import claim_seed
from trainable_harness.witnesses.chapter15.scale_invariance import (
    scale_invariance_witness,
    weight_decay_equilibrium_witness,
)


def test_scale_invariance_witness_fields():
    result = scale_invariance_witness(seed=1)
    assert result["norm_never_decreases"] is True
    assert abs(result["first_step_tan_ratio"] - 16.0) < 1e-9
    assert result["final_norm"] > 1.0  # the unit weight only grows


def test_equilibrium_witness_returns_per_seed_scalars():
    result = weight_decay_equilibrium_witness(seed=2)
    assert result
    for field, value in result.items():
        assert isinstance(value, float), field
        assert np.isfinite(value), field


def test_equilibrium_seeds_differ():
    a = weight_decay_equilibrium_witness(seed=claim_seed("c15-decay-equilibrium/0"))
    b = weight_decay_equilibrium_witness(seed=claim_seed("c15-decay-equilibrium/1"))
    assert a != b
