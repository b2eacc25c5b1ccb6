"""The claim ledger: a ``claim-ledger`` directive listing every claim by chapter and section.

The directive leaves a placeholder, filled once every page is read (:func:`ledger_groups`): a
count by state, then per group (failing, verified, refuted) and chapter a table of badge,
sections that state it and statement (with the account it tests). Its page is read again on
every build. Set up by :mod:`.claim_pages`.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from claimbook import paths
from claimbook.claims.judgement import STATES
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import (
    badge_node,
    note_math,
    place_links,
    statement_nodes,
    table,
)
from claimbook.extensions.claim_pages import describe_all

LEDGER_GROUPS = (
    ("failing", "Failing: the build fails until these are fixed", ("failed", "stale", "not run")),
    ("verified", "Verified results", ("verified",)),
    (
        "refuted",
        "Refuted accounts: verified measurements that contradict a common account",
        ("refuted",),
    ),
)
_SUMMARY_WORDS = {
    "verified": ("verified result", "verified results"),
    "refuted": ("refuted account", "refuted accounts"),
}


def _counted(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _ledger_order(info: dict):
    """Claims in the order the book first states them; unstated claims last, by id."""
    if not info["stated_in"]:
        return (1, "", 0, info["id"])
    first = info["stated_in"][0]
    return (0, first["page"], int(first["anchor"].rsplit("-", 1)[1]), info["id"])


def ledger_groups(described: list[dict]) -> dict:
    """The ledger: ``{"summary", "groups": [{"id", "title", "chapters": [{"title",
    "claims"}]}]}``: claims by :data:`LEDGER_GROUPS` (an empty one left out), then by chapter
    in number order (titled as the book labels it), then in the order the book states them.
    """
    titles = {}  # chapter -> its label where the book first states one of its claims
    for info in described:
        if info["stated_in"]:
            titles.setdefault(info["chapter"], info["stated_in"][0]["chapter"])
    groups = []
    for key, title, states in LEDGER_GROUPS:
        members = sorted(
            (info for info in described if info["state"] in states), key=_ledger_order
        )
        chapters = [
            {
                "title": f"Chapter {titles.get(chapter, chapter)}",
                "claims": [info for info in members if info["chapter"] == chapter],
            }
            for chapter in sorted({info["chapter"] for info in members})
        ]
        if chapters:
            groups.append({"id": key, "title": title, "chapters": chapters})
    counts = {state: sum(info["state"] == state for info in described) for state in STATES}
    shown = ", ".join(
        _counted(counts[state], *_SUMMARY_WORDS.get(state, (state, state)))
        for state in STATES
        if counts[state]
    )
    return {
        "summary": f"{_counted(len(described), 'claim', 'claims')}: {shown}.",
        "groups": groups,
    }


class claim_ledger(nodes.General, nodes.Element):
    """Placeholder for the ledger, filled in once every page has been read."""


def _ledgers(env) -> set:
    return env.domaindata.setdefault("trainable_claims", {}).setdefault("ledgers", set())


class ClaimLedgerDirective(SphinxDirective):
    """``claim-ledger`` -- every claim by chapter and section, with state and statement."""

    def run(self):
        _ledgers(self.env).add(self.env.docname)
        for directory in (paths.CLAIMS_DIR, paths.CLAIM_ARTIFACTS_DIR):
            for path in sorted(directory.iterdir()) if directory.is_dir() else ():
                if path.is_file():
                    self.env.note_dependency(str(path))
        return [claim_ledger()]


def _purge_ledger(app, env, docname) -> None:
    _ledgers(env).discard(docname)


def _merge_ledgers(app, env, docnames, other) -> None:
    theirs = other.domaindata.get("trainable_claims", {}).get("ledgers", set())
    _ledgers(env).update(theirs & set(docnames))


def _ledger_outdated(app, env, added, changed, removed):
    """Re-read the ledger on every build: it shows what every other page and artifact says,
    and a build with an outdated page goes on to judge every claim again."""
    return sorted(env.domaindata.get("trainable_claims", {}).get("ledgers", set()))


def _statement_cell(info) -> nodes.Node:
    statement = nodes.paragraph("", "", *statement_nodes(info["statement"]))
    account = model.account_line(info.get("refutes"))
    if account is None:
        return statement
    said = "Account refuted: " if info["state"] == "refuted" else "Account it tests: "
    line = nodes.paragraph(
        "", "", nodes.strong("", said), nodes.Text(account), classes=["claim-ledger-account"]
    )
    return nodes.container("", statement, line, classes=["claim-ledger-statement"])


def _fill_ledger(app, doctree, docname) -> None:
    placeholders = list(doctree.findall(claim_ledger))
    if not placeholders:
        return
    shown = ledger_groups(describe_all(app.env))
    note_math(app.env, docname)  # the statements' math
    ledger = nodes.container(classes=["claim-ledger"])
    ledger += nodes.paragraph("", shown["summary"], classes=["claim-ledger-summary"])
    for group in shown["groups"]:
        classes = ["claim-ledger-group", f"claim-ledger-{group['id']}"]
        ledger += nodes.rubric("", group["title"], classes=classes)
        for chapter in group["chapters"]:
            ledger += nodes.rubric("", chapter["title"], classes=["claim-ledger-chapter"])
            rows = [
                [
                    badge_node(docname, model.badge(info)),
                    place_links(docname, info, inline=True),
                    _statement_cell(info),
                ]
                for info in chapter["claims"]
            ]
            ledger += table(["claim", "stated in", "statement"], rows, ["claim-ledger-table"])
    for placeholder in placeholders:
        placeholder.replace_self(ledger.deepcopy())


def setup(app):
    app.add_node(claim_ledger)
    app.add_directive("claim-ledger", ClaimLedgerDirective)
    app.connect("env-get-outdated", _ledger_outdated)
    app.connect("env-purge-doc", _purge_ledger)
    app.connect("env-merge-info", _merge_ledgers)
    app.connect("doctree-resolved", _fill_ledger)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
