"""Tests of trainable_harness.witnesses.chapter15.cancellation_matrix."""

import numpy as np

from trainable_harness.witnesses.chapter15.cancellation_matrix import cancellation_matrix_witness


def test_bf16_raw_formula_is_exact_at_ten_where_the_rounding_bound_points():
    """The bound u offset^2 > 0.25 puts BF16's threshold at 8, so it points at 10^1; but
    there every intermediate fits BF16's 8 significant bits and nothing rounds."""
    from trainable_harness.precision import cancellation_row

    assert (0.25 / 2.0**-8) ** 0.5 < 10.0
    assert cancellation_row("bf16", 10.0) == {
        "stored_variance": 2.5,
        "raw": 2.5,
        "centered": 2.5,
    }
    assert cancellation_matrix_witness()["bf16"]["raw_fails"] == 2


def test_the_claim_turns_red_when_bf16_is_not_rounded(monkeypatch):
    """The mistake the BF16 column exists to catch: an emulation that keeps FP32's bits
    (no rounding to 8 significant bits) moves BF16's failures to FP32's offsets."""
    from claimbook.claims import load_claim
    from claimbook.claims.compare import comparisons
    from trainable_harness import precision

    claim = load_claim("c15-cancellation-matrix-001")
    records = comparisons(claim.expect, cancellation_matrix_witness(), statistical=False)
    assert all(record["passed"] for record in records.values())
    from checks.mutate import load_mistakes

    load_mistakes("chapter15").bf16_not_rounded(monkeypatch.setattr)
    assert precision.round_to_bfloat16(np.float32(1 + 2**-10)) == np.float32(1 + 2**-10)
    records = comparisons(claim.expect, cancellation_matrix_witness(), statistical=False)
    failing = {field for field, record in records.items() if not record["passed"]}
    assert {"bf16.raw_fails", "bf16.values_collapse"} <= failing
