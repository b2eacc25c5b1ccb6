"""Claim badges, claim lines and full-book chapter references.

MyST syntax this extension adds:

- ``{claim}`c15-invariance-001``` -- an inline badge whose colour is the claim's state
  (verified green, failed red, stale amber, not run grey), linking to the claim's artifact;
- a ``claim-line`` directive -- "Claim <id> · seed · dtype · device · estimator · artifact"
  with the badge, the contract read from the claim registry and the artifact;
- ``{claim-state}`stale``` -- a sample badge of one state, for the legend on the landing page;
- ``{book-chapter}`2``` -- a reference to a chapter of the full book that this edition does
  not contain, rendered as text (never a link to a missing page).

The state always comes from ``artifacts/claims/<id>.json`` through
:func:`trainable_harness.claims.badge_state`; nothing here decides that a claim holds. An
unknown claim id, and any claim that is not verified, is logged as a warning, which the strict
build (``-W``) turns into a failure while the page still shows the badge.
"""

from __future__ import annotations

import posixpath
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from trainable_harness import claims as claim_registry
from trainable_harness import paths
from trainable_harness.errors import UnknownClaimError

logger = logging.getLogger(__name__)

SITE_ARTIFACTS = "artifacts"
STATE_CLASSES = {
    "verified": "claim-verified",
    "failed": "claim-failed",
    "stale": "claim-stale",
    "not run": "claim-not-run",
}


def _relative_uri(env, target: str) -> str:
    """URI of a site-root-relative ``target`` as seen from the current document."""
    return posixpath.relpath(target, posixpath.dirname(env.docname) or ".")


def _artifact_uri(env, claim_id: str) -> str:
    return _relative_uri(env, f"{SITE_ARTIFACTS}/claims/{claim_id}.json")


def _badge(env, claim_id: str, location) -> nodes.reference | None:
    """Build the badge node for ``claim_id``, warning when it is unknown or not verified."""
    try:
        state, _artifact, reason = claim_registry.badge_state(claim_id)
    except UnknownClaimError as error:
        logger.warning("unknown claim: %s", error, location=location)
        return None
    for dependency in (
        paths.CLAIMS_DIR / f"{claim_id}.yaml",
        paths.CLAIM_ARTIFACTS_DIR / f"{claim_id}.json",
    ):
        if dependency.exists():
            env.note_dependency(str(dependency))
    if state != "verified":
        logger.warning("claim %s is %s: %s", claim_id, state, reason, location=location)
    badge = nodes.reference(
        "",
        "",
        nodes.inline("", claim_id, classes=["claim-id"]),
        nodes.inline("", state, classes=["claim-state"]),
        refuri=_artifact_uri(env, claim_id),
        classes=["claim-badge", STATE_CLASSES[state]],
        # Reasons name files by absolute path; the page shows them relative to the book.
        reftitle=reason.replace(f"{paths.REPO_ROOT}/", ""),
    )
    badge["claim-state"] = state
    return badge


class ClaimRole(SphinxRole):
    """``{claim}`id``` -- the inline badge of one claim."""

    def run(self):
        badge = _badge(self.env, self.text.strip(), self.get_location())
        if badge is None:
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        return [badge], []


class ClaimLineDirective(SphinxDirective):
    """The claim line: badge, seed, dtype, device, estimator and a link to the artifact."""

    required_arguments = 1
    has_content = False

    def run(self):
        claim_id = self.arguments[0].strip()
        location = self.get_location()
        badge = _badge(self.env, claim_id, location)
        if badge is None:
            return []
        contract = claim_registry.display_contract(claim_id)
        line = nodes.paragraph(classes=["claim-line"])
        line += nodes.strong("", "Claim ")
        line += badge
        for field in ("seed", "dtype", "device", "estimator"):
            line += nodes.inline("", " · ", classes=["claim-sep"])
            line += nodes.inline("", f"{field}: {contract[field]}", classes=[f"claim-{field}"])
        line += nodes.inline("", " · ", classes=["claim-sep"])
        line += nodes.reference("", "artifact", refuri=_artifact_uri(self.env, claim_id))
        return [line]


class ClaimStateRole(SphinxRole):
    """``{claim-state}`verified``` -- a sample badge for a state, as the legend shows it."""

    def run(self):
        state = self.text.strip()
        if state not in STATE_CLASSES:
            logger.warning(
                "claim-state expects one of %s, got %r",
                ", ".join(STATE_CLASSES),
                state,
                location=self.get_location(),
            )
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        badge = nodes.inline(
            "",
            "",
            nodes.inline("", state, classes=["claim-state"]),
            classes=["claim-badge", STATE_CLASSES[state]],
        )
        return [badge], []


class BookChapterRole(SphinxRole):
    """``{book-chapter}`2``` -- a chapter of the full book, which this edition lacks."""

    def run(self):
        number = self.text.strip()
        if not number.isdigit():
            logger.warning(
                "book-chapter expects a chapter number, got %r",
                number,
                location=self.get_location(),
            )
        return [
            nodes.abbreviation(
                "",
                f"Chapter {number}",
                explanation=f"Chapter {number} of the full book; it is not part of this edition.",
                classes=["book-chapter"],
            )
        ], []


def _copy_artifacts(app, exception):
    """Publish claim artifacts beside the pages that link to them (figures: figure_artifacts)."""
    if exception is not None or app.builder.format != "html":
        return
    destination = Path(app.outdir) / SITE_ARTIFACTS / "claims"
    if destination.exists():
        shutil.rmtree(destination)
    if paths.CLAIM_ARTIFACTS_DIR.exists():
        shutil.copytree(
            paths.CLAIM_ARTIFACTS_DIR, destination, ignore=shutil.ignore_patterns(".*")
        )


def setup(app):
    app.add_role("claim", ClaimRole())
    app.add_role("book-chapter", BookChapterRole())
    app.add_role("claim-state", ClaimStateRole())
    app.add_directive("claim-line", ClaimLineDirective)
    app.connect("build-finished", _copy_artifacts)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
