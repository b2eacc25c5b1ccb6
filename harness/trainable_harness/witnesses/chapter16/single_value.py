"""Section 16.3, second part: one value per channel in train mode.

The value is its own mean, so eq. 16.4 outputs beta: zeros for a fresh layer (beta 0), the
trained beta otherwise, exactly in the layers' order of operations and to within two
roundings in a fused kernel's order.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.layers import batch_norm
from trainable_harness.witnesses.chapter16.identity_recovery import UNIT_ROUNDOFF

__all__ = [
    "SINGLE_VALUE_BETA",
    "SINGLE_VALUE_GAMMA",
    "SINGLE_VALUE_STD",
    "fused_kernel_batch_norm",
    "single_value_outputs",
    "single_value_summary",
    "single_value_witness",
]

SINGLE_VALUE_GAMMA = (2.0, 3.0, 4.0)
SINGLE_VALUE_BETA = (0.5, -1.0, 2.0)
SINGLE_VALUE_STD = 1000.0  # huge values, so a rounding of them is visible against beta


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


def single_value_outputs(seed: int, *, eps: float = 1e-5) -> dict:
    """One sample of three channels in train mode, in two orders of operations.

    With ``rng = numpy.random.default_rng(seed)``: one sample of N(0, 1000^2) values
    (``single``), then a second sample (``pair`` holds both); ``gamma`` and ``beta`` are
    ``SINGLE_VALUE_GAMMA`` and ``SINGLE_VALUE_BETA``.

    Returns
    -------
    dict
        ``single``, ``pair``, ``gamma``, ``beta``; the outputs ``harness``
        (:func:`batch_norm` of ``single``), ``fused_kernel``
        (:func:`fused_kernel_batch_norm` of ``single``), ``fresh_layer`` (:func:`batch_norm`
        of ``single`` with a fresh layer's gamma = 1 and beta = 0) and ``two_values``
        (:func:`batch_norm` of ``pair``).

    Examples
    --------
    >>> outputs = single_value_outputs(0)
    >>> outputs["harness"].tolist() == [list(SINGLE_VALUE_BETA)]
    True
    """
    rng = np.random.default_rng(seed)
    channels = len(SINGLE_VALUE_GAMMA)
    single = rng.normal(0.0, SINGLE_VALUE_STD, size=(1, channels))
    pair = np.concatenate([single, rng.normal(0.0, SINGLE_VALUE_STD, size=(1, channels))])
    gamma, beta = np.array(SINGLE_VALUE_GAMMA), np.array(SINGLE_VALUE_BETA)
    return {
        "single": single,
        "pair": pair,
        "gamma": gamma,
        "beta": beta,
        "harness": batch_norm(single, gamma, beta, eps=eps),
        "fused_kernel": fused_kernel_batch_norm(single, gamma, beta, eps=eps),
        "fresh_layer": batch_norm(single, np.ones(channels), np.zeros(channels), eps=eps),
        "two_values": batch_norm(pair, gamma, beta, eps=eps),
    }


@claim_computation
def single_value_witness(seed: int, *, eps: float = 1e-5) -> dict:
    """Claim ``c16-train-mode-output-001``: one value per channel in train mode gives beta.

    Zeros in the case the common account was reported for (a fresh layer, beta = 0), the
    trained beta otherwise.

    Section 16.3, the outputs of :func:`single_value_outputs`, summarized by
    :func:`single_value_summary`:

    - ``harness``: :func:`batch_norm` subtracts the mean first, and one value is its own
      mean exactly, so its output is beta exactly *in this order of operations*.
    - ``fused_kernel``: :func:`fused_kernel_batch_norm`, the order of a fused kernel, is
      off from beta by the rounding of ``mean s`` and of ``beta - mean s``: the result is
      compared with the first-order bound ``2 u (|x| |s| + |beta|)`` per element
      (u = 2^-53).
    - ``fresh_layer``: with a fresh layer's gamma = 1 and beta = 0 the harness output is
      exactly zero, the account's "all zeros" in its own case; ``two_values``: with two
      samples per channel the outputs are ``beta +- |gamma| sqrt(v / (v + eps))``, not beta.

    Returns
    -------
    dict
        ``harness.max_abs_output_minus_beta``, ``harness.min_abs_output``,
        ``fused_kernel.max_abs_output_minus_beta``, ``fused_kernel.max_ratio_to_bound``,
        ``fresh_layer.max_abs_output``, ``two_values.min_abs_output_minus_beta``.

    Examples
    --------
    >>> result = single_value_witness(31780653)
    >>> result["harness"]["max_abs_output_minus_beta"], result["fresh_layer"]["max_abs_output"]
    (0.0, 0.0)
    >>> result["fused_kernel"]["max_ratio_to_bound"] <= 1.0
    True
    """
    return single_value_summary(single_value_outputs(seed, eps=eps), eps=eps)


def single_value_summary(outputs: dict, *, eps: float = 1e-5) -> dict:
    """The fields of :func:`single_value_witness`, from :func:`single_value_outputs`.

    ``eps`` must be the one the outputs were computed with: it sets the fused kernel's
    scale ``gamma / sqrt(eps)`` and with it the rounding bound.

    Examples
    --------
    >>> single_value_summary(single_value_outputs(0))["fresh_layer"]
    {'max_abs_output': 0.0}
    """
    single, gamma, beta = outputs["single"], outputs["gamma"], outputs["beta"]
    scale = gamma / np.sqrt(eps)
    # Rounding of mean * s and of beta - mean * s, then the fma's one rounding near beta.
    bound = 2 * UNIT_ROUNDOFF * (np.abs(single) * np.abs(scale) + np.abs(beta))
    kernel_error = np.abs(outputs["fused_kernel"] - beta)
    return {
        "harness": {
            "max_abs_output_minus_beta": float(np.max(np.abs(outputs["harness"] - beta))),
            "min_abs_output": float(np.min(np.abs(outputs["harness"]))),
        },
        "fused_kernel": {
            "max_abs_output_minus_beta": float(np.max(kernel_error)),
            "max_ratio_to_bound": float(np.max(kernel_error / bound)),
        },
        "fresh_layer": {"max_abs_output": float(np.max(np.abs(outputs["fresh_layer"])))},
        "two_values": {
            "min_abs_output_minus_beta": float(np.min(np.abs(outputs["two_values"] - beta)))
        },
    }
