"""The mistakes the chapter 16 claims exist to catch, as perturbations of the harness.

A registry entry's ``catches`` names a function of this file as ``chapter16.<function>``
(``claims/<id>.yaml``). Each is a small function that replaces *one* named harness
function (in every module that binds it) with a mistaken version and returns nothing.
``python -m checks mutate`` (:mod:`checks.mutate`) loads this file by its path
(it is not an installed package: it imports the harness, the harness never imports it),
applies one function in a fresh process, recomputes the claim there and records whether it
turned red; no file is ever edited.

Each takes ``patch``, the setter it uses (``setattr`` by default); a test passes
``monkeypatch.setattr`` so the harness is restored after it (``tests/claims_mistakes/``).
"""

from __future__ import annotations

import numpy as np

from claim_mistakes.chapter15 import _merge_without_between_term, everywhere
from trainable_harness.digits import convnet
from trainable_harness.small_batch import checks, fixes, groups, model, train_eval

__all__ = [
    "backward_without_the_variance_term",
    "batch_statistics_over_the_batch_axis_only",
    "biased_running_variance",
    "branch_scale_left_out_of_the_jacobian",
    "branch_scale_only_in_the_forward_pass",
    "device_merge_without_the_between_device_term",
    "digits_backward_without_the_variance_term",
    "digits_eval_with_batch_statistics",
    "digits_group_norm_over_the_batch",
    "digits_momentum_as_the_old_value_weight",
    "fold_with_batch_statistics",
    "fold_without_eps",
    "fold_without_the_mean_shift",
    "gamma_gradient_dropped",
    "ghost_batches_not_split",
    "gradient_shift_without_the_earlier_update",
    "group_norm_statistics_over_the_batch",
    "instance_norm_statistics_over_the_batch",
    "layer_norm_over_the_batch_axis",
    "mean_not_subtracted_first",
    "momentum_as_the_old_value_weight",
    "no_final_normalization",
    "noise_shared_by_every_sample",
    "noise_that_does_not_shift",
    "renorm_without_the_clip_of_d",
    "sample_variance_batch_moments",
    "sample_variance_batch_norm",
    "skip_gradient_not_added",
]


# --- small batches (c16-small-batch-001) ---------------------------------------------------


def _sample_variance_moments(X):
    """Batch statistics divided by m - 1 instead of m (the sample variance)."""
    mean, variance = checks._batch_moments(X)
    m = X.shape[1] * X.shape[3] * X.shape[4]
    return mean, variance * m / (m - 1)


def _sample_variance_standardized(X, eps, what):
    """Train-mode standardization whose variance is divided by m - 1 instead of m."""
    parts = checks._batch_standardized(X, eps, what)
    m = X.shape[1] * X.shape[3] * X.shape[4]
    return parts._replace(mean_square=parts.mean_square * (m / (m - 1)))


def sample_variance_batch_moments(patch=setattr) -> None:
    """Batch norm's statistics divided by m - 1 (``small_batch.checks._batch_moments`` and
    ``_batch_standardized``, in each module of ``small_batch`` that binds them)."""
    for module in (train_eval, model):
        patch(module, "_batch_moments", _sample_variance_moments)
    for module in (train_eval, fixes):
        patch(module, "_batch_standardized", _sample_variance_standardized)


def _ghosts_ignored(X, ghost_size, eps=model.EPS):
    """Ghost batch norm that normalizes the whole batch at once."""
    return train_eval.train_mode(X, eps)


def ghost_batches_not_split(patch=setattr) -> None:
    """Ghost batch norm that never splits the batch (``small_batch.fixes``'s
    ``ghost_batch_norm_train``, where it is written)."""
    everywhere(patch, fixes, "ghost_batch_norm_train", _ghosts_ignored)


_BATCH_RENORM = fixes.batch_renorm_train  # the correct one, which the mistake calls


def _renorm_without_clipping_d(X, r_max, d_max, eps=model.EPS):
    return _BATCH_RENORM(X, r_max, np.inf, eps)


def renorm_without_the_clip_of_d(patch=setattr) -> None:
    """Batch renormalization whose correction d is never clipped (``small_batch.fixes``'s
    ``batch_renorm_train``, where it is written)."""
    everywhere(patch, fixes, "batch_renorm_train", _renorm_without_clipping_d)


def device_merge_without_the_between_device_term(patch=setattr) -> None:
    """Per-device moment states merged without the spread of their means
    (``moments.merge_moments``, the one merge of the harness)."""
    from trainable_harness.moments import merge

    everywhere(patch, merge, "merge_moments", _merge_without_between_term)


def _group_norm_over_the_batch(X, gamma, beta, *, num_groups, eps=1e-5):
    """Group norm whose statistics pool the samples of the batch too."""
    from trainable_harness.layers import standardize

    batch, channels = X.shape[:2]
    grouped = X.reshape(batch, num_groups, channels // num_groups, *X.shape[2:])
    Y = standardize(grouped, (0, 2, 3, 4), eps=eps).reshape(X.shape)
    return Y * gamma[None, :, None, None] + beta[None, :, None, None]


def group_norm_statistics_over_the_batch(patch=setattr) -> None:
    """Group norm whose statistics pool the batch's samples too (``groups.group_norm``)."""
    patch(groups, "group_norm", _group_norm_over_the_batch)


# --- larger learning rates (c16-larger-learning-rates-001) ---------------------------------


def _backward_without_the_variance_term(dY, cache, gamma):
    """Batch norm's backward pass with the centering but without -Z_hat mean(dY Z_hat)."""
    Z_hat, inv_std = cache
    dgamma = np.einsum("...nk,...nk->...k", dY, Z_hat)
    dbeta = dY.sum(axis=-2)
    dZ = dY * gamma[..., None, :] - (dbeta * gamma)[..., None, :] / Z_hat.shape[-2]
    return dZ * inv_std, dgamma, dbeta


def backward_without_the_variance_term(patch=setattr) -> None:
    """Batch norm's backward pass without its variance term (``mlp.layers``'s backward
    pass, where the training network, the backward-pass witness and the depth experiment
    bind it)."""
    from trainable_harness import depth
    from trainable_harness.mlp import network
    from trainable_harness.witnesses.chapter16 import backward_pass

    patch(network, "_batch_norm_backward", _backward_without_the_variance_term)
    patch(backward_pass, "batch_norm_backward", _backward_without_the_variance_term)
    patch(depth, "batch_norm_backward", _backward_without_the_variance_term)


# --- residual depth (c16-residual-depth-001) -----------------------------------------------


def no_final_normalization(patch=setattr) -> None:
    """A residual stack without its final normalization: the last Jacobian is the identity
    (``witnesses.chapter16.residual_depth.residual_block_jacobians``)."""
    from trainable_harness.witnesses.chapter16 import residual_depth

    original = residual_depth.residual_block_jacobians

    def without_final_normalization(rng, depth, placement, **kwargs):
        jacobians = original(rng, depth, placement, **kwargs)
        return [*jacobians[:-1], np.eye(jacobians[-1].shape[0])]

    patch(residual_depth, "residual_block_jacobians", without_final_normalization)


# --- depth at initialization (c16-init-depth-001) -----------------------------------------


def skip_gradient_not_added(patch=setattr) -> None:
    """A residual block whose backward pass drops the skip connection's gradient: only the
    branch's reaches the block's input (``depth._block_backward``)."""
    from trainable_harness import depth

    original = depth._block_backward

    def without_the_skip(dX, saved, W, alpha, skip):
        return original(dX, saved, W, alpha, False)

    patch(depth, "_block_backward", without_the_skip)


def branch_scale_only_in_the_forward_pass(patch=setattr) -> None:
    """A scaled residual branch whose backward pass leaves out the scale ``alpha``
    (``depth._block_backward``)."""
    from trainable_harness import depth

    original = depth._block_backward

    def unscaled(dX, saved, W, alpha, skip):
        return original(dX, saved, W, 1.0, skip)

    patch(depth, "_block_backward", unscaled)


# --- one value per channel (c16-train-mode-output-001) -------------------------------------


def mean_not_subtracted_first(patch=setattr) -> None:
    """Batch norm in a fused kernel's order, which never forms x - mean
    (``witnesses.chapter16.single_value.batch_norm``)."""
    from trainable_harness.witnesses.chapter16 import single_value

    patch(single_value, "batch_norm", single_value.fused_kernel_batch_norm)


def _sample_variance_batch_norm(X, gamma, beta, *, eps=1e-5):
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = ((X - X.mean(axis=0)) ** 2).sum(axis=0) / (X.shape[0] - 1)
        return gamma * (X - X.mean(axis=0)) / np.sqrt(variance + eps) + beta


def sample_variance_batch_norm(patch=setattr) -> None:
    """Batch norm dividing the squared deviations by m - 1
    (``witnesses.chapter16.single_value.batch_norm``)."""
    from trainable_harness.witnesses.chapter16 import single_value

    patch(single_value, "batch_norm", _sample_variance_batch_norm)


# --- internal covariate shift (c16-activation-drift-001) -----------------------------------


def noise_that_does_not_shift(patch=setattr) -> None:
    """Every noisy network's noise at dose 0 (mean 0, scale 1), which moves no
    distribution (``witnesses.chapter16.activation_drift.noise_specs``)."""
    from trainable_harness.covariate_shift import ALGORITHM_1
    from trainable_harness.witnesses.chapter16 import activation_drift

    original = activation_drift.noise_specs

    def without_shifting_noise():
        return [ALGORITHM_1.at_dose(0.0) for _ in original()]

    patch(activation_drift, "noise_specs", without_shifting_noise)


def noise_shared_by_every_sample(patch=setattr) -> None:
    """Algorithm 1 without its per-sample part (``r_mu = r_sigma = 0``): one draw per step,
    layer and unit shared by every sample, as the book's first version drew it
    (``witnesses.chapter16.activation_drift.ALGORITHM_1``)."""
    from trainable_harness.witnesses.chapter16 import activation_drift

    shared = activation_drift.ALGORITHM_1._replace(r_mu=0.0, r_sigma=0.0)
    patch(activation_drift, "ALGORITHM_1", shared)


def gradient_shift_without_the_earlier_update(patch=setattr) -> None:
    """Definition 2.1 with G' taken before the earlier layers update, so G' = G
    (``covariate_shift.gradient_shift``)."""
    from trainable_harness import covariate_shift

    original = covariate_shift.gradient_shift

    def unmoved(params, grads, task, normalize, learning_rate, noise=None):
        return original(params, grads, task, normalize, 0.0 * learning_rate, noise)

    patch(covariate_shift, "gradient_shift", unmoved)


# --- running estimates (c16-drift-momentum-001, c16-train-eval-001) -----------------------


def momentum_as_the_old_value_weight(patch=setattr) -> None:
    """Running statistics updated with ``momentum`` weighting the old estimate and
    ``1 - momentum`` the new batch (Keras's convention read as PyTorch's)
    (``layers.update_running_statistics``, where the running-estimate witnesses bind it)."""
    import dataclasses

    from trainable_harness import layers, running_drift
    from trainable_harness.witnesses.chapter16 import running_estimates

    original = layers.update_running_statistics

    def swapped(state, X):
        updated = original(dataclasses.replace(state, momentum=1.0 - state.momentum), X)
        return dataclasses.replace(updated, momentum=state.momentum)

    for module in (running_drift, running_estimates):
        patch(module, "update_running_statistics", swapped)


# --- batch dependence (c16-batch-dependence-001) -------------------------------------------


def instance_norm_statistics_over_the_batch(patch=setattr) -> None:
    """Instance norm whose statistics take the batch axis too, as batch norm's do
    (``layers.apply_normalization``, where the batch-dependence witness binds it)."""
    from trainable_harness import layers
    from trainable_harness.witnesses.chapter16 import batch_dependence

    original = layers.apply_normalization

    def wrong_axes(kind, X, gamma, beta, **options):
        return original("batch" if kind == "instance" else kind, X, gamma, beta, **options)

    patch(batch_dependence, "apply_normalization", wrong_axes)


# --- the spread of a batch statistic (c16-statistic-spread-001) ----------------------------


def batch_statistics_over_the_batch_axis_only(patch=setattr) -> None:
    """Batch norm's channel statistics taken over the batch axis at one position instead of
    over the batch and every position (``layers.batch_statistics``, where the
    statistic-spread witness binds it)."""
    from trainable_harness.layers import batch_statistics
    from trainable_harness.witnesses.chapter16 import statistic_spread

    def first_position_only(X):
        X = np.asarray(X, dtype=np.float64)
        return batch_statistics(X[..., :1, :1])

    patch(statistic_spread, "batch_statistics", first_position_only)


# --- a branch scale in the post-norm stack (c16-branch-scale-001) -------------------------


def branch_scale_left_out_of_the_jacobian(patch=setattr) -> None:
    """Post-norm block Jacobians ``J_N(y) (I + J_F)`` whose branch term misses the scale
    ``lambda`` the forward pass applies (``branch_scaled_post_norm_jacobians``)."""
    from trainable_harness.normalization import centered_normalize, normalization_jacobian
    from trainable_harness.witnesses.chapter16 import branch_scale
    from trainable_harness.witnesses.chapter16.residual_depth import RESIDUAL_WIDTH

    def unscaled_branch_jacobian(rng, depth, lam, *, width=RESIDUAL_WIDTH, eps=1e-5):
        weights = [rng.normal(0.0, 1.0 / np.sqrt(width), (width, width)) for _ in range(depth)]
        x = centered_normalize(rng.normal(size=width), eps=eps)
        jacobians = []
        for W in weights:
            branch = np.tanh(W @ x)
            y = x + lam * branch
            jacobians.append(
                normalization_jacobian(y, centered=True, eps=eps)
                @ (np.eye(width) + (1.0 - branch**2)[:, None] * W)
            )
            x = centered_normalize(y, eps=eps)
        return jacobians

    patch(branch_scale, "branch_scaled_post_norm_jacobians", unscaled_branch_jacobian)


# --- folding (c16-folding-001, c16-folding-audit-001) --------------------------------------


def fold_without_the_mean_shift(patch=setattr) -> None:
    """Folds whose bias is ``s b + beta``, without subtracting the running mean
    (``layers.fold_batch_norm_into_linear`` and ``fold_batch_norm_into_conv2d``, where the
    folding witness binds them)."""
    import dataclasses

    from trainable_harness import layers
    from trainable_harness.witnesses.chapter16 import folding

    for name in ("fold_batch_norm_into_linear", "fold_batch_norm_into_conv2d"):
        original = getattr(layers, name)

        def mean_left_in(W, b, gamma, beta, state, *, eps=1e-5, _fold=original):
            zero_mean = np.zeros_like(state.running_mean)
            return _fold(
                W, b, gamma, beta, dataclasses.replace(state, running_mean=zero_mean), eps=eps
            )

        patch(folding, name, mean_left_in)


def fold_without_eps(patch=setattr) -> None:
    """A fold whose scale is ``gamma / sqrt(running_variance)``, without the layer's
    epsilon (``layers.fold_batch_norm_into_conv2d``, where the folding witness binds it)."""
    from trainable_harness import layers
    from trainable_harness.witnesses.chapter16 import folding

    def eps_left_out(K, b, gamma, beta, state, *, eps=1e-5):
        return layers.fold_batch_norm_into_conv2d(K, b, gamma, beta, state, eps=0.0)

    patch(folding, "fold_batch_norm_into_conv2d", eps_left_out)


# --- the planted mistakes, each where the harness writes it once ---------------------------


def layer_norm_over_the_batch_axis(patch=setattr) -> None:
    """Layer norm whose statistics are taken over the batch axis, batch norm's reduction
    sets (``layers.reduction_sets._REDUCTION_AXES``, the one table of them)."""
    from trainable_harness.layers import reduction_sets

    table = reduction_sets._REDUCTION_AXES
    everywhere(patch, reduction_sets, "_REDUCTION_AXES", {**table, "layer": table["batch"]})


def biased_running_variance(patch=setattr) -> None:
    """Running variance fed the batch's population variance (divided by m) whatever the
    state's ``variance_estimator`` says (``layers.update_running_statistics``, eq. 16.5)."""
    import dataclasses

    from trainable_harness.layers import running_state

    original = running_state.update_running_statistics

    def population_always(state, X):
        biased = dataclasses.replace(state, variance_estimator="population")
        updated = original(biased, X)
        return dataclasses.replace(updated, variance_estimator=state.variance_estimator)

    everywhere(patch, running_state, "update_running_statistics", population_always)


def gamma_gradient_dropped(patch=setattr) -> None:
    """Batch norm's backward pass returning a zero gradient for gamma
    (``mlp.layers._batch_norm_backward``, the one backward pass of the training network)."""
    from trainable_harness.mlp import layers

    original = layers._batch_norm_backward

    def without_dgamma(dY, cache, gamma):
        dZ, dgamma, dbeta = original(dY, cache, gamma)
        return dZ, np.zeros_like(dgamma), dbeta

    everywhere(patch, layers, "_batch_norm_backward", without_dgamma)


def fold_with_batch_statistics(patch=setattr) -> None:
    """Folds that take the mean and population variance of the last training batch instead
    of the running estimates (``layers.fold_batch_norm_into_linear`` and
    ``fold_batch_norm_into_conv2d``; the last batch is the one train mode saw last,
    ``layers.batch_norm_train``)."""
    import dataclasses

    from trainable_harness import layers
    from trainable_harness.layers import folding, train_eval

    last = {}
    train = train_eval.batch_norm_train

    def train_and_keep(X, gamma, beta, state, **options):
        last["statistics"] = layers.batch_statistics(X)
        return train(X, gamma, beta, state, **options)

    everywhere(patch, train_eval, "batch_norm_train", train_and_keep)
    for name in ("fold_batch_norm_into_linear", "fold_batch_norm_into_conv2d"):
        original = getattr(folding, name)

        def with_batch_statistics(W, b, gamma, beta, state, *, eps=1e-5, _fold=original):
            statistics = last["statistics"]
            batch_state = dataclasses.replace(
                state,
                running_mean=statistics.mean,
                running_variance=statistics.population_variance,
            )
            return _fold(W, b, gamma, beta, batch_state, eps=eps)

        everywhere(patch, folding, name, with_batch_statistics)


# --- real images (c16-digits-*) -------------------------------------------------------------


def digits_group_norm_over_the_batch(patch=setattr) -> None:
    """The digits network's group norm takes its statistics over the batch as well as the
    group's channels and positions (``digits.convnet.normalization_axes``)."""
    original = convnet.normalization_axes

    def with_the_batch(kind):
        return (1, 2, 4) if kind == "group" else original(kind)

    patch(convnet, "normalization_axes", with_the_batch)


def digits_eval_with_batch_statistics(patch=setattr) -> None:
    """The digits network's evaluation mode normalizes with the evaluated batch's
    statistics instead of the running ones (``digits.convnet._normalize``)."""
    original = convnet._normalize

    def batch_statistics_always(net, Z, layer, mode, eps, caches):
        return original(net, Z, layer, "batch" if mode == "running" else mode, eps, caches)

    patch(convnet, "_normalize", batch_statistics_always)


def digits_momentum_as_the_old_value_weight(patch=setattr) -> None:
    """The digits network's running statistics keep 0.1 of the old value and take 0.9 of
    the new batch (``digits.convnet._update_running``, which reads ``MOMENTUM`` as the
    weight of the new batch, given 1 - 0.1)."""
    patch(convnet, "MOMENTUM", 1.0 - convnet.MOMENTUM)


def digits_backward_without_the_variance_term(patch=setattr) -> None:
    """The digits network's standardization backward pass drops the term along x_hat,
    ``- x_hat mean(d_hat x_hat)`` (``digits.convnet._standardize_backward``)."""

    def without_variance_term(d_hat, Z_hat, inverse_root, kind):
        G = convnet._groups(kind, Z_hat.shape[-1])
        shape = (*Z_hat.shape[:3], G, Z_hat.shape[-1] // G)
        d = d_hat.reshape(shape)
        axes = convnet.normalization_axes(kind)
        m = int(np.prod([shape[a] for a in axes]))
        return ((d - convnet._set_sum(d, axes) / m) * inverse_root).reshape(d_hat.shape)

    patch(convnet, "_standardize_backward", without_variance_term)
