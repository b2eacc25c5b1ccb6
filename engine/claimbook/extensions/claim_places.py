"""What the build environment keeps about claims: where each is stated, and each page's warnings.

Each badge, bound number and claim line is given an anchor (:func:`mark_statement`) and noted
with its section when its page is read; :func:`stated_in` labels the places as the book
numbers them. A claim warning is kept (:func:`warn`) and said again by a build that does not
re-read its page (:func:`repeat_problems`), so a failing claim fails every strict build. The
data is ``env.domaindata["trainable_claims"]``: pickled with the environment, merged from
parallel readers.
"""

from __future__ import annotations

from collections.abc import Mapping

from docutils import nodes
from sphinx.util import logging

from claimbook.extensions.chapter_pages import chapter_docname

logger = logging.getLogger(__name__)


def _claims_data(env) -> dict:
    data = env.domaindata.setdefault("trainable_claims", {})
    data.setdefault("references", {})
    data.setdefault("problems", {})
    return data


def warn(env, location, message: str) -> None:
    """Warn, and keep the warning, so an unchanged page repeats it next build."""
    logger.warning(message, location=location)
    line = location[1] if isinstance(location, tuple) and len(location) == 2 else None
    problems = _claims_data(env)["problems"]
    problems.setdefault(env.docname, []).append((message, line))


def mark_statement(node, env, claim_id: str, kind: str) -> None:
    """Give ``node`` an anchor and note it as a place that states ``claim_id``."""
    serial = env.new_serialno("trainable-claim")
    node["ids"].append(f"claim-{claim_id}-{serial}")
    node["trainable-claim"] = claim_id
    node["trainable-claim-kind"] = kind


def _collect_places(app, doctree) -> None:
    """Record, for each claim, the sections of this page that state it (with anchors)."""
    env = app.env
    found = []
    for node in doctree.findall(nodes.Element):
        claim_id = node.get("trainable-claim")
        if not claim_id:
            continue
        section = node.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        found.append(
            {
                "claim": claim_id,
                "kind": node.get("trainable-claim-kind", "badge"),
                "anchor": node["ids"][0],
                "section_id": section["ids"][0] if section is not None and section["ids"] else "",
                "section": section[0].astext() if section is not None else "",
                "line": node.line,
                "cited": node.get("trainable-claim-cited"),
            }
        )
    _claims_data(env)["references"][env.docname] = found


def _purge(app, env, docname) -> None:
    data = _claims_data(env)
    data["references"].pop(docname, None)
    data["problems"].pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    data, theirs = _claims_data(env), _claims_data(other)
    for key in ("references", "problems"):
        for docname in docnames:
            if docname in theirs[key]:
                data[key][docname] = theirs[key][docname]


def _chapter_of(env, docname: str) -> str:
    docname = chapter_docname(env, docname)  # a chapter's later page: the chapter
    title = env.titles.get(docname)
    number = env.toc_secnumbers.get(docname, {}).get("")
    text = title.astext() if title is not None else docname
    return f"{'.'.join(map(str, number))}. {text}" if number else text


def _section_label(env, docname: str, place: Mapping) -> str:
    numbers = env.toc_secnumbers.get(docname, {})
    title = env.titles.get(docname)
    # A page's first section is its title, numbered under "" (a chapter's later page: 16.6).
    first = title is not None and place["section"] == title.astext()
    number = numbers.get(f"#{place['section_id']}") or (
        numbers.get("") if not place["section_id"] or first else None
    )
    opening = chapter_docname(env, docname) == docname  # not a later page (claimbook.pages)
    if opening and (not place["section"] or first):
        return _chapter_of(env, docname)  # the chapter's opening, before 15.1
    if number:
        return f"{'.'.join(map(str, number))} {place['section']}"
    return place["section"]


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


def _remember_read(app, env, docnames) -> None:
    app._trainable_docs_read = set(docnames)


def repeat_problems(app) -> None:
    """Warn again for pages this build did not re-read, so strictness outlives one build."""
    read = getattr(app, "_trainable_docs_read", set())
    for docname, problems in sorted(_claims_data(app.env)["problems"].items()):
        if docname in read:
            continue
        for message, line in problems:
            logger.warning(message, location=(docname, line))


def setup_places(app) -> None:
    app.connect("env-before-read-docs", _remember_read)
    app.connect("doctree-read", _collect_places)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
