"""Fixtures shared by the tests of trainable_harness.moments."""

from hashlib import sha256

import numpy as np
import pytest


@pytest.fixture(scope="module")
def running_state_data():
    """The section 15.3 draw: eight training batches and one evaluation batch."""
    rng = np.random.default_rng(int(sha256(b"c15-running-state").hexdigest()[:8], 16))
    training_batches = rng.normal(4, 2, size=(8, 32))
    evaluation_batch = rng.normal(4, 2, size=32)
    return training_batches, evaluation_batch
