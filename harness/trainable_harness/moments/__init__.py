"""Centered moment states: Welford's update, the pairwise merge, and a cancellation witness.

Chapter 15 reuses the streaming centered statistics of chapter 2 in two places: section
15.2 (raw moments cancel catastrophically, centered ones do not) and section 15.3 (the
running state of batch-coordinate normalization is a merge of per-batch states).

A state holds ``count`` (n), ``mean`` and ``m2 = sum_i (x_i - mean)^2``; the variance
estimators divide ``m2`` by an explicit denominator: ``population_variance = m2 / n``,
``sample_variance = m2 / (n - 1)``. The state remembers its accumulation dtype (the
numpy scalar type of ``mean`` and ``m2``), and states of different dtypes never mix.

Two ways to build a state: :func:`stable_online_moments`, Welford's per-value update in a
Python loop (slow, about 0.3 s per 10**6 values, and kept exactly as it is: the registered
"merged equals direct, bit for bit" result of section 15.3 depends on its rounding), and
:func:`streaming_moments`, vectorised within chunks of an array or a stream of arrays and
merged across them with the same pairwise update as :func:`merge_moments`. Measured by
``bench/moments.py`` on the book's 2-core machine (noisy: other jobs share it), on
``1e8 + N(0, 1)``: 10**7 values take 0.6 to 1.5 times ``numpy.var``'s time (one array or
10 chunks); 10**5 and 10**6 values take 3 to 5 times (``numpy.var`` then runs in cache,
0.1 and 0.8 ms, while the exact split of the squares costs a dozen passes over each
block). Its ``m2`` is correctly rounded on such data (within half an ulp of exact), so the
population variance ``m2/n`` is within two roundings: over seeds its errors are no larger
than ``numpy.var``'s (median 0.4-0.7 u against 0.7-1.1 u for 10**4 to 10**6 values; over 10
seeds of 10**7 values, median 0.49 u for both and largest 1.10 u against 1.95 u).

Modules, one job each (every public name is re-exported here):

- :mod:`~trainable_harness.moments.state` -- :class:`MomentState`;
- :mod:`~trainable_harness.moments.welford` -- Welford's update, :func:`stable_online_moments`;
- :mod:`~trainable_harness.moments.merge` -- the pairwise merge, :func:`merge_moments`;
- :mod:`~trainable_harness.moments.streaming` -- :func:`streaming_moments`;
- :mod:`~trainable_harness.moments.cancellation` -- the cancellation witness,
  :func:`raw_and_centered_variance`;
- :mod:`~trainable_harness.moments.chan` and :mod:`~trainable_harness.moments.checks` --
  Chan's update of count and mean, and the argument checks, that the others share.
"""

from trainable_harness.moments.cancellation import raw_and_centered_variance
from trainable_harness.moments.merge import merge_moments
from trainable_harness.moments.state import MomentState
from trainable_harness.moments.streaming import streaming_moments
from trainable_harness.moments.welford import stable_online_moments

__all__ = [
    "MomentState",
    "merge_moments",
    "raw_and_centered_variance",
    "stable_online_moments",
    "streaming_moments",
]
