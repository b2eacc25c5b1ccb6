"""Running estimates of a drifting distribution: which momentum, against which target.

Chapter 16, worked solution of exercise 2. Batches ``t = 0 .. T-1`` of ``batch_size``
values are drawn from ``N(mu_t, std^2)`` with ``mu_t`` rising linearly from
``start_mean`` to ``end_mean``; a one-channel :class:`~trainable_harness.layers.BatchNormState`
started at mean 0 is updated with each batch by
:func:`~trainable_harness.layers.update_running_statistics` (eq. 16.5, PyTorch's momentum
convention). Two targets are compared with the final running mean:

- the *final* distribution's mean ``end_mean``, what evaluation meets if the data keep
  the last training distribution;
- the *merged* mean of every training value, what one exact pass over the training data
  (section "Train mode, eval mode and the running estimate") would give.

For an exponential average with momentum ``m`` following a mean that rises by ``s`` per
batch, the lag behind the current mean settles at ``s (1 - m) / m`` and the noise has
standard deviation ``std / sqrt(batch_size) * sqrt(m / (2 - m))``; the start value decays
like ``(1 - m)^T``.

Examples
--------
>>> errors = drifting_running_means(seed=0, momenta=(0.1,))
>>> sorted(errors)
['final_error', 'merged_error']
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    DriftSettingError,
    ResultOverflowError,
    check_integer,
    check_real,
    check_seed,
)
from trainable_harness.layers import BatchNormState, update_running_statistics

__all__ = ["DRIFT", "MOMENTA", "drifting_running_means", "lag_and_noise"]

MOMENTA = (0.01, 0.1, 0.3, 0.5)
DRIFT = {"batches": 100, "batch_size": 32, "start_mean": 4.0, "end_mean": 6.0, "std": 2.0}


def drifting_running_means(seed: int, momenta=MOMENTA, **settings) -> dict:
    """Errors of the final running mean against the final and the merged mean, per momentum.

    Parameters
    ----------
    seed : int
        Seed of ``numpy.random.default_rng`` for the batches (shared by every momentum).
    momenta : sequence of float in (0, 1]
    **settings
        Overrides of ``DRIFT`` (``batches``, ``batch_size``, ``start_mean``, ``end_mean``,
        ``std``).

    Returns
    -------
    dict
        ``final_error`` and ``merged_error``: arrays over ``momenta`` of
        ``|running_mean - end_mean|`` and ``|running_mean - merged mean|``.

    Raises
    ------
    DriftSettingError
        An unknown setting, fewer than 2 batches or values per batch, a non-finite mean or
        std, a negative std, or a momentum outside (0, 1].

    Examples
    --------
    >>> errors = drifting_running_means(seed=1, momenta=(0.01, 0.3))
    >>> bool(errors["final_error"][0] > errors["final_error"][1])   # 1% still remembers 0
    True
    """
    s = _settings(settings)
    array = np.asarray(momenta)
    if array.dtype.kind not in "iuf" or array.ndim != 1 or array.size == 0:
        raise DriftSettingError(
            f"momenta must be a non-empty 1-D sequence of numbers in (0, 1], got {momenta!r}"
        )
    momenta = array.astype(np.float64, copy=False)
    if not np.all((momenta > 0) & (momenta <= 1)):
        raise DriftSettingError(f"momenta must lie in (0, 1], got {momenta}")
    rng = np.random.default_rng(check_seed(seed))
    with np.errstate(over="ignore", invalid="ignore"):  # results checked at the end
        means = np.linspace(s["start_mean"], s["end_mean"], int(s["batches"]))
    batches = [rng.normal(mu, s["std"], size=(int(s["batch_size"]), 1)) for mu in means]
    _check_finite_results([means, *batches], s)
    with np.errstate(over="ignore"):  # checked with the results
        merged = float(np.mean(np.concatenate(batches)))
    final, to_merged = [], []
    for momentum in momenta:
        state = BatchNormState.initial(1, momentum=float(momentum))
        for batch in batches:
            state = update_running_statistics(state, batch)
        final.append(abs(float(state.running_mean[0]) - s["end_mean"]))
        to_merged.append(abs(float(state.running_mean[0]) - merged))
    result = {"final_error": np.array(final), "merged_error": np.array(to_merged)}
    _check_finite_results(result.values(), s)
    return result


def _check_finite_results(values, settings: dict) -> None:
    if not all(np.isfinite(value).all() for value in values):
        raise ResultOverflowError(
            "the drift experiment's batches or results are beyond float64's range for the "
            f"settings {settings}; use smaller means and std (or a larger momentum)"
        )


def _settings(settings: dict) -> dict:
    """``DRIFT`` overridden by ``settings``, each checked by name."""
    unknown = set(settings) - set(DRIFT)
    if unknown:
        raise DriftSettingError(f"unknown settings {sorted(unknown)}; known: {sorted(DRIFT)}")
    s = {**DRIFT, **settings}
    for name in ("batches", "batch_size"):
        check_integer(s[name], name, minimum=2, error=DriftSettingError)
    for name in ("start_mean", "end_mean", "std"):
        check_real(s[name], name, error=DriftSettingError)
    if s["std"] < 0:
        raise DriftSettingError(f"std must be >= 0 (a standard deviation), got {s['std']!r}")
    return s


def lag_and_noise(momentum: float, **settings) -> tuple[float, float]:
    """Steady-state lag ``s (1 - m) / m`` and noise ``std sqrt(m / (2 - m)) / sqrt(B)``.

    Parameters
    ----------
    momentum : float in (0, 1]
    **settings
        Overrides of ``DRIFT``, as for :func:`drifting_running_means`.

    Raises
    ------
    DriftSettingError
        An unknown setting (a misspelled name used to be ignored), a momentum outside
        (0, 1], fewer than 2 batches or values per batch, a non-finite mean or std, or a
        negative std.

    Examples
    --------
    >>> lag, noise = lag_and_noise(0.1)
    >>> round(lag, 3), round(noise, 3)
    (0.182, 0.081)
    """
    s = _settings(settings)
    if not 0 < check_real(momentum, "momentum", error=DriftSettingError) <= 1:
        raise DriftSettingError(f"momentum must lie in (0, 1], got {momentum}")
    slope = (s["end_mean"] - s["start_mean"]) / (s["batches"] - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        lag = slope * (1 - momentum) / momentum
        noise = s["std"] / np.sqrt(s["batch_size"]) * np.sqrt(momentum / (2 - momentum))
    _check_finite_results((lag, noise), {**s, "momentum": momentum})
    return float(lag), float(noise)
