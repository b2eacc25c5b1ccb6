"""The pairwise merge of two moment states (Chan's update): :func:`merge_moments`.

The running state of batch-coordinate normalization (section 15.3) is a merge of
per-batch states; :mod:`~trainable_harness.moments.streaming` merges chunks with the same
update.
"""

from __future__ import annotations

import math

import numpy as np

from trainable_harness.errors import (
    DtypeMismatchError,
    MomentOverflowError,
)
from trainable_harness.moments.chan import _chan_update
from trainable_harness.moments.checks import _check_count_fits
from trainable_harness.moments.state import MomentState
from trainable_harness.moments.welford import stable_online_moments  # noqa: F401 (the doctests use it)

__all__ = ["merge_moments"]


def merge_moments(a: MomentState, b: MomentState) -> MomentState:
    """Pairwise merge of two centered states (Chan, Golub and LeVeque).

    With ``n = n_a + n_b`` and ``delta = mean_b - mean_a``, all in the states' dtype::

        mean = mean_a + delta * n_b / n
        m2   = m2_a + m2_b + delta**2 * n_a * n_b / n

    The correction term ``delta**2 n_a n_b / n`` is non-negative: it is the spread
    between the two groups' means. An empty state is the identity (returned unchanged).

    Parameters
    ----------
    a, b : MomentState
        States accumulated in the same dtype.

    Returns
    -------
    MomentState
        The state of the concatenated streams.

    Where an intermediate of this update overflows the dtype although the result would
    not (``delta * n_b`` or ``delta**2 n_a n_b`` beyond float16's 65504, say), the means
    are divided by a power of two first and the counts enter as the ratios ``n_b / n`` and
    ``n_a n_b / n``; a merge that does not overflow is computed exactly as written above.

    Raises
    ------
    DtypeMismatchError
        If ``a.dtype != b.dtype``: convert one of them explicitly first.
    TypeError
        If an argument is not a :class:`MomentState`.
    CountOverflowError
        If ``a.count + b.count`` exceeds the largest value of the dtype (float16: 65504).
    MomentOverflowError
        If the merged ``m2`` exceeds the largest value of the dtype (the message gives it).

    Examples
    --------
    >>> left = stable_online_moments([1.0, 2.0])
    >>> right = stable_online_moments([3.0, 4.0, 5.0])
    >>> merged = merge_moments(left, right)
    >>> merged.count, float(merged.mean), float(merged.m2)
    (5, 3.0, 10.0)
    >>> merge_moments(MomentState.empty(), right) == right
    True
    """
    for name, state in (("a", a), ("b", b)):
        if not isinstance(state, MomentState):
            raise TypeError(f"{name} must be a MomentState, got {type(state).__name__}")
    if a.dtype != b.dtype:
        raise DtypeMismatchError(
            f"cannot merge a state accumulated in {a.dtype} with one in {b.dtype}; "
            "recompute one of them in the other's dtype"
        )
    if a.count == 0:
        return b
    if b.count == 0:
        return a
    _check_count_fits(
        a.count + b.count, a.dtype, f"a and b together (count {a.count} + {b.count}) hold"
    )
    count, mean, between = _chan_update(a.count, a.mean, b.count, b.mean)
    with np.errstate(over="ignore"):
        m2 = a.m2 + b.m2 + between
    if not np.isfinite(m2):
        raise MomentOverflowError(
            "merging a and b: the merged m2 = m2_a + m2_b + delta**2 n_a n_b / n "
            f"{_merged_m2_text(a, b)} exceeds the largest {a.dtype} "
            f"({np.finfo(a.dtype).max:.4g}); a state in {a.dtype} cannot hold it. Accumulate "
            "in a wider dtype, or divide the values by a power of two first"
        )
    return MomentState(count=count, mean=mean, m2=m2)


def _merged_m2_text(a: MomentState, b: MomentState) -> str:
    """``(about <m2>)`` of the merge of ``a`` and ``b``, in float64, for a message."""
    with np.errstate(over="ignore", invalid="ignore"):
        delta = float(b.mean) - float(a.mean)
        between = delta * delta * (a.count * b.count / (a.count + b.count))
    try:
        exact = math.fsum([float(a.m2), float(b.m2), between])
    except OverflowError:
        exact = math.inf
    return f"(about {exact:.4g})" if math.isfinite(exact) else "(beyond float64's range)"
