"""Section 16.7: what the stories about training dynamics show.

A random ReLU network and a copy with every weight moved by a small step, with and without
batch norm on every pre-activation: the scale of each layer, and how far each layer's
inputs move in their moments and in their values.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.layers import batch_norm, linear

__all__ = [
    "ACTIVATION_DRIFT",
    "activation_drift_profiles",
    "activation_drift_witness",
    "per_feature_moment_shift",
    "per_feature_moment_shifts",
    "random_relu_network_activations",
]

# The network of the section: layers, width, batch, the gain over He initialization, and
# the step along a random direction that stands in for one update of all layers.
ACTIVATION_DRIFT = {"depth": 20, "width": 64, "batch_size": 256, "gain": 1.2, "step": 0.02}


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
    """Mean over features of :func:`per_feature_moment_shifts`.

    Examples
    --------
    >>> per_feature_moment_shift(np.array([[0.0], [2.0]]), np.array([[1.0], [3.0]]))
    1.0
    """
    return float(np.mean(per_feature_moment_shifts(before, after)))


def activation_drift_profiles(
    seed: int,
    *,
    depth: int = ACTIVATION_DRIFT["depth"],
    width: int = ACTIVATION_DRIFT["width"],
    batch_size: int = ACTIVATION_DRIFT["batch_size"],
    gain: float = ACTIVATION_DRIFT["gain"],
    step: float = ACTIVATION_DRIFT["step"],
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
