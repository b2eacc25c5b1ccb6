"""The claim pages as a learner reads them (`make site-check`, after `make`): the statement's
math rendered, a card per field that fits a phone, numbers as the prose writes them, and
axe-core's accessibility rules met at 390 and 1366 px in light and dark mode.

Expectations come from the registry, the chapters' bound numbers and ``claims.json``, never
from the claim pages themselves.
"""

import json
import re

import pytest

from claimbook import claims
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

# How tall a claim page may be on a phone (844 px of screen), its details closed. The
# reviewer measured 14 000 px, mostly the digests of the functions a claim ran (collapsed
# now): a page is its cards, each with its reasons, and at most five screens of the rest
# (headline, account, mistakes, places, commands).
SCREEN = 844
CARD_SCREENS = 1.5
REST_SCREENS = 5


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


FITS = """() => {
  const cards = [...document.querySelectorAll('.claim-card')].map(c => c.getBoundingClientRect());
  return {
    width: document.documentElement.scrollWidth,
    viewport: document.documentElement.clientWidth,
    height: document.documentElement.scrollHeight,
    wide: cards.filter(c => c.right > document.documentElement.clientWidth + 1).length,
    tallest: Math.max(0, ...cards.map(c => c.height)),
    cards: cards.reduce((sum, c) => sum + c.height, 0),
  };
}"""


def test_every_claim_page_fits_a_phone_with_its_details_closed_and_open(browser, served_site):  # noqa: F811
    page = browser.new_page(viewport={"width": PHONE, "height": SCREEN})
    failures = []
    for path in _claim_pages():
        _open(page, f"{served_site}/claims/{path.name}")
        closed = page.evaluate(FITS)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        opened = page.evaluate(FITS)
        for state, fit in (("closed", closed), ("open", opened)):
            if fit["width"] > fit["viewport"] or fit["wide"]:
                failures.append(f"{path.name} ({state}) scrolls sideways: {fit}")
        if closed["tallest"] > CARD_SCREENS * SCREEN:
            failures.append(f"{path.name}: a card is {closed['tallest']:.0f} px tall")
        if closed["height"] - closed["cards"] > REST_SCREENS * SCREEN:
            failures.append(
                f"{path.name}: {closed['height'] - closed['cards']:.0f} px besides cards"
            )
        if not opened["height"] > closed["height"]:
            failures.append(f"{path.name}: its details are not collapsed")
        cards = page.locator(".claim-card").count()
        if cards != len(claims.load_claim(path.stem).expect):
            failures.append(f"{path.name}: {cards} cards")
    page.close()
    assert failures == [], "\n".join(failures)


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
