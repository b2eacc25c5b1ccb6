"""Benchmark: ``streaming_moments`` against ``numpy.var`` on ill-conditioned float64 data.

Run from the repository root (it is not a test; timings are noisy)::

    .venv/bin/python bench/moments.py            # n = 10**5, 10**6, 10**7
    .venv/bin/python bench/moments.py --sizes 1000000 --repeats 7

For each n it draws ``1e8 + N(0, 1)`` (offset 1e8, spread 1) with seeds 0, 1, ... and prints
one row per input form: the whole array, and the same values in 10 chunks (a list of
arrays). Columns: the best-of-``repeats`` time of ``streaming_moments`` and of ``numpy.var``
on the seed-0 array, their ratio, and the median / largest relative error over the seeds of
each population variance against the exact one, in units of ``u = 2**-53`` (a correctly
rounded m2 followed by the rounded division m2/n is within 2 u). Both are rounding-level;
the comparison is over seeds, not one draw. The exact variance is computed in integer
arithmetic: every float64 value is
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


UNIT_ROUNDOFF = 2.0**-53


def error_in_u(value: float, exact: Fraction) -> float:
    """Relative error of ``value`` in units of the float64 unit roundoff ``u = 2**-53``."""
    return float(abs(Fraction(float(value)) - exact) / exact) / UNIT_ROUNDOFF


def draw(n: int, seed: int) -> np.ndarray:
    return 1e8 + np.random.default_rng(seed).normal(0.0, 1.0, size=n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**5, 10**6, 10**7])
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    header = (
        f"{'n':>10} {'input':>10} {'streaming ms':>13} {'numpy.var ms':>13} {'ratio':>6} "
        f"{'streaming err (u)':>18} {'numpy.var err (u)':>18}"
    )
    print(header)
    print("-" * len(header))
    for n in args.sizes:
        draws = [draw(n, seed) for seed in range(args.seeds)]
        exact = [exact_population_variance(values) for values in draws]
        numpy_time = min(
            timeit.repeat(lambda v=draws[0]: np.var(v), number=1, repeat=args.repeats)
        )
        numpy_errors = [error_in_u(np.var(v), e) for v, e in zip(draws, exact, strict=True)]
        for name in ("array", f"{args.chunks} chunks"):

            def form(values, name=name):
                return values if name == "array" else np.array_split(values, args.chunks)

            timed = form(draws[0])
            time = min(
                timeit.repeat(lambda c=timed: streaming_moments(c), number=1, repeat=args.repeats)
            )
            errors = [
                error_in_u(streaming_moments(form(v)).population_variance, e)
                for v, e in zip(draws, exact, strict=True)
            ]
            print(
                f"{n:>10} {name:>10} {1e3 * time:>13.2f} {1e3 * numpy_time:>13.2f} "
                f"{time / numpy_time:>6.2f} {summary(errors):>18} {summary(numpy_errors):>18}"
            )


def summary(errors: list[float]) -> str:
    """``median / max`` of relative errors in units of u."""
    return f"{np.median(errors):.2f} / {max(errors):.2f}"


if __name__ == "__main__":
    main()
