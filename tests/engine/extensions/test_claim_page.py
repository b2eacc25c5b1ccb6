"""claimbook.extensions.claim_pages: a claim page's body, from a description made here (the
page as built, in a browser, is the site tier's: tests/site/test_claim_pages.py)."""

import html

import pytest
from bs4 import BeautifulSoup
from docutils import nodes

from claimbook.extensions.claim_pages import claim_page, searched_text, shown


def _render(node) -> str:
    """The docutils parts (state line, statement, places) as their text, in a paragraph; math
    as Sphinx writes it for MathJax."""
    parts = [
        f'<span class="math">\\({html.escape(part.astext())}\\)</span>'
        if isinstance(part, nodes.math)
        else html.escape(part.astext())
        for part in node.children
    ]
    return f"<p>{''.join(parts)}</p>\n"


def page(described: dict) -> BeautifulSoup:
    return BeautifulSoup(claim_page(described, _render), "html.parser")


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
    (quote,) = page(info()).select("blockquote.claim-statement")
    assert [n.get_text() for n in quote.select("span.math")] == ["\\(B^{-1/2}\\)"]


def _terms(card) -> dict:
    return {dt.get_text(): dt.find_next_sibling("dd").get_text().strip() for dt in card("dt")}


def test_each_field_is_a_card_of_whole_sentences():
    (card,) = page(info()).select("div.claim-card")
    assert "claim-card-met" in card["class"]
    assert _terms(card) == {
        "Measured": "0.075 (95% CI 0.073 to 0.077)",
        "Expected": "The 95% CI lies within 0.06 to 0.09.",
        "Why": "Eight times smaller than at B = 1.",
        "Width": "14 standard errors of the seeds' mean.",
        "Why so wide": "No value is derived at B = 64.",
        "Result": "Met.",
    }
    title = card.select_one("p.claim-card-title").get_text()
    assert title == "Gap b64 gap_b64"  # its name in words, then as in the code


def test_a_field_not_run_says_so():
    (card,) = page(info(fields=[FIELD | {"passed": None, "measured": None}])).select(
        "div.claim-card"
    )
    assert "claim-card-not-run" in card["class"]
    terms = _terms(card)
    assert terms["Measured"] == "Not measured yet." and terms["Result"] == "Not run."


def test_provenance_and_digests_are_collapsed_at_the_end():
    body = claim_page(info(), _render)
    last = page(info()).select("section > div")[-1]
    assert last["id"] == "details" and body.rstrip().endswith("</details></div>\n</section>")
    assert str(last).startswith(
        '<div class="claim-details docutils container" id="details">\n<details><summary>'
    )
    text = last.get_text()
    assert "e" * 64 in text and "f" * 64 in text and "2.4.0" in text
    assert "2 seeds: 11, 12." in text and "c16-toy-001.json" in text
    assert "e" * 64 not in body[: body.index('id="details"')]  # none before the details


def test_what_a_reader_searches_has_no_commands_and_no_digests():
    searched = searched_text(claim_page(info(), _render))
    assert "gap_b64" in searched and "Gap b64" in searched
    assert "e" * 64 not in searched and "verify_claim" not in searched


def test_without_a_record_or_places_the_page_says_so():
    text = page(info(record=None, error="ValueError: x")).get_text()
    assert "No record is published: there is none, or it is not a regular file." in text
    assert "The computation reported: ValueError: x" in text


CATCH = {"perturbation": "chapter16.ghost_batches_not_split", "says": "ghost batch norm errs"}


def _catch_line(catch) -> str:
    (item,) = page(info([catch])).select("#catches li")
    return item.get_text()


def test_a_mistake_caught_names_the_fields_that_went_red():
    line = _catch_line(CATCH | {"state": "caught", "red": [{"field": "gap_b64"}]})
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


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        (None, "\u2014"),
        ("text as it is", "text as it is"),
        (0.1, "0.1"),
        ([1, 2], "[1, 2]"),
        ({"b": 1, "a": 2}, '{"a": 2, "b": 1}'),
        (True, "true"),
    ],
)
def test_a_cell_shows_text_as_it_is_and_anything_else_as_json(value, cell):
    assert shown(value) == cell


def test_the_registry_digest_is_listed_once_whether_or_not_the_key_holds_it():
    key = {"digest": "d" * 64, "registry_digest": "f" * 64, "modules": {}}
    for described in (info(), info(key=key)):
        assert page(described).select_one("#details").get_text().count("f" * 64) == 1
