"""Claims: the registry, ``verify_claim``, keys, artifacts and the one judge.

A claim is a result the book states: an id, one sentence, the registered computation that
measures it, what each computed field must satisfy, and the contract it was measured under.
The package re-exports what chapters, pages and the build use; docs/claims.md is the guide.
"""

from claimbook.claims.computations import flatten
from claimbook.claims.judgement import STATES, Judgement, check_artifact, judge, state_fails_build
from claimbook.claims.keys import claim_key, environment_digest
from claimbook.claims.registry import (
    Claim,
    claim_seed,
    claim_seeds,
    list_claims,
    load_claim,
)
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
