"""The computations that registered claims call, one module per chapter.

Each witness returns a plain dict of result fields (numbers, booleans, or nested dicts of
them), and ``claims/<id>.yaml`` registers one expectation per field. A witness takes no
input except ``seed`` (for claims whose registry derives one, or a set of them, with
:func:`trainable_harness.claims.claim_seed`), so the claim's result depends on the harness
alone and never on a notebook's variables. Only functions decorated with
:func:`~trainable_harness.claims.computations.claim_computation` can be named by a
registry file's ``compute``.

- :mod:`~trainable_harness.witnesses.chapter15` -- normalization invariance, running state.
- :mod:`~trainable_harness.witnesses.chapter16` -- batch normalization in practice.
"""

from trainable_harness.witnesses import chapter15, chapter16
from trainable_harness.witnesses.chapter15 import *  # noqa: F403
from trainable_harness.witnesses.chapter16 import *  # noqa: F403

__all__ = [*chapter15.__all__, *chapter16.__all__]
