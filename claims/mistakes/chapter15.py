"""The mistakes the chapter 15 claims exist to catch, as perturbations of the harness.

A registry entry's ``catches`` names a function of this file as ``chapter15.<function>``
(``claims/<id>.yaml``). Each is a small function that replaces *one* named harness
function (in every module that binds it) with a mistaken version and returns nothing.
``python -m checks mutate`` (:mod:`checks.mutate`) loads this file by its path
(it is not an installed package: it imports the harness, the harness never imports it),
applies one function in a fresh process, recomputes the claim there and records whether it
turned red; no file is ever edited.

Each takes ``patch``, the setter it uses (``setattr`` by default); a test passes
``monkeypatch.setattr`` so the harness is restored after it (``tests/claims_mistakes/``).

A mistake in a computation the harness writes once (the root of eq. 15.1, a normalization,
the running update) is planted where it is written, and :func:`everywhere` replaces every
binding of it in the loaded harness, so it reaches every claim that uses it, as an edit of
that one function would.
"""

from __future__ import annotations

import sys

import numpy as np

from trainable_harness import normalization, precision
from trainable_harness.moments import MomentState

__all__ = [
    "bf16_not_rounded",
    "eps_outside_the_root",
    "everywhere",
    "matrix_work_in_multiply_adds",
    "mean_not_subtracted",
    "merge_without_the_between_batch_term",
    "pre_norm_residual_from_the_normalized_input",
    "rms_by_the_standard_deviation",
    "rms_norm_subtracting_the_mean",
    "statistics_held_constant_in_the_backward_pass",
    "training_state_from_the_last_batch",
    "weight_decay_not_scaled_by_the_learning_rate",
]


def _float32_kept(x) -> np.ndarray:
    return np.asarray(x, np.float32)


def bf16_not_rounded(patch=setattr) -> None:
    """A BF16 emulation that keeps FP32's bits (``precision.round_to_bfloat16``)."""
    patch(precision, "round_to_bfloat16", _float32_kept)


def everywhere(patch, module, name: str, replacement) -> None:
    """Replace ``module.<name>`` and every binding of the same object in the loaded
    ``trainable_harness`` modules (``from ... import`` copies it) by ``replacement``; a
    module imported afterwards imports the replacement."""
    original = getattr(module, name)
    patch(module, name, replacement)
    for loaded in list(sys.modules.values()):
        if not getattr(loaded, "__name__", "").startswith("trainable_harness"):
            continue
        for attribute, value in list(vars(loaded).items()):
            if value is original:
                patch(loaded, attribute, replacement)


def _root_plus_eps(variance, eps) -> np.ndarray:
    return np.sqrt(np.asarray(variance)) + eps


def eps_outside_the_root(patch=setattr) -> None:
    """Every normalization dividing by ``sqrt(variance) + eps`` instead of
    ``sqrt(variance + eps)``: planted in ``normalization.root_of_sum``, the one place eps
    enters the root (the scaled kernel calls it in units of ``4**E``, so the mistaken eps
    is ``eps * 4**-E`` beside a root in units of ``2**E``; placement, not size, is the
    mistake)."""
    everywhere(patch, normalization, "root_of_sum", _root_plus_eps)


def rms_norm_subtracting_the_mean(patch=setattr) -> None:
    """RMSNorm that subtracts the mean first, i.e. LayerNorm without its affine map
    (``normalization.rms_normalize``, planted where it is written)."""
    centered = normalization.centered_normalize
    everywhere(patch, normalization, "rms_normalize", lambda x, eps=0.0: centered(x, eps))


def _scaled_only(x, eps: float = 0.0) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def mean_not_subtracted(patch=setattr) -> None:
    """Centered normalization that does not subtract the mean first
    (``normalization.centered_normalize``, where the invariance witness binds it)."""
    from trainable_harness.witnesses.chapter15 import invariance

    patch(invariance, "centered_normalize", _scaled_only)


def _merge_without_between_term(a, b):
    """A merge that adds the m2 of the parts and forgets the spread of their means."""
    n = a.count + b.count
    return MomentState(n, a.mean + (b.mean - a.mean) * b.count / n, a.m2 + b.m2)


def merge_without_the_between_batch_term(patch=setattr) -> None:
    """Batch moment states merged without the spread of their means
    (``moments.merge_moments``, the one merge of the harness)."""
    from trainable_harness.moments import merge

    everywhere(patch, merge, "merge_moments", _merge_without_between_term)


# --- placement (c15-placement-001) ----------------------------------------------------------


def _residual_from_the_normalized_input(weight, x) -> dict:
    """Blocks whose pre-norm residual adds the branch to ``N(x)``, not to ``x``."""
    from trainable_harness.normalization import centered_normalize, normalization_jacobian
    from trainable_harness.witnesses.chapter15.placement import tanh_branch

    weight = np.asarray(weight, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    branch, branch_jacobian = tanh_branch(weight)
    identity = np.eye(x.size)
    return {
        "pre": lambda z: centered_normalize(z) + branch(centered_normalize(z)),
        "post": lambda z: centered_normalize(z + branch(z)),
        "jacobian_pre": (identity + branch_jacobian(centered_normalize(x)))
        @ normalization_jacobian(x, centered=True),
        "jacobian_post": normalization_jacobian(x + branch(x), centered=True)
        @ (identity + branch_jacobian(x)),
    }


def pre_norm_residual_from_the_normalized_input(patch=setattr) -> None:
    """A pre-norm block written ``x = N(x); x = x + F(x)``: the residual path carries the
    normalized input, ``N(x) + F(N(x))``, so no identity path is left
    (``witnesses.chapter15.placement.residual_placement``)."""
    from trainable_harness.witnesses.chapter15 import placement

    patch(placement, "residual_placement", _residual_from_the_normalized_input)


# --- the RMSNorm ablation (c15-rms-ablation-001) -------------------------------------------


def _divided_by_the_standard_deviation(x, eps: float = 0.0) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)


def rms_by_the_standard_deviation(patch=setattr) -> None:
    """RMSNorm that divides by the standard deviation (``x.std()``, about the mean)
    instead of the root mean square (``normalization.rms_normalize``, where the ablation
    witness binds it)."""
    from trainable_harness.witnesses.chapter15 import rms_ablation

    patch(rms_ablation, "rms_normalize", _divided_by_the_standard_deviation)


# --- the cost of a normalization (c15-norm-cost-001) ---------------------------------------


def matrix_work_in_multiply_adds(patch=setattr) -> None:
    """A block's matrix work counted in multiply-adds, ``m k`` per ``(m, k)`` product
    instead of ``2 m k`` operations (``transformer_cost.block_flops_per_token``, where
    the norm-cost witness binds it)."""
    from trainable_harness.transformer_cost import block_flops_per_token
    from trainable_harness.witnesses.chapter15 import norm_cost

    def multiply_adds(d, hidden, context):
        parts = block_flops_per_token(d, hidden, context)
        halved = {name: value // 2 for name, value in parts.items() if name != "total"}
        return {**halved, "total": sum(halved.values())}

    patch(norm_cost, "block_flops_per_token", multiply_adds)


# --- the train/evaluation discrepancy (c15-estimator-shift-001) ----------------------------


def training_state_from_the_last_batch(patch=setattr) -> None:
    """The training state taken from the last training batch alone instead of the merge
    of all of them, as a running state whose update replaces the old value
    (``estimator_shift._with_training_state``)."""
    from trainable_harness import estimator_shift

    with_all_batches = estimator_shift._with_training_state

    def with_the_last_batch(evaluation, training, eps):
        return with_all_batches(evaluation, training[-1:], eps)

    patch(estimator_shift, "_with_training_state", with_the_last_batch)


# --- scale invariance (c15-scale-geometry-001, c15-decay-equilibrium-001) ------------------


def _statistics_held_constant(z, z_hat, upstream):
    """The centered map's backward pass with its mean and variance treated as constants:
    ``upstream / s`` instead of ``(P upstream - z_hat (z_hat . upstream) / n) / s``."""
    centered = z - z.mean()
    return upstream / np.sqrt(np.mean(centered * centered))


def statistics_held_constant_in_the_backward_pass(patch=setattr) -> None:
    """Gradients that treat the batch mean and variance as constants, so no gradient flows
    through them (``geometry._centered_vjp``, the normalization's backward pass of
    ``scale_invariant_gradient``)."""
    from trainable_harness import geometry

    patch(geometry, "_centered_vjp", _statistics_held_constant)


def weight_decay_not_scaled_by_the_learning_rate(patch=setattr) -> None:
    """Weight decay that shrinks ``w`` by ``1 - wd`` per step instead of ``1 - lr wd``
    (``geometry.run_gradient_descent``, where the scale-invariance witnesses bind it)."""
    from trainable_harness.geometry import run_gradient_descent
    from trainable_harness.witnesses.chapter15 import scale_invariance

    def decay_without_lr(w0, problem, *, lr, steps, weight_decay=0.0, **options):
        # 1 - lr (wd / lr) = 1 - wd: the update the mistaken optimizer makes.
        return run_gradient_descent(
            w0, problem, lr=lr, steps=steps, weight_decay=weight_decay / lr, **options
        )

    patch(scale_invariance, "run_gradient_descent", decay_without_lr)
