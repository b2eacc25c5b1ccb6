"""The body of a claim page, ``claims/<id>.html``, from a claim's description.

Top down: the state; the account a claim tests and who holds it; the statement; what the
state means; a card per field (measured, expected, why, width in standard errors); the
mistakes it catches and whether the last run caught each; where the book states it; how to
re-verify it; seeds, contract, provenance and the record, collapsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from docutils import nodes

from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import badge_node, place_links, shown, statement_nodes


def _terms(pairs, classes: list[str]) -> nodes.definition_list:
    listed = nodes.definition_list(classes=classes)
    for term, value in pairs:
        body = nodes.definition("", nodes.paragraph("", shown(value)))
        listed += nodes.definition_list_item("", nodes.term("", term), body)
    return listed


def section(section_id: str, title: str) -> nodes.section:
    node = nodes.section(ids=[section_id])
    node += nodes.title("", title)
    return node


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


_RESULTS = {True: ("Met", "claim-card-met"), False: ("Not met", "claim-card-missed")}


def _card(field: Mapping) -> nodes.container:
    """A field's card: its name in words, measured, expected, why, and the verdict."""
    verdict, state = _RESULTS.get(field["passed"], ("Not run", "claim-card-not-run"))
    card = nodes.container(classes=["claim-card", state])
    card += nodes.paragraph(
        "",
        "",
        nodes.strong("", _first_up(field["words"])),
        nodes.Text(" "),
        nodes.literal("", field["field"]),
        classes=["claim-card-title"],
    )
    rows = [
        ("Measured", field["measured"] or "Not measured yet."),
        ("Expected", field["expected_words"]),
    ]
    if field["reason"]:
        rows.append(("Why", field["reason"]))
    if field["tolerance_over_se"]:
        rows.append(("Width", field["tolerance_over_se"]))
    if field["wide_because"]:
        rows.append(("Why so wide", field["wide_because"]))
    rows.append(("Result", f"{verdict}."))
    card += _terms(rows, ["claim-card-terms"])
    return card


def _words(name: str) -> str:
    return name.rpartition(".")[2].replace("_", " ")


def _catch_state(catch: Mapping, words: Mapping[str, str]) -> str:
    """Whether the last run of a mistake turned the claim red, and by which fields (``red``,
    a ``pinned`` one being a copied number, or ``failed_fields``)."""
    state = catch.get("state")
    red = catch.get("red") or [{"field": name} for name in catch.get("failed_fields") or []]
    named = []
    for r in (r for r in red if isinstance(r, Mapping)):
        name = words.get(r.get("field"), r.get("field"))
        named.append(f"{name} (a pinned value)" if r.get("role") == "pinned" else name)
    if state == "caught":
        return f"Caught by {', '.join(named)}." if named else "Caught."
    if state == "not caught" and catch.get("error"):
        return "Not caught: the computation raised an error under it."
    if state == "not caught":
        return "Not caught: every field still meets its expectation."
    return "Not run yet for this version of the claim and the book's code."


def _catches(info: Mapping) -> nodes.section:
    catches = section("catches", "Mistakes it catches")
    catches += nodes.paragraph(
        "",
        "Each mistake is planted alone in the book's code (claims/mistakes/) and the claim "
        "computed again (python -m claimbook mutate): a claim earns its mark by failing "
        "under it, on the fields named.",
    )
    words = {field["field"]: field["words"] for field in info["fields"]}
    listed = nodes.bullet_list(classes=["claim-catches"])
    for catch in info["catches"]:
        item = nodes.paragraph()
        item += nodes.strong("", _first_up(_words(catch["perturbation"])))
        item += nodes.Text(f": {_first_up(catch['says'])}. ")
        item += nodes.inline("", _catch_state(catch, words), classes=["claim-catch-state"])
        listed += nodes.list_item("", item)
    catches += listed
    return catches


def _key_rows(key) -> list[tuple]:
    """A row per part of the key a claim was computed under."""
    if not isinstance(key, Mapping):
        return [("key", key)]
    rows = []
    for name, value in sorted(key.items()):
        label = "key" if name == "digest" else name.replace("_", " ")
        if isinstance(value, Mapping):
            rows += [(part, digest) for part, digest in sorted(value.items())]
        else:
            rows.append((label, value))
    return rows


def _collapsed(info: Mapping, docname: str) -> nodes.container:
    """Seeds, contract, provenance and digests, the raw record, in a ``<details>``."""
    closed = nodes.container(ids=["details"], classes=["claim-details"])
    closed += nodes.raw(
        "", "<details><summary>Seeds, contract, provenance and digests</summary>", format="html"
    )
    if info["seeds"]:
        seeds = ", ".join(map(str, info["seeds"]))
        closed += nodes.paragraph("", f"{len(info['seeds'])} seeds: {seeds}.")
    closed += nodes.rubric("", "Contract")
    contract = [*sorted(info["contract"].items()), ("compute", info["compute"])]
    closed += _terms(contract, ["claim-details-terms"])
    closed += nodes.rubric("", "Provenance and digests")
    provenance = sorted((info["provenance"] or {}).items()) + _key_rows(info["key"])
    provenance.append(("registry digest", info["registry_digest"]))
    closed += _terms(provenance, ["claim-details-terms", "claim-digests"])
    if info["record"]:
        closed += nodes.paragraph(
            "",
            "",
            nodes.reference(
                "",
                Path(info["record"]).name,
                refuri=model.relative_uri(docname, info["record"]),
                classes=["claim-download"],
            ),
            nodes.Text(
                " is the record the build wrote (artifacts/claims), with every seed's values, "
                "as a download."
            ),
        )
    else:
        closed += nodes.paragraph(
            "", "No record is published: there is none, or it is not a regular file."
        )
    closed += nodes.raw("", "</details>", format="html")
    return closed


def _headline(info: Mapping, docname: str) -> list[nodes.Node]:
    """State, the account a claim tests (if any), the statement, and what the state means."""
    line = nodes.paragraph(classes=["claim-page-state"])
    line += badge_node(docname, model.badge(info))
    line += nodes.Text(f" {info['kind']} claim of chapter {info['chapter']}")
    parts = [line]
    refutes = info["refutes"]
    if refutes:
        account = nodes.container(classes=["claim-account"])
        account += nodes.paragraph("", "A common account says:", classes=["claim-account-lead"])
        account += nodes.block_quote(
            "",
            nodes.paragraph("", shown(refutes.get("account"))),
            nodes.attribution("", shown(refutes.get("source"))),
        )
        lead = model.measurement_lead(info["state"])
        parts += [account, nodes.paragraph("", lead, classes=["claim-measurement-lead"])]
    parts.append(
        nodes.block_quote(
            "",
            nodes.paragraph("", "", *statement_nodes(info["statement"])),
            classes=["claim-statement"],
        )
    )
    lead, sentence = model.state_meaning(info["state"], info["reason"])
    parts.append(
        nodes.paragraph(
            "", "", nodes.strong("", lead), nodes.Text(sentence), classes=["claim-meaning"]
        )
    )
    if info["error"]:
        parts.append(nodes.paragraph("", f"The computation reported: {shown(info['error'])}"))
    return parts


def claim_page(info: Mapping) -> nodes.section:
    """The body of ``claims/<id>.html`` (see the module doc)."""
    docname = info["page"].removesuffix(".html")
    claim_id = info["id"]
    page = section(f"claim-{claim_id}", f"Claim {claim_id}")
    page += _headline(info, docname)

    fields = section("fields", "What was measured")
    cards = nodes.container(classes=["claim-cards"])
    for field in info["fields"]:
        cards += _card(field)
    fields += cards
    page += fields

    if info.get("catches"):
        page += _catches(info)

    places = section("stated-in", "Where the book states it")
    places += place_links(docname, info)
    page += places

    again = section("re-verify", "Re-verify it")
    again += nodes.paragraph("", "From a checkout of the book, in its environment:")
    again += nodes.literal_block(
        "", f"python -m claimbook claims verify {claim_id}", language="bash"
    )
    again += nodes.paragraph("", "In the chapter's notebook, after its first cell:")
    again += nodes.literal_block(
        "",
        f'from trainable_harness import verify_claim\n\nverify_claim(\n    "{claim_id}",\n'
        "    expected_harness=pin,\n)",
        language="python",
    )
    page += again
    page += _collapsed(info, docname)
    return page
