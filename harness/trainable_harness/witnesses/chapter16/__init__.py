"""Chapter 16's claim computations, one module per section or worked solution.

Sections: :mod:`.batch_dependence` (which values share a statistic),
:mod:`.identity_recovery` (the four equations and the identity inside them),
:mod:`.running_estimates` and :mod:`.single_value` (train mode, eval mode and the running
estimate), :mod:`.folding`, :mod:`.statistic_spread` (how many values a statistic sees),
:mod:`.residual_depth`, :mod:`.activation_drift` (the stories about training dynamics),
:mod:`.learning_rates` and :mod:`.small_batches`. Worked solutions of exercises 1 to 5:
:mod:`.backward_pass`, :mod:`.drift_momentum`, :mod:`.batch_variance`,
:mod:`.branch_scale` and :mod:`.folding_audit`.

A registry file names a computation as
``trainable_harness.witnesses.chapter16.<module>.<function>``; the engine imports that
module, so this package imports none of them. A deterministic claim calls its computation
once with ``claim_seed("c16-<name>")``; a statistical claim (a conclusion drawn from
randomness) calls it once per seed of ``claim_seeds("c16-<name>", 10)`` and summarizes each
field by its mean and a 95% interval. The ``*_profiles``, ``*_traces``, ``*_outputs`` and
``*_experiment`` functions return the arrays behind a computation's fields and the
``*_summary`` functions reduce them to the fields, so the chapter prints, draws and checks
with the same instrument the claim uses.

Three claims refute a common account (their registry files carry ``refutes``):
``c16-train-mode-output-001`` (train mode outputs zeros), ``c16-residual-depth-001``
(post-norm gradients decay like 1/sqrt(L)) and ``c16-activation-drift-001`` (batch norm
keeps the next layer's inputs from moving).
"""
