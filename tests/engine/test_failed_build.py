"""The banner a failed build leaves on a kept site, on a small site made by hand."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from bs4 import BeautifulSoup
from docutils.core import publish_from_doctree
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document
from scratch_book import point_paths_at

from claimbook import claims
from claimbook.extensions.claim_nodes import ACCOUNT_WORDS, mark_legend
from claimbook.extensions.claim_pages_model import measurement_lead
from claimbook.pipeline import site_outcome
from claimbook.pipeline.failed_build import BANNER_ID, failure_reason, mark_failed_build

CLAIM = "c15-invariance-001"  # registered; the scratch book has no artifact: "not run"
PAGE = f"""<!DOCTYPE html>
<html><head><title>x</title></head><body><main id="main-content" class="bd-main">
<p class="claim-legend">Marks on this page:
<span class="claim-legend-mark claim-verified">\u2713</span>
verified measurement. Each marked number links to its claim. <a href="intro.html">What</a></p>
<p>The claim <a class="claim-badge claim-verified reference external" href="claims/{CLAIM}.html"
title="A statement."><span class="claim-id">{CLAIM}</span>
<span class="claim-state">verified</span></a>
moves by <a class="claim-value claim-verified" data-claim="{CLAIM}" data-claim-state="verified"
href="claims/{CLAIM}.html" title="A statement."><span class="claim-number">2.055</span>
<span class="claim-mark" aria-hidden="true">\u2713</span>
<span class="claim-sr"></span></a>.</p>
<p>A sample: <span class="claim-badge claim-verified">
<span class="claim-state">verified</span></span></p>
</main></body></html>
"""


def test_every_page_gets_one_banner_and_no_mark_says_verified_for_a_claim_not_run(
    tmp_path, monkeypatch
):
    root = point_paths_at(tmp_path / "book", monkeypatch)
    site = root / "_build" / "html"
    (site / "chapters").mkdir(parents=True)
    (site / "chapters" / "a.html").write_text(PAGE, encoding="utf-8")
    (site / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=a.html" />\n')
    (site / "_static").mkdir()
    (site / "_static" / "macros.html").write_text("{% macro x() %}{% endmacro %}\n")
    (site / "claims.json").write_text(f'{{"claims": [{{"id": "{CLAIM}", "state": "verified"}}]}}')
    first = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    for moment in (first, datetime(2030, 1, 3, tzinfo=UTC)):  # a second failed build
        assert mark_failed_build("chapters/a.md: FAILED after 1 s: boom", now=moment) == 2
    html = (site / "chapters" / "a.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    banners = soup.find_all(id=BANNER_ID)
    assert len(banners) == 1 and banners[0]["role"] == "alert"
    assert banners[0].find_parent("main") is not None
    text = banners[0].get_text()
    assert "The latest build, at 2030-01-03 00:00:00 UTC, failed: chapters/a.md: FAILED" in text
    assert soup.select(".claim-badge .claim-id")[0].parent["class"][-1] == "claim-not-run"
    number = soup.select_one(".claim-value")
    assert number["data-claim-state"] == "not run" and "claim-verified" not in number["class"]
    assert number.select_one(".claim-mark").get_text() == "?"
    # A checked number's empty screen-reader slot now says the state (claims.py leaves it).
    assert number.select_one(".claim-sr").get_text() == " (not run, not checked)"
    assert "claim-verified" not in str(soup.select_one(".claim-legend"))
    assert soup.select(".claim-badge")[-1]["class"] == ["claim-badge", "claim-verified"]  # sample
    assert BANNER_ID in (site / "index.html").read_text()
    assert BANNER_ID not in (site / "_static" / "macros.html").read_text()
    assert '"state": "not run"' in (site / "claims.json").read_text()
    assert "boom" in (site / "OUTDATED.txt").read_text()


def _site_legend(states: list[str], accounts: bool) -> str:
    """The legend of a page's marks as the site renders it (docutils' HTML writer)."""
    document = new_document("legend", get_default_settings(Parser))
    document += mark_legend(states, accounts, "../checking.html#claim-marks")
    html = publish_from_doctree(document, writer_name="html5").decode()
    return str(BeautifulSoup(html, "html.parser").select_one("p.claim-legend"))


@pytest.mark.parametrize("accounts", [False, True], ids=["numbers", "numbers and an account"])
def test_a_rewritten_legend_is_the_one_the_site_writes_for_the_states_now(
    tmp_path, monkeypatch, accounts
):
    root = point_paths_at(tmp_path / "book", monkeypatch)
    site = root / "_build" / "html"
    (site / "chapters").mkdir(parents=True)
    legend = BeautifulSoup(PAGE, "html.parser").select_one("p.claim-legend")
    page = PAGE.replace(str(legend), _site_legend(["verified"], accounts))
    if accounts:  # a common account the page names, as claims.py draws it
        account = f'<a class="claim-account claim-refuted" href="claims/{CLAIM}.html">\u21af</a>'
        page = page.replace("</main>", f"<p>{account}</p></main>")
    assert _site_legend(["verified"], accounts) in page
    (site / "chapters" / "a.html").write_text(page, encoding="utf-8")
    assert mark_failed_build("boom") == 1
    html = (site / "chapters" / "a.html").read_text(encoding="utf-8")
    rewritten = str(BeautifulSoup(html, "html.parser").select_one("p.claim-legend"))
    assert rewritten == _site_legend(["not run"], accounts)


def test_no_site_no_banner(tmp_path, monkeypatch):
    point_paths_at(tmp_path / "book", monkeypatch)
    assert mark_failed_build("anything") == 0


def test_the_reason_is_the_first_cause_a_reader_needs():
    lines = [
        "claim c1: computing (stale: x)",
        "chapters/a.ipynb:3: WARNING: claim c1 is failed: y",
        "claim c1 f: expected 1, got 2",
        "make: FAILED in 2.0 s: 1 site warning(s), 1 claim problem(s); the site shows them: x",
    ]
    assert failure_reason(lines) == "claim c1 f: expected 1, got 2 (and 1 more)"
    assert failure_reason(["make: render-only: 2 chapter(s)"]) == "render-only: 2 chapter(s)"


def test_the_site_key_changes_with_a_claims_judged_state(tmp_path, monkeypatch):
    point_paths_at(tmp_path / "book", monkeypatch)
    before = site_outcome.site_key()
    judge = claims.judge

    def stale(claim_id, **options):
        judged = judge(claim_id, **options)
        return judged._replace(state="stale") if claim_id == CLAIM else judged

    monkeypatch.setattr(claims, "judge", stale)
    assert site_outcome.site_key() != before


ACCOUNT_PAGE = f"""<!DOCTYPE html>
<html><head><title>x</title></head><body><main id="main-content" class="bd-main">
<p>A common account <a class="claim-account claim-refuted reference external"
data-claim="{CLAIM}" href="claims/{CLAIM}.html" title="A common account: it holds.">
<span class="claim-mark" aria-hidden="true">\u21af</span> {ACCOUNT_WORDS}</a>.</p>
<div class="claim-card"><p><a class="claim-badge claim-refuted reference external"
href="claims/{CLAIM}.html"><span class="claim-id">{CLAIM}</span>
<span class="claim-state">account refuted</span></a></p>
<p class="claim-account-refuted"><strong>A common account: </strong>it holds;
{ACCOUNT_WORDS}.</p></div>
<p class="claim-page-state"><a class="claim-badge claim-refuted" href="#"><span
class="claim-id">{CLAIM}</span> <span class="claim-state">account refuted</span></a></p>
<p class="claim-measurement-lead">{measurement_lead("refuted")}</p>
<p>It moves by <a class="claim-value claim-verified" data-claim="{CLAIM}"
data-claim-state="refuted" href="claims/{CLAIM}.html"
title="A statement. A common account, {ACCOUNT_WORDS}: it holds.">
<span class="claim-number">2.055</span>
<span class="claim-mark" aria-hidden="true">\u2713</span><span class="claim-sr"></span></a>.</p>
</main></body></html>
"""


def test_an_account_is_contradicted_by_measurement_only_while_its_claim_is_refuted(
    tmp_path, monkeypatch
):
    """A refuted claim whose measurement is now not run: no page may still say that the
    measurement contradicts the account (that would show it verified)."""
    root = point_paths_at(tmp_path / "book", monkeypatch)
    site = root / "_build" / "html"
    (site / "chapters").mkdir(parents=True)
    (site / "chapters" / "a.html").write_text(ACCOUNT_PAGE, encoding="utf-8")
    assert mark_failed_build("boom") == 1
    soup = BeautifulSoup((site / "chapters" / "a.html").read_text(), "html.parser")
    main = soup.select_one("main")
    main.select_one(f"#{BANNER_ID}").decompose()
    assert ACCOUNT_WORDS not in main.get_text()
    assert ACCOUNT_WORDS not in " ".join(a.get("title", "") for a in main.select("a"))
    assert "verified" not in main.get_text() and "refuted" not in main.get_text()
    assert soup.select(".claim-account, .claim-account-refuted, .claim-refuted") == []
    # The account mark became the badge the site draws for a claim not run.
    badge = soup.select_one("p > a.claim-badge")
    assert badge["class"] == ["claim-badge", "claim-not-run"]
    assert badge["href"] == f"claims/{CLAIM}.html"
    assert badge.get_text(" ", strip=True) == f"{CLAIM} not run"
    lead = soup.select_one(".claim-measurement-lead").get_text()
    assert (
        lead == measurement_lead("not run") == "The book's measurement that tests it is not run:"
    )
