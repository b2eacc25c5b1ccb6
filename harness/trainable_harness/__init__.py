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

The book engine (:mod:`claimbook`: claims, build, site) is a separate package. A chapter
reaches the few engine names it uses through this package (``verify_claim``,
``claim_status_line``, ``claim_seed``, ``glue_setting``, ``save_figure``, ``glue_figure``,
the figure ``PALETTE``, ``FIGURE_STYLE`` and ``FIGURE_WIDTH``, ``show_source``,
``format_value``); they
are imported from the engine when first used, so importing the instruments stays cheap.
"""

# First, before any module of the package is imported: the engine's import hook that notes
# which of these functions run (the keys of chapters and claims are built from them).
from claimbook.calls import install as _install_call_notes

_install_call_notes()

import importlib as _importlib

# Each module's ``__all__`` is its public surface, written once there; this package
# re-exports all of them so a chapter can ``from trainable_harness import ...`` anything.
from trainable_harness import errors, layers, moments, normalization
from trainable_harness._version import __version__
from trainable_harness.errors import *  # noqa: F403
from trainable_harness.layers import *  # noqa: F403
from trainable_harness.moments import *  # noqa: F403
from trainable_harness.normalization import *  # noqa: F403

# The engine names a chapter uses, by the engine module that defines each.
_FROM_ENGINE = {
    "verify_claim": "claimbook.claims.verify",
    "claim_status_line": "claimbook.claims.verify",
    "claim_seed": "claimbook.claims.registry",
    "claim_seeds": "claimbook.claims.registry",
    "load_claim": "claimbook.claims.registry",
    "glue_setting": "claimbook.settings",
    "save_figure": "claimbook.figures",
    "glue_figure": "claimbook.figures",
    "PALETTE": "claimbook.figures",
    "FIGURE_STYLE": "claimbook.figures",
    "FIGURE_WIDTH": "claimbook.figures",
    "show_source": "claimbook.listings",
    # The one format of a value measured over seeds, "m (95% CI lo to hi)", as on the page.
    "format_value": "claimbook.extensions.claim_pages_model",
}

__all__ = [
    "__version__",
    *_FROM_ENGINE,
    *errors.__all__,
    *layers.__all__,
    *moments.__all__,
    *normalization.__all__,
]


def __getattr__(name: str):
    """Import an engine name a chapter asks for (``from trainable_harness import ...``)."""
    if name in _FROM_ENGINE:
        value = getattr(_importlib.import_module(_FROM_ENGINE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'trainable_harness' has no attribute {name!r}")
