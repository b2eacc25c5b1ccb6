"""Tests of trainable_harness.witnesses.chapter16.drift_momentum."""

import numpy as np
from witness_checks import check_fields_match_the_registry

from claimbook.chapter import claim_seed
from trainable_harness.running_drift import drifting_running_means
from trainable_harness.witnesses.chapter16.drift_momentum import drift_momentum_witness


def test_fields_match_the_registry():
    seed = claim_seed("c16-drift-momentum/0")
    check_fields_match_the_registry("c16-drift-momentum-001", drift_momentum_witness, seed=seed)


def test_fields_name_each_momentum_as_a_percentage():
    result = drift_momentum_witness(seed=0)
    errors = drifting_running_means(0)
    # Momenta 1%, 10%, 30%, 50%, in the instrument's order.
    finals = [result[f"final_error_{p}pct"] for p in (1, 10, 30, 50)]
    assert finals == [float(e) for e in errors["final_error"]]
    assert result["merged_error_min"] == float(np.min(errors["merged_error"]))
