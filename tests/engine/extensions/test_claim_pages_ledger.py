"""claimbook.extensions.claim_pages, the ledger: the groups, the statement cell (its math),
and a ledger read on every build.

The ledger itself, on a built book (its groups, badges and places), is tested with the claim
extensions on the fixture books (tests/engine/extensions/test_claims.py)."""

from types import SimpleNamespace

from docutils import nodes

from claimbook.extensions import claim_pages

ACCOUNT = {"account": "It reduces the shift.", "source": "A paper, 2015, section 2"}


def test_a_claim_without_an_account_shows_its_statement_alone():
    cell = claim_pages._statement_cell({"statement": "Two maps agree.", "state": "verified"})
    assert isinstance(cell, nodes.paragraph) and cell.astext() == "Two maps agree."


def test_a_refuted_account_is_shown_beside_the_statement_as_refuted():
    cell = claim_pages._statement_cell(
        {"statement": "The shift does not predict speed.", "state": "refuted", "refutes": ACCOUNT}
    )
    statement, account = cell.children
    assert statement.astext() == "The shift does not predict speed."
    assert account.astext() == "Account refuted: It reduces the shift. (A paper, 2015, section 2)"
    assert "claim-ledger-account" in account["classes"]


def test_an_account_of_a_claim_not_refuted_is_the_account_it_tests():
    for state in ("verified", "failed", "stale", "not run"):
        cell = claim_pages._statement_cell({"statement": "s", "state": state, "refutes": ACCOUNT})
        assert cell.children[1].astext().startswith("Account it tests: It reduces the shift.")


def test_every_page_holding_a_ledger_is_read_again_on_every_build(tmp_path, monkeypatch):
    monkeypatch.setattr(claim_pages.paths, "CLAIMS_DIR", tmp_path)
    monkeypatch.setattr(claim_pages.paths, "CLAIM_ARTIFACTS_DIR", tmp_path / "absent")
    (tmp_path / "c15-x-001.yaml").write_text("id: c15-x-001\n")
    reread, dependencies = [], []
    env = SimpleNamespace(
        note_reread=lambda: reread.append(True), note_dependency=dependencies.append
    )
    placeholder = claim_pages.ClaimLedgerDirective.run(SimpleNamespace(env=env))
    assert isinstance(placeholder[0], claim_pages.claim_ledger)
    assert reread == [True]  # Sphinx reads it again on every build (env.reread_always)
    assert dependencies == [str(tmp_path / "c15-x-001.yaml")]


# --- the ledger's groups ----------------------------------------------------------------------


def _info(claim_id, chapter, state, stated_in=()):
    return {
        "id": claim_id,
        "chapter": chapter,
        "state": state,
        "reason": "why",
        "statement": f"Claim {claim_id}.",
        "stated_in": list(stated_in),
    }


def _place(page, serial, chapter):
    return {"page": page, "anchor": f"claim-x-{serial}", "chapter": chapter, "section": "s"}


def _groups(ledger: nodes.container) -> dict:
    """Group id -> [(chapter rubric, [claim ids of its table])], from the ledger's nodes."""
    groups = {}
    for node in ledger.children[1:]:
        if "claim-ledger-group" in node["classes"]:
            chapters = groups.setdefault(node["classes"][1].removeprefix("claim-ledger-"), [])
        elif isinstance(node, nodes.rubric):
            chapters.append((node.astext(), []))
        else:
            badges = [r for r in node.findall(nodes.reference) if "claim-badge" in r["classes"]]
            chapters[-1][1].extend(badge.children[0].astext() for badge in badges)
    return groups


def test_the_ledger_groups_by_chapter_in_the_order_the_book_states_claims():
    described_claims = [
        _info("c16-b-001", 16, "failed", [_place("chapters/b.html", 2, "16. B")]),
        _info("c15-z-001", 15, "verified", [_place("chapters/a.html", 9, "15. A")]),
        _info("c15-y-001", 15, "refuted", [_place("chapters/a.html", 10, "15. A")]),
        _info("c15-a-001", 15, "not run"),  # stated nowhere: last
        _info("c15-x-001", 15, "verified", [_place("chapters/a.html", 4, "15. A")]),
    ]
    ledger = claim_pages.ledger("claims", described_claims)
    assert ledger.children[0].astext() == (
        "5 claims: 2 verified results, 1 refuted account, 1 failed, 1 not run."
    )
    # Failing first, then the verified results, then the refuted accounts.
    groups = _groups(ledger)
    assert list(groups) == ["failing", "verified", "refuted"]
    assert groups["failing"] == [
        ("Chapter 15. A", ["c15-a-001"]),  # titled from a claim of the chapter stated elsewhere
        ("Chapter 16. B", ["c16-b-001"]),
    ]
    # Anchor serial 4 before 9 (numerically, not as text).
    assert groups["verified"] == [("Chapter 15. A", ["c15-x-001", "c15-z-001"])]
    assert groups["refuted"] == [("Chapter 15. A", ["c15-y-001"])]


def test_a_chapter_whose_claims_are_stated_nowhere_is_titled_by_its_number():
    ledger = claim_pages.ledger("claims", [_info("c17-a-001", 17, "verified")])
    # Empty groups left out.
    assert _groups(ledger) == {"verified": [("Chapter 17", ["c17-a-001"])]}
    assert ledger.children[0].astext() == "1 claim: 1 verified result."


def test_a_statement_cell_renders_the_math_of_the_statement():
    cell = claim_pages._statement_cell(
        {"statement": "It falls like $B^{-1/2}$.", "state": "verified"}
    )
    # The statement as a claim page writes it, its math for MathJax.
    assert [type(node) for node in cell.children] == [nodes.Text, nodes.math, nodes.Text]
    assert cell.children[1].astext() == "B^{-1/2}"
