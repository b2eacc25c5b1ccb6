"""The body of a claim page, ``claims/<id>.html``, from a claim's description.

Top down: state, account, statement, what the state means; a card per field; the mistakes it
catches; where the book states it; how to re-verify it; seeds, contract, provenance, collapsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from docutils import nodes

from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import badge_node, place_links, shown, statement_nodes


def _terms(pairs, classes: list[str]) -> nodes.definition_list:
    return nodes.definition_list(
        "",
        *[
            nodes.definition_list_item(
                "", nodes.term("", term), nodes.definition("", nodes.paragraph("", shown(value)))
            )
            for term, value in pairs
        ],
        classes=classes,
    )


def section(section_id: str, title: str, *children: nodes.Node) -> nodes.section:
    return nodes.section("", nodes.title("", title), *children, ids=[section_id])


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


_RESULTS = {True: ("Met", "claim-card-met"), False: ("Not met", "claim-card-missed")}


def _card(field: Mapping) -> nodes.container:
    """A field's card: its name in words, measured, expected, why, and the verdict."""
    verdict, state = _RESULTS.get(field["passed"], ("Not run", "claim-card-not-run"))
    name = [nodes.strong("", _first_up(field["words"])), nodes.Text(" ")]
    title = nodes.paragraph("", "", *name, nodes.literal("", field["field"]))
    title["classes"] = ["claim-card-title"]
    rows = [
        ("Measured", field["measured"] or "Not measured yet."),
        ("Expected", field["expected_words"]),
        ("Why", field["reason"]),
        ("Width", field["tolerance_over_se"]),
        ("Why so wide", field["wide_because"]),
    ]
    rows = [(term, value) for term, value in rows if value] + [("Result", f"{verdict}.")]
    return nodes.container(
        "", title, _terms(rows, ["claim-card-terms"]), classes=["claim-card", state]
    )


def _catch_state(catch: Mapping, words: Mapping[str, str]) -> str:
    """Whether the last run of a mistake turned the claim red, and by which fields."""
    state = catch.get("state")
    red = catch.get("red") or [{"field": name} for name in catch.get("failed_fields") or []]
    named = [
        words.get(r.get("field"), r.get("field"))
        + " (a pinned value)" * (r.get("role") == "pinned")
        for r in red
        if isinstance(r, Mapping)
    ]
    if state == "caught":
        return f"Caught by {', '.join(named)}." if named else "Caught."
    if state == "not caught" and catch.get("error"):
        return "Not caught: the computation raised an error under it."
    if state == "not caught":
        return "Not caught: every field still meets its expectation."
    return "Not run yet for this version of the claim and the book's code."


def _catches(info: Mapping) -> nodes.section:
    words = {field["field"]: field["words"] for field in info["fields"]}
    listed = nodes.bullet_list(classes=["claim-catches"])
    for catch in info["catches"]:
        name = catch["perturbation"].rpartition(".")[2].replace("_", " ")
        item = nodes.paragraph()
        item += nodes.strong("", _first_up(name))
        item += nodes.Text(f": {_first_up(catch['says'])}. ")
        item += nodes.inline("", _catch_state(catch, words), classes=["claim-catch-state"])
        listed += nodes.list_item("", item)
    lead = (
        "Each mistake is planted alone in the book's code (claims/mistakes/) and the claim "
        "computed again (python -m claimbook mutate): a claim earns its mark by failing "
        "under it, on the fields named."
    )
    return section("catches", "Mistakes it catches", nodes.paragraph("", lead), listed)


def _key_rows(key) -> list[tuple]:
    """A row per part of the key a claim was computed under."""
    if not isinstance(key, Mapping):
        return [("key", key)]
    rows = []
    for name, value in sorted(key.items()):
        if isinstance(value, Mapping):
            rows += sorted(value.items())
        else:
            rows.append(("key" if name == "digest" else name.replace("_", " "), value))
    return rows


def _collapsed(info: Mapping, docname: str) -> nodes.container:
    """Seeds, contract, provenance and digests, the raw record, in a ``<details>``."""
    summary = "<details><summary>Seeds, contract, provenance and digests</summary>"
    opening = nodes.raw("", summary, format="html")
    closed = nodes.container("", opening, ids=["details"], classes=["claim-details"])
    if info["seeds"]:
        seeds = ", ".join(map(str, info["seeds"]))
        closed += nodes.paragraph("", f"{len(info['seeds'])} seeds: {seeds}.")
    contract = [*sorted(info["contract"].items()), ("compute", info["compute"])]
    provenance = sorted((info["provenance"] or {}).items()) + _key_rows(info["key"])
    provenance.append(("registry digest", info["registry_digest"]))
    closed += [
        nodes.rubric("", "Contract"),
        _terms(contract, ["claim-details-terms"]),
        nodes.rubric("", "Provenance and digests"),
        _terms(provenance, ["claim-details-terms", "claim-digests"]),
    ]
    if info["record"]:
        uri = model.relative_uri(docname, info["record"])
        link = nodes.reference(
            "", Path(info["record"]).name, refuri=uri, classes=["claim-download"]
        )
        words = (
            " is the record the build wrote (artifacts/claims), with every seed's values, "
            "as a download."
        )
        closed += nodes.paragraph("", "", link, nodes.Text(words))
    else:
        closed += nodes.paragraph(
            "", "No record is published: there is none, or it is not a regular file."
        )
    closed += nodes.raw("", "</details>", format="html")
    return closed


def _headline(info: Mapping, docname: str) -> list[nodes.Node]:
    """State, the account a claim tests (if any), the statement, and what the state means."""
    kind = nodes.Text(f" {info['kind']} claim of chapter {info['chapter']}")
    parts = [
        nodes.paragraph(
            "", "", badge_node(docname, model.badge(info)), kind, classes=["claim-page-state"]
        )
    ]
    refutes = info["refutes"]
    if refutes:
        lead = nodes.paragraph("", "A common account says:", classes=["claim-account-lead"])
        quote = nodes.block_quote(
            "",
            nodes.paragraph("", shown(refutes.get("account"))),
            nodes.attribution("", shown(refutes.get("source"))),
        )
        measurement = model.measurement_lead(info["state"])
        parts += [
            nodes.container("", lead, quote, classes=["claim-account"]),
            nodes.paragraph("", measurement, classes=["claim-measurement-lead"]),
        ]
    statement = nodes.paragraph("", "", *statement_nodes(info["statement"]))
    parts.append(nodes.block_quote("", statement, classes=["claim-statement"]))
    lead, sentence = model.state_meaning(info["state"], info["reason"])
    meaning = nodes.paragraph(
        "", "", nodes.strong("", lead), nodes.Text(sentence), classes=["claim-meaning"]
    )
    parts.append(meaning)
    if info["error"]:
        parts.append(nodes.paragraph("", f"The computation reported: {shown(info['error'])}"))
    return parts


def claim_page(info: Mapping) -> nodes.section:
    """The body of ``claims/<id>.html`` (see the module doc)."""
    docname, claim_id = info["page"].removesuffix(".html"), info["id"]
    cards = nodes.container("", *map(_card, info["fields"]), classes=["claim-cards"])
    notebook = (
        f'from trainable_harness import verify_claim\n\nverify_claim(\n    "{claim_id}",\n'
        "    expected_harness=pin,\n)"
    )
    page = section(f"claim-{claim_id}", f"Claim {claim_id}", *_headline(info, docname))
    page += section("fields", "What was measured", cards)
    if info.get("catches"):
        page += _catches(info)
    page += section("stated-in", "Where the book states it", place_links(docname, info))
    page += section(
        "re-verify",
        "Re-verify it",
        nodes.paragraph("", "From a checkout of the book, in its environment:"),
        nodes.literal_block("", f"python -m claimbook claims verify {claim_id}", language="bash"),
        nodes.paragraph("", "In the chapter's notebook, after its first cell:"),
        nodes.literal_block("", notebook, language="python"),
    )
    page += _collapsed(info, docname)
    return page
