"""Section 16.3, first part: running estimates against the exact statistics, and eval mode.

The exponential moving average of eq. 16.5 with three momenta, beside the exact statistics
of everything seen (merged Welford states, chapter 15), and eval mode on a fresh batch.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation, field_name
from trainable_harness.layers import BatchNormState, batch_norm_eval, update_running_statistics
from trainable_harness.moments import merge_moments, stable_online_moments

__all__ = [
    "EMA_BATCH_COUNT",
    "EMA_BATCH_SIZE",
    "EMA_MOMENTA",
    "EMA_POPULATION_MEAN",
    "EMA_POPULATION_STD",
    "EVAL_BATCH_SIZE",
    "PYTORCH_MOMENTUM",
    "estimator_check",
    "momentum_key",
    "running_estimate_traces",
    "running_gaps",
    "train_eval_witness",
]

PYTORCH_MOMENTUM = 0.1  # PyTorch's default: the weight of the new batch
EMA_MOMENTA = (0.01, PYTORCH_MOMENTUM, 0.5)  # slow, PyTorch's default, fast
EMA_BATCH_COUNT, EMA_BATCH_SIZE = 100, 32
EMA_POPULATION_MEAN, EMA_POPULATION_STD = 4.0, 2.0  # one channel of N(4, 2^2) values
EVAL_BATCH_SIZE = 64  # the fresh batch normalized in eval mode


def momentum_key(momentum: float) -> str:
    """Result-field name of a momentum: 0.01 -> ``"momentum_0_01"``.

    Examples
    --------
    >>> momentum_key(PYTORCH_MOMENTUM)
    'momentum_0_1'
    """
    return field_name("momentum", momentum, point="_")


def running_estimate_traces(
    seed: int,
    *,
    batch_count: int = EMA_BATCH_COUNT,
    batch_size: int = EMA_BATCH_SIZE,
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
    batches = rng.normal(  # each (B, d=1)
        EMA_POPULATION_MEAN, EMA_POPULATION_STD, size=(batch_count, batch_size, 1)
    )
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


def running_gaps(traces: dict) -> tuple[dict, dict]:
    """Each final running estimate's distance from the exact statistics of all values.

    From :func:`running_estimate_traces`: ``(mean_gap, variance_gap)``, keyed by
    :func:`momentum_key`, with ``|running mean - merged mean|`` and ``|running variance -
    merged sample variance|`` after the last batch.

    Examples
    --------
    >>> mean_gap, _ = running_gaps(running_estimate_traces(0, batch_count=3))
    >>> sorted(mean_gap)
    ['momentum_0_01', 'momentum_0_1', 'momentum_0_5']
    """
    merged = traces["merged"][-1]
    mean_gap, variance_gap = {}, {}
    for momentum, state in traces["states"].items():
        key = momentum_key(momentum)
        mean_gap[key] = float(abs(state.running_mean[0] - merged.mean))
        variance_gap[key] = float(abs(state.running_variance[0] - merged.sample_variance))
    return mean_gap, variance_gap


def estimator_check(rng: np.random.Generator, batch_size: int = EMA_BATCH_SIZE) -> dict:
    """Which batch variance eq. 16.5 feeds into the running variance, measured directly.

    One batch of ``batch_size`` values from N(4, 2^2); a state started at mean 0 and
    variance 1 (``variance_estimator="sample"``) is updated with it once at momentum 1,
    and 400 times at momentum 0.1 (the start keeps the weight 0.9^400, below 1e-18). Both
    running variances must then be the batch's sample variance (divided by ``m - 1``,
    ``numpy.var(ddof=1)``): the fields are their ratios to it, 1 up to rounding, and
    ``(m - 1) / m`` for a running variance fed the population variance.

    Examples
    --------
    >>> check = estimator_check(np.random.default_rng(0))
    >>> [abs(ratio - 1.0) < 1e-13 for ratio in check.values()]
    [True, True]
    """
    batch = rng.normal(EMA_POPULATION_MEAN, EMA_POPULATION_STD, size=(batch_size, 1))
    sample_variance = float(np.var(batch, ddof=1))
    once = update_running_statistics(
        BatchNormState.initial(1, momentum=1.0, variance_estimator="sample"), batch
    )
    repeated = BatchNormState.initial(1, momentum=0.1, variance_estimator="sample")
    for _ in range(400):
        repeated = update_running_statistics(repeated, batch)
    return {
        "momentum_1_over_sample_variance": float(once.running_variance[0]) / sample_variance,
        "fixed_point_over_sample_variance": float(repeated.running_variance[0]) / sample_variance,
    }


@claim_computation
def train_eval_witness(
    seed: int,
    *,
    batch_count: int = EMA_BATCH_COUNT,
    batch_size: int = EMA_BATCH_SIZE,
    momenta: tuple[float, ...] = EMA_MOMENTA,
    eps: float = 1e-5,
) -> dict:
    """Claim ``c16-train-eval-001`` (one seed of a set): running estimates and eval mode.

    Section 16.3. The draws and traces of :func:`running_estimate_traces`; after the last
    batch, each running mean is compared with the merged mean and each running variance with
    the merged sample variance (:func:`running_gaps`). Then, from a second generator stream
    of the seed, a fresh batch of ``EVAL_BATCH_SIZE`` values from N(4, 2^2) is normalized in
    eval mode (:func:`batch_norm_eval`, state of momentum 0.1, eps ``eps``) and sample 0's
    output is compared with that of sample 0 alone.

    Returns
    -------
    dict
        ``merged.mean`` and ``merged.sample_variance`` (the exact statistics of all
        ``batch_count * batch_size`` values); ``running_mean_gap.<momentum>`` and
        ``running_variance_gap.<momentum>`` (absolute differences from them, keyed like
        ``momentum_0_1``); ``eval_mode.alone_vs_batch`` (largest absolute change); with the
        default momenta, ``mean_gap_over_default.<momentum>``: the mean gap of momentum
        0.01 and 0.5 minus that of PyTorch's default 0.1 (positive: the default is closer);
        ``estimator``: :func:`estimator_check` of a third generator stream.

    Examples
    --------
    >>> result = train_eval_witness(3687714594)
    >>> result["eval_mode"]["alone_vs_batch"]
    0.0
    >>> sorted(result["running_mean_gap"])
    ['momentum_0_01', 'momentum_0_1', 'momentum_0_5']
    """
    traces = running_estimate_traces(
        seed, batch_count=batch_count, batch_size=batch_size, momenta=momenta
    )
    merged = traces["merged"][-1]
    mean_gap, variance_gap = running_gaps(traces)
    # A fresh generator stream, so the eval batch does not depend on batch_count.
    rng = np.random.default_rng([seed, 1])
    state = traces["states"].get(PYTORCH_MOMENTUM, traces["states"][momenta[0]])
    fresh = rng.normal(EMA_POPULATION_MEAN, EMA_POPULATION_STD, size=(EVAL_BATCH_SIZE, 1))
    in_batch = batch_norm_eval(fresh, [1.0], [0.0], state, eps=eps)[0]
    alone = batch_norm_eval(fresh[:1], [1.0], [0.0], state, eps=eps)[0]
    result = {
        "merged": {"mean": float(merged.mean), "sample_variance": float(merged.sample_variance)},
        "running_mean_gap": mean_gap,
        "running_variance_gap": variance_gap,
        "eval_mode": {"alone_vs_batch": float(np.max(np.abs(in_batch - alone)))},
        "estimator": estimator_check(np.random.default_rng([seed, 2]), batch_size),
    }
    if set(momenta) == set(EMA_MOMENTA):
        # Paired differences: is the default momentum closer than each of the others?
        slow, default, fast = (momentum_key(m) for m in EMA_MOMENTA)
        result["mean_gap_over_default"] = {
            key: mean_gap[key] - mean_gap[default] for key in (slow, fast)
        }
    return result
