"""Batch, layer, instance and group normalization on batches; running state; folding.

Chapter 16 ("Batch normalization in practice"). All four layers apply the same four
equations to a *reduction set* ``S`` of values ``x_i`` that share one mean and one variance:

- eq. 16.1, mean: ``mean = (1/m) sum_{i in S} x_i`` with ``m = |S|``;
- eq. 16.2, population (biased) variance: ``population_variance = (1/m) sum (x_i - mean)^2``;
- eq. 16.3, standardize: ``x_hat_i = (x_i - mean) / sqrt(population_variance + eps)``;
- eq. 16.4, scale and shift: ``y_i = gamma_k * x_hat_i + beta_k`` with ``k`` the channel
  (feature) of ``x_i``.

The layers differ only in which elements form a reduction set. Layouts and sets:

=========  ==============  ====================================  ================================
kind       2-D ``(B, d)``  3-D ``(B, T, d)``                     4-D ``(B, C, H, W)``
=========  ==============  ====================================  ================================
batch      over B, per d   over (B, T), per feature d            over (B, H, W), per channel C
layer      over d, per B   over d, per token (b, t)              over (C, H, W), per sample b
instance   refused         refused                               over (H, W), per (b, c)
group      d-groups, per   d-groups, per token (b, t)            channel groups and (H, W), per b
           sample b
=========  ==============  ====================================  ================================

The 3-D layout puts features last, as sequence models do, and a "sample" of layer and group
norm is one token ``(b, t)``: this is the transformer convention (LayerNorm over ``d``). With
that convention, instance norm on 3-D would normalize each (token, feature) pair over a single
value, so it is refused; to normalize each feature over time within a sequence, transpose to
``(B, d, T, 1)`` and use the 4-D form. The channel (feature) axis is 1 for 2-D and 4-D input
and 2 for 3-D input; ``gamma`` and ``beta`` always have shape ``(C,)`` (or ``(d,)``), one value
per channel, for all four kinds. For 4-D layer norm this is the per-channel affine of
``GroupNorm(1, C)``, not the per-element ``(C, H, W)`` affine of PyTorch's
``nn.LayerNorm([C, H, W])``; with it, group norm with one group *is* layer norm and group
norm with ``C`` groups *is* instance norm.

Dtype contract: inputs are converted to ``dtype`` (float64 by default; integers promoted;
bool, complex and object arrays refused) and all arithmetic happens in it. Running
statistics are stored in float64.

Scale before you square: eqs. 16.1-16.3 are computed by
:func:`~trainable_harness.normalization.scaled_moments` per reduction set -- deviations
after a shift by the set's first value, divided by a power of two ``2**E`` near the larger
of their largest magnitude and ``sqrt(eps)`` before squaring, with eps entering as
``eps / 4**E`` -- so ``x_hat = (x - mean) / sqrt(population_variance + eps)`` with eps
added to the variance in the input's units, and no square overflows or vanishes in
float16, float32 or float64. Eval mode, the affine step, folding, :func:`linear` and
:func:`conv2d` avoid spurious overflow (a sum or product beyond range whose result is not)
by halving or scaling the operands by powers of two; a result whose exact value is beyond
the dtype's largest finite value raises
:class:`~trainable_harness.errors.ResultOverflowError` (a batch variance beyond it,
:class:`~trainable_harness.errors.MomentOverflowError`), naming the operands: no function
here returns inf or NaN.

Modules, one job each (every public name is re-exported here):

- :mod:`~trainable_harness.layers.reduction_sets` -- layouts, channel axes and reduction
  sets: :func:`reduction_axes`, :func:`statistic_labels`, :func:`values_per_statistic`;
- :mod:`~trainable_harness.layers.standardize` -- standardization over a reduction set,
  written once (eqs. 16.1-16.3): :func:`standardize`, :func:`standardized_moments` (own
  statistics) and :func:`standardize_with` (given statistics);
- :mod:`~trainable_harness.layers.normalize` -- the four layers (eqs. 16.1-16.4):
  :func:`batch_norm`, :func:`layer_norm`, :func:`instance_norm`, :func:`group_norm`,
  :func:`apply_normalization`;
- :mod:`~trainable_harness.layers.running_state` -- :func:`batch_statistics`,
  :class:`BatchNormState` and its train-mode update (eq. 16.5);
- :mod:`~trainable_harness.layers.train_eval` -- :func:`batch_norm_train`,
  :func:`batch_norm_eval`;
- :mod:`~trainable_harness.layers.linear_conv` -- :func:`linear`, :func:`conv2d`;
- :mod:`~trainable_harness.layers.folding` -- folding eval-mode batch norm into them
  (eq. 16.6) and :func:`batch_norm_eval_flops`;
- :mod:`~trainable_harness.layers.inputs` and :mod:`~trainable_harness.layers.safe_arithmetic`
  -- the argument checks and the overflow-free element-wise steps the others share.

Examples
--------
>>> import numpy as np
>>> X = np.arange(8.0).reshape(2, 2, 2)          # (B, T, d)
>>> reduction_axes("batch", 3), reduction_axes("layer", 3)
((0, 1), (2,))
>>> Y = batch_norm(X, np.ones(2), np.zeros(2), eps=0.0)
>>> print(Y[:, :, 0].ravel().round(4))
[-1.3416 -0.4472  0.4472  1.3416]

Magnitudes whose squares overflow or underflow the dtype:

>>> batch_norm([[-1e300], [1e300]], [1], [0])
array([[-1.],
       [ 1.]])
>>> layer_norm(np.array([[0, 1e-25]], np.float32), [1, 1], [0, 0], eps=0, dtype=np.float32)
array([[-1.,  1.]], dtype=float32)
"""

from trainable_harness.layers.folding import (
    BatchNormEvalWork,
    batch_norm_eval_flops,
    fold_batch_norm_into_conv2d,
    fold_batch_norm_into_linear,
)
from trainable_harness.layers.linear_conv import conv2d, linear
from trainable_harness.layers.normalize import (
    apply_normalization,
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
)
from trainable_harness.layers.reduction_sets import (
    NormalizationKind,
    reduction_axes,
    statistic_labels,
    values_per_statistic,
)
from trainable_harness.layers.running_state import (
    BatchNormState,
    BatchStatistics,
    VarianceEstimator,
    batch_statistics,
    update_running_statistics,
)
from trainable_harness.layers.standardize import (
    standardize,
    standardize_with,
    standardized_moments,
)
from trainable_harness.layers.train_eval import batch_norm_eval, batch_norm_train

__all__ = [
    "BatchNormEvalWork",
    "BatchNormState",
    "BatchStatistics",
    "NormalizationKind",
    "VarianceEstimator",
    "apply_normalization",
    "batch_norm",
    "batch_norm_eval",
    "batch_norm_eval_flops",
    "batch_norm_train",
    "batch_statistics",
    "conv2d",
    "fold_batch_norm_into_conv2d",
    "fold_batch_norm_into_linear",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "linear",
    "reduction_axes",
    "standardize",
    "standardize_with",
    "standardized_moments",
    "statistic_labels",
    "update_running_statistics",
    "values_per_statistic",
]
