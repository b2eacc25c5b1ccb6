"""Docutils building blocks of the claim extensions: the badge, tables, sections, place links.

The one badge builder is :func:`badge_node`: the inline ``{claim}`` role, the claim line, the
claim pages and the ledger all draw a claim's badge with it, from the
:class:`~claimbook.extensions.claim_pages_model.Badge` the model gives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from docutils import nodes

from claimbook.extensions.claim_pages_model import Badge, first_per_section, relative_uri
from claimbook.extensions.engine_marks import drawn

__all__ = ["badge_node", "place_links", "section", "shown", "table"]


def badge_node(docname: str, badge: Badge) -> nodes.reference:
    """The badge as page ``docname`` shows it: id and state word, linking to the claim page.

    The word is :attr:`Badge.word` ("account refuted" for a refuted claim); the judged state
    stays in the node's ``claim-state`` attribute and its state class.
    """
    node = nodes.reference(
        "",
        "",
        nodes.inline("", badge.claim, classes=["claim-id"]),
        nodes.inline("", badge.word, classes=["claim-state"]),
        refuri=badge.uri(docname),
        reftitle=badge.hover,
        classes=badge.classes,
    )
    node["claim-state"] = badge.state
    return drawn(node)


def shown(value) -> str:
    """A value as a table cell shows it: text as it is, anything else as JSON, None as a dash."""
    if value is None:
        return "\u2014"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def table(headers: list[str] | None, rows: list[list], classes: list[str]) -> nodes.table:
    """A table; ``headers=None`` for a two-column list of names and values."""
    node = nodes.table(classes=["claim-table", *classes])
    group = nodes.tgroup(cols=len(headers) if headers else 2)
    node += group
    for _ in headers or (0, 0):
        group += nodes.colspec(colwidth=1)
    if headers:
        head = nodes.thead()
        group += head
        head += _row(headers)
    body = nodes.tbody()
    group += body
    for row in rows:
        body += _row(row)
    return node


def _row(cells: list) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        if isinstance(cell, nodes.Node):
            entry += nodes.paragraph("", "", cell) if isinstance(cell, nodes.Inline) else cell
        else:
            entry += nodes.paragraph("", shown(cell))
        row += entry
    return row


def section(section_id: str, title: str) -> nodes.section:
    node = nodes.section(ids=[section_id])
    node += nodes.title("", title)
    return node


def place_links(docname: str, info: Mapping, *, inline: bool = False) -> nodes.Node:
    """Links to the first place in each section that states the claim.

    A bullet list of "chapter, section" (a claim page), or with ``inline`` the section
    labels separated by semicolons (a ledger row).
    """
    if not info["stated_in"]:
        return nodes.paragraph("", "not stated on any page")
    container = nodes.paragraph() if inline else nodes.bullet_list(classes=["claim-places"])
    for index, place in enumerate(first_per_section(info["stated_in"])):
        uri = relative_uri(docname, place["page"]) + "#" + place["anchor"]
        if inline:
            if index:
                container += nodes.Text("; ")
            container += nodes.reference("", place["section"], refuri=uri)
            continue
        label = f"{place['chapter']}, {place['section']}"
        if place["section"] == place["chapter"]:
            label = place["chapter"]
        container += nodes.list_item(
            "", nodes.paragraph("", "", nodes.reference("", label, refuri=uri))
        )
    return container
