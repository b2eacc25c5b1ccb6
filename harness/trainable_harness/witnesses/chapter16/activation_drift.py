"""Section 16.7: what the stories about training dynamics show.

Internal covariate shift measured two ways -- as Ioffe and Szegedy describe it, the change
of the *distribution* of each layer's inputs (per-feature 1-Wasserstein distance between
consecutive steps, in standard deviations), and as Santurkar et al. (2018) define it, the
change of a layer's gradient when the layers before it update (their Definition 2.1) --
and its causal role tested as Santurkar et al. test it: batch norm followed by noise whose
mean and scale change at every step (their Appendix A.2.1, Algorithm 1), at a range of
doses from none to Algorithm 1 as written, including the book's earlier mild noise. The
science is :mod:`trainable_harness.covariate_shift`; this module fixes the experiment and
summarizes one seed.
"""

from __future__ import annotations

from trainable_harness.claimable import claim_computation
from trainable_harness.covariate_shift import ALGORITHM_1, BOOK_MILD_NOISE, train_stack

__all__ = ["ACTIVATION_DRIFT", "DOSES", "NOISES", "activation_drift_witness", "noise_specs"]

# The experiment: hidden layers, width, training examples, the learning rate of full-batch
# gradient descent, the step budget, the first steps over which the distribution shift is
# averaged, the steps at which Definition 2.1 is measured, the target loss as a fraction of
# the label entropy (the loss of the best constant predictor), and the depth of the
# shallower network that tests whether the noise's cost grows with the layers it enters.
ACTIVATION_DRIFT = {
    "depth": 8,
    "width": 32,
    "examples": 128,
    "learning_rate": 0.02,
    "budget": 400,
    "window": 25,
    "probes": (0, 8, 16, 24),
    "target_fraction": 0.5,
    "shallow_depth": 3,
}

# The noisy networks, by name: the book's earlier noise (one draw per unit shared by every
# sample) and Algorithm 1 at a quarter, half and all of its ranges.
DOSES = {"quarter": 0.25, "half": 0.5, "paper": 1.0}
NOISES = ("mild", *DOSES)


def noise_specs():
    """The stack's noise specs: batch norm alone (dose 0), then :data:`NOISES` in order."""
    return [ALGORITHM_1.at_dose(0.0), BOOK_MILD_NOISE] + [
        ALGORITHM_1.at_dose(dose) for dose in DOSES.values()
    ]


def _steps(hit: int, budget: int) -> float:
    """Steps to the target; a miss counts as ``budget + 1``, which can only make the
    slower network look faster."""
    return float(budget + 1 if hit < 0 else hit)


@claim_computation
def activation_drift_witness(seed: int) -> dict:
    """Claim ``c16-activation-drift-001`` (one seed of a set): shift against speed, by dose.

    Section 16.7: :func:`~trainable_harness.covariate_shift.train_stack` for the plain
    network and for the batch-normalized stack (:func:`noise_specs`), with the settings of
    :data:`ACTIVATION_DRIFT`; then batch norm and Algorithm 1 at full dose again at
    ``shallow_depth``.

    Returns
    -------
    dict
        ``shift_ratio.<name>``: the mean per-step distribution shift of network ``name``
        (``batch_norm`` or a noise of :data:`NOISES`) over the plain network's;
        ``speedup.<name>``: the plain network's steps to the target over ``name``'s;
        ``steps_over_batch_norm.<noise>``: the noisy network's steps over batch norm's;
        ``gradient_shift.plain`` and ``gradient_shift.batch_norm``: Definition 2.1 relative
        (``||G - G'|| / ||G||``, mean over probes and layers 2..depth) and its
        ``gradient_shift.ratio`` (batch norm over plain);
        ``shallow.steps_over_batch_norm``: the full-dose noise's steps over batch norm's at
        ``shallow_depth``.
    """
    settings = {k: v for k, v in ACTIVATION_DRIFT.items() if k != "shallow_depth"}
    budget = settings["budget"]
    plain = train_stack(seed, False, **settings)
    stack = train_stack(seed, True, noise_specs(), **settings)
    names = ("batch_norm", *NOISES)
    plain_steps = _steps(plain.steps_to_target[0], budget)
    steps = {n: _steps(h, budget) for n, h in zip(names, stack.steps_to_target, strict=True)}
    shifts = dict(zip(names, stack.shift, strict=True))
    shallow = train_stack(
        seed,
        True,
        [ALGORITHM_1.at_dose(0.0), ALGORITHM_1],
        **{**settings, "depth": ACTIVATION_DRIFT["shallow_depth"], "probes": ()},
    )
    shallow_steps = [_steps(h, budget) for h in shallow.steps_to_target]
    return {
        "shift_ratio": {n: float(shifts[n] / plain.shift[0]) for n in names},
        "speedup": {n: plain_steps / steps[n] for n in names},
        "steps_over_batch_norm": {n: steps[n] / steps["batch_norm"] for n in NOISES},
        "gradient_shift": {
            "plain": float(plain.gradient_shift[0]),
            "batch_norm": float(stack.gradient_shift[0]),
            "ratio": float(stack.gradient_shift[0] / plain.gradient_shift[0]),
        },
        "shallow": {"steps_over_batch_norm": shallow_steps[1] / shallow_steps[0]},
    }
