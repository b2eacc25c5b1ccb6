"""Claims: the registry, ``verify_claim``, keys, artifacts and the one judge (docs/claims.md).

The package re-exports what chapters, pages and the build use.
"""

from claimbook.claims.judgement import STATES, Judgement, judge, state_fails_build
from claimbook.claims.record import harness_pin, verify_claim
from claimbook.claims.registry import claim_seed, claim_seeds, flatten, list_claims, load_claim
from claimbook.claims.store import failure_summary
from claimbook.paths import artifact_path

__all__ = [
    "STATES",
    "Judgement",
    "artifact_path",
    "claim_seed",
    "claim_seeds",
    "failure_summary",
    "flatten",
    "harness_pin",
    "judge",
    "list_claims",
    "load_claim",
    "state_fails_build",
    "verify_claim",
]
