"""Claims: the registry, ``verify_claim``, keys, artifacts and the one judge (docs/claims.md).

The package re-exports what chapters, pages and the build use.
"""

from claimbook.claims.computations import flatten
from claimbook.claims.judgement import STATES, Judgement, check_artifact, judge, state_fails_build
from claimbook.claims.keys import claim_key, environment_digest
from claimbook.claims.registry import Claim, claim_seed, claim_seeds, list_claims, load_claim
from claimbook.claims.store import badge_summary, failure_summary
from claimbook.claims.verify import claim_status_line, harness_pin, verify_claim
from claimbook.paths import artifact_path

__all__ = [
    "STATES",
    "Claim",
    "Judgement",
    "artifact_path",
    "badge_summary",
    "check_artifact",
    "claim_key",
    "claim_seed",
    "claim_seeds",
    "claim_status_line",
    "environment_digest",
    "failure_summary",
    "flatten",
    "harness_pin",
    "judge",
    "list_claims",
    "load_claim",
    "state_fails_build",
    "verify_claim",
]
