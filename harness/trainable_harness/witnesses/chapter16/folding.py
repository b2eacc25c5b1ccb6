"""Section 16.4: folding eval-mode batch norm into the layer before it (eq. 16.6).

A linear layer and a convolution, each followed by a batch norm whose running state comes
from train-mode batches, folded and compared with the unfolded pair against a rounding
bound; and the element-wise work folding removes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.layers import (
    BatchNormEvalWork,
    BatchNormState,
    batch_norm_eval,
    batch_norm_eval_flops,
    batch_norm_train,
    conv2d,
    fold_batch_norm_into_conv2d,
    fold_batch_norm_into_linear,
    linear,
)
from trainable_harness.normalization import root_of_sum
from trainable_harness.witnesses.chapter16.batch_dependence import channel_shaped
from trainable_harness.witnesses.chapter16.identity_recovery import UNIT_ROUNDOFF

__all__ = [
    "FOLD_CONV_INPUT_SHAPE",
    "FOLD_EPS",
    "FOLD_KERNEL_SHAPE",
    "FOLD_LINEAR_BATCH",
    "FOLD_LINEAR_SHAPE",
    "FOLD_PADDING",
    "FOLD_UPDATES",
    "RESNET_FIRST_CONV_OUTPUT",
    "RESNET_IMAGE_SIDE",
    "conv_fold_case",
    "folding_experiment",
    "folding_report",
    "folding_summary",
    "folding_witness",
    "linear_fold_case",
    "trained_state",
]

FOLD_EPS = 1e-5
FOLD_UPDATES = 50  # train-mode batches before the running state is folded
FOLD_LINEAR_SHAPE = (8, 16)  # W: 8 outputs of 16 inputs
FOLD_LINEAR_BATCH = 64  # inputs per batch of the linear layer
FOLD_KERNEL_SHAPE = (8, 3, 3, 3)  # K: (C_out, C_in, kh, kw)
FOLD_PADDING = 1
FOLD_CONV_INPUT_SHAPE = (8, 3, 12, 12)  # inputs per batch of the convolution
# A ResNet's first convolution: 64 channels, stride 2 on one 224 x 224 image.
RESNET_IMAGE_SIDE, RESNET_STRIDE, RESNET_CHANNELS = 224, 2, 64
RESNET_FIRST_CONV_OUTPUT = (
    1,
    RESNET_CHANNELS,
    RESNET_IMAGE_SIDE // RESNET_STRIDE,
    RESNET_IMAGE_SIDE // RESNET_STRIDE,
)


def trained_state(
    layer: Callable[[np.ndarray], np.ndarray],
    draw_input: Callable[[], np.ndarray],
    num_channels: int,
    updates: int,
) -> BatchNormState:
    """Running state after ``updates`` train-mode batches of ``layer(draw_input())``.

    Momentum 0.1 and the sample variance (PyTorch's conventions), gamma 1 and beta 0.

    Examples
    --------
    >>> state = trained_state(lambda X: X, lambda: np.array([[1.0], [3.0]]), 1, 1)
    >>> state.running_mean.tolist(), state.running_variance.tolist()
    ([0.2], [1.1])
    """
    state = BatchNormState.initial(num_channels, momentum=0.1)
    gamma, beta = np.ones(num_channels), np.zeros(num_channels)
    for _ in range(updates):
        _, state = batch_norm_train(layer(draw_input()), gamma, beta, state)
    return state


def folding_report(folded, reference, scale, magnitude, beta, n_terms: int) -> dict:
    """Largest ``|folded - reference|`` and its largest ratio to the rounding bound.

    The bound per output element is ``2 (n_terms + 4) u (|scale| magnitude + |beta|)``: each
    of the two paths sums ``n_terms`` products and adds bias, mean and beta, and every
    operation rounds by at most ``u`` relative to what has been summed (``magnitude`` is the
    sum of the absolute values involved). This is the bound the layers tests use.

    Examples
    --------
    >>> folding_report(np.array([1.0]), np.array([1.0]), 1.0, np.array([1.0]), 0.0, 1)
    {'max_abs_difference': 0.0, 'max_ratio_to_bound': 0.0}
    """
    difference = np.abs(folded - reference)
    bound = 2 * (n_terms + 4) * UNIT_ROUNDOFF * (np.abs(scale) * magnitude + np.abs(beta))
    return {
        "max_abs_difference": float(np.max(difference)),
        "max_ratio_to_bound": float(np.max(difference / bound)),
    }


def linear_fold_case(rng: np.random.Generator, updates: int, eps: float) -> dict:
    """A linear layer followed by eval-mode batch norm, folded (eq. 16.6) and checked.

    ``W`` of shape ``FOLD_LINEAR_SHAPE`` with N(0, 1/fan_in) entries and a bias from
    N(0, 1); the running state comes from ``updates`` train-mode batches of
    ``FOLD_LINEAR_BATCH`` inputs drawn from N(1, 3^2) (:func:`trained_state`); then gamma
    from U(0.5, 2), beta from N(0, 1), and a test batch from the same distribution. Draws
    come from ``rng`` in that order.

    Returns
    -------
    dict
        :func:`folding_report` of ``linear(X, W', b')`` against
        ``batch_norm_eval(linear(X, W, b))`` with eps ``eps``.
    """
    outputs, fan_in = FOLD_LINEAR_SHAPE
    W = rng.normal(0.0, 1.0 / np.sqrt(fan_in), size=FOLD_LINEAR_SHAPE)
    b = rng.normal(size=outputs)
    batch_shape = (FOLD_LINEAR_BATCH, fan_in)
    state = trained_state(
        lambda X: linear(X, W, b), lambda: rng.normal(1.0, 3.0, batch_shape), outputs, updates
    )
    gamma, beta = rng.uniform(0.5, 2.0, outputs), rng.normal(size=outputs)
    X = rng.normal(1.0, 3.0, batch_shape)
    reference = batch_norm_eval(linear(X, W, b), gamma, beta, state, eps=eps)
    # Fold (eq. 16.6), and bound the rounding of both paths.
    W_folded, b_folded = fold_batch_norm_into_linear(W, b, gamma, beta, state, eps=eps)
    scale = gamma / root_of_sum(state.running_variance, eps)
    magnitude = np.abs(X) @ np.abs(W).T + np.abs(b) + np.abs(state.running_mean)
    return folding_report(
        linear(X, W_folded, b_folded), reference, scale, magnitude, beta, n_terms=fan_in
    )


def conv_fold_case(rng: np.random.Generator, batch_shape: tuple, updates: int, eps: float):
    """A convolution followed by a batch norm in eval mode, and a checker for its folds.

    The convolution has kernels of shape ``FOLD_KERNEL_SHAPE`` drawn from N(0, 1/fan_in),
    a bias from N(0, 1) and padding ``FOLD_PADDING``; the batch norm's running state comes
    from ``updates`` train-mode batches of shape ``batch_shape`` drawn from N(0.5, 2^2)
    (:func:`trained_state`), gamma from U(0.5, 2) and beta from N(0, 1). The reference is
    the unfolded layer in eval mode with ``eps`` on a fresh batch. Draws come from ``rng``
    in that order.

    Returns
    -------
    (check, state, output_shape)
        ``check(fold_state, fold_eps)`` folds with that state and epsilon and returns
        :func:`folding_report` against the reference and its rounding bound; ``state``
        is the trained :class:`BatchNormState`; ``output_shape`` the convolution's.
    """
    outputs = FOLD_KERNEL_SHAPE[0]
    fan_in = math.prod(FOLD_KERNEL_SHAPE[1:])
    K = rng.normal(0.0, 1.0 / np.sqrt(fan_in), size=FOLD_KERNEL_SHAPE)
    c = rng.normal(size=outputs)
    state = trained_state(
        lambda X: conv2d(X, K, c, padding=FOLD_PADDING),
        lambda: rng.normal(0.5, 2.0, batch_shape),
        outputs,
        updates,
    )
    gamma, beta = rng.uniform(0.5, 2.0, outputs), rng.normal(size=outputs)
    X = rng.normal(0.5, 2.0, batch_shape)
    output = conv2d(X, K, c, padding=FOLD_PADDING)
    reference = batch_norm_eval(output, gamma, beta, state, eps=eps)
    scale = channel_shaped(gamma / root_of_sum(state.running_variance, eps))
    magnitude = conv2d(np.abs(X), np.abs(K), np.abs(c), padding=FOLD_PADDING) + channel_shaped(
        np.abs(state.running_mean)
    )

    def check(fold_state: BatchNormState, fold_eps: float) -> dict:
        K_folded, c_folded = fold_batch_norm_into_conv2d(  # eq. 16.6
            K, c, gamma, beta, fold_state, eps=fold_eps
        )
        return folding_report(
            conv2d(X, K_folded, c_folded, padding=FOLD_PADDING),
            reference,
            scale,
            magnitude,
            channel_shaped(beta),
            n_terms=fan_in,
        )

    return check, state, output.shape


def folding_experiment(seed: int, *, eps: float = FOLD_EPS, updates: int = FOLD_UPDATES) -> dict:
    """Both folds checked, and the work of eval-mode batch norm before and after folding.

    With ``rng = numpy.random.default_rng(seed)``: :func:`linear_fold_case`, then
    :func:`conv_fold_case` on inputs of ``FOLD_CONV_INPUT_SHAPE`` from N(0.5, 2^2);
    :func:`batch_norm_eval_flops` of the convolution's output (after a bias) and of
    ``RESNET_FIRST_CONV_OUTPUT`` (a convolution without bias).

    Returns
    -------
    dict
        ``linear`` and ``conv2d`` (reports of :func:`folding_report`), ``work`` and
        ``resnet_first_conv`` (:class:`~trainable_harness.layers.BatchNormEvalWork`).

    Examples
    --------
    >>> folding_experiment(0, updates=2)["work"].elements
    9216
    """
    rng = np.random.default_rng(seed)
    linear_report = linear_fold_case(rng, updates, eps)
    check_conv, state, output_shape = conv_fold_case(rng, FOLD_CONV_INPUT_SHAPE, updates, eps)
    return {
        "linear": linear_report,
        "conv2d": check_conv(state, eps),
        "work": batch_norm_eval_flops(output_shape, preceding_bias=True),
        "resnet_first_conv": batch_norm_eval_flops(RESNET_FIRST_CONV_OUTPUT, preceding_bias=False),
    }


@claim_computation
def folding_witness(seed: int, *, eps: float = FOLD_EPS, updates: int = FOLD_UPDATES) -> dict:
    """Claim ``c16-folding-001``: eval-mode batch norm folded into the layer before it (eq. 16.6).

    Section 16.4, the checks and counts of :func:`folding_experiment`, summarized by
    :func:`folding_summary`:

    - *Linear*: ``W`` of shape (8, 16), the running state from ``updates`` train-mode
      batches (momentum 0.1) of 64 inputs from N(1, 3^2), a test batch of 64 inputs;
      ``batch_norm_eval(linear(X, W, b))`` against ``linear(X, W', b')`` from
      :func:`fold_batch_norm_into_linear`.
    - *Convolution*: ``K`` of shape (8, 3, 3, 3), bias, padding 1, inputs (8, 3, 12, 12)
      from N(0.5, 2^2); otherwise the same with :func:`fold_batch_norm_into_conv2d`.
    - *Work*: :func:`batch_norm_eval_flops` of the convolution's output, (8, 8, 12, 12).

    Returns
    -------
    dict
        For ``linear`` and ``conv2d``: ``max_abs_difference`` and ``max_ratio_to_bound``
        (see :func:`folding_report`). ``work``: ``elementwise`` (eval BN as written),
        ``fused_elementwise``, ``folded_elementwise`` and ``removed_by_folding``.
        ``resnet_first_conv``: ``elementwise`` and ``folded_elementwise`` for the output
        ``RESNET_FIRST_CONV_OUTPUT`` of a convolution without bias.

    Examples
    --------
    >>> result = folding_witness(901883453)
    >>> result["linear"]["max_ratio_to_bound"] <= 1, result["conv2d"]["max_ratio_to_bound"] <= 1
    (True, True)
    >>> result["work"]["elementwise"], result["work"]["folded_elementwise"]
    (36864, 0)
    """
    return folding_summary(folding_experiment(seed, eps=eps, updates=updates))


def _work_fields(work: BatchNormEvalWork, *names: str) -> dict:
    return {name: getattr(work, name) for name in names}


def folding_summary(run: dict) -> dict:
    """The fields of :func:`folding_witness`, from :func:`folding_experiment`.

    Examples
    --------
    >>> folding_summary(folding_experiment(0, updates=2))["work"]["folded_elementwise"]
    0
    """
    return {
        "resnet_first_conv": _work_fields(
            run["resnet_first_conv"], "elementwise", "folded_elementwise"
        ),
        "linear": run["linear"],
        "conv2d": run["conv2d"],
        "work": _work_fields(
            run["work"],
            "elementwise",
            "fused_elementwise",
            "folded_elementwise",
            "removed_by_folding",
        ),
    }
