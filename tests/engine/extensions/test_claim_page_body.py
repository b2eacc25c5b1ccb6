"""claimbook.extensions.claim_page_body: a claim page's body, from a description made here
(the page as built, in a browser, is the site tier's: tests/site/test_claim_pages.py)."""

from docutils import nodes

from claimbook.extensions.claim_page_body import claim_page, section

FIELD = {
    "field": "gap_b64",
    "words": "gap b64",
    "measured": "0.075 (95% CI 0.073 to 0.077)",
    "expected_words": "The 95% CI lies within 0.06 to 0.09.",
    "reason": "Eight times smaller than at B = 1.",
    "passed": True,
    "tolerance_over_se": "14 standard errors of the seeds' mean.",
    "wide_because": "No value is derived at B = 64.",
}


def info(catches=(), **changes) -> dict:
    described = {
        "id": "c16-toy-001",
        "state": "verified",
        "reason": "",
        "statement": "The gap falls like $B^{-1/2}$.",
        "kind": "statistical",
        "refutes": None,
        "chapter": 16,
        "fields": [FIELD],
        "statistics": {
            "gap_b64": {
                "mean": 0.075,
                "ci": [0.073, 0.077],
                "level": 0.95,
                "method": "t",
                "per_seed": [0.07, 0.08],
            }
        },
        "seeds": [11, 12],
        "contract": {"dtype": "FP64"},
        "compute": "pkg.witness",
        "key": {"digest": "d" * 64, "modules": {"trainable_harness.layers": "e" * 64}},
        "registry_digest": "f" * 64,
        "provenance": {"numpy": "2.4.0"},
        "error": None,
        "page": "claims/c16-toy-001.html",
        "record": "claims/c16-toy-001.json",
        "stated_in": [],
        "catches": list(catches),
    }
    return described | changes


def test_the_statement_renders_its_math():
    (quote,) = [n for n in claim_page(info()).findall(nodes.block_quote)]
    assert "claim-statement" in quote["classes"]
    assert [n.astext() for n in quote.findall(nodes.math)] == ["B^{-1/2}"]


def test_each_field_is_a_card_of_whole_sentences():
    page = claim_page(info())
    (card,) = [n for n in page.findall(nodes.container) if "claim-card" in n["classes"]]
    assert "claim-card-met" in card["classes"]
    terms = {
        item[0].astext(): item[1].astext() for item in card.findall(nodes.definition_list_item)
    }
    assert terms == {
        "Measured": "0.075 (95% CI 0.073 to 0.077)",
        "Expected": "The 95% CI lies within 0.06 to 0.09.",
        "Why": "Eight times smaller than at B = 1.",
        "Width": "14 standard errors of the seeds' mean.",
        "Why so wide": "No value is derived at B = 64.",
        "Result": "Met.",
    }
    assert card[0].astext() == "Gap b64 gap_b64"  # its name in words, then as in the code


def test_a_field_not_run_says_so():
    page = claim_page(info(fields=[FIELD | {"passed": None, "measured": None}]))
    text = page.astext()
    assert "Not measured yet." in text and "Result: " not in text and "Not run." in text


def test_provenance_and_digests_are_collapsed_at_the_end():
    page = claim_page(info())
    last = page.children[-1]
    assert last["ids"] == ["details"]
    opening, closing = last.children[0], last.children[-1]
    assert isinstance(opening, nodes.raw) and opening.astext().startswith("<details><summary>")
    assert isinstance(closing, nodes.raw) and closing.astext() == "</details>"
    text = last.astext()
    assert "e" * 64 in text and "f" * 64 in text and "2.4.0" in text
    assert "2 seeds: 11, 12." in text and "c16-toy-001.json" in text
    before = "".join(part.astext() for part in page.children[:-1])
    assert "e" * 64 not in before  # no digest shows before the reader opens the details


CATCH = {"perturbation": "chapter16.ghost_batches_not_split", "says": "ghost batch norm errs"}


def _catch_line(catch) -> str:
    (catches,) = [
        n for n in claim_page(info([catch])).findall(nodes.section) if "catches" in n["ids"]
    ]
    (item,) = catches.findall(nodes.list_item)
    return item.astext()


def test_a_mistake_caught_names_the_fields_that_went_red():
    line = _catch_line(CATCH | {"state": "caught", "failed_fields": ["gap_b64"]})
    assert line == "Ghost batches not split: Ghost batch norm errs. Caught by gap b64."


def test_a_mistake_caught_names_its_red_fields_and_which_are_pinned_values():
    red = [{"field": "gap_b64", "role": "subject"}, {"field": "gap_b1", "role": "pinned"}]
    line = _catch_line(CATCH | {"state": "caught", "red": red})
    assert line.endswith("Caught by gap b64, gap_b1 (a pinned value).")  # gap_b1: no card


def test_a_mistake_that_broke_the_computation_is_not_a_catch():
    line = _catch_line(CATCH | {"state": "not caught", "error": "ZeroDivisionError: x"})
    assert line.endswith("Not caught: the computation raised an error under it.")


def test_a_mistake_caught_without_a_record_of_its_fields_says_caught():
    assert _catch_line(CATCH | {"state": "caught"}).endswith("errs. Caught.")


def test_a_mistake_not_caught_or_not_run_says_so_honestly():
    assert _catch_line(CATCH | {"state": "not caught"}).endswith(
        "Not caught: every field still meets its expectation."
    )
    assert _catch_line(CATCH | {"state": "not yet run"}).endswith(
        "Not run yet for this version of the claim and the book's code."
    )


def test_a_section_has_its_id_and_title():
    node = section("what-it-catches", "What it catches")
    assert node["ids"] == ["what-it-catches"] and node.children[0].astext() == "What it catches"
