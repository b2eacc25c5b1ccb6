"""Chapter 15's claim computations, one module per section or worked solution.

- :mod:`.invariance` -- section 15.1 and the FP32 check of 15.2: what each map forgets;
- :mod:`.epsilon` -- section 15.2: how epsilon changes the RMS map;
- :mod:`.running_state` -- section 15.3: train-mode against evaluation-mode statistics;
- :mod:`.placement` -- section 15.4: pre- against post-normalization Jacobians;
- :mod:`.scale_invariance` -- scale invariance, the effective learning rate, weight decay;
- :mod:`.norm_cost` -- the work per token of LayerNorm and RMSNorm;
- :mod:`.cancellation_matrix`, :mod:`.estimator_shift`, :mod:`.rms_ablation` -- the
  worked solutions of exercises 2, 4 and 5.

A registry file names a computation as
``trainable_harness.witnesses.chapter15.<module>.<function>``; the engine imports that
module, so this package imports none of them. The ``*_experiment`` and ``*_runs``
functions return what the chapter prints and draws, and the ``*_summary`` functions reduce
an experiment to a claim's fields.
"""
