"""claimbook.extensions.claim_ledger: the statement cell, and a ledger read on every build.

The ledger itself, on a built book (its groups, badges and places), is tested with the claim
extensions on the fixture books (tests/engine/extensions/test_claims.py)."""

from types import SimpleNamespace

from docutils import nodes

from claimbook.extensions import claim_ledger

ACCOUNT = {"account": "It reduces the shift.", "source": "A paper, 2015, section 2"}


def test_a_claim_without_an_account_shows_its_statement_alone():
    cell = claim_ledger._statement_cell({"statement": "Two maps agree.", "state": "verified"})
    assert isinstance(cell, nodes.paragraph) and cell.astext() == "Two maps agree."


def test_a_refuted_account_is_shown_beside_the_statement_as_refuted():
    cell = claim_ledger._statement_cell(
        {"statement": "The shift does not predict speed.", "state": "refuted", "refutes": ACCOUNT}
    )
    statement, account = cell.children
    assert statement.astext() == "The shift does not predict speed."
    assert account.astext() == "Account refuted: It reduces the shift. (A paper, 2015, section 2)"
    assert "claim-ledger-account" in account["classes"]


def test_an_account_of_a_claim_not_refuted_is_the_account_it_tests():
    for state in ("verified", "failed", "stale", "not run"):
        cell = claim_ledger._statement_cell({"statement": "s", "state": state, "refutes": ACCOUNT})
        assert cell.children[1].astext().startswith("Account it tests: It reduces the shift.")


def _environment(ledgers=()):
    return SimpleNamespace(domaindata={"trainable_claims": {"ledgers": set(ledgers)}})


def test_every_page_holding_a_ledger_is_read_again_on_every_build():
    env = _environment(["claims", "more/claims"])
    assert claim_ledger._ledger_outdated(None, env, set(), set(), set()) == [
        "claims",
        "more/claims",
    ]
    assert claim_ledger._ledger_outdated(None, SimpleNamespace(domaindata={}), (), (), ()) == []


def test_a_purged_page_leaves_the_ledgers_and_a_merge_keeps_only_the_merged_pages():
    env = _environment(["claims", "intro"])
    claim_ledger._purge_ledger(None, env, "intro")
    assert env.domaindata["trainable_claims"]["ledgers"] == {"claims"}
    other = _environment(["appendix", "elsewhere"])
    claim_ledger._merge_ledgers(None, env, ["appendix"], other)
    assert env.domaindata["trainable_claims"]["ledgers"] == {"claims", "appendix"}
