"""claimbook.extensions.claim_nodes: the one badge, tables, place links, the legend of a
page's marks; and what a bound number says."""

import pytest
from bs4 import BeautifulSoup
from docutils import nodes

from claimbook.extensions import claims as extension
from claimbook.extensions.claim_nodes import (
    ACCOUNT_MARK,
    ACCOUNT_WORDS,
    badge_node,
    mark_legend,
    place_links,
    statement_nodes,
)
from claimbook.extensions.claim_pages_model import STATE_WORDS, STATES


@pytest.mark.parametrize("state", STATES)
def test_the_badge_says_its_id_and_word_links_to_the_claim_page_and_keeps_the_state(state):
    summary = {"id": "c16-x-001", "state": state, "reason": "why", "statement": "A statement."}
    node = badge_node("chapters/batch-normalization", summary)
    claim_id, word = node.children
    assert claim_id.astext() == "c16-x-001" and "claim-id" in claim_id["classes"]
    assert word.astext() == STATE_WORDS[state] and "claim-state" in word["classes"]
    assert node["refuri"] == "../claims/c16-x-001.html"
    assert node["reftitle"].startswith("A statement.")
    assert node["classes"] == ["claim-badge", "claim-" + state.replace(" ", "-")]
    assert node["claim-state"] == state


def test_a_refuted_claims_badge_says_the_account_is_refuted():
    summary = {"id": "c16-x-001", "state": "refuted", "statement": "", "reason": ""}
    node = badge_node("claims", summary)
    assert node.children[1].astext() == "account refuted"
    assert node["refuri"] == "claims/c16-x-001.html" and node["claim-state"] == "refuted"


PLACES = [
    {"page": "chapters/a", "anchor": "p1", "chapter": "15. A", "section": "15.1 One"},
    {"page": "chapters/a", "anchor": "p2", "chapter": "15. A", "section": "15.1 One"},
    {"page": "chapters/a-more", "anchor": "p3", "chapter": "15. A", "section": "15. A"},
]


def test_a_claim_page_lists_the_first_place_in_each_section():
    node = place_links("claims/c-1", {"stated_in": PLACES})
    assert isinstance(node, nodes.bullet_list) and node["classes"] == ["claim-places"]
    links = list(node.findall(nodes.reference))
    assert [(r.astext(), r["refuri"]) for r in links] == [
        ("15. A, 15.1 One", "../chapters/a#p1"),
        ("15. A", "../chapters/a-more#p3"),
    ]


def test_a_ledger_row_lists_the_sections_inline_separated_by_semicolons():
    node = place_links("claims", {"stated_in": PLACES}, inline=True)
    assert isinstance(node, nodes.paragraph)
    assert node.astext() == "15.1 One; 15. A"


def test_a_claim_stated_nowhere_says_so():
    assert place_links("claims/c-1", {"stated_in": []}).astext() == "not stated on any page"


class _Writer:
    """Just enough of Sphinx's HTML translator for a node's visitor."""

    def __init__(self):
        self.body = []

    def starttag(self, node, tag, suffix, **attributes):
        return f"<{tag}>"

    def encode(self, text):
        return text


@pytest.mark.parametrize(
    ("state", "heard"),
    [
        ("verified", False),
        ("refuted", False),
        ("failed", True),
        ("stale", True),
        ("not run", True),
    ],
)
def test_a_number_says_its_state_only_when_it_is_not_checked(state, heard):
    # The legend says once per page what the check mark means; a number in any other state
    # says so itself, so a reader never takes a failed number for a checked one.
    node = extension._claim_value_node("c16-x-001", state, "1.0", "a statement", refuri="x.html")
    writer = _Writer()
    with pytest.raises(nodes.SkipNode):
        extension.visit_claim_value_html(writer, node)
    html = BeautifulSoup("".join(writer.body), "html.parser")
    assert html.select_one(".claim-mark")["aria-hidden"] == "true"
    said = html.select_one(".claim-sr").get_text().strip()
    assert bool(said) == heard, (state, said)
    if heard:
        assert state in said and "not checked" in said


def test_the_legend_lists_each_mark_once_with_the_account_mark_when_the_page_has_one():
    legend = mark_legend(["verified", "refuted", "verified"], True, "../checking.html#m")
    marks = [node.astext() for node in legend.findall(nodes.inline)]
    assert marks == ["\u2713", ACCOUNT_MARK]
    text = legend.astext()
    assert f"{ACCOUNT_MARK} a common account, {ACCOUNT_WORDS}" in text
    assert next(legend.findall(nodes.reference))["refuri"] == "../checking.html#m"
    failed = mark_legend(["failed", "verified"], False, "x.html")
    assert [node.astext() for node in failed.findall(nodes.inline)] == ["\u2713", "\u2717"]
    assert ACCOUNT_MARK not in failed.astext()


def test_a_statement_is_text_and_its_math_is_math_nodes():
    parts = statement_nodes("x < $B^{-1/2}$ & y")
    assert [(type(part), part.astext()) for part in parts] == [
        (nodes.Text, "x < "),
        (nodes.math, "B^{-1/2}"),
        (nodes.Text, " & y"),
    ]
