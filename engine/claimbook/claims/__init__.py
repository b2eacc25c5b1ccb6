"""Claims: the registry, ``verify_claim``, keys, pins, artifacts and the judge.

Every numeric statement of the book is a *claim*: an id, one sentence, the registered
computation that measures it, what each computed field must satisfy, and the contract it
was measured under (seed, dtype, device, estimator). One module per job:

- :mod:`~claimbook.claims.registry` -- ``claims/<id>.yaml``: schema, loading,
  refusing what cannot be used; :func:`claim_seed` and :func:`claim_seeds`.
- :mod:`~claimbook.claims.computations` -- finding a claim's computation from its dotted
  name, and running it, per seed for a statistical claim.
- :mod:`~claimbook.claims.intervals` -- t and bootstrap intervals of a mean.
- :mod:`~claimbook.claims.keys` -- what an artifact depends on: the registry entry,
  every byte of the modules its computation reaches, the lock and the installed versions.
- :mod:`~claimbook.claims.compare` -- results against expectations, one record per field.
- :mod:`~claimbook.claims.store` -- artifacts: building, JSON text, reading back (the path
  is :func:`claimbook.paths.artifact_path`).
- :mod:`~claimbook.claims.summary` -- failure lines and a badge's hover text.
- :mod:`~claimbook.claims.verify` -- :func:`verify_claim` and the pin.
- :mod:`~claimbook.claims.judgement` -- :func:`judge`, the one decision of a claim's state.
- :mod:`~claimbook.claims.audit` -- :func:`check_artifact`, against a recomputation.
- :mod:`~claimbook.claims.repin` -- ``make repin``: verify everything, then re-pin.

Three kinds of claim
--------------------
*Deterministic* (one call), *statistical* (one call per seed of a derived set, summarized
by a mean and a t or bootstrap interval), and either of them *refuting* a common account
(``refutes:``), whose success is the status ``"refuted"``.

Examples
--------
>>> claim_seed("c15-running-state")
316832669
>>> load_claim("c15-invariance-001").contract["device"]
'CPU'
"""

from claimbook.claims.audit import check_artifact
from claimbook.claims.computations import (
    flatten,  # noqa: F401 -- the dotted field names of a result, for callers and tests
    resolve_computation,
)
from claimbook.claims.judgement import STATES, Judgement, judge, state_fails_build
from claimbook.claims.keys import claim_key, current_claim_key, environment_digest
from claimbook.claims.registry import (
    Claim,
    claim_seed,
    claim_seeds,
    display_contract,
    list_claims,
    load_claim,
)
from claimbook.claims.repin import (
    ClaimReport,
    PinUpdate,
    RepinReport,
    repin_chapters,
)
from claimbook.claims.summary import badge_summary, failure_summary
from claimbook.claims.verify import claim_status_line, harness_pin, verify_claim
from claimbook.paths import artifact_path

__all__ = [
    "STATES",
    "Claim",
    "ClaimReport",
    "Judgement",
    "PinUpdate",
    "RepinReport",
    "artifact_path",
    "badge_summary",
    "check_artifact",
    "claim_key",
    "claim_seed",
    "claim_seeds",
    "claim_status_line",
    "current_claim_key",
    "display_contract",
    "environment_digest",
    "failure_summary",
    "harness_pin",
    "judge",
    "list_claims",
    "load_claim",
    "repin_chapters",
    "resolve_computation",
    "state_fails_build",
    "verify_claim",
]
