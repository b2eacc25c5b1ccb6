"""Claims: the registry, ``verify_claim``, keys, pins, artifacts and badges.

Every numeric statement of the book is a *claim*: an id, one sentence, the registered
computation that measures it, what each computed field must satisfy, and the contract it
was measured under (seed, dtype, device, estimator). One module per job:

- :mod:`~claimbook.claims.registry` -- ``claims/<id>.yaml``: schema, loading,
  refusing what cannot be used; :func:`claim_seed` and :func:`claim_seeds`.
- :mod:`~claimbook.claims.computations` -- finding a claim's computation from its dotted
  name, and running it, per seed for a statistical claim.
- :mod:`~claimbook.claims.intervals` -- t and bootstrap intervals of a mean.
- :mod:`~claimbook.claims.keys` -- what an artifact depends on: the registry entry,
  the bodies of the harness functions actually run, the lock.
- :mod:`~claimbook.claims.store` -- artifacts: path, building, JSON text.
- :mod:`~claimbook.claims.verify` -- :func:`verify_claim` and the pin.
- :mod:`~claimbook.claims.audit` -- :func:`badge_state`, :func:`check_artifact`,
  failure and hover summaries.
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

from claimbook.claims.audit import (
    BADGE_STATES,
    badge_state,
    badge_summary,
    check_artifact,
    failure_summary,
    state_fails_build,
)
from claimbook.claims.computations import (
    flatten,  # noqa: F401 -- the dotted field names of a result, for callers and tests
    resolve_computation,
)
from claimbook.claims.keys import (
    HarnessCallRecorder,
    claim_key,
    current_claim_key,
    environment_digest,
    function_digests,
)
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
from claimbook.claims.repin import repin as repin_book
from claimbook.claims.store import artifact_path
from claimbook.claims.verify import claim_status_line, harness_pin, verify_claim

__all__ = [
    "BADGE_STATES",
    "Claim",
    "ClaimReport",
    "HarnessCallRecorder",
    "PinUpdate",
    "RepinReport",
    "artifact_path",
    "badge_state",
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
    "function_digests",
    "harness_pin",
    "list_claims",
    "load_claim",
    "repin_book",
    "repin_chapters",
    "resolve_computation",
    "state_fails_build",
    "verify_claim",
]
