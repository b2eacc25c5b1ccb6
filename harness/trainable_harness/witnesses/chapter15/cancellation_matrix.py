"""Worked solution of chapter 15's exercise 2: where each format's variance first fails.

The four-value cancellation example of section 15.2 swept over offsets ``10**k`` and four
floating-point formats, by :mod:`trainable_harness.precision`.
"""

from __future__ import annotations

from trainable_harness.claimable import claim_computation
from trainable_harness.precision import LOG10_OFFSETS, cancellation_table, first_failures

__all__ = ["cancellation_matrix_witness"]


@claim_computation
def cancellation_matrix_witness() -> dict:
    """Claim ``c15-cancellation-matrix-001``: where each format first fails (exercise 2).

    For offsets ``10**k``, ``k`` in ``LOG10_OFFSETS`` (0 to 9), and the values
    ``offset + (-2, -1, 1, 2)`` in FP16, BF16 (emulated), FP32 and FP64: the smallest
    ``k`` at which the stored values' variance, the raw-moment formula or the centered
    formula is off by more than 10% of 2.5 (or is not finite), from
    :func:`trainable_harness.precision.first_failures`; ``"never"`` when none on the grid.

    Examples
    --------
    >>> cancellation_matrix_witness()["fp32"]["raw_fails"]
    4
    """
    found = first_failures(cancellation_table(LOG10_OFFSETS))
    return {
        fmt: {name: "never" if k is None else k for name, k in row.items()}
        for fmt, row in found.items()
    }
