"""trainable_harness: the instruments the chapters of *Trainable* import.

Each module is named for what it measures:

- :mod:`trainable_harness.normalization` -- the normalization maps of chapter 15 and their
  exact Jacobians (eqs. 15.1-15.3).
- :mod:`trainable_harness.moments` -- centered moment states, Welford's update, the pairwise
  merge, and the floating-point cancellation witness.
- :mod:`trainable_harness.layers` -- batch, layer, instance and group normalization on
  batches, running statistics, and folding (chapter 16).
- :mod:`trainable_harness.claims` -- the claim registry, ``verify_claim``, keys and pins
  (a subpackage: keys, registry, computations, intervals, store, audit, repin).
- :mod:`trainable_harness.witnesses` -- the computations that registered claims call,
  one module per chapter.
- :mod:`trainable_harness.atomic` -- atomic file writes.
- :mod:`trainable_harness.sources` -- the one reader of chapter sources.
- :mod:`trainable_harness.figures` -- saving chapter figures as artifacts.
- :mod:`trainable_harness.paths` -- every path the book uses, in one place.
"""

# First, before any module of the package is imported: the import hook that notes which
# harness functions run (the keys of chapters and claims are built from them; see _calls).
from trainable_harness import _calls

_calls.install()

# Each module's ``__all__`` is its public surface, written once there; this package
# re-exports all of them so a chapter can ``from trainable_harness import ...`` anything.
from trainable_harness import claims, errors, figures, layers, moments, normalization, paths
from trainable_harness._version import __version__
from trainable_harness.claims import *  # noqa: F403
from trainable_harness.errors import *  # noqa: F403
from trainable_harness.figures import *  # noqa: F403
from trainable_harness.layers import *  # noqa: F403
from trainable_harness.moments import *  # noqa: F403
from trainable_harness.normalization import *  # noqa: F403

__all__ = [
    "__version__",
    "paths",
    *claims.__all__,
    *errors.__all__,
    *figures.__all__,
    *layers.__all__,
    *moments.__all__,
    *normalization.__all__,
]
