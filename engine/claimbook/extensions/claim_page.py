"""The body of a claim page, ``claims/<id>.html``: ``templates/claim_page.html`` filled from a
claim's description, written as Sphinx writes docutils nodes.

Top down: state, account, statement, what the state means; a card per field; the mistakes it
catches; where the book states it; how to re-verify it; seeds, contract, provenance, collapsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import jinja2
from docutils import nodes
from markupsafe import Markup
from sphinx.writers.html5 import HTML5Translator

from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import badge_node, place_links

TEMPLATES = Path(__file__).parent / "templates"


def encode(value) -> Markup:
    """Text as Sphinx writes it into HTML (docutils' encoding); markup as it is."""
    if isinstance(value, Markup):
        return value
    return Markup(str(value).translate(HTML5Translator.special_characters))


def statement_html(text: str) -> Markup:
    """A statement's text, its math (LaTeX between two ``$``) for MathJax."""
    parts = re.split(r"\$([^$]+)\$", text)
    return Markup("").join(
        Markup(r'<span class="math notranslate nohighlight">\({}\)</span>').format(encode(part))
        if index % 2
        else encode(part)
        for index, part in enumerate(parts)
    )


def shown(value) -> str:
    """Text as it is, anything else as JSON, None as a dash."""
    if value is None:
        return "\u2014"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


TEMPLATE = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    finalize=encode,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)
TEMPLATE.filters.update(shown=shown, statement=statement_html, first_up=_first_up)


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


def claim_page(info: Mapping, render: Callable[[nodes.Node], str], searched: bool = False) -> str:
    """The body of ``claims/<id>.html`` (see the module doc), its docutils parts written by
    ``render``; ``searched``: only the parts a reader searches (no commands, no details)."""
    docname = info["page"].removesuffix(".html")
    words = {field["field"]: field["words"] for field in info["fields"]}
    kind = nodes.Text(f" {info['kind']} claim of chapter {info['chapter']}")
    badge = badge_node(docname, info)
    provenance = sorted((info["provenance"] or {}).items()) + _key_rows(info["key"])
    if "registry digest" not in dict(provenance):  # a key of the current format holds it
        provenance.append(("registry digest", info["registry_digest"]))
    return TEMPLATE.get_template("claim_page.html").render(
        info=info,
        searched=searched,
        state=Markup(render(nodes.paragraph("", "", badge, kind, classes=["claim-page-state"]))),
        measurement_lead=model.measurement_lead(info["state"]),
        meaning=model.state_meaning(info["state"], info["reason"]),
        results={True: ("Met", "claim-card-met"), False: ("Not met", "claim-card-missed")},
        catches=[
            (
                _first_up(catch["perturbation"].rpartition(".")[2].replace("_", " ")),
                _first_up(catch["says"]),
                _catch_state(catch, words),
            )
            for catch in info["catches"]
        ],
        places=Markup(render(place_links(docname, info))),
        contract=[*sorted(info["contract"].items()), ("compute", info["compute"])],
        provenance=provenance,
        record=info["record"] and model.relative_uri(docname, info["record"]),
    )
