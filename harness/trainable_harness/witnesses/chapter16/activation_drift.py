"""Section 16.7: what the stories about training dynamics show.

Internal covariate shift measured as its authors define it, as the change of the
*distribution* of each layer's inputs during training, and its causal role tested as
Santurkar et al. (2018, section 2.1) test it: a network with batch norm, one without, and
one with batch norm followed by noise that moves each feature's distribution at every step
("noisy batch norm"), trained on the same task from the same draw. The shift is the
per-feature 1-Wasserstein distance between a layer's inputs at consecutive steps, in units
of the feature's standard deviation; the speed is the number of steps to a target loss.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.errors import MLPError, check_integer, check_seed
from trainable_harness.mlp.layers import (
    _batch_norm_backward,
    _batch_norm_forward,
    _softmax_cross_entropy,
    _softmax_cross_entropy_backward,
)
from trainable_harness.mlp.sweeps import label_entropy
from trainable_harness.mlp.task import CLASSES, INPUTS, make_teacher_task

__all__ = [
    "ACTIVATION_DRIFT",
    "VARIANTS",
    "activation_drift_witness",
    "covariate_shift_run",
    "per_feature_wasserstein",
]

# The experiment of the section: hidden layers, width, training examples, the learning rate
# of full-batch gradient descent, the step budget, the first steps over which the shift is
# averaged, the noise of noisy batch norm (per step, layer and feature a mean drawn from
# U(-noise_mean, noise_mean) and a scale from U(1, noise_scale)), and the target loss as a
# fraction of the label entropy (the loss of the best constant predictor).
ACTIVATION_DRIFT = {
    "depth": 8,
    "width": 32,
    "examples": 128,
    "learning_rate": 0.01,
    "budget": 600,
    "window": 50,
    "noise_mean": 0.1,
    "noise_scale": 1.1,
    "target_fraction": 0.5,
}

# The three networks, in the order the results list them.
VARIANTS = ("plain", "batch_norm", "noisy_batch_norm")


def per_feature_wasserstein(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per feature, the 1-Wasserstein distance between two samples of equal size.

    ``before`` and ``after`` of shape ``(n, width)``; each column is one feature's sample.
    For two empirical distributions of ``n`` values each the optimal coupling pairs the
    sorted values, so the distance is ``mean_i |sort(before)_i - sort(after)_i|``. It is a
    distance between distributions: it ignores which example produced which value, and it
    is 0 exactly when the two samples hold the same values.

    Examples
    --------
    >>> per_feature_wasserstein(np.array([[0.0], [2.0]]), np.array([[3.0], [1.0]]))
    array([1.])
    """
    return np.mean(np.abs(np.sort(before, axis=0) - np.sort(after, axis=0)), axis=0)


def _shift_in_stds(before: np.ndarray, after: np.ndarray) -> float:
    """Mean over live features of the Wasserstein shift divided by the std ``before``."""
    std = before.std(axis=0)
    live = std > 0.0  # a dead ReLU feature has no distribution to move
    if not live.any():
        return float("nan")
    return float(np.mean(per_feature_wasserstein(before, after)[live] / std[live]))


class _LayerSummary(NamedTuple):
    """Every hidden layer's inputs at one step, stacked: sorted per feature, and their std."""

    sorted_values: np.ndarray  # (depth, n, width), each column sorted
    std: np.ndarray  # (depth, width)


def _summarize_layers(inputs: list[np.ndarray]) -> _LayerSummary:
    """Sort and std of every layer's inputs at once (each step's are summarized once and
    serve as ``after`` for this step's shift and ``before`` for the next one's)."""
    stacked = np.stack(inputs)
    return _LayerSummary(np.sort(stacked, axis=1), stacked.std(axis=1))


def _mean_shift_in_stds(before: _LayerSummary, after: _LayerSummary) -> float:
    """The mean over layers of :func:`_shift_in_stds` (before, after), from summaries.

    The same operations on the same values as the per-layer form (sort and std per column,
    the mean over each layer's live features, the mean over layers), with every layer in
    one array: equal to it to the last bit (``tests/harness/witnesses/chapter16``).
    """
    distance = np.mean(np.abs(before.sorted_values - after.sorted_values), axis=1)
    live = before.std > 0.0  # a dead ReLU feature has no distribution to move
    if live.all():
        per_layer = np.mean(distance / before.std, axis=1)
    else:
        per_layer = np.array(
            [
                np.mean(d[alive] / s[alive]) if alive.any() else np.nan
                for d, s, alive in zip(distance, before.std, live, strict=True)
            ]
        )
    return float(np.mean(per_layer))


def covariate_shift_run(
    seed: int,
    variant: str,
    *,
    depth: int = ACTIVATION_DRIFT["depth"],
    width: int = ACTIVATION_DRIFT["width"],
    examples: int = ACTIVATION_DRIFT["examples"],
    learning_rate: float = ACTIVATION_DRIFT["learning_rate"],
    budget: int = ACTIVATION_DRIFT["budget"],
    window: int = ACTIVATION_DRIFT["window"],
    noise_mean: float = ACTIVATION_DRIFT["noise_mean"],
    noise_scale: float = ACTIVATION_DRIFT["noise_scale"],
    target_fraction: float = ACTIVATION_DRIFT["target_fraction"],
) -> dict:
    """Train one network by full-batch gradient descent and record its inputs' shift.

    Section 16.7. The task is :func:`~trainable_harness.mlp.make_teacher_task` ``(seed,
    examples)``; the network is ``depth`` hidden layers ``linear -> [batch norm] -> [noise]
    -> ReLU`` of ``width`` units and a linear output with softmax cross-entropy, He
    initialized from ``default_rng(seed + 1)`` (the same draw for every variant):

    - ``"plain"``: a bias instead of batch norm;
    - ``"batch_norm"``: train-mode batch norm over the examples (no bias before it);
    - ``"noisy_batch_norm"``: batch norm, then ``s * y + m`` per feature, with ``m`` from
      ``U(-noise_mean, noise_mean)`` and ``s`` from ``U(1, noise_scale)`` drawn afresh at
      every step, layer and feature (``default_rng(seed + 2)``): the distribution each
      later layer receives changes at every step whatever the weights do. The backward pass
      treats the noise as constants; the loss that measures progress is that of the
      network without the noise (the network being trained), as for dropout.

    The *shift* of a step is, averaged over the hidden layers' outputs (the inputs of the
    layers after them) and over their live features, the 1-Wasserstein distance
    (:func:`per_feature_wasserstein`) between the values the layer received at this step and
    at the next, in units of the feature's standard deviation at this step, for the first
    ``window`` steps (every variant is compared over the same steps). Training stops at
    the first step whose loss is at most ``target_fraction`` times the label entropy, but not
    before ``window`` steps, or after ``budget`` steps.

    Returns
    -------
    dict
        ``losses`` (one per step, from step 0), ``shifts`` (one per step of the first
        ``window``),
        ``steps_to_target`` (the first step at or below the target, or ``None``),
        ``target`` and ``label_entropy``.

    Raises
    ------
    MLPError
        An unknown ``variant``, or a ``window`` larger than ``budget``.

    Examples
    --------
    >>> run = covariate_shift_run(0, "batch_norm", depth=2, budget=5, window=5)
    >>> len(run["losses"]), len(run["shifts"])
    (6, 5)
    """
    if variant not in VARIANTS:
        raise MLPError(f"variant must be one of {VARIANTS}, got {variant!r}")
    seed = check_seed(seed)
    depth = check_integer(depth, "depth", minimum=1, error=MLPError)
    budget = check_integer(budget, "budget", minimum=1, error=MLPError)
    window = check_integer(window, "window", minimum=1, error=MLPError)
    if window > budget:
        raise MLPError(f"window ({window}) must not exceed budget ({budget})")
    task = make_teacher_task(seed, n=examples)
    entropy = label_entropy(task.labels)
    target = target_fraction * entropy
    rng = np.random.default_rng(seed + 1)
    sizes = [INPUTS] + [width] * depth
    weights = [rng.normal(0.0, np.sqrt(2.0 / sizes[k]), (sizes[k], width)) for k in range(depth)]
    w_out = rng.normal(0.0, np.sqrt(2.0 / width), (width, CLASSES))
    b_out = np.zeros(CLASSES)
    normalize = variant != "plain"
    shifts_b = [np.zeros(width) for _ in range(depth)]  # bias, or batch norm's beta
    gammas = [np.ones(width) for _ in range(depth)]
    noise_rng = np.random.default_rng(seed + 2)

    def forward(noise):
        H, caches, inputs = task.X, [], []
        for k in range(depth):
            Z = H @ weights[k]
            cache = None
            if normalize:
                Y, cache = _batch_norm_forward(Z, gammas[k], shifts_b[k])
                if noise is not None:
                    Y = noise[0][k] * Y + noise[1][k]
            else:
                Y = Z + shifts_b[k]
            caches.append((H, Y, cache))
            H = np.maximum(Y, 0.0)
            inputs.append(H)
        return H @ w_out + b_out, caches, inputs

    losses, shifts, previous, hit = [], [], None, None
    for t in range(budget + 1):
        noise = None
        if variant == "noisy_batch_norm":
            scale = noise_rng.uniform(1.0, noise_scale, (depth, width))
            offset = noise_rng.uniform(-noise_mean, noise_mean, (depth, width))
            noise = (scale, offset)
        logits, caches, inputs = forward(noise)
        loss = _softmax_cross_entropy(logits, task.labels)
        clean = loss if noise is None else _softmax_cross_entropy(forward(None)[0], task.labels)
        losses.append(float(clean))
        if t <= window:  # the shift is measured over the first window steps only
            summary = _summarize_layers(inputs)
            if previous is not None:
                shifts.append(_mean_shift_in_stds(previous, summary))
            previous = summary
        if hit is None and clean <= target:
            hit = t
        if t == budget or (hit is not None and t >= window):
            break
        d_logits = _softmax_cross_entropy_backward(logits, task.labels)
        H_last = inputs[-1]
        grad_w_out, grad_b_out = H_last.T @ d_logits, d_logits.sum(axis=0)
        dH = d_logits @ w_out.T
        for k in reversed(range(depth)):
            H_in, Y, cache = caches[k]
            dY = dH * (Y > 0.0)
            if noise is not None:
                dY = dY * noise[0][k]
            if normalize:
                dZ, d_gamma, d_shift = _batch_norm_backward(dY, cache, gammas[k])
                gammas[k] = gammas[k] - learning_rate * d_gamma
            else:
                dZ, d_shift = dY, dY.sum(axis=0)
            if k > 0:  # the first layer's input is the data: no gradient to pass on
                dH = dZ @ weights[k].T
            weights[k] = weights[k] - learning_rate * (H_in.T @ dZ)
            shifts_b[k] = shifts_b[k] - learning_rate * d_shift
        w_out = w_out - learning_rate * grad_w_out
        b_out = b_out - learning_rate * grad_b_out
    return {
        "losses": np.array(losses),
        "shifts": np.array(shifts),
        "steps_to_target": hit,
        "target": float(target),
        "label_entropy": float(entropy),
    }


@claim_computation
def activation_drift_witness(seed: int, **settings) -> dict:
    """Claim ``c16-activation-drift-001`` (one seed of a set): shift against speed.

    Section 16.7: :func:`covariate_shift_run` for each variant (``settings`` are passed
    on). A run that misses the target within the budget counts as taking ``budget + 1``
    steps, which can only make the slower network look faster.

    Returns
    -------
    dict
        Per variant: ``shift`` (the mean per-step shift over the first ``window`` steps)
        and ``steps`` (steps to the target). Ratios: ``shift_ratio.batch_norm`` and
        ``shift_ratio.noisy_batch_norm`` (each over the plain network's shift),
        ``speedup.batch_norm`` and ``speedup.noisy_batch_norm`` (the plain network's steps
        over theirs) and ``noisy_steps_over_batch_norm``.

    Examples
    --------
    >>> result = activation_drift_witness(0, depth=2, budget=20, window=5)
    >>> sorted(result)[:2]
    ['batch_norm', 'noisy_batch_norm']
    """
    budget = settings.get("budget", ACTIVATION_DRIFT["budget"])
    result = {}
    for variant in VARIANTS:
        run = covariate_shift_run(seed, variant, **settings)
        steps = run["steps_to_target"]
        result[variant] = {
            "shift": float(np.mean(run["shifts"])),
            "steps": float(budget + 1 if steps is None else steps),
        }
    plain = result["plain"]
    result["shift_ratio"] = {name: result[name]["shift"] / plain["shift"] for name in VARIANTS[1:]}
    result["speedup"] = {name: plain["steps"] / result[name]["steps"] for name in VARIANTS[1:]}
    result["noisy_steps_over_batch_norm"] = (
        result["noisy_batch_norm"]["steps"] / result["batch_norm"]["steps"]
    )
    return result
