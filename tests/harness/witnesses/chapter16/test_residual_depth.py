"""Tests of trainable_harness.witnesses.chapter16.residual_depth, against finite
differences and gains worked by hand."""

import numpy as np
import pytest
from witness_checks import (
    check_claim_verifies_or_refutes_its_account,
    check_registered_expectations_cover_exactly_the_witness_fields,
    check_statistical_bounds_quote_other_seed_sets,
    registry,
    seed_of,
)

from trainable_harness.errors import UnknownChoiceError
from trainable_harness.witnesses.chapter16.residual_depth import (
    RESIDUAL_DEPTHS,
    gains_to_output,
    residual_block_jacobians,
    residual_depth_witness,
    residual_gain_profiles,
)

CLAIM = "c16-residual-depth-001"


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(CLAIM, residual_depth_witness)


@pytest.mark.claims
@pytest.mark.whole_claim
def test_the_claim_verifies(tmp_path):
    """Xiong et al.'s initialization statements, measured: no account is refuted."""
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)
    assert "refutes" not in registry(CLAIM)


def test_statistical_bounds_quote_other_seed_sets_not_the_registered_one():
    check_statistical_bounds_quote_other_seed_sets(CLAIM)


# The mistake the claim exists to catch (no final normalization) is its registry's catches,
# run by `python -m checks mutate`.


def layer_norm_vector(x, eps=1e-5):
    return (x - x.mean()) / np.sqrt(x.var() + eps)


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_residual_jacobians_match_finite_differences(placement):
    depth, width = 3, 16
    jacobians = residual_block_jacobians(np.random.default_rng(11), depth, placement)
    rng = np.random.default_rng(11)  # redraw the same weights and input, in the same order
    weights = [rng.normal(0, 1 / np.sqrt(width), (width, width)) for _ in range(depth)]
    x0 = rng.normal(size=width)

    def stack(x):
        for W in weights:
            if placement == "pre":
                x = x + np.tanh(W @ layer_norm_vector(x))
            else:
                x = layer_norm_vector(x + np.tanh(W @ x))
        return layer_norm_vector(x) if placement == "pre" else x

    step = 1e-6
    columns = [(stack(x0 + step * e) - stack(x0 - step * e)) / (2 * step) for e in np.eye(width)]
    numeric = np.stack(columns, axis=1)
    exact = jacobians[-1]
    for jacobian in reversed(jacobians[:-1]):
        exact = exact @ jacobian
    # Central differences: truncation ~ step^2, rounding ~ 1e-16 / step = 1e-10.
    assert np.max(np.abs(exact - numeric)) < 1e-7


def test_gains_to_output_by_hand():
    A, B, final = np.diag([2.0, 0.0]), np.diag([1.0, 3.0]), np.eye(2)
    gains = gains_to_output([A, B, final])
    # From block 0's input: ||B A||_F / sqrt(2) = 2 / sqrt(2); from block 1's: ||B||_F / sqrt(2).
    np.testing.assert_allclose(gains, [np.sqrt(2.0), np.sqrt(5.0)], rtol=1e-15)


def test_unknown_placement_is_refused():
    with pytest.raises(UnknownChoiceError, match="'pre' or 'post'"):
        residual_block_jacobians(np.random.default_rng(0), 2, "sandwich")


def test_pre_norm_top_gain_is_one_over_the_stream_norm():
    """The last pre-norm block's gain is dominated by the final normalization's 1/|x_L|."""
    result = residual_depth_witness(seed_of(CLAIM), networks=4)
    assert result["pre_norm"]["top_gain_slope"] < -0.3
    assert abs(result["post_norm"]["top_gain_slope"]) < 0.1


def test_residual_depth_witness_reads_its_profiles():
    seed = seed_of(CLAIM)
    profiles = residual_gain_profiles(seed, networks=2)
    result = residual_depth_witness(seed, networks=2)
    for placement in ("pre", "post"):
        fields = result[f"{placement}_norm"]
        top = [profiles[placement][L][-1] for L in RESIDUAL_DEPTHS]
        assert list(fields["top_gain"].values()) == top
        slope = np.polyfit(np.log(RESIDUAL_DEPTHS), np.log(top), 1)[0]
        assert fields["top_gain_slope"] == slope
        deepest = profiles[placement][RESIDUAL_DEPTHS[-1]]
        assert fields["input_over_top_at_max_depth"] == deepest[0] / deepest[-1]


def test_residual_gain_profiles_depend_on_the_depths_asked_for():
    """Profiles are drawn depth by depth from one generator, so a shorter list of depths
    gives the same first profiles."""
    short = residual_gain_profiles(3, networks=2, depths=(2, 4))
    longer = residual_gain_profiles(3, networks=2, depths=(2, 4, 8))
    for placement in ("pre", "post"):
        np.testing.assert_array_equal(short[placement][4], longer[placement][4])


def test_block_jacobians_equal_the_separate_maps_to_the_last_bit():
    # The blocks take the normalization's value and Jacobian from one pass over the moments;
    # the first version called centered_normalize and normalization_jacobian separately.
    from trainable_harness.normalization import centered_normalize, normalization_jacobian
    from trainable_harness.witnesses.chapter16.residual_depth import (
        RESIDUAL_WIDTH,
        residual_block_jacobians,
    )

    def separate(rng, depth, placement, eps=1e-5, width=RESIDUAL_WIDTH):
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
                    normalization_jacobian(y, centered=True, eps=eps)
                    @ (identity + branch_jacobian)
                )
                x = centered_normalize(y, eps=eps)
        final = (
            normalization_jacobian(x, centered=True, eps=eps) if placement == "pre" else identity
        )
        return [*jacobians, final]

    for seed in range(4):
        for placement in ("pre", "post"):
            fast = residual_block_jacobians(np.random.default_rng(seed), 9, placement)
            slow = separate(np.random.default_rng(seed), 9, placement)
            for a, b in zip(fast, slow, strict=True):
                np.testing.assert_array_equal(a, b)
