"""trainable_harness: the instruments the chapters of *Trainable* import.

Each module is named for what it measures:

- :mod:`trainable_harness.normalization` -- the normalization maps of chapter 15 and their
  exact Jacobians (eqs. 15.1-15.3).
- :mod:`trainable_harness.moments` -- centered moment states, Welford's update, the pairwise
  merge, and the floating-point cancellation witness.
- :mod:`trainable_harness.layers` -- batch, layer, instance and group normalization on
  batches, running statistics, and folding (chapter 16).
- :mod:`trainable_harness.geometry`, :mod:`~trainable_harness.mlp`,
  :mod:`~trainable_harness.small_batch`, :mod:`~trainable_harness.precision`,
  :mod:`~trainable_harness.estimator_shift`, :mod:`~trainable_harness.running_drift`,
  :mod:`~trainable_harness.transformer_cost` -- the experiments of the two chapters.
- :mod:`trainable_harness.witnesses` -- the computations the book's claims name, one module
  per chapter section; :mod:`trainable_harness.claimable` marks them.

The package depends on numpy alone and knows nothing of the book that uses it: importing
it has no side effect beyond importing its modules.
"""

# Each module's ``__all__`` is its public surface, written once there; this package
# re-exports all of them so a chapter can ``from trainable_harness import ...`` anything.
from trainable_harness import errors, layers, moments, normalization
from trainable_harness._version import __version__
from trainable_harness.errors import *  # noqa: F403
from trainable_harness.layers import *  # noqa: F403
from trainable_harness.moments import *  # noqa: F403
from trainable_harness.normalization import *  # noqa: F403

__all__ = [
    "__version__",
    *errors.__all__,
    *layers.__all__,
    *moments.__all__,
    *normalization.__all__,
]
