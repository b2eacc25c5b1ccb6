"""Worked solution of chapter 16's exercise 1: batch norm's backward pass is gamma J_C^T.

The written-out backward pass of :mod:`trainable_harness.mlp` against the exact Jacobian
of the centered map (eq. 15.3 with epsilon), channel by channel.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.mlp import batch_norm_backward, batch_norm_forward
from trainable_harness.normalization import centered_normalize, normalization_jacobian

__all__ = ["bn_backward_witness"]


@claim_computation
def bn_backward_witness(seed: int) -> dict:
    """Claim ``c16-bn-backward-001``: batch norm's backward pass is gamma J_C^T per channel.

    For a batch of 8 values in 3 channels (``default_rng(seed)``), compares
    :func:`trainable_harness.mlp.batch_norm_backward` with
    ``gamma_c * normalization_jacobian(z_c, centered=True, eps).T @ dY_c`` (eq. 15.3 with
    epsilon) at ``eps = 0`` and ``eps = 0.1``, and measures the component of ``dZ`` along
    the centered input (zero at ``eps = 0`` up to rounding; at ``eps > 0`` it is
    ``gamma eps / s^3`` times the upstream's radial component, with
    ``s = sqrt(population_variance + eps)``). Deviations are relative to the largest
    entry of the reference. ``dgamma_deviation_*`` compares gamma's gradient with
    ``sum_i dY_i z_hat_i`` per channel (``z_hat`` from
    :func:`~trainable_harness.normalization.centered_normalize`), relative to its largest
    entry.

    Examples
    --------
    >>> bn_backward_witness(seed=0)["max_deviation_eps0"] < 1e-13
    True
    """
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(8, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    gamma = rng.normal(size=3)
    upstream = rng.normal(size=(8, 3))
    out = {}
    for eps, name in ((0.0, "eps0"), (0.1, "eps")):
        _, cache = batch_norm_forward(Z, gamma, np.zeros(3), eps)
        dZ, dgamma, _ = batch_norm_backward(upstream, cache, gamma)
        reference = np.stack(
            [
                gamma[c]
                * normalization_jacobian(Z[:, c], centered=True, eps=eps).T
                @ upstream[:, c]
                for c in range(3)
            ],
            axis=1,
        )
        scale = np.max(np.abs(reference))
        out[f"max_deviation_{name}"] = float(np.max(np.abs(dZ - reference)) / scale)
        radial = cache.Z_hat / np.linalg.norm(cache.Z_hat, axis=0)
        out[f"radial_component_{name}"] = float(
            np.max(np.abs(np.sum(dZ * radial, axis=0))) / scale
        )
        # gamma's gradient is sum_i dY_i z_hat_i per channel, z_hat from the forward map of
        # chapter 15 (eq. 15.1 with epsilon), not from the cache under test.
        z_hat = np.stack([centered_normalize(Z[:, c], eps=eps) for c in range(3)], axis=1)
        expected = np.sum(upstream * z_hat, axis=0)
        out[f"dgamma_deviation_{name}"] = float(
            np.max(np.abs(dgamma - expected)) / np.max(np.abs(expected))
        )
    return out
