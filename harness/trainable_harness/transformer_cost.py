"""Work per token of LayerNorm and RMSNorm, counted by running them, against a block's work.

Chapter 15, section "RMSNorm and LayerNorm in Transformers". The two normalizations are
written once against :class:`OpCounter`, which performs every arithmetic operation with
numpy and counts it by kind; the counts are the floating-point operations one token of
width ``d`` costs. The outputs are checked against the harness's own maps (eqs. 15.1 and
15.2) so the counted code is the code that computes the right thing.

Counting conventions: an elementwise operation on ``d`` values counts ``d`` operations;
a sum of ``d`` values counts ``d - 1`` additions; a division of ``d`` values by one scalar
is done as one reciprocal and ``d`` multiplications (what kernels do). A matrix-vector
product with a ``(m, k)`` matrix counts ``2 m k`` (a multiply and an add per entry).

Examples
--------
>>> counts = layer_norm_counts(8)
>>> counts["total"], rms_norm_counts(8)["total"]
(59, 35)
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from trainable_harness.errors import (
    ResultOverflowError,
    ShapeError,
    check_integer,
    check_real_array,
)
from trainable_harness.normalization import centered_normalize, rms_normalize, validated_eps

__all__ = [
    "OpCounter",
    "block_flops_per_token",
    "counted_layer_norm",
    "counted_rms_norm",
    "layer_norm_counts",
    "rms_norm_counts",
]


class OpCounter:
    """Numpy arithmetic that counts what it does: ``counts[kind]`` operations by kind.

    Examples
    --------
    >>> ops = OpCounter()
    >>> float(ops.total(np.ones(4)))
    4.0
    >>> dict(ops.counts)
    {'add': 3}
    """

    def __init__(self) -> None:
        self.counts: Counter = Counter()

    def _count(self, kind: str, result) -> np.ndarray:
        self.counts[kind] += int(np.size(result))
        return result

    def add(self, a, b):
        return self._count("add", np.add(a, b))

    def sub(self, a, b):
        return self._count("add", np.subtract(a, b))

    def mul(self, a, b):
        return self._count("mul", np.multiply(a, b))

    def reciprocal(self, a):
        return self._count("div", np.divide(1.0, a))

    def sqrt(self, a):
        return self._count("sqrt", np.sqrt(a))

    def total(self, v):
        v = np.asarray(v)
        self.counts["add"] += v.size - 1
        return np.sum(v)


def _token(x, name: str) -> np.ndarray:
    """``x`` as one finite token; a floating token keeps its dtype, integers become float64.

    The counted code runs in the token's dtype; in an integer dtype ``x * x`` would wrap
    around silently (``2**40`` squared in int64), so integers are promoted.
    """
    array = check_real_array(x, name, None)
    if array.ndim != 1 or array.size == 0:
        raise ShapeError(f"{name} must be one token, shape (d,) with d >= 1, got {array.shape}")
    return array


def _check_token_args(x, parameters: dict, eps, ops) -> tuple[np.ndarray, float]:
    """Check one token ``x``, per-feature ``parameters`` of its shape, ``eps`` and ``ops``."""
    x = _token(x, "x")
    for name, value in parameters.items():
        if _token(value, name).shape != x.shape:
            raise ShapeError(f"{name} has shape {np.shape(value)}; it must match x {x.shape}")
    if not isinstance(ops, OpCounter):
        raise TypeError(f"ops must be an OpCounter, got {type(ops).__name__}")
    return x, validated_eps(eps)


def _check_statistic(statistic, output, what: str) -> None:
    """Refuse a statistic or an output that left float64's range (the code is unscaled)."""
    if not np.isfinite(statistic) or not np.isfinite(output).all():
        raise ResultOverflowError(
            f"the counted {what} computes as written, without scaling, and its statistic or "
            "output left float64's range (entries beyond about 1e154, or squares below the "
            "normal range with eps = 0); rescale x, or use the harness's maps, which scale"
        )


def counted_layer_norm(x, gamma, beta, eps: float, ops: OpCounter) -> np.ndarray:
    """LayerNorm of one token, two passes: ``gamma (x - mean) / sqrt(var + eps) + beta``.

    Examples
    --------
    >>> ops = OpCounter()
    >>> counted_layer_norm(np.array([1.0, 3.0]), np.ones(2), np.zeros(2), 0.0, ops)
    array([-1.,  1.])
    >>> sum(ops.counts.values())        # 7 d + 3 with d = 2
    17

    Raises
    ------
    ShapeError, UnsupportedDtypeError, NonFiniteInputError, NegativeEpsilonError
        ``x`` not one finite real token, ``gamma``/``beta`` not of its shape, a bad eps.
    ResultOverflowError
        The unscaled statistics or output left float64's range.
    TypeError
        ``ops`` is not an :class:`OpCounter`.
    """
    x, eps = _check_token_args(x, {"gamma": gamma, "beta": beta}, eps, ops)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        d = x.shape[0]
        mean = ops.mul(ops.total(x), 1.0 / d)  # 1/d is a compile-time constant
        centered = ops.sub(x, mean)
        variance = ops.mul(ops.total(ops.mul(centered, centered)), 1.0 / d)
        inv_std = ops.reciprocal(ops.sqrt(ops.add(variance, eps)))
        out = ops.add(ops.mul(ops.mul(centered, inv_std), gamma), beta)
    _check_statistic(variance, out, "LayerNorm")
    return out


def counted_rms_norm(x, gamma, eps: float, ops: OpCounter) -> np.ndarray:
    """RMSNorm of one token, one pass: ``gamma x / sqrt(mean(x^2) + eps)``.

    Examples
    --------
    >>> ops = OpCounter()
    >>> counted_rms_norm(np.array([3.0, 4.0]), np.ones(2), 0.0, ops).round(4)
    array([0.8485, 1.1314])
    >>> sum(ops.counts.values())        # 4 d + 3 with d = 2
    11

    Raises
    ------
    As :func:`counted_layer_norm`.
    """
    x, eps = _check_token_args(x, {"gamma": gamma}, eps, ops)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        d = x.shape[0]
        mean_square = ops.mul(ops.total(ops.mul(x, x)), 1.0 / d)
        inv_rms = ops.reciprocal(ops.sqrt(ops.add(mean_square, eps)))
        out = ops.mul(ops.mul(x, inv_rms), gamma)
    _check_statistic(mean_square, out, "RMSNorm")
    return out


def _check_width(d: int, name: str = "d") -> int:
    return check_integer(d, name, minimum=2, error=ShapeError)


def _summary(ops: OpCounter, reads: int, writes: int, reductions: int) -> dict:
    return {
        **{kind: ops.counts.get(kind, 0) for kind in ("add", "mul", "div", "sqrt")},
        "total": sum(ops.counts.values()),
        "reads": reads,
        "writes": writes,
        "reductions": reductions,
    }


def layer_norm_counts(d: int, eps: float = 1e-5) -> dict:
    """Operations, values read and written, and reductions of LayerNorm on one token.

    Runs :func:`counted_layer_norm` on a random token and checks its output against the
    harness's centered map. Reads ``x``, ``gamma``, ``beta`` (``3 d``), writes ``d``;
    two reductions (the mean, then the centered sum of squares).

    Raises
    ------
    ShapeError
        If ``d`` is not an integer >= 2.

    Examples
    --------
    >>> layer_norm_counts(16)["total"], layer_norm_counts(16)["reductions"]
    (115, 2)
    """
    d = _check_width(d)
    eps = validated_eps(eps)
    rng = np.random.default_rng(d)
    x, gamma, beta = rng.normal(size=(3, d))
    ops = OpCounter()
    out = counted_layer_norm(x, gamma, beta, eps, ops)
    reference = gamma * centered_normalize(x, eps=eps) + beta
    if not np.allclose(out, reference, rtol=1e-12, atol=1e-12):
        raise AssertionError("counted LayerNorm disagrees with the harness's centered map")
    return _summary(ops, reads=3 * d, writes=d, reductions=2)


def rms_norm_counts(d: int, eps: float = 1e-5) -> dict:
    """As :func:`layer_norm_counts` for RMSNorm: reads ``2 d``, writes ``d``, one reduction.

    Examples
    --------
    >>> rms_norm_counts(16)["total"], rms_norm_counts(16)["reductions"]
    (67, 1)
    """
    d = _check_width(d)
    eps = validated_eps(eps)
    rng = np.random.default_rng(d)
    x, gamma = rng.normal(size=(2, d))
    ops = OpCounter()
    out = counted_rms_norm(x, gamma, eps, ops)
    if not np.allclose(out, gamma * rms_normalize(x, eps=eps), rtol=1e-12, atol=1e-12):
        raise AssertionError("counted RMSNorm disagrees with the harness's RMS map")
    return _summary(ops, reads=2 * d, writes=d, reductions=1)


def block_flops_per_token(d: int, hidden: int, context: int) -> dict:
    """Matrix work per token of one LLaMA-style pre-norm block (no bias, SwiGLU MLP).

    ``attention_projections``: ``q, k, v, o``, four ``(d, d)`` matrices, ``8 d^2``;
    ``attention_scores``: ``q . k`` over ``context`` keys and the weighted sum of as many
    values, ``4 d context``; ``mlp``: gate, up and down matrices ``(d, hidden)``,
    ``6 d hidden``. Softmax, rotary embeddings and the gating product are omitted (each
    is ``O(d)`` or ``O(context)`` per token).

    Examples
    --------
    >>> block_flops_per_token(4, 8, 2)["total"]
    352
    """
    d, hidden = _check_width(d), _check_width(hidden, "hidden")
    context = check_integer(context, "context", minimum=1, error=ShapeError)
    parts = {
        "attention_projections": 8 * d * d,
        "attention_scores": 4 * d * context,
        "mlp": 6 * d * hidden,
    }
    return {**parts, "total": sum(parts.values())}
