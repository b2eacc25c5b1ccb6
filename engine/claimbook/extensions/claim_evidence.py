"""A section's evidence: the cards of the claims it states, collapsed at its end.

A ``claim-line`` directive makes a claim's card; once a page is read, each section's cards, and a
card for every other claim it binds a number to, are moved into one collapsed "Evidence" block
at its end (:func:`evidence_block`).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from claimbook import claims as claim_registry
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import ACCOUNT_WORDS
from claimbook.extensions.claim_pages import publishable_record
from claimbook.extensions.claims import claim_badge, claim_value


def _card(env, claim_id: str, location) -> nodes.container | None:
    """A claim's card: badge and statement, then seed, dtype, device, estimator and the JSON
    record; for a refuted claim, the account."""
    badge = claim_badge(env, claim_id, location, kind="line")
    if badge is None:
        return None
    claim = claim_registry.load_claim(claim_id)
    statement = nodes.inline("", f" {claim.statement}", classes=["claim-statement"])
    details = nodes.paragraph(classes=["claim-contract"])
    for field in ("seed", "dtype", "device", "estimator"):
        if field in claim.shown_contract:
            value = claim.shown_contract[field]
            details += nodes.inline("", f"{field}: {value}", classes=[f"claim-{field}"])
            details += nodes.inline("", " · ", classes=["claim-sep"])
    if publishable_record(claim_id) is not None:
        uri = model.relative_uri(env.docname, model.record_path(claim_id))
        details += nodes.reference("", "record (JSON)", refuri=uri, classes=["claim-record"])
    else:
        details += nodes.inline("", "no record", classes=["claim-record"])
    line = nodes.paragraph("", "", badge, statement, classes=["claim-line"])
    card = nodes.container("", line, details, classes=["claim-card"])
    if badge["claim-state"] == "refuted":
        account = nodes.Text(f"{model.account_line(claim.refutes)}; {ACCOUNT_WORDS}.")
        lead = nodes.strong("", "A common account: ")
        card += nodes.paragraph("", "", lead, account, classes=["claim-account-refuted"])
    return card


def evidence_block(cards: list[nodes.Node]) -> list[nodes.Node]:
    """A section's claim cards, collapsed under "Evidence" (``<details>`` in HTML)."""
    count = f"{len(cards)} claim{'s' if len(cards) != 1 else ''}"
    opening = (
        '<details class="claim-evidence">\n'
        f'<summary>Evidence <span class="claim-evidence-count">({count})</span></summary>\n'
    )
    return [
        nodes.raw("", opening, format="html"),
        nodes.container("", *cards, classes=["claim-evidence-cards"]),
        nodes.raw("", "</details>\n", format="html"),
    ]


class ClaimLineDirective(SphinxDirective):
    """``claim-line`` -- a claim's card, shown in its section's Evidence block."""

    required_arguments = 1

    def run(self):
        card = _card(self.env, self.arguments[0].strip(), self.get_location())
        return [] if card is None else [card]


def _evidence_place(node) -> tuple[nodes.section | None, bool]:
    """The section whose Evidence block lists ``node``'s claim (of the page's top level, or one
    down where the page is one section), and whether the block goes before its subsections."""
    sections, parent = [], node.parent
    while parent is not None:
        if isinstance(parent, nodes.section):
            sections.append(parent)
        parent = parent.parent
    if not sections:
        return None, False
    if len(sections) >= 2:
        return sections[-2], False
    return sections[0], any(isinstance(child, nodes.section) for child in sections[0])


def gather_evidence(app, doctree) -> None:
    """Move each section's claim cards, with a card for every other claim it binds a number
    to, into one collapsed Evidence block at the section's end."""
    env = app.env
    places: dict[int, tuple] = {}  # id(section) -> (section, before_subsections, cards, ids)
    for node in list(doctree.findall(lambda n: isinstance(n, (claim_value, nodes.container)))):
        if isinstance(node, claim_value) and node["claim"] != "sample":
            claim_id = node["claim"]
        elif isinstance(node, nodes.container) and "claim-card" in node["classes"]:
            claim_id = next(node.findall(nodes.reference))["trainable-claim"]  # its badge
        else:
            continue
        section, before = _evidence_place(node)
        if section is None:
            continue
        _, _, cards, seen = places.setdefault(id(section), (section, before, [], set()))
        if isinstance(node, nodes.container):
            node.parent.remove(node)
        elif claim_id not in seen:
            node = _card(env, claim_id, (env.docname, node.line))
        if node is not None and claim_id not in seen:
            seen.add(claim_id)
            cards.append(node)
    for section, before, cards, _ in places.values():
        if before:
            first = next(i for i, child in enumerate(section) if isinstance(child, nodes.section))
            section[first:first] = evidence_block(cards)
        else:
            section.extend(evidence_block(cards))


def setup(app):
    app.add_directive("claim-line", ClaimLineDirective)
    app.connect("doctree-read", gather_evidence, priority=400)  # before places are noted
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
