"""Central differences, the reference of the backward-pass tests of trainable_harness.mlp."""

import numpy as np

STEP = 1e-6
# Central differences: truncation ~ STEP^2 = 1e-12 times a third derivative of order one,
# rounding ~ 1e-16 / STEP = 1e-10 times the function's size. A wrong term in a backward
# pass is of the size of the gradient itself (>= 1e-3 here), so 1e-7 separates the two.
FD_TOL = 1e-7


def numeric_gradient(f, x):
    """Naive reference: perturb one entry at a time of a copy of x."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += STEP
        minus[index] -= STEP
        grad[index] = (f(plus) - f(minus)) / (2 * STEP)
    return grad
