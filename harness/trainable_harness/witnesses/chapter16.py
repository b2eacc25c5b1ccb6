"""Chapter 16's claim computations: batch normalization in practice.

Besides the sections on reduction sets, the four equations, running state, folding,
pooled values, residual placement and dynamics, the sections on larger learning rates
(``larger_learning_rates_witness``) and small batches (``small_batch_witness``) and the
worked solution of exercise 1 (``bn_backward_witness``).

Each function decorated with
:func:`~claimbook.claims.computations.claim_computation` computes one claim
``claims/c16-<name>-001.yaml`` with the layers harness, and is named there as
``trainable_harness.witnesses.chapter16.<name>``. A deterministic claim calls it once with
``claim_seed("c16-<name>")``; a statistical claim (a conclusion drawn from randomness) calls
it once per seed of ``claim_seeds("c16-<name>", 10)`` and summarizes each field by its mean
and a 95% interval. The ``*_profiles`` and ``*_traces`` functions return the arrays behind
a witness's fields, so a chapter draws its figures with the same instrument the claim uses.

Three claims refute a common account (their registry files carry ``refutes``):
``c16-train-mode-output-001`` (train mode outputs zeros), ``c16-residual-depth-001``
(post-norm gradients decay like 1/sqrt(L)) and ``c16-activation-drift-001`` (batch norm
keeps the next layer's inputs from moving).
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.errors import UnknownChoiceError
from trainable_harness.layers import (
    BatchNormState,
    apply_normalization,
    batch_norm,
    batch_norm_eval,
    batch_norm_eval_flops,
    batch_norm_train,
    batch_statistics,
    conv2d,
    fold_batch_norm_into_conv2d,
    fold_batch_norm_into_linear,
    linear,
    update_running_statistics,
    values_per_statistic,
)
from trainable_harness.mlp import (
    batch_norm_backward,
    batch_norm_forward,
    learning_rate_sweep,
    probe_along_training,
)
from trainable_harness.moments import merge_moments, stable_online_moments
from trainable_harness.normalization import centered_normalize, normalization_jacobian
from trainable_harness.running_drift import MOMENTA, drifting_running_means
from trainable_harness.small_batch import (
    INDEPENDENT_VARIANCE,
    SHARED_VARIANCE,
    SIDE,
    batch_population_variances,
    draw_activations,
    expected_batch_variance,
    mean_error_theory,
    small_batch_sweep,
)

__all__ = [
    "AUDIT_BATCH_SHAPE",
    "AUDIT_LAYER_EPS",
    "AUDIT_WRONG_EPS",
    "BATCH_VARIANCE_SAMPLES",
    "BATCH_VARIANCE_SIZES",
    "BRANCH_SCALES",
    "BRANCH_SCALE_DEPTH",
    "BRANCH_SCALE_NETWORKS",
    "ONNX_DEFAULT_EPS",
    "ONNX_DEFAULT_MOMENTUM",
    "activation_drift_profiles",
    "activation_drift_witness",
    "batch_dependence_witness",
    "batch_variance_witness",
    "bn_backward_witness",
    "branch_scale_witness",
    "branch_scaled_post_norm_jacobians",
    "drift_momentum_witness",
    "folding_audit_witness",
    "folding_witness",
    "fused_kernel_batch_norm",
    "gains_to_output",
    "identity_recovery_witness",
    "larger_learning_rates_witness",
    "per_feature_moment_shift",
    "per_feature_moment_shifts",
    "predicted_log_gain_per_block",
    "random_relu_network_activations",
    "residual_block_jacobians",
    "residual_depth_witness",
    "residual_gain_profiles",
    "running_estimate_traces",
    "single_value_witness",
    "small_batch_witness",
    "spread_of_batch_means",
    "statistic_spread_profiles",
    "statistic_spread_witness",
    "train_eval_witness",
]

UNIT_ROUNDOFF = 2.0**-53  # u of float64 round-to-nearest
NORMALIZATION_KINDS = ("batch", "layer", "instance", "group")
EMA_MOMENTA = (0.01, 0.1, 0.5)  # slow, PyTorch's default, fast
IDENTITY_BOUND_FACTOR = 32  # rounding units of max|x| the layers tests allow
RESNET_FIRST_CONV_OUTPUT = (1, 64, 112, 112)  # one 224 x 224 image, 64 channels, stride 2


def _momentum_key(momentum: float) -> str:
    """Result-field name of a momentum: 0.01 -> ``"momentum_0_01"``."""
    return "momentum_" + f"{momentum:g}".replace(".", "_")


def _channel_shaped(values: np.ndarray, ndim: int = 4) -> np.ndarray:
    """Line a ``(C,)`` vector up with axis 1 of a rank-``ndim`` batch."""
    return values.reshape((1, -1) + (1,) * (ndim - 2))


@claim_computation
def batch_dependence_witness(
    seed: int, *, shape: tuple[int, int, int, int] = (64, 4, 3, 3), num_groups: int = 2
) -> dict:
    """Claim ``c16-batch-dependence-001``: whose statistics does a sample's output depend on?

    Section 16.1: with ``rng = numpy.random.default_rng(seed)`` draw a batch of ``shape``
    ``(B, C, H, W)`` whose channel ``c`` holds ``offset_c + scale_c * N(0, 1)`` values
    (offsets in [-2, 2], scales in [0.5, 2]), then per-channel ``gamma`` in [0.5, 2] and
    ``beta`` in [-1, 1], then a second set of ``B - 1`` companions from the same
    distribution. Normalize sample 0 three ways, with each of the four layers (eps 1e-5,
    float64; group norm with ``num_groups`` groups): alone (a batch of one), in the batch,
    and with the other companions.

    Returns
    -------
    dict
        ``alone_vs_batch`` with one field per kind (``batch``, ``layer``, ``instance``,
        ``group``): the largest absolute change of sample 0's output between the batch of
        one and the batch of ``B``; and ``other_companions.batch``, the same change for
        batch norm between the two batches of ``B`` that share only sample 0; and
        ``batch_of_one.batch_vs_instance``, the largest difference between batch norm and
        instance norm of sample 0 alone (a batch of one).

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = batch_dependence_witness(claim_seed("c16-batch-dependence"))
    >>> [result["alone_vs_batch"][kind] for kind in ("layer", "instance", "group")]
    [0.0, 0.0, 0.0]
    >>> result["alone_vs_batch"]["batch"] > 0.1
    True
    """
    rng = np.random.default_rng(seed)
    num_channels = shape[1]
    offsets = rng.uniform(-2.0, 2.0, num_channels)
    scales = rng.uniform(0.5, 2.0, num_channels)
    X = _channel_shaped(offsets) + _channel_shaped(scales) * rng.standard_normal(shape)
    gamma = rng.uniform(0.5, 2.0, num_channels)
    beta = rng.uniform(-1.0, 1.0, num_channels)
    companions = _channel_shaped(offsets) + _channel_shaped(scales) * rng.standard_normal(
        (shape[0] - 1, *shape[1:])
    )
    other_batch = np.concatenate([X[:1], companions])

    def sample_zero(kind: str, batch: np.ndarray) -> np.ndarray:
        groups = num_groups if kind == "group" else None
        return apply_normalization(kind, batch, gamma, beta, eps=1e-5, num_groups=groups)[0]

    alone_vs_batch = {
        kind: float(np.max(np.abs(sample_zero(kind, X[:1]) - sample_zero(kind, X))))
        for kind in NORMALIZATION_KINDS
    }
    other = float(np.max(np.abs(sample_zero("batch", other_batch) - sample_zero("batch", X))))
    # A batch of one image: batch norm's sets are then instance norm's (one sample, one
    # channel, all positions), so the two layers compute the same thing.
    one_image = float(np.max(np.abs(sample_zero("batch", X[:1]) - sample_zero("instance", X[:1]))))
    return {
        "alone_vs_batch": alone_vs_batch,
        "other_companions": {"batch": other},
        "batch_of_one": {"batch_vs_instance": one_image},
    }


@claim_computation
def identity_recovery_witness(
    seed: int, *, shape: tuple[int, int, int, int] = (32, 8, 5, 5), eps: float = 1e-5
) -> dict:
    """Claim ``c16-identity-recovery-001``: gamma = sqrt(var + eps), beta = mean give y = x.

    Section 16.2: with ``rng = numpy.random.default_rng(seed)`` draw a batch of ``shape``
    whose channel ``c`` holds ``offset_c + scale_c * N(0, 1)`` values, offsets uniform in
    [-100, 100] and scales log-uniform in [0.01, 10] (data far from standardized). Set
    ``gamma = sqrt(population_variance + eps)`` and ``beta = mean`` per channel from
    :func:`batch_statistics` (eqs. 16.1-16.2) and apply :func:`batch_norm` (eqs. 16.3-16.4).
    Repeat with the *sample* variance in gamma, the convention a reader might copy from a
    framework's running statistics.

    Returns
    -------
    dict
        ``max_abs_error`` (largest ``|y - x|``), ``max_abs_input`` (largest ``|x|``),
        ``rounding_bound`` (``32 u max|x|``, the bound of the layers tests),
        ``error_in_rounding_units`` (``max_abs_error / (u max|x|)`` with ``u = 2^-53``), and
        ``sample_variance_gamma.max_abs_error`` and ``.error_in_rounding_units`` (the same
        with the sample variance in gamma).

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = identity_recovery_witness(claim_seed("c16-identity-recovery"))
    >>> result["error_in_rounding_units"] <= 32
    True
    >>> result["sample_variance_gamma"]["max_abs_error"] > 1e-4
    True
    """
    rng = np.random.default_rng(seed)
    num_channels = shape[1]
    offsets = rng.uniform(-100.0, 100.0, num_channels)
    scales = 10.0 ** rng.uniform(-2.0, 1.0, num_channels)
    X = _channel_shaped(offsets) + _channel_shaped(scales) * rng.standard_normal(shape)
    stats = batch_statistics(X)
    recovered = batch_norm(X, np.sqrt(stats.population_variance + eps), stats.mean, eps=eps)
    with_sample = batch_norm(X, np.sqrt(stats.sample_variance + eps), stats.mean, eps=eps)
    max_abs_error = float(np.max(np.abs(recovered - X)))
    max_abs_input = float(np.max(np.abs(X)))
    sample_error = float(np.max(np.abs(with_sample - X)))
    return {
        "max_abs_error": max_abs_error,
        "max_abs_input": max_abs_input,
        "rounding_bound": IDENTITY_BOUND_FACTOR * UNIT_ROUNDOFF * max_abs_input,
        "error_in_rounding_units": max_abs_error / (UNIT_ROUNDOFF * max_abs_input),
        "sample_variance_gamma": {
            "max_abs_error": sample_error,
            "error_in_rounding_units": sample_error / (UNIT_ROUNDOFF * max_abs_input),
        },
    }


def running_estimate_traces(
    seed: int,
    *,
    batch_count: int = 100,
    batch_size: int = 32,
    momenta: tuple[float, ...] = EMA_MOMENTA,
) -> dict:
    """Exact merged statistics and running estimates after every batch (section 16.3).

    With ``rng = numpy.random.default_rng(seed)`` draw ``batch_count`` batches of
    ``batch_size`` values from N(4, 2^2), one channel, as an array of shape
    ``(batch_count, batch_size, 1)``. After batch ``k`` the *exact* statistics of all values
    seen so far come from merging the per-batch Welford states
    (:func:`stable_online_moments`, :func:`merge_moments`; chapter 15), and for each
    momentum a :class:`BatchNormState` started at mean 0 and variance 1 is updated by eq.
    16.5 with the sample variance (PyTorch's convention).

    Returns
    -------
    dict
        ``batches`` (the draws), ``merged`` (list of the ``batch_count`` merged
        :class:`MomentState` objects), ``running`` (momentum -> array of shape
        ``(batch_count, 2)`` of running mean and variance after each batch) and ``states``
        (momentum -> final :class:`BatchNormState`).

    Examples
    --------
    >>> traces = running_estimate_traces(0, batch_count=3, batch_size=4, momenta=(0.5,))
    >>> traces["running"][0.5].shape, traces["merged"][-1].count
    ((3, 2), 12)
    """
    rng = np.random.default_rng(seed)
    batches = rng.normal(4.0, 2.0, size=(batch_count, batch_size, 1))  # each (B, d=1)
    merged = [stable_online_moments(batches[0].ravel(), dtype=np.float64)]
    for batch in batches[1:]:
        merged.append(
            merge_moments(merged[-1], stable_online_moments(batch.ravel(), dtype=np.float64))
        )
    running, states = {}, {}
    for momentum in momenta:
        state = BatchNormState.initial(1, momentum=momentum, variance_estimator="sample")
        trace = []
        for batch in batches:
            state = update_running_statistics(state, batch)  # eq. 16.5
            trace.append((state.running_mean[0], state.running_variance[0]))
        running[momentum], states[momentum] = np.array(trace), state
    return {"batches": batches, "merged": merged, "running": running, "states": states}


@claim_computation
def train_eval_witness(
    seed: int,
    *,
    batch_count: int = 100,
    batch_size: int = 32,
    momenta: tuple[float, ...] = EMA_MOMENTA,
    eps: float = 1e-5,
) -> dict:
    """Claim ``c16-train-eval-001`` (one seed of a set): running estimates and eval mode.

    Section 16.3. The draws and traces of :func:`running_estimate_traces`; after the last
    batch, each running mean is compared with the merged mean and each running variance with
    the merged sample variance. Then, with the same generator continued, a fresh batch of
    64 values from N(4, 2^2) is normalized in eval mode (:func:`batch_norm_eval`, state of
    momentum 0.1, eps ``eps``) and sample 0's output is compared with that of sample 0
    alone.

    Returns
    -------
    dict
        ``merged.mean`` and ``merged.sample_variance`` (the exact statistics of all
        ``batch_count * batch_size`` values); ``running_mean_gap.<momentum>`` and
        ``running_variance_gap.<momentum>`` (absolute differences from them, keyed like
        ``momentum_0_1``); ``eval_mode.alone_vs_batch`` (largest absolute change); with the
        default momenta, ``mean_gap_over_default.<momentum>``: the mean gap of momentum
        0.01 and 0.5 minus that of PyTorch's default 0.1 (positive: the default is closer).

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = train_eval_witness(claim_seed("c16-train-eval/0"))
    >>> result["eval_mode"]["alone_vs_batch"]
    0.0
    >>> sorted(result["running_mean_gap"])
    ['momentum_0_01', 'momentum_0_1', 'momentum_0_5']
    """
    traces = running_estimate_traces(
        seed, batch_count=batch_count, batch_size=batch_size, momenta=momenta
    )
    merged = traces["merged"][-1]
    mean_gap, variance_gap = {}, {}
    for momentum, state in traces["states"].items():
        key = _momentum_key(momentum)
        mean_gap[key] = float(abs(state.running_mean[0] - merged.mean))
        variance_gap[key] = float(abs(state.running_variance[0] - merged.sample_variance))
    # A fresh generator stream, so the eval batch does not depend on batch_count.
    rng = np.random.default_rng([seed, 1])
    state = traces["states"].get(0.1, traces["states"][momenta[0]])
    fresh = rng.normal(4.0, 2.0, size=(64, 1))
    in_batch = batch_norm_eval(fresh, [1.0], [0.0], state, eps=eps)[0]
    alone = batch_norm_eval(fresh[:1], [1.0], [0.0], state, eps=eps)[0]
    result = {
        "merged": {"mean": float(merged.mean), "sample_variance": float(merged.sample_variance)},
        "running_mean_gap": mean_gap,
        "running_variance_gap": variance_gap,
        "eval_mode": {"alone_vs_batch": float(np.max(np.abs(in_batch - alone)))},
    }
    if set(momenta) == set(EMA_MOMENTA):
        # Paired differences: is the default momentum closer than each of the others?
        default = _momentum_key(0.1)
        result["mean_gap_over_default"] = {
            key: mean_gap[key] - mean_gap[default]
            for key in (_momentum_key(0.01), _momentum_key(0.5))
        }
    return result


SINGLE_VALUE_GAMMA = (2.0, 3.0, 4.0)
SINGLE_VALUE_BETA = (0.5, -1.0, 2.0)


def fused_kernel_batch_norm(X, gamma, beta, *, eps: float = 1e-5) -> np.ndarray:
    """Train-mode batch norm in the order of a fused framework kernel, one rounding per output.

    Per channel: ``s = gamma / sqrt(v + eps)`` and ``t = beta - mean * s`` (each operation
    rounded in float64), then ``y = fma(x, s, t)``: the product and the sum rounded *once*,
    the formulation of PyTorch's CPU kernel. ``fma`` is emulated exactly with
    :class:`fractions.Fraction` (numpy has none). ``X`` of shape ``(B, C)``; mean and
    population variance over axis 0. Not an instrument of the book's layers: it exists to
    show that "the output is exactly beta" depends on whose arithmetic computes it.

    Examples
    --------
    >>> fused_kernel_batch_norm(np.array([[1.0], [3.0]]), [1.0], [0.0], eps=0.0).ravel()
    array([-1.,  1.])
    """
    from fractions import Fraction

    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    variance = ((X - mean) ** 2).mean(axis=0)
    scale = np.asarray(gamma, dtype=np.float64) / np.sqrt(variance + eps)
    shift = np.asarray(beta, dtype=np.float64) - mean * scale
    out = np.empty_like(X)
    for index, x in np.ndenumerate(X):
        c = index[1]
        out[index] = float(Fraction(x) * Fraction(scale[c]) + Fraction(shift[c]))
    return out


@claim_computation
def single_value_witness(seed: int, *, eps: float = 1e-5) -> dict:
    """Claim ``c16-train-mode-output-001``: one value per channel in train mode gives beta.

    Section 16.3, with ``rng = numpy.random.default_rng(seed)``: one sample of three
    channels of N(0, 1000^2) values, ``gamma = (2, 3, 4)``, ``beta = (0.5, -1, 2)``.

    - ``harness``: :func:`batch_norm` subtracts the mean first, and one value is its own
      mean exactly, so its output is beta exactly *in this order of operations*.
    - ``fused_kernel``: :func:`fused_kernel_batch_norm`, the order of a fused kernel, is
      off from beta by the rounding of ``mean s`` and of ``beta - mean s``: the result is
      compared with the first-order bound ``2 u (|x| |s| + |beta|)`` per element
      (u = 2^-53).
    - ``zero_beta``: with beta = 0 the harness output is exactly zero (the only case in
      which "all zeros" holds); ``two_values``: with two samples per channel the outputs
      are ``beta +- |gamma| sqrt(v / (v + eps))``, not beta.

    Returns
    -------
    dict
        ``harness.max_abs_output_minus_beta``, ``harness.min_abs_output``,
        ``fused_kernel.max_abs_output_minus_beta``, ``fused_kernel.max_ratio_to_bound``,
        ``zero_beta.max_abs_output``, ``two_values.min_abs_output_minus_beta``.

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = single_value_witness(claim_seed("c16-train-mode-output"))
    >>> result["harness"]["max_abs_output_minus_beta"], result["zero_beta"]["max_abs_output"]
    (0.0, 0.0)
    >>> result["fused_kernel"]["max_ratio_to_bound"] <= 1.0
    True
    """
    rng = np.random.default_rng(seed)
    single = rng.normal(0.0, 1000.0, size=(1, 3))
    gamma, beta = np.array(SINGLE_VALUE_GAMMA), np.array(SINGLE_VALUE_BETA)
    harness_output = batch_norm(single, gamma, beta, eps=eps)
    kernel_output = fused_kernel_batch_norm(single, gamma, beta, eps=eps)
    scale = gamma / np.sqrt(eps)
    # Rounding of mean * s and of beta - mean * s, then the fma's one rounding near beta.
    bound = 2 * UNIT_ROUNDOFF * (np.abs(single) * np.abs(scale) + np.abs(beta))
    kernel_error = np.abs(kernel_output - beta)
    pair = np.concatenate([single, rng.normal(0.0, 1000.0, size=(1, 3))])
    pair_output = batch_norm(pair, gamma, beta, eps=eps)
    zero_output = batch_norm(single, gamma, np.zeros(3), eps=eps)
    return {
        "harness": {
            "max_abs_output_minus_beta": float(np.max(np.abs(harness_output - beta))),
            "min_abs_output": float(np.min(np.abs(harness_output))),
        },
        "fused_kernel": {
            "max_abs_output_minus_beta": float(np.max(kernel_error)),
            "max_ratio_to_bound": float(np.max(kernel_error / bound)),
        },
        "zero_beta": {"max_abs_output": float(np.max(np.abs(zero_output)))},
        "two_values": {"min_abs_output_minus_beta": float(np.min(np.abs(pair_output - beta)))},
    }


def _trained_state(layer, draw_input, num_channels: int, updates: int) -> BatchNormState:
    """Running state after ``updates`` train-mode batches of ``layer(draw_input())``."""
    state = BatchNormState.initial(num_channels, momentum=0.1)
    gamma, beta = np.ones(num_channels), np.zeros(num_channels)
    for _ in range(updates):
        _, state = batch_norm_train(layer(draw_input()), gamma, beta, state)
    return state


def _folding_report(folded, reference, scale, magnitude, beta, n_terms: int) -> dict:
    """Largest ``|folded - reference|`` and its largest ratio to the rounding bound.

    The bound per output element is ``2 (n_terms + 4) u (|scale| magnitude + |beta|)``: each
    of the two paths sums ``n_terms`` products and adds bias, mean and beta, and every
    operation rounds by at most ``u`` relative to what has been summed (``magnitude`` is the
    sum of the absolute values involved). This is the bound the layers tests use.
    """
    difference = np.abs(folded - reference)
    bound = 2 * (n_terms + 4) * UNIT_ROUNDOFF * (np.abs(scale) * magnitude + np.abs(beta))
    return {
        "max_abs_difference": float(np.max(difference)),
        "max_ratio_to_bound": float(np.max(difference / bound)),
    }


def _conv_fold_case(rng, batch_shape: tuple, updates: int, eps: float):
    """A convolution followed by a batch norm in eval mode, and a checker for its folds.

    The convolution has 8 kernels of shape (3, 3, 3) drawn from N(0, 1/27), a bias from
    N(0, 1) and padding 1; the batch norm's running state comes from ``updates`` train-mode
    batches of shape ``batch_shape`` drawn from N(0.5, 2^2) (:func:`_trained_state`),
    gamma from U(0.5, 2) and beta from N(0, 1). The reference is the unfolded layer in eval
    mode with ``eps`` on a fresh batch. Draws come from ``rng`` in that order.

    Returns
    -------
    (check, state, output_shape)
        ``check(fold_state, fold_eps)`` folds with that state and epsilon and returns
        :func:`_folding_report` against the reference and its rounding bound; ``state``
        is the trained :class:`BatchNormState`; ``output_shape`` the convolution's.
    """
    K = rng.normal(0.0, 1.0 / np.sqrt(27.0), size=(8, 3, 3, 3))
    c = rng.normal(size=8)
    state = _trained_state(
        lambda X: conv2d(X, K, c, padding=1),
        lambda: rng.normal(0.5, 2.0, batch_shape),
        8,
        updates,
    )
    gamma, beta = rng.uniform(0.5, 2.0, 8), rng.normal(size=8)
    X = rng.normal(0.5, 2.0, batch_shape)
    output = conv2d(X, K, c, padding=1)
    reference = batch_norm_eval(output, gamma, beta, state, eps=eps)
    scale = _channel_shaped(gamma / np.sqrt(state.running_variance + eps))
    magnitude = conv2d(np.abs(X), np.abs(K), np.abs(c), padding=1) + _channel_shaped(
        np.abs(state.running_mean)
    )

    def check(fold_state: BatchNormState, fold_eps: float) -> dict:
        K_folded, c_folded = fold_batch_norm_into_conv2d(
            K, c, gamma, beta, fold_state, eps=fold_eps
        )
        return _folding_report(
            conv2d(X, K_folded, c_folded, padding=1),
            reference,
            scale,
            magnitude,
            _channel_shaped(beta),
            n_terms=27,
        )

    return check, state, output.shape


@claim_computation
def folding_witness(seed: int, *, eps: float = 1e-5, updates: int = 50) -> dict:
    """Claim ``c16-folding-001``: eval-mode batch norm folded into the layer before it (eq. 16.6).

    Section 16.4, with ``rng = numpy.random.default_rng(seed)``:

    - *Linear*: ``W`` of shape (8, 16) with N(0, 1/16) entries and bias N(0, 1). The running
      state comes from ``updates`` train-mode batches (momentum 0.1) of 64 inputs drawn
      from N(1, 3^2); then ``gamma`` in [0.5, 2], ``beta`` N(0, 1), and a test batch of 64
      inputs from the same distribution. Compare ``batch_norm_eval(linear(X, W, b))`` with
      ``linear(X, W', b')`` from :func:`fold_batch_norm_into_linear`.
    - *Convolution*: ``K`` of shape (8, 3, 3, 3) with N(0, 1/27) entries, bias, padding 1,
      inputs (8, 3, 12, 12) from N(0.5, 2^2); otherwise the same with
      :func:`fold_batch_norm_into_conv2d`.
    - *Work*: :func:`batch_norm_eval_flops` of the convolution's output, (8, 8, 12, 12).

    Returns
    -------
    dict
        For ``linear`` and ``conv2d``: ``max_abs_difference`` and ``max_ratio_to_bound``
        (see :func:`_folding_report`). ``work``: ``elementwise`` (eval BN as written),
        ``fused_elementwise``, ``folded_elementwise`` and ``removed_by_folding``.
        ``resnet_first_conv``: ``elementwise`` and ``folded_elementwise`` for the output
        ``RESNET_FIRST_CONV_OUTPUT`` of a convolution without bias.

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = folding_witness(claim_seed("c16-folding"))
    >>> result["linear"]["max_ratio_to_bound"] <= 1, result["conv2d"]["max_ratio_to_bound"] <= 1
    (True, True)
    >>> result["work"]["elementwise"], result["work"]["folded_elementwise"]
    (36864, 0)
    """
    rng = np.random.default_rng(seed)

    W = rng.normal(0.0, 1.0 / 4.0, size=(8, 16))
    b = rng.normal(size=8)
    state = _trained_state(
        lambda X: linear(X, W, b), lambda: rng.normal(1.0, 3.0, (64, 16)), 8, updates
    )
    gamma, beta = rng.uniform(0.5, 2.0, 8), rng.normal(size=8)
    X = rng.normal(1.0, 3.0, (64, 16))
    reference = batch_norm_eval(linear(X, W, b), gamma, beta, state, eps=eps)
    W_folded, b_folded = fold_batch_norm_into_linear(W, b, gamma, beta, state, eps=eps)
    scale = gamma / np.sqrt(state.running_variance + eps)
    magnitude = np.abs(X) @ np.abs(W).T + np.abs(b) + np.abs(state.running_mean)
    linear_report = _folding_report(
        linear(X, W_folded, b_folded), reference, scale, magnitude, beta, n_terms=16
    )

    fold_conv, state, output_shape = _conv_fold_case(rng, (8, 3, 12, 12), updates, eps)
    conv_report = fold_conv(state, eps)

    work = batch_norm_eval_flops(output_shape, preceding_bias=True)
    resnet = batch_norm_eval_flops(RESNET_FIRST_CONV_OUTPUT, preceding_bias=False)
    return {
        "resnet_first_conv": {
            "elementwise": resnet.elementwise,
            "folded_elementwise": resnet.folded_elementwise,
        },
        "linear": linear_report,
        "conv2d": conv_report,
        "work": {
            "elementwise": work.elementwise,
            "fused_elementwise": work.fused_elementwise,
            "folded_elementwise": work.folded_elementwise,
            "removed_by_folding": work.removed_by_folding,
        },
    }


SPREAD_BATCH_SIZES = (2, 8, 32)
SPREAD_SIDES = (1, 2, 4, 8)  # H = W
SPREAD_REPEATS = 500  # per seed; ten seeds pool 5000 repeats per configuration


def spread_of_batch_means(
    rng: np.random.Generator,
    batch_size: int,
    side: int,
    *,
    repeats: int,
    sample_std: float,
    pixel_std: float,
) -> tuple[int, float]:
    """Values per statistic and spread of batch norm's per-channel mean over repeated draws.

    Each of ``repeats`` channels is one independent repetition: a batch of shape
    ``(batch_size, repeats, side, side)`` holds ``sample_std * z[b, c] + pixel_std *
    e[b, c, h, w]`` with independent standard normals ``z`` (one per sample and channel,
    shared by its pixels, like an image's overall brightness) and ``e``. Returns
    ``(n, s)``: ``n = values_per_statistic("batch", shape)`` and ``s`` the standard
    deviation (``ddof=1``) of the ``repeats`` per-channel means of :func:`batch_statistics`.

    Theory: ``s^2 = sample_std^2 / B + pixel_std^2 / n`` (section 16.5).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n, s = spread_of_batch_means(rng, 4, 2, repeats=2000, sample_std=0.0, pixel_std=1.0)
    >>> n, bool(abs(s - 1 / 4) < 0.02)
    (16, True)
    """
    shape = (batch_size, repeats, side, side)
    X = sample_std * rng.standard_normal((batch_size, repeats, 1, 1))
    X = X + pixel_std * rng.standard_normal(shape)
    means = batch_statistics(X).mean
    return values_per_statistic("batch", shape), float(np.std(means, ddof=1))


def statistic_spread_profiles(seed: int, *, repeats: int = SPREAD_REPEATS) -> dict:
    """Spreads of a batch norm channel mean for every (batch size, side), both models.

    Section 16.5, with ``rng = numpy.random.default_rng(seed)`` and every (batch size, side)
    of ``SPREAD_BATCH_SIZES x SPREAD_SIDES`` (``n = B H W`` from 2 to 2048 values), in
    this order: first *independent* values (``sample_std = 0``, ``pixel_std = 2``), then
    *correlated* ones (``sample_std = 1``, ``pixel_std = sqrt(3)``, the same total variance
    4), each through :func:`spread_of_batch_means` with ``repeats`` repetitions.

    Returns
    -------
    dict
        ``batch_sizes`` and ``n`` (arrays over the 12 configurations, batch size major),
        ``independent`` and ``correlated`` (the measured spreads) and
        ``independent_theory`` (``2 / sqrt(n)``) and ``correlated_theory``
        (``sqrt(1/B + 3/n)``, eq. 16.7).

    Examples
    --------
    >>> profiles = statistic_spread_profiles(0, repeats=50)
    >>> profiles["n"][[0, -1]].tolist()
    [2.0, 2048.0]
    """
    rng = np.random.default_rng(seed)
    configurations = [(B, side) for B in SPREAD_BATCH_SIZES for side in SPREAD_SIDES]
    independent = [
        spread_of_batch_means(rng, B, side, repeats=repeats, sample_std=0.0, pixel_std=2.0)
        for B, side in configurations
    ]
    correlated = [
        spread_of_batch_means(
            rng, B, side, repeats=repeats, sample_std=1.0, pixel_std=np.sqrt(3.0)
        )
        for B, side in configurations
    ]
    n = np.array([count for count, _ in independent], dtype=float)
    batch_sizes = np.array([B for B, _ in configurations], dtype=float)
    return {
        "batch_sizes": batch_sizes,
        "n": n,
        "independent": np.array([s for _, s in independent]),
        "correlated": np.array([s for _, s in correlated]),
        "independent_theory": 2.0 / np.sqrt(n),
        "correlated_theory": np.sqrt(1.0 / batch_sizes + 3.0 / n),
    }


@claim_computation
def statistic_spread_witness(seed: int, *, repeats: int = SPREAD_REPEATS) -> dict:
    """Claim ``c16-statistic-spread-001`` (one seed of a set): how noisy is a BN channel mean.

    Section 16.5: the spreads of :func:`statistic_spread_profiles`, summarized.

    Returns
    -------
    dict
        ``independent.slope``: least-squares slope of log spread against log n.
        ``independent.mean_ratio_to_theory`` and ``correlated.mean_ratio_to_theory``: the
        measured spread over the theory (``2/sqrt(n)``, ``sqrt(1/B + 3/n)``), averaged
        over the 12 configurations. ``correlated.nominal_values`` and
        ``correlated.effective_values`` at the largest configuration (B = 32, 8 x 8): ``n``
        and ``4 / s^2``, the number of independent values with the same spread.
        ``correlated.spread_smallest_batch`` and ``correlated.spread_largest_batch``: the
        spread at 8 x 8 positions with B = 2 and B = 32.

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = statistic_spread_witness(claim_seed("c16-statistic-spread/0"), repeats=200)
    >>> bool(-0.6 < result["independent"]["slope"] < -0.4)
    True
    """
    profiles = statistic_spread_profiles(seed, repeats=repeats)
    n, spread, correlated = profiles["n"], profiles["independent"], profiles["correlated"]
    slope = np.polyfit(np.log(n), np.log(spread), 1)[0]
    widest = n == n.max()  # B = 32, 8 x 8
    smallest = (profiles["batch_sizes"] == SPREAD_BATCH_SIZES[0]) & (
        n == SPREAD_BATCH_SIZES[0] * SPREAD_SIDES[-1] ** 2
    )
    return {
        "independent": {
            "slope": float(slope),
            "mean_ratio_to_theory": float(np.mean(spread / profiles["independent_theory"])),
        },
        "correlated": {
            "mean_ratio_to_theory": float(np.mean(correlated / profiles["correlated_theory"])),
            "nominal_values": int(n[widest][0]),
            "effective_values": float(4.0 / correlated[widest][0] ** 2),
            "spread_smallest_batch": float(correlated[smallest][0]),
            "spread_largest_batch": float(correlated[widest][0]),
        },
    }


RESIDUAL_DEPTHS = (2, 4, 8, 16, 32, 64)
RESIDUAL_NETWORKS = 8  # random stacks per depth and placement, per seed


def residual_block_jacobians(
    rng: np.random.Generator, depth: int, placement: str, *, width: int = 16, eps: float = 1e-5
) -> list[np.ndarray]:
    """Exact Jacobians of a toy residual stack at initialization, last one the output map.

    Blocks use the centered map ``N`` (eq. 15.1 with eps) and a branch
    ``F(z) = tanh(W z)`` with fresh ``W`` of N(0, 1/width) entries per block; the input is
    N(0, I). ``placement="pre"``: ``x + F(N(x))``, Jacobian ``I + J_F J_N`` (section 15.4),
    followed by a final ``N`` so that the output is normalized as in pre-norm transformers.
    ``placement="post"``: ``N(x + F(x))``, Jacobian ``J_N (I + J_F)``; its output is
    already normalized, so the final map is the identity. Draws: ``depth`` weight matrices,
    then the input.

    Returns
    -------
    list of numpy.ndarray, ``depth + 1`` matrices of shape ``(width, width)``
        The block Jacobians in order, then the final map's.

    Examples
    --------
    >>> jacobians = residual_block_jacobians(np.random.default_rng(0), 3, "pre")
    >>> len(jacobians), jacobians[0].shape
    (4, (16, 16))
    """
    if placement not in ("pre", "post"):
        raise UnknownChoiceError(f"placement must be 'pre' or 'post', got {placement!r}")
    weights = [rng.normal(0.0, 1.0 / np.sqrt(width), (width, width)) for _ in range(depth)]
    x = rng.normal(size=width)
    identity = np.eye(width)
    jacobians = []
    for W in weights:
        if placement == "pre":
            z = centered_normalize(x, eps=eps)
            branch_jacobian = (1.0 - np.tanh(W @ z) ** 2)[:, None] * W
            jacobians.append(
                identity + branch_jacobian @ normalization_jacobian(x, centered=True, eps=eps)
            )
            x = x + np.tanh(W @ z)
        else:
            branch_jacobian = (1.0 - np.tanh(W @ x) ** 2)[:, None] * W
            y = x + np.tanh(W @ x)
            jacobians.append(
                normalization_jacobian(y, centered=True, eps=eps) @ (identity + branch_jacobian)
            )
            x = centered_normalize(y, eps=eps)
    final = normalization_jacobian(x, centered=True, eps=eps) if placement == "pre" else identity
    jacobians.append(final)
    return jacobians


def gains_to_output(jacobians: list[np.ndarray]) -> np.ndarray:
    """RMS gain ``||d out / d x_l||_F / sqrt(width)`` from the input of each block to the output.

    ``jacobians`` as returned by :func:`residual_block_jacobians`; entry ``l`` of the result
    is the gain from the input of block ``l`` (entry 0: the stack's input). The RMS gain is
    the factor by which a random output gradient's norm changes on its way back to ``x_l``.

    Examples
    --------
    >>> gains_to_output([2.0 * np.eye(4), np.eye(4)])
    array([2.])
    """
    width = jacobians[0].shape[0]
    product = jacobians[-1].copy()
    gains = []
    for jacobian in reversed(jacobians[:-1]):
        product = product @ jacobian
        gains.append(np.linalg.norm(product) / np.sqrt(width))
    return np.array(gains[::-1])


def residual_gain_profiles(
    seed: int, *, networks: int = RESIDUAL_NETWORKS, depths: tuple[int, ...] = RESIDUAL_DEPTHS
) -> dict:
    """Mean gain profiles of toy pre- and post-norm stacks, for every depth.

    Section 16.6, with ``rng = numpy.random.default_rng(seed)``: for each depth ``L`` in
    ``depths`` and each placement (pre, then post), draw ``networks`` random toy stacks
    (:func:`residual_block_jacobians`) and average their gain profiles
    (:func:`gains_to_output`).

    Returns
    -------
    dict
        ``{"pre": {L: profile}, "post": {L: profile}}``, each profile an array of ``L``
        mean gains from the input of block ``l`` to the output (entry 0: the stack's input,
        entry ``L - 1``: the last block's input, the *top gain*).

    Examples
    --------
    >>> profiles = residual_gain_profiles(0, networks=2, depths=(2, 4))
    >>> [len(profiles["post"][L]) for L in (2, 4)]
    [2, 4]
    """
    rng = np.random.default_rng(seed)
    profiles = {"pre": {}, "post": {}}
    for depth in depths:
        for placement in ("pre", "post"):
            profiles[placement][depth] = np.mean(
                [
                    gains_to_output(residual_block_jacobians(rng, depth, placement))
                    for _ in range(networks)
                ],
                axis=0,
            )
    return profiles


@claim_computation
def residual_depth_witness(seed: int, *, networks: int = RESIDUAL_NETWORKS) -> dict:
    """Claim ``c16-residual-depth-001`` (one seed of a set): gains of pre- and post-norm stacks.

    Section 16.6: the profiles of :func:`residual_gain_profiles` over ``RESIDUAL_DEPTHS``.
    The *top gain* is the gain from the input of the last block to the output, the *input
    gain* that from the stack's input.

    Returns
    -------
    dict
        For ``pre_norm`` and ``post_norm``: ``top_gain_slope`` (least-squares slope of
        log top gain against log L), ``top_gain.depth_<L>`` for every depth,
        ``input_gain_at_max_depth`` (at L = 64) and ``input_over_top_at_max_depth`` (their
        ratio: above 1 when gradients grow on their way down to the input).

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = residual_depth_witness(claim_seed("c16-residual-depth/0"), networks=4)
    >>> result["pre_norm"]["top_gain_slope"] < -0.3 < result["post_norm"]["top_gain_slope"]
    True
    """
    profiles = residual_gain_profiles(seed, networks=networks)
    result = {}
    for placement in ("pre", "post"):
        top = [profiles[placement][depth][-1] for depth in RESIDUAL_DEPTHS]
        deepest = profiles[placement][RESIDUAL_DEPTHS[-1]]
        slope = np.polyfit(np.log(RESIDUAL_DEPTHS), np.log(top), 1)[0]
        result[f"{placement}_norm"] = {
            "top_gain_slope": float(slope),
            "top_gain": {f"depth_{L}": float(profiles[placement][L][-1]) for L in RESIDUAL_DEPTHS},
            "input_gain_at_max_depth": float(deepest[0]),
            "input_over_top_at_max_depth": float(deepest[0] / deepest[-1]),
        }
    return result


def random_relu_network_activations(
    X: np.ndarray, weights: list[np.ndarray], *, normalize: bool, eps: float = 1e-5
) -> list[np.ndarray]:
    """Pre-activations of a ReLU network, each optionally batch-normalized (no affine).

    Layer ``l`` computes ``z_l = linear(h_{l-1}, W_l)``, replaces it by
    ``batch_norm(z_l, 1, 0, eps)`` when ``normalize``, and passes ``h_l = max(z_l, 0)`` on.
    Returns the (normalized) ``z_l`` of every layer, each of shape ``(B, width)``.

    Examples
    --------
    >>> Z = random_relu_network_activations(np.eye(2), [np.eye(2)] * 2, normalize=False)
    >>> [z.tolist() for z in Z]
    [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]]
    """
    h, activations = X, []
    for W in weights:
        z = linear(h, W)
        if normalize:
            width = z.shape[1]
            z = batch_norm(z, np.ones(width), np.zeros(width), eps=eps)
        activations.append(z)
        h = np.maximum(z, 0.0)
    return activations


def per_feature_moment_shifts(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per feature, ``(|change of mean| + |change of std|) / std before``.

    ``before`` and ``after`` of shape ``(B, width)``; means and population standard
    deviations over axis 0. Invariant to a common affine map ``a x + b`` (``a != 0``)
    applied to both.

    Examples
    --------
    >>> per_feature_moment_shifts(np.array([[0.0], [2.0]]), np.array([[1.0], [3.0]]))
    array([1.])
    """
    std_before = before.std(axis=0)
    mean_change = np.abs(after.mean(axis=0) - before.mean(axis=0))
    std_change = np.abs(after.std(axis=0) - std_before)
    return (mean_change + std_change) / std_before


def per_feature_moment_shift(before: np.ndarray, after: np.ndarray) -> float:
    """Mean over features of :func:`per_feature_moment_shifts`."""
    return float(np.mean(per_feature_moment_shifts(before, after)))


def activation_drift_profiles(
    seed: int,
    *,
    depth: int = 20,
    width: int = 64,
    batch_size: int = 256,
    gain: float = 1.2,
    step: float = 0.02,
    eps: float = 1e-5,
) -> dict:
    """Per-layer scale and drift of a random ReLU network and its perturbed copy.

    Section 16.7, with ``rng = numpy.random.default_rng(seed)``: an input batch
    ``(batch_size, width)`` of N(0, 1) values; ``depth`` weight matrices with N(0,
    2 gain^2 / width) entries (He initialization scaled by ``gain``); ``depth`` direction
    matrices with N(0, 2 / width) entries. The *perturbed* network adds ``step`` times the
    direction to every weight matrix, a stand-in for one small update of all layers. Both
    networks run without and with batch norm on every pre-activation
    (:func:`random_relu_network_activations`).

    Returns
    -------
    dict
        For ``unnormalized`` and ``normalized``, arrays over layers: ``rms`` (RMS of the
        pre-activations), ``moment_shift`` (mean over features of
        :func:`per_feature_moment_shifts`), ``max_feature_moment_shift`` (its largest
        feature) and ``value_change`` (``||Z' - Z|| / ||Z||``).

    Examples
    --------
    >>> profiles = activation_drift_profiles(0, depth=3, width=8, batch_size=16)
    >>> profiles["normalized"]["rms"].shape
    (3,)
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((batch_size, width))
    weights = [rng.normal(0.0, gain * np.sqrt(2.0 / width), (width, width)) for _ in range(depth)]
    directions = [rng.normal(0.0, np.sqrt(2.0 / width), (width, width)) for _ in range(depth)]
    perturbed = [W + step * P for W, P in zip(weights, directions, strict=True)]
    profiles = {}
    for name, normalize in (("unnormalized", False), ("normalized", True)):
        before = random_relu_network_activations(X, weights, normalize=normalize, eps=eps)
        after = random_relu_network_activations(X, perturbed, normalize=normalize, eps=eps)
        shifts = [per_feature_moment_shifts(a, b) for a, b in zip(before, after, strict=True)]
        profiles[name] = {
            "rms": np.array([np.sqrt(np.mean(z * z)) for z in before]),
            "moment_shift": np.array([np.mean(shift) for shift in shifts]),
            "max_feature_moment_shift": np.array([np.max(shift) for shift in shifts]),
            "value_change": np.array(
                [
                    np.linalg.norm(b - a) / np.linalg.norm(a)
                    for a, b in zip(before, after, strict=True)
                ]
            ),
        }
    return profiles


@claim_computation
def activation_drift_witness(seed: int, **settings) -> dict:
    """Claim ``c16-activation-drift-001`` (one seed of a set): what standardization pins.

    Section 16.7: the profiles of :func:`activation_drift_profiles` (``settings`` are
    passed on), reduced over layers.

    Returns
    -------
    dict
        For ``unnormalized`` and ``normalized``: ``scale_growth`` (RMS of the last layer's
        pre-activations over the first's), ``moment_shift`` (the largest over layers of the
        per-feature shift averaged over features), ``max_feature_moment_shift`` (the
        largest over layers and features), and ``value_change`` (at the last layer).
        ``value_change_ratio``: normalized over unnormalized value change at the last layer.

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = activation_drift_witness(claim_seed("c16-activation-drift/0"))
    >>> result["normalized"]["moment_shift"] < 1e-5 < result["unnormalized"]["moment_shift"]
    True
    """
    profiles = activation_drift_profiles(seed, **settings)
    result = {}
    for name, profile in profiles.items():
        result[name] = {
            "scale_growth": float(profile["rms"][-1] / profile["rms"][0]),
            "moment_shift": float(np.max(profile["moment_shift"])),
            "max_feature_moment_shift": float(np.max(profile["max_feature_moment_shift"])),
            "value_change": float(profile["value_change"][-1]),
        }
    unnormalized_change = result["unnormalized"]["value_change"]
    # A zero step moves nothing, and the ratio is then undefined (NaN), not infinite.
    result["value_change_ratio"] = (
        result["normalized"]["value_change"] / unnormalized_change
        if unnormalized_change > 0
        else float("nan")
    )
    return result


# --- learning rates, small batches and the worked solutions -------------------------------


@claim_computation
def larger_learning_rates_witness(seed: int) -> dict:
    """Claim ``c16-larger-learning-rates-001``, one seed: the MLP with and without batch norm.

    :func:`trainable_harness.mlp.learning_rate_sweep` for both networks (grid 1/8 to 64,
    60 full-batch steps, 128 examples) and :func:`trainable_harness.mlp.probe_along_training`
    at lr 0.5. Fields: ``log2_gain_learning`` and ``log2_gain_finite`` (log2 of the ratio
    of the largest learning rates, batch norm over plain), ``log2_largest_learning_plain``,
    ``log2_largest_learning_bn``, ``best_loss_plain``, ``best_loss_bn``, and the ratios
    plain over batch norm of the mean loss variation, gradient change and effective
    smoothness along the gradient.

    Examples
    --------
    >>> result = larger_learning_rates_witness(seed=3)
    >>> result["log2_gain_learning"] >= 1
    True
    """
    sweeps = {bn: learning_rate_sweep(seed, bn) for bn in (False, True)}
    probes = {bn: probe_along_training(seed, bn) for bn in (False, True)}
    plain, bn = sweeps[False], sweeps[True]
    return {
        "log2_largest_learning_plain": float(np.log2(plain.largest_learning)),
        "log2_largest_learning_bn": float(np.log2(bn.largest_learning)),
        "log2_gain_learning": float(np.log2(bn.largest_learning / plain.largest_learning)),
        "log2_gain_finite": float(np.log2(bn.largest_finite / plain.largest_finite)),
        "best_loss_plain": plain.best_loss,
        "best_loss_bn": bn.best_loss,
        "loss_variation_ratio": probes[False].loss_variation / probes[True].loss_variation,
        "gradient_change_ratio": probes[False].gradient_change / probes[True].gradient_change,
        "smoothness_ratio": (
            probes[False].effective_smoothness / probes[True].effective_smoothness
        ),
    }


@claim_computation
def small_batch_witness(seed: int) -> dict:
    """Claim ``c16-small-batch-001``, one seed: batch norm as the batch shrinks.

    From :func:`trainable_harness.small_batch.small_batch_sweep` (B = 1 to 64, 1024
    samples per size, 8 channels of 4 x 4 positions, shared variance 1 of a total 4):

    - ``gap_b1``, ``gap_b64``: RMS train/eval gap of batch norm at B = 1 and 64;
    - ``gap_slope``: least-squares slope of log gap against log B;
    - ``mean_error_max_relative_deviation``: largest relative deviation of the measured
      RMS error of the batch mean from ``sqrt((tau^2 + sigma^2 / HW) / B)``;
    - ``ghost_over_b8``: gap of 64-sample batches normalized in ghost batches of 8 over
      the gap of 8-sample batches;
    - ``renorm_gap_b2``: train/eval gap of batch renormalization (r_max 3, d_max 5) at B = 2;
    - ``sync_max_error``: merged per-device statistics against the whole batch's;
    - group norm with 4 groups of 2 channels (``small_batch.GROUPS``):
      ``group_gap_max``, the largest over the sizes of the RMS difference between the
      first batch normalized whole and its samples normalized one at a time with
      :func:`trainable_harness.layers.group_norm`; ``group_batch_dependence_max``, the
      same for the batch against the batch twice as large that starts with it;
      ``group_distance``, the mean over the sizes of the RMS difference between group
      norm's output and the output with each group's population statistics;
      ``group_distance_slope``, the least-squares slope of its log against log B; and
      ``group_distance_over_gap_b2``, ``group_distance`` over batch norm's gap at B = 2.

    Examples
    --------
    >>> result = small_batch_witness(seed=0)
    >>> result["gap_b1"] > result["gap_b64"]
    True
    >>> result["group_gap_max"], result["group_batch_dependence_max"]
    (0.0, 0.0)
    """
    sweep = small_batch_sweep(seed)
    sizes = sweep["batch_sizes"]
    theory = np.array([mean_error_theory(b) for b in sizes])
    slope = np.polyfit(np.log(sizes), np.log(sweep["gap"]), 1)[0]
    b2 = int(np.flatnonzero(sizes == 2)[0])
    b8 = int(np.flatnonzero(sizes == 8)[0])
    group_distance = sweep["group_distance"]
    group_slope = np.polyfit(np.log(sizes), np.log(group_distance), 1)[0]
    return {
        "gap_b1": float(sweep["gap"][0]),
        "gap_b64": float(sweep["gap"][-1]),
        "gap_slope": float(slope),
        "mean_error_max_relative_deviation": float(
            np.max(np.abs(sweep["mean_error"] / theory - 1.0))
        ),
        "ghost_over_b8": float(sweep["ghost_gap"] / sweep["gap"][b8]),
        "renorm_gap_b2": float(sweep["renorm_gap"][1]),
        "sync_max_error": sweep["sync_max_error"],
        "group_gap_max": float(np.max(sweep["group_gap"])),
        "group_batch_dependence_max": float(np.max(sweep["group_batch_dependence"])),
        "group_distance": float(np.mean(group_distance)),
        "group_distance_slope": float(group_slope),
        "group_distance_over_gap_b2": float(np.mean(group_distance) / sweep["gap"][b2]),
    }


BATCH_VARIANCE_SIZES = (1, 2, 8)  # batch sizes of exercise 3's check
BATCH_VARIANCE_SAMPLES = 1024  # samples drawn per batch size and seed


@claim_computation
def batch_variance_witness(seed: int) -> dict:
    """Claim ``c16-batch-variance-001``, one seed: exercise 3's expected batch variance.

    In the model of :mod:`trainable_harness.small_batch` (shared variance ``tau^2``,
    independent variance ``sigma^2``, ``H W`` positions per sample), draw
    ``BATCH_VARIANCE_SAMPLES`` samples per batch size ``B`` in ``BATCH_VARIANCE_SIZES``
    (``rng = numpy.random.default_rng(seed)``), in batches of ``B``, and take each channel's
    batch population variance (eq. 16.2 over ``m = B H W`` values). Per size, under
    ``b<B>``:

    - ``mean_over_prediction``: the mean of those variances over batches and channels
      divided by :func:`~trainable_harness.small_batch.expected_batch_variance`,
      ``tau^2 (1 - 1/B) + sigma^2 (1 - 1/m)``;
    - ``bessel_over_total``: the same mean times Bessel's ``m / (m - 1)``, divided by the
      population variance ``tau^2 + sigma^2`` it is meant to estimate;
    - ``bessel_over_total_predicted``: what the derivation predicts for it,
      ``m / (m - 1)`` times the expected variance over ``tau^2 + sigma^2`` (at ``B = 1``
      exactly ``sigma^2 / (tau^2 + sigma^2)``).

    Examples
    --------
    >>> result = batch_variance_witness(seed=0)
    >>> result["b1"]["bessel_over_total_predicted"]
    0.75
    >>> abs(result["b8"]["mean_over_prediction"] - 1) < 0.02
    True
    """
    rng = np.random.default_rng(seed)
    total = SHARED_VARIANCE + INDEPENDENT_VARIANCE
    out = {}
    for batch in BATCH_VARIANCE_SIZES:
        X = draw_activations(rng, BATCH_VARIANCE_SAMPLES // batch, batch)
        measured = float(np.mean(batch_population_variances(X)))
        expected = expected_batch_variance(batch)
        bessel = (batch * SIDE**2) / (batch * SIDE**2 - 1)
        out[f"b{batch}"] = {
            "mean_over_prediction": measured / expected,
            "bessel_over_total": bessel * measured / total,
            "bessel_over_total_predicted": bessel * expected / total,
        }
    return out


@claim_computation
def bn_backward_witness(seed: int) -> dict:
    """Claim ``c16-bn-backward-001``: batch norm's backward pass is gamma J_C^T per channel.

    For a batch of 8 values in 3 channels (``default_rng(seed)``), compares
    :func:`trainable_harness.mlp.batch_norm_backward` with
    ``gamma_c * normalization_jacobian(z_c, centered=True, eps).T @ dY_c`` (eq. 15.3 with
    epsilon) at ``eps = 0`` and ``eps = 0.1``, and measures the component of ``dZ`` along
    the centered input (zero at ``eps = 0`` up to rounding; at ``eps > 0`` it is
    ``gamma eps / s^3`` times the upstream's radial component, with
    ``s = sqrt(population_variance + eps)``). Deviations are relative to the largest
    entry of the reference.

    Examples
    --------
    >>> bn_backward_witness(seed=0)["max_deviation_eps0"] < 1e-13
    True
    """
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(8, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    gamma = rng.normal(size=3)
    upstream = rng.normal(size=(8, 3))
    out = {}
    for eps, name in ((0.0, "eps0"), (0.1, "eps")):
        _, cache = batch_norm_forward(Z, gamma, np.zeros(3), eps)
        dZ, _, _ = batch_norm_backward(upstream, cache, gamma)
        reference = np.stack(
            [
                gamma[c]
                * normalization_jacobian(Z[:, c], centered=True, eps=eps).T
                @ upstream[:, c]
                for c in range(3)
            ],
            axis=1,
        )
        scale = np.max(np.abs(reference))
        out[f"max_deviation_{name}"] = float(np.max(np.abs(dZ - reference)) / scale)
        radial = cache.Z_hat / np.linalg.norm(cache.Z_hat, axis=0)
        out[f"radial_component_{name}"] = float(
            np.max(np.abs(np.sum(dZ * radial, axis=0))) / scale
        )
    return out


@claim_computation
def drift_momentum_witness(seed: int) -> dict:
    """Claim ``c16-drift-momentum-001``, one seed: running means under a drifting mean.

    :func:`trainable_harness.running_drift.drifting_running_means` with momenta 1%, 10%,
    30% and 50% (100 batches of 32 from ``N(mu_t, 4)``, ``mu_t`` from 4 to 6): the error
    against the final mean for each momentum (``final_error_1pct`` ...) and the smallest
    error against the merged mean of all training values over the four momenta
    (``merged_error_min``).

    Examples
    --------
    >>> result = drift_momentum_witness(seed=0)
    >>> result["final_error_1pct"] > result["final_error_10pct"]
    True
    """
    errors = drifting_running_means(seed)
    names = [f"final_error_{round(100 * m)}pct" for m in MOMENTA]
    result = {name: float(e) for name, e in zip(names, errors["final_error"], strict=True)}
    result["merged_error_min"] = float(np.min(errors["merged_error"]))
    return result


# --- worked solution of exercise 4: a branch scale in the post-norm toy ----------------------

BRANCH_SCALES = (0.1, 1.0, 3.0)  # lambda in N(x + lambda F(x))
BRANCH_SCALE_DEPTH = 64  # one stack per network; its last k blocks are a stack of depth k
BRANCH_SCALE_NETWORKS = 2  # random stacks per scale and seed
BRANCH_SCALE_NODES = 80  # Gauss-Hermite nodes of the per-block prediction


def branch_scaled_post_norm_jacobians(
    rng: np.random.Generator,
    depth: int,
    branch_scale: float,
    *,
    width: int = 16,
    eps: float = 1e-5,
) -> list[np.ndarray]:
    """Exact block Jacobians of a post-norm toy stack ``N(x + lambda tanh(W x))``.

    The post-norm blocks of :func:`residual_block_jacobians` with the branch multiplied by
    ``branch_scale`` (``lambda``), so block ``l`` has Jacobian
    ``J_N(y_l) (I + lambda diag(tanh'(W_l x_l)) W_l)`` with ``y_l = x_l + lambda tanh(W_l
    x_l)`` and ``x_{l+1} = N(y_l)``; ``N`` is the centered map (eq. 15.1 with ``eps``).
    Unlike that function the input is normalized first, so that every block, the first
    included, reads a normalized vector and the last ``k`` blocks of a stack are
    themselves a stack of depth ``k``. Draws: ``depth`` matrices with N(0, 1/width)
    entries, then the input from N(0, I).

    Returns
    -------
    list of numpy.ndarray
        ``depth`` matrices of shape ``(width, width)``, in forward order.

    Examples
    --------
    >>> jacobians = branch_scaled_post_norm_jacobians(np.random.default_rng(0), 3, 0.5)
    >>> len(jacobians), jacobians[0].shape
    (3, (16, 16))
    """
    weights = [rng.normal(0.0, 1.0 / np.sqrt(width), (width, width)) for _ in range(depth)]
    x = centered_normalize(rng.normal(size=width), eps=eps)
    identity = np.eye(width)
    jacobians = []
    for W in weights:
        branch = np.tanh(W @ x)
        branch_jacobian = (1.0 - branch**2)[:, None] * W
        y = x + branch_scale * branch
        jacobians.append(
            normalization_jacobian(y, centered=True, eps=eps)
            @ (identity + branch_scale * branch_jacobian)
        )
        x = centered_normalize(y, eps=eps)
    return jacobians


def predicted_log_gain_per_block(branch_scale: float) -> float:
    """The per-block comparison of section 16.6 for ``N(x + lambda tanh(W x))``.

    A block's input is normalized, so a branch pre-activation ``z`` is close to N(0, 1).
    The normalization divides by the forward size ``sqrt(1 + lambda^2 E[tanh(z)^2])`` of
    ``x + lambda F(x)``, while a random gradient crossing ``I + lambda J_F`` grows by
    ``sqrt(1 + lambda^2 E[tanh'(z)^2])``. The prediction is the log of their ratio,

        ``0.5 log((1 + lambda^2 E[tanh'(z)^2]) / (1 + lambda^2 E[tanh(z)^2]))``,

    with both expectations by Gauss-Hermite quadrature (``BRANCH_SCALE_NODES`` nodes). It
    leaves out the two directions (constant and radial) that ``J_N`` removes.

    Examples
    --------
    >>> predicted_log_gain_per_block(0.0)
    0.0
    >>> predicted_log_gain_per_block(1.0) > 0  # E[tanh'^2] > E[tanh^2]
    True
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(BRANCH_SCALE_NODES)
    weights = weights / np.sum(weights)
    forward = np.sum(weights * np.tanh(nodes) ** 2)
    backward = np.sum(weights * (1.0 - np.tanh(nodes) ** 2) ** 2)
    lam2 = branch_scale**2
    return float(0.5 * np.log((1.0 + lam2 * backward) / (1.0 + lam2 * forward)))


def _scale_key(branch_scale: float) -> str:
    """``0.1 -> "scale_0p1"``, a field name without a dot."""
    return "scale_" + f"{branch_scale:g}".replace(".", "p")


@claim_computation
def branch_scale_witness(seed: int) -> dict:
    """Claim ``c16-branch-scale-001``, one seed: the post-norm input gain against lambda and L.

    Exercise 4 of chapter 16. With ``rng = numpy.random.default_rng(seed)``, for each
    ``lambda`` in ``BRANCH_SCALES`` draw ``BRANCH_SCALE_NETWORKS`` stacks of depth
    ``BRANCH_SCALE_DEPTH`` (:func:`branch_scaled_post_norm_jacobians`) and take from each
    the gain from the input of every block to the output (:func:`gains_to_output` with the
    identity as the final map). The gain over the last ``L`` blocks is the input gain of a
    stack of depth ``L``; the networks are averaged in log space.

    Returns
    -------
    dict
        Per ``scale_<lambda>``: ``log_gain_per_block`` (least-squares slope of the mean log
        gain against ``L = 1 .. 64``), ``log_input_gain_depth_64`` (the mean log input gain
        of the stacks of depth 64; gains are heavy-tailed, their logs much less so) and
        ``predicted_log_gain_per_block``
        (:func:`predicted_log_gain_per_block`, the same for every seed).

    Examples
    --------
    >>> result = branch_scale_witness(seed=0)
    >>> result["scale_3"]["log_gain_per_block"] > result["scale_0p1"]["log_gain_per_block"]
    True
    """
    rng = np.random.default_rng(seed)
    final = np.eye(16)  # post-norm output is already normalized: the identity (width 16)
    blocks = np.arange(1, BRANCH_SCALE_DEPTH + 1)
    result = {}
    for branch_scale in BRANCH_SCALES:
        stacks = [
            [*branch_scaled_post_norm_jacobians(rng, BRANCH_SCALE_DEPTH, branch_scale), final]
            for _ in range(BRANCH_SCALE_NETWORKS)
        ]
        # gains_to_output lists block 0 (all L blocks) first; reverse to L = 1 .. 64.
        log_gains = np.mean([np.log(gains_to_output(s))[::-1] for s in stacks], axis=0)
        result[_scale_key(branch_scale)] = {
            "log_gain_per_block": float(np.polyfit(blocks, log_gains, 1)[0]),
            "log_input_gain_depth_64": float(log_gains[63]),
            "predicted_log_gain_per_block": predicted_log_gain_per_block(branch_scale),
        }
    return result


# --- worked solution of exercise 5: auditing a fold's conventions ----------------------------

AUDIT_LAYER_EPS = 1e-5  # the trained layer's epsilon (PyTorch's default)
AUDIT_WRONG_EPS = 1e-3  # Keras's default epsilon, assumed by a mismatched fold
# ONNX's BatchNormalization (operator version 15, onnx/defs/nn/defs.cc): the defaults of its
# `epsilon` and `momentum` attributes. Its momentum weights the *old* running value,
# running = running * momentum + batch * (1 - momentum), the opposite of PyTorch's.
ONNX_DEFAULT_EPS = 1e-5
ONNX_DEFAULT_MOMENTUM = 0.9
AUDIT_BATCH_SHAPE = (8, 3, 12, 12)  # inputs of each train-mode batch, as in folding_witness


@claim_computation
def folding_audit_witness(seed: int, *, eps: float = AUDIT_LAYER_EPS, updates: int = 50) -> dict:
    """Claim ``c16-folding-audit-001``: a folded convolution checked against the rounding bound.

    Exercise 5 of chapter 16. The convolution of :func:`folding_witness` (kernel
    (8, 3, 3, 3), padding 1, inputs ``AUDIT_BATCH_SHAPE`` from N(0.5, 2^2), a running state
    from ``updates`` train-mode batches in PyTorch's convention: momentum 0.1, the *sample*
    variance of the ``m = 8 * 12 * 12`` values of a channel enters the running variance,
    ``eps`` of the layer 1e-5). The unfolded eval-mode layer is the reference; three folds
    are compared with it through :func:`_folding_report` (the bound of section 16.4):

    - ``matched``: the fold reads the layer's own ``eps`` and the stored variance as it is,
      the conventions of a conv-then-batch-norm fold such as PyTorch's;
    - ``wrong_eps``: the fold assumes ``AUDIT_WRONG_EPS`` (Keras's default);
    - ``bessel_twice``: the fold takes the stored variance for a population variance and
      multiplies it by ``m / (m - 1)``.

    Returns
    -------
    dict
        For each of the three: ``max_abs_difference`` and ``max_ratio_to_bound``; and
        ``values_per_channel``, the ``m`` of the train-mode batches.

    Examples
    --------
    >>> result = folding_audit_witness(seed=0)
    >>> result["matched"]["max_ratio_to_bound"] <= 1 < result["wrong_eps"]["max_ratio_to_bound"]
    True
    """
    rng = np.random.default_rng(seed)
    check, state, _ = _conv_fold_case(rng, AUDIT_BATCH_SHAPE, updates, eps)
    m = AUDIT_BATCH_SHAPE[0] * AUDIT_BATCH_SHAPE[2] * AUDIT_BATCH_SHAPE[3]
    rescaled = BatchNormState(state.running_mean, state.running_variance * (m / (m - 1)))
    return {
        "values_per_channel": m,
        "matched": check(state, eps),
        "wrong_eps": check(state, AUDIT_WRONG_EPS),
        "bessel_twice": check(rescaled, eps),
    }
