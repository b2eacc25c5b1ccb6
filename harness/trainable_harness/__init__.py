"""trainable_harness: the instruments the chapters of *Trainable* import.

Each module is named for what it measures:

- :mod:`trainable_harness.normalization` -- the normalization maps of chapter 15 and their
  exact Jacobians (eqs. 15.1-15.3).
- :mod:`trainable_harness.moments` -- centered moment states, Welford's update, the pairwise
  merge, and the floating-point cancellation witness.
- :mod:`trainable_harness.layers` -- batch, layer, instance and group normalization on
  batches, running statistics, and folding (chapter 16).
- :mod:`trainable_harness.claims` -- the claim registry, ``verify_claim`` and pins.
- :mod:`trainable_harness.witnesses` -- the computations that registered claims call.
- :mod:`trainable_harness.figures` -- saving chapter figures as artifacts.
- :mod:`trainable_harness.paths` -- every path the book uses, in one place.
"""

__version__ = "0.1.0"

# The public names; each module block below appends its own with `__all__ += [...]`.
__all__ = ["__version__"]

# --- normalization.py, moments.py, errors.py (core instruments, issue 2) ---
from trainable_harness.errors import (
    DegenerateNormalizationError,
    DtypeMismatchError,
    EmptyInputError,
    InsufficientCountError,
    InvalidMomentStateError,
    NegativeEpsilonError,
    NonFiniteInputError,
    ShapeError,
    TrainableError,
    UnsupportedDtypeError,
)
from trainable_harness.moments import (
    MomentState,
    merge_moments,
    raw_and_centered_variance,
    stable_online_moments,
)
from trainable_harness.normalization import (
    centered_normalize,
    normalization_jacobian,
    rms_normalize,
)

__all__ += [
    "DegenerateNormalizationError",
    "DtypeMismatchError",
    "EmptyInputError",
    "InsufficientCountError",
    "InvalidMomentStateError",
    "MomentState",
    "NegativeEpsilonError",
    "NonFiniteInputError",
    "ShapeError",
    "TrainableError",
    "UnsupportedDtypeError",
    "centered_normalize",
    "merge_moments",
    "normalization_jacobian",
    "raw_and_centered_variance",
    "rms_normalize",
    "stable_online_moments",
]
# --- end normalization.py, moments.py, errors.py ---

# --- figures.py (saving chapter figures as artifacts) ---
from trainable_harness.figures import (  # noqa: E402
    UnknownFigureError,
    chapter_number,
    figure_number,
    save_figure,
)

__all__ += ["UnknownFigureError", "chapter_number", "figure_number", "save_figure"]
# --- end figures.py ---

# --- claims.py, paths.py (claim registry, verify_claim, pins, artifacts; issue 3) ---
from trainable_harness import paths  # noqa: E402
from trainable_harness.claims import (  # noqa: E402
    badge_state,
    check_artifact,
    claim_seed,
    harness_pin,
    list_claims,
    load_claim,
    verify_claim,
)
from trainable_harness.errors import (  # noqa: E402
    ClaimError,
    ClaimFailedError,
    MissingArtifactError,
    RegistryError,
    StaleArtifactError,
    StalePinError,
    TamperedArtifactError,
    UnknownClaimError,
    WitnessResultError,
)

__all__ += [
    "ClaimError",
    "ClaimFailedError",
    "MissingArtifactError",
    "RegistryError",
    "StaleArtifactError",
    "StalePinError",
    "TamperedArtifactError",
    "UnknownClaimError",
    "WitnessResultError",
    "badge_state",
    "check_artifact",
    "claim_seed",
    "harness_pin",
    "list_claims",
    "load_claim",
    "paths",
    "verify_claim",
]
# --- end claims.py, paths.py ---

# --- layers.py (batch/layer/instance/group norm, running state, folding; issue 5) ---
from trainable_harness.errors import (  # noqa: E402
    AffineShapeError,
    IndivisibleGroupsError,
    MomentumRangeError,
    RunningStateShapeError,
    SingleValuePerChannelError,
    UnknownChoiceError,
    UnsupportedRankError,
    WeightShapeError,
)
from trainable_harness.layers import (  # noqa: E402
    BatchNormEvalWork,
    BatchNormState,
    BatchStatistics,
    apply_normalization,
    batch_norm,
    batch_norm_eval,
    batch_norm_eval_flops,
    batch_norm_train,
    batch_statistics,
    conv2d,
    fold_batch_norm_into_conv2d,
    fold_batch_norm_into_linear,
    group_norm,
    instance_norm,
    layer_norm,
    linear,
    reduction_axes,
    statistic_labels,
    update_running_statistics,
    values_per_statistic,
)

__all__ += [
    "AffineShapeError",
    "BatchNormEvalWork",
    "BatchNormState",
    "BatchStatistics",
    "IndivisibleGroupsError",
    "MomentumRangeError",
    "RunningStateShapeError",
    "SingleValuePerChannelError",
    "UnknownChoiceError",
    "UnsupportedRankError",
    "WeightShapeError",
    "apply_normalization",
    "batch_norm",
    "batch_norm_eval",
    "batch_norm_eval_flops",
    "batch_norm_train",
    "batch_statistics",
    "conv2d",
    "fold_batch_norm_into_conv2d",
    "fold_batch_norm_into_linear",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "linear",
    "reduction_axes",
    "statistic_labels",
    "update_running_statistics",
    "values_per_statistic",
]
# --- end layers.py ---
