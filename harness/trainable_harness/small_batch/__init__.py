"""Batch normalization with small batches: estimator error, train/eval gap, and three fixes.

Chapter 16, section "Small batches". Activations of one layer are drawn as in section
"How many values a statistic sees": for sample ``b``, channel ``c`` and position ``p``,

    x[b, c, p] = mu_c + a[b, c] + e[b, c, p],   a ~ N(0, tau^2),  e ~ N(0, sigma^2),

so the ``H W`` positions of a sample share the offset ``a`` and the population variance of
a channel is ``tau^2 + sigma^2``. With the population statistics known, the functions below
measure, for a batch of ``B`` samples:

- the error of the per-channel batch mean and standard deviation (train mode);
- the *train/eval gap*: RMS difference between the train-mode output (batch statistics)
  and the evaluation-mode output (population statistics) on the same batch;
- the same gap for batch renormalization (Ioffe 2017), whose train-mode output is
  ``r (x - mean_B) / std_B + d`` with ``r = clip(std_B / std, 1/r_max, r_max)`` and
  ``d = clip((mean_B - mean) / std, -d_max, d_max)``: without clipping it *is* the
  evaluation output, and the gap comes from the clipping alone;
- ghost batches (Hoffer et al. 2017): a batch normalized in independent slices of ``G``;
- synchronized batch norm: per-device moment states merged exactly
  (:func:`trainable_harness.moments.merge_moments`) give the statistics of the whole batch.

- group normalization (Wu and He 2018, ``GROUPS`` groups of consecutive channels): its
  train/eval gap, measured with :func:`trainable_harness.layers.group_norm` on the same
  batch normalized whole and one sample at a time, its dependence on the batch (the same
  samples inside a batch twice as large), and how far its per-sample statistics put its
  output from the output with the population statistics of each group, which does not
  depend on ``B``.

Modules, one job each (every public name is re-exported here):

- :mod:`~trainable_harness.small_batch.model` -- the activation model:
  :func:`draw_activations`, :func:`batch_population_variances`,
  :func:`expected_batch_variance`, :func:`mean_error_theory`,
  :func:`single_sample_gap_theory`, :func:`two_sample_gap_theory` and its constants;
- :mod:`~trainable_harness.small_batch.train_eval` -- :func:`train_mode`,
  :func:`population_eval`, :func:`statistic_errors`, :func:`train_eval_gap`;
- :mod:`~trainable_harness.small_batch.fixes` -- :func:`batch_renorm_train`,
  :func:`clipped_renorm_gap_theory`, :func:`ghost_batch_norm_train`,
  :func:`synchronized_statistics`;
- :mod:`~trainable_harness.small_batch.groups` -- :func:`group_norm_train`,
  :func:`group_population_eval`, :func:`group_norm_batch_gaps`,
  :func:`group_distance_theory`;
- :mod:`~trainable_harness.small_batch.sweep` -- :func:`small_batch_sweep` over
  ``BATCH_SIZES``;
- :mod:`~trainable_harness.small_batch.checks` -- the checks and helpers they share.

Arithmetic is float64; ``eps`` is added to the variance as in eq. 16.3.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> X = draw_activations(rng, repeats=50, batch=4)
>>> X.shape
(50, 4, 8, 4, 4)
"""

import numpy as np  # noqa: F401 (the doctest uses it)

from trainable_harness.errors import SmallBatchError  # noqa: F401 (read from here by the tests)
from trainable_harness.small_batch.fixes import (
    batch_renorm_train,
    clipped_renorm_gap_theory,
    ghost_batch_norm_train,
    synchronized_statistics,
)
from trainable_harness.small_batch.groups import (
    GROUPS,
    group_distance_theory,
    group_norm_batch_gaps,
    group_norm_train,
    group_population_eval,
)

# Besides __all__, the constants of the model and the sweep are re-exported (noqa: F401):
# chapters and tests read them as ``small_batch.<name>``.
from trainable_harness.small_batch.model import (  # noqa: F401
    CHANNEL_MEANS,
    CHANNELS,
    EPS,
    INDEPENDENT_VARIANCE,
    SHARED_VARIANCE,
    SIDE,
    batch_population_variances,
    draw_activations,
    expected_batch_variance,
    mean_error_theory,
    single_sample_gap_theory,
    two_sample_gap_theory,
)
from trainable_harness.small_batch.sweep import (  # noqa: F401
    BATCH_SIZES,
    GHOST_SIZE,
    RENORM_LIMITS,
    SAMPLES_PER_SIZE,
    SYNC_PER_DEVICE,
    small_batch_sweep,
)
from trainable_harness.small_batch.train_eval import (
    population_eval,
    statistic_errors,
    train_eval_gap,
    train_mode,
)

__all__ = [
    "BATCH_SIZES",
    "CHANNELS",
    "GROUPS",
    "INDEPENDENT_VARIANCE",
    "SHARED_VARIANCE",
    "SIDE",
    "batch_population_variances",
    "batch_renorm_train",
    "clipped_renorm_gap_theory",
    "draw_activations",
    "expected_batch_variance",
    "ghost_batch_norm_train",
    "group_distance_theory",
    "group_norm_batch_gaps",
    "group_norm_train",
    "group_population_eval",
    "mean_error_theory",
    "population_eval",
    "single_sample_gap_theory",
    "small_batch_sweep",
    "statistic_errors",
    "synchronized_statistics",
    "train_eval_gap",
    "train_mode",
    "two_sample_gap_theory",
]
