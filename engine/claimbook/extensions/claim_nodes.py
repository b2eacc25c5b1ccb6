"""The claim marks as docutils nodes, where each is stated, and the refusal of a foreign mark:
a mark the engine did not draw (:func:`drawn`), from raw HTML, a notebook's output or a
``:class:`` option, is written as inert text, with one warning per page."""

import re
from collections.abc import Mapping
from pathlib import Path

from bs4 import BeautifulSoup
from docutils import nodes
from sphinx.util import logging

from claimbook.claims import STATES
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.chapter_pages import chapter_docname

logger = logging.getLogger(__name__)

DRAWN = "trainable-drawn-mark"  # the node attribute of a mark the engine drew
_MARKS = ("claim-badge", "claim-value", "claim-mark", "claim-legend-mark")
MARK_CLASSES = frozenset({*_MARKS, *model.STATE_CLASSES.values()})
_ATTRIBUTE = re.compile(r"\bdata-claim-state\b", re.I)

# The mark of a common account that the book's measurement contradicts, and what it says.
ACCOUNT_MARK = "\u21af"  # downwards zigzag arrow, the logician's sign of a contradiction
ACCOUNT_WORDS = "contradicted by measurement in this setting"
LEGEND_WORDS = dict.fromkeys(
    ("verified", "refuted"), "a number the book recomputes and checks on every build"
) | {
    "failed": "a number whose latest check failed",
    "stale": "a number computed by code that has changed since",
    "not run": "a number not computed yet",
}


def badge_node(docname: str, summary: Mapping) -> nodes.reference:
    """The badge of a ``summary_of`` or ``describe`` on page ``docname``: id and state word,
    linking to the claim's page (its state in attribute ``claim-state``)."""
    claim_id, state = summary["id"], summary["state"]
    node = nodes.reference(
        "",
        "",
        nodes.inline("", claim_id, classes=["claim-id"]),
        nodes.inline("", model.STATE_WORDS[state], classes=["claim-state"]),
        refuri=model.relative_uri(docname, model.page_path(claim_id)),
        reftitle=model.badge_hover(summary),
        classes=["claim-badge", model.STATE_CLASSES[state]],
    )
    node["claim-state"] = state
    return drawn(node)


def statement_nodes(text: str) -> list[nodes.Node]:
    """A statement's text, its math (LaTeX between two ``$``) as math nodes, for MathJax."""
    parts = re.split(r"\$([^$]+)\$", text)
    return [
        nodes.math(part, part) if index % 2 else nodes.Text(part)
        for index, part in enumerate(parts)
    ]


def place_links(docname: str, info: Mapping, *, inline: bool = False) -> nodes.Node:
    """Links to the first place in each section that states the claim: a bullet list of
    "chapter, section", or ``inline`` the sections separated by semicolons."""
    if not info["stated_in"]:
        return nodes.paragraph("", "not stated on any page")
    first: dict[tuple, dict] = {}  # a section may state a claim several times
    for place in info["stated_in"]:
        first.setdefault((place["page"], place["section"]), place)
    links = []
    for place in first.values():
        label = place["section"]
        if not inline and label != place["chapter"]:
            label = f"{place['chapter']}, {label}"
        uri = model.relative_uri(docname, place["page"]) + "#" + place["anchor"]
        links.append(nodes.reference("", label, refuri=uri))
    if inline:
        separated = [part for link in links for part in (nodes.Text("; "), link)]
        return nodes.paragraph("", "", *separated[1:])
    items = [nodes.list_item("", nodes.paragraph("", "", link)) for link in links]
    return nodes.bullet_list("", *items, classes=["claim-places"])


def legend_parts(states, accounts: bool) -> list:
    """The legend of a page's marks up to its link, as text (``str``) and ``(mark, class)``:
    one entry per mark the numbers in ``states`` carry, then the account mark if ``accounts``."""
    entries = {}  # mark: (CSS class, words); a refuted claim's numbers carry the check mark
    for state in (state for state in STATES if state in states):
        entries.setdefault(
            model.STATE_MARKS[state], (model.NUMBER_CLASSES[state], LEGEND_WORDS[state])
        )
    if accounts:
        entries[ACCOUNT_MARK] = (
            model.STATE_CLASSES["refuted"],
            f"a common account, {ACCOUNT_WORDS}",
        )
    parts: list = ["Marks on this page: "]
    for index, (mark, (css, words)) in enumerate(entries.items()):
        parts += ["; "] * bool(index) + [(mark, css), f" {words}"]
    return [*parts, ". "]


def number_said(state: str) -> str:
    """What a bound number says to a screen reader: its state unless it is checked (a refuted
    claim's numbers are the book's verified measurement)."""
    return "" if state in ("verified", "refuted") else f" ({state}, not checked)"


def mark_legend(states: list[str], accounts: bool, uri: str) -> nodes.paragraph:
    """The legend of a page's marks (:func:`legend_parts`), linking to ``uri``."""
    legend = nodes.paragraph(classes=["claim-legend"])
    for part in legend_parts(states, accounts):
        if isinstance(part, str):
            legend += nodes.Text(part)
        else:
            legend += drawn(nodes.inline("", part[0], classes=["claim-legend-mark", part[1]]))
    legend += nodes.reference("", "How this book checks its numbers", refuri=uri)
    return legend


def note_math(env, pagename: str) -> None:
    """Load MathJax on page ``pagename``, whose math Sphinx's math domain did not see."""
    env.get_domain("math").data.setdefault("has_equations", {})[pagename] = True


def drawn(node: nodes.Element) -> nodes.Element:
    """Flag ``node`` as a claim mark the engine drew (from a judged state); return it."""
    node[DRAWN] = True
    return node


def foreign_mark(html: str) -> str | None:
    """What in ``html`` draws a claim mark ("class claim-badge"), or None.

    >>> foreign_mark('<span class="claim-badge claim-verified">x</span>')
    'class claim-badge'
    >>> foreign_mark("<p class='claim-line'>a claim-verified word</p>") is None
    True
    """
    if "claim-" not in html and "data-claim" not in html.lower():
        return None
    for element in BeautifulSoup(html, "html.parser").find_all(True):
        found = [name for name in element.get("class") or [] if name in MARK_CLASSES]
        if found:
            return f"class {found[0]}"
        if any(_ATTRIBUTE.fullmatch(name) for name in element.attrs):
            return "attribute data-claim-state"
    return None


def refuse_foreign_marks(app, doctree, docname) -> None:
    """Write every claim mark the engine did not draw as inert text; warn once per page."""
    first = None
    for node in list(doctree.findall(nodes.Element)):
        if isinstance(node, nodes.raw):
            html = "html" in str(node.get("format", "")).split()
            what = foreign_mark(node.astext()) if html else None
            if what is None:
                continue
            output = "output" in node.get("classes", [])
            kind = "an HTML output of a code cell" if output else "raw HTML"
            inline = isinstance(node.parent, nodes.TextElement)
            inert = nodes.literal if inline else nodes.literal_block
            node.replace_self(inert(node.astext(), node.astext()))
        else:
            found = [name for name in node.get("classes", []) if name in MARK_CLASSES]
            if not found or node.get(DRAWN):
                continue
            what, kind = f"class {found[0]}", f"a {node.tagname} element"
            node["classes"] = [name for name in node["classes"] if name not in MARK_CLASSES]
        first = first or (kind, what)
    if first is not None:
        srcdir, source = Path(app.srcdir), docname
        chapter = srcdir / f"{chapter_docname(app.env, docname)}.md"
        for candidate in (chapter, Path(app.env.doc2path(docname))):
            if candidate.is_file():
                source = candidate.relative_to(srcdir).as_posix()
                break
        logger.warning(
            "%s: %s draws a claim mark (%s); only the engine draws claim marks",
            source,
            *first,
            type="trainable",
            subtype="claim-mark",
        )


def _places(env) -> dict:
    """docname -> the places on that page that state a claim."""
    return env.domaindata.setdefault("trainable_claims", {}).setdefault("references", {})


def warn(env, location, message: str) -> None:
    """Warn, and have the page read again next build, so that it warns again."""
    logger.warning(message, location=location)
    env.note_reread()


def mark_statement(node, env, claim_id: str, kind: str) -> None:
    """Give ``node`` an anchor and note it as a place that states ``claim_id``."""
    node["ids"].append(f"claim-{claim_id}-{env.new_serialno('trainable-claim')}")
    node["trainable-claim"] = claim_id
    node["trainable-claim-kind"] = kind


def _collect_places(app, doctree) -> None:
    """Record the places of this page that state a claim, with their sections."""
    found = []
    for node in doctree.findall(lambda n: isinstance(n, nodes.Element) and "trainable-claim" in n):
        section = next(iter(sections_of(node)), None)
        found.append(
            {
                "claim": node["trainable-claim"],
                "kind": node["trainable-claim-kind"],
                "anchor": node["ids"][0],
                "section_id": section["ids"][0] if section is not None and section["ids"] else "",
                "section": section[0].astext() if section is not None else "",
                "cited": node.get("trainable-claim-cited"),
            }
        )
    _places(app.env)[app.env.docname] = found


def sections_of(node: nodes.Node) -> list[nodes.section]:
    """The sections that hold ``node``, innermost first."""
    sections, parent = [], node.parent
    while parent is not None:
        if isinstance(parent, nodes.section):
            sections.append(parent)
        parent = parent.parent
    return sections


def _purge(app, env, docname) -> None:
    _places(env).pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    theirs = _places(other)
    _places(env).update({name: theirs[name] for name in docnames if name in theirs})


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
    """Claim id -> the places that state it, labelled as the book numbers them, in order."""
    by_claim: dict[str, list[dict]] = {}
    for docname, found in sorted(_places(env).items()):
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


def setup_places(app) -> None:
    app.connect("doctree-read", _collect_places)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
