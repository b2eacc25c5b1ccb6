"""The claim pages as a learner reads them (`make site-check`, after `make`): the statement's
math rendered, numbers as the prose writes them, and axe-core's accessibility rules met at 390
and 1366 px in light and dark mode, the details open. That every claim page fits a phone, a
card per field, is checked in the site's pass over every page at 390 px
(``test_site._check_claim_page_fits``).

Expectations come from the registry, the chapters' bound numbers and ``claims.json``, never
from the claim pages themselves.
"""

import json
import re

import pytest

from tests.site.test_site import (
    PHONE,
    READY,
    SITE,
    _in_each_scheme,
    browser,  # noqa: F401 (a fixture)
    served_site,  # noqa: F401 (a fixture)
    site_pages,
    soup_of,
)

pytestmark = pytest.mark.site


def _claim_pages():
    return [page for page in site_pages() if page.parent == SITE / "claims"]


def _ledger():
    return json.loads((SITE / "claims.json").read_text(encoding="utf-8"))["claims"]


def test_every_claim_page_renders_its_statement_and_its_math():
    statements = {info["id"]: info["statement"] for info in _ledger()}
    with_math = 0
    for page in _claim_pages():
        quote = soup_of(page).select_one("blockquote.claim-statement")
        assert quote is not None, page.name
        math = quote.select("span.math")
        assert len(math) == statements[page.stem].count("$") // 2, page.name
        assert "$" not in quote.get_text(), page.name
        with_math += bool(math)
    assert with_math >= len(_claim_pages()) // 2  # the statements' math is LaTeX now


# A bound number the prose writes for a whole field (not one of its parts: .mean, .ci).
def _bound_numbers():
    cited = {}
    for stem in ("normalization-invariance", "batch-normalization"):
        source = (SITE.parent.parent / "chapters" / f"{stem}.md").read_text(encoding="utf-8")
        for claim_id, field, spec in re.findall(
            r"\{claim-value\}`([a-z0-9-]+)\.([^`:]+):?([^`]*)`", source
        ):
            cited.setdefault((claim_id, field), spec)
    return cited


def test_a_claim_page_writes_a_field_as_the_prose_does():
    """Every field the prose states whole reads the same on its claim page: the card's
    number is the prose's text for it (one formatter, the prose's format spec)."""
    shown_in_prose = {}
    for page in site_pages():
        if page.parent.name != "chapters":
            continue
        for number in soup_of(page).select("a.claim-value"):
            shown_in_prose.setdefault(number["data-claim"], set()).add(
                number.select_one(".claim-number").get_text()
            )
    checked = 0
    fields = {info["id"]: {f["field"]: f for f in info["fields"]} for info in _ledger()}
    for (claim_id, field), _spec in sorted(_bound_numbers().items()):
        row = fields.get(claim_id, {}).get(field)
        if row is None or row["measured"] is None:
            continue  # a part of a field (gap.mean), or a field of a nested result
        assert row["measured"] in shown_in_prose[claim_id], (claim_id, field, row["measured"])
        card = soup_of(SITE / "claims" / f"{claim_id}.html").get_text(" ")
        assert row["measured"] in card, (claim_id, field)
        checked += 1
    assert checked >= 40, checked  # most of the book's bound numbers are whole fields


def _open(page, url):
    page.goto(url, wait_until="load")
    page.evaluate(READY)


@pytest.mark.parametrize("width", [PHONE, 1366])
def test_a_claim_page_meets_axe_core_in_light_and_dark_mode(browser, served_site, width):  # noqa: F811
    """The longest claim page (the most cards, account and math) at both widths, the whole
    page at each (the site's own pass checks the chrome at 1366 px)."""
    page = browser.new_page(viewport={"width": width, "height": 844})
    _open(page, f"{served_site}/claims/c16-small-batch-001.html")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    found = _in_each_scheme(page, PHONE, badges_expected=True)  # PHONE: the whole page
    page.close()
    assert found == []
