"""Benchmark: ``streaming_moments`` against ``numpy.var`` on ill-conditioned float64 data.

Run from the repository root (it is not a test; timings are noisy)::

    .venv/bin/python bench/moments.py            # n = 10**5, 10**6, 10**7
    .venv/bin/python bench/moments.py --sizes 1000000 --repeats 7

For each n it draws ``1e8 + N(0, 1)`` (offset 1e8, spread 1; seed 0), and prints one row per
input form: the whole array, and the same values in 10 chunks (a list of arrays). Columns:
the best-of-``repeats`` time of ``streaming_moments`` and of ``numpy.var`` on the same
array, their ratio, and the relative error of each population variance against the exact
one. The exact variance is computed in integer arithmetic: every float64 value is
``k * 2**e`` with integer ``k``, so ``sum x`` and ``sum x**2`` are exact Python integers and
``m2 = (n sum x**2 - (sum x)**2) / n`` is an exact fraction.
"""

from __future__ import annotations

import argparse
import timeit
from fractions import Fraction

import numpy as np

from trainable_harness import streaming_moments


def exact_population_variance(values: np.ndarray) -> Fraction:
    """The population variance of float64 ``values`` as an exact fraction."""
    mantissas, exponents = np.frexp(values)
    integers = (mantissas * 2.0**53).astype(np.int64).tolist()  # exact: 53-bit mantissas
    shifts = (exponents.astype(np.int64) - 53).tolist()
    lowest = min(shifts)
    scaled = [k << (s - lowest) for k, s in zip(integers, shifts, strict=True)]
    n = len(scaled)
    total, total_squares = sum(scaled), sum(k * k for k in scaled)
    return Fraction(n * total_squares - total * total, n * n) * Fraction(2) ** (2 * lowest)


def relative_error(value: float, exact: Fraction) -> float:
    return float(abs(Fraction(float(value)) - exact) / exact)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**5, 10**6, 10**7])
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    header = (
        f"{'n':>10} {'input':>10} {'streaming ms':>13} {'numpy.var ms':>13} {'ratio':>6} "
        f"{'streaming err':>14} {'numpy.var err':>14}"
    )
    print(header)
    print("-" * len(header))
    for n in args.sizes:
        values = 1e8 + np.random.default_rng(0).normal(0.0, 1.0, size=n)
        exact = exact_population_variance(values)
        numpy_time = min(timeit.repeat(lambda v=values: np.var(v), number=1, repeat=args.repeats))
        numpy_error = relative_error(np.var(values), exact)
        forms = {"array": values, f"{args.chunks} chunks": np.array_split(values, args.chunks)}
        for name, chunks in forms.items():
            time = min(
                timeit.repeat(lambda c=chunks: streaming_moments(c), number=1, repeat=args.repeats)
            )
            error = relative_error(streaming_moments(chunks).population_variance, exact)
            print(
                f"{n:>10} {name:>10} {1e3 * time:>13.2f} {1e3 * numpy_time:>13.2f} "
                f"{time / numpy_time:>6.2f} {error:>14.2e} {numpy_error:>14.2e}"
            )


if __name__ == "__main__":
    main()
