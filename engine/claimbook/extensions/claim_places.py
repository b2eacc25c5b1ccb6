"""Where each claim is stated, and each page's claim warnings, kept in the build environment.

Each badge, bound number and claim line gets an anchor (:func:`mark_statement`), noted with its
section when its page is read; :func:`stated_in` labels the places as the book numbers them. A
claim warning is kept (:func:`warn`) and said again by a build that does not re-read its page
(:func:`repeat_problems`). The data, ``env.domaindata["trainable_claims"]``, is pickled with the
environment and merged from parallel readers.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util import logging

from claimbook.extensions.chapter_pages import chapter_docname

logger = logging.getLogger(__name__)
_KEPT = ("references", "problems")  # docname -> what that page says


def _claims_data(env) -> dict:
    data = env.domaindata.setdefault("trainable_claims", {})
    for key in _KEPT:
        data.setdefault(key, {})
    return data


def warn(env, location, message: str) -> None:
    """Warn, and keep the warning, so an unchanged page repeats it next build."""
    logger.warning(message, location=location)
    line = location[1] if isinstance(location, tuple) and len(location) == 2 else None
    _claims_data(env)["problems"].setdefault(env.docname, []).append((message, line))


def mark_statement(node, env, claim_id: str, kind: str) -> None:
    """Give ``node`` an anchor and note it as a place that states ``claim_id``."""
    node["ids"].append(f"claim-{claim_id}-{env.new_serialno('trainable-claim')}")
    node["trainable-claim"] = claim_id
    node["trainable-claim-kind"] = kind


def _collect_places(app, doctree) -> None:
    """Record the places of this page that state a claim, with their sections."""
    found = []
    for node in doctree.findall(lambda n: isinstance(n, nodes.Element) and "trainable-claim" in n):
        section = node.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        found.append(
            {
                "claim": node["trainable-claim"],
                "kind": node.get("trainable-claim-kind", "badge"),
                "anchor": node["ids"][0],
                "section_id": section["ids"][0] if section is not None and section["ids"] else "",
                "section": section[0].astext() if section is not None else "",
                "line": node.line,
                "cited": node.get("trainable-claim-cited"),
            }
        )
    _claims_data(app.env)["references"][app.env.docname] = found


def _purge(app, env, docname) -> None:
    for key in _KEPT:
        _claims_data(env)[key].pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    for key in _KEPT:
        theirs = _claims_data(other)[key]
        _claims_data(env)[key].update({name: theirs[name] for name in docnames if name in theirs})


def _numbered(number, text: str, separator: str = " ") -> str:
    return f"{'.'.join(map(str, number))}{separator}{text}" if number else text


def _chapter_of(env, docname: str) -> str:
    docname = chapter_docname(env, docname)  # a chapter's later page: the chapter
    title = env.titles.get(docname)
    text = title.astext() if title is not None else docname
    return _numbered(env.toc_secnumbers.get(docname, {}).get(""), text, ". ")


def _section_label(env, docname: str, place: dict) -> str:
    numbers = env.toc_secnumbers.get(docname, {})
    title = env.titles.get(docname)
    # A page's first section is its title, numbered under "" (a chapter's later page: 16.6).
    first = title is not None and place["section"] == title.astext()
    if chapter_docname(env, docname) == docname and (not place["section"] or first):
        return _chapter_of(env, docname)  # the chapter's opening, before 15.1
    number = numbers.get(f"#{place['section_id']}") or (
        numbers.get("") if not place["section_id"] or first else None
    )
    return _numbered(number, place["section"])


def stated_in(env) -> dict[str, list[dict]]:
    """Claim id -> the places that state it (:mod:`.claim_pages_model`), labelled as the book
    numbers them, in page order."""
    by_claim: dict[str, list[dict]] = {}
    for docname, found in sorted(_claims_data(env)["references"].items()):
        for place in found:
            by_claim.setdefault(place["claim"], []).append(
                {
                    "page": f"{docname}.html",
                    "anchor": place["anchor"],
                    "chapter": _chapter_of(env, docname),
                    "section": _section_label(env, docname, place),
                    "as": place["kind"],
                    "cited": place.get("cited"),
                }
            )
    return by_claim


def repeat_problems(app) -> None:
    """Warn again for pages this build did not re-read, so strictness outlives one build."""
    read = getattr(app, "_trainable_docs_read", set())
    for docname, problems in sorted(_claims_data(app.env)["problems"].items()):
        if docname not in read:
            for message, line in problems:
                logger.warning(message, location=(docname, line))


def _remember_read(app, env, docnames) -> None:
    app._trainable_docs_read = set(docnames)


def setup_places(app) -> None:
    app.connect("env-before-read-docs", _remember_read)
    app.connect("doctree-read", _collect_places)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
