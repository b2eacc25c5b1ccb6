"""The book's Sphinx extensions (`claimbook.extensions`), built on checked-in fixture books.

`tests/books/claims` is a one-chapter book whose page states `c15-invariance-001` as a badge,
as bound numbers (`{claim-value}`) and as a claim line, plus the ledger page. Each test copies
it into a temporary root (see `conftest.py`), verifies or breaks the claim there, and runs the
strict build the book runs (the driver's render, in the test process; the first test runs the
`jupyter-book build -W -n --keep-going` command instead). A state must come from the artifact;
verified passes, every state the harness refuses fails the strict build while the page still
shows it; each claim gets a page, the ledger lists every claim, and `claims.json` describes
them for machines.
"""

import html as html_text
import json
import os
import re

import pytest
import yaml

from claimbook import claims
from claimbook.claims import harness_pin
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import ACCOUNT_MARK, ACCOUNT_WORDS

# Each test builds a fixture book (kernels and Sphinx): the book tier.
pytestmark = pytest.mark.book

CLAIM = "c15-invariance-001"
PAGE = "chapters/page.html"
CLAIM_PAGE = f"claims/{CLAIM}.html"


def verify_in(book) -> dict:
    return claims.verify_claim(
        CLAIM,
        expected_harness=harness_pin(),
        registry_dir=book.registry,
        artifacts_dir=book.artifacts,
    )


def text_of(page: str) -> str:
    """The page's text, tags removed and entities decoded."""
    return html_text.unescape(re.sub(r"<[^>]+>", "", page))


def bound_values(html: str, state: str) -> int:
    return html.count(f'class="claim-value claim-{state}"')


def test_a_verified_claim_builds_with_bound_numbers_its_page_the_ledger_and_json(claim_book):
    verify_in(claim_book)
    process = claim_book.build(cli=True)  # the jupyter-book command, not the driver's render
    assert process.returncode == 0, process.log[-4000:]
    html = claim_book.page(PAGE)

    # Badge and claim line link to the claim's page, not to raw JSON.
    assert 'class="claim-badge claim-verified' in html
    assert f'href="../{CLAIM_PAGE}"' in html and f'href="../artifacts/claims/{CLAIM}' not in html
    assert "seed: none" in html and "estimator: deterministic map and Jacobian" in html
    assert '<h1><span class="section-number">15. </span>A page' in html
    assert 'title="Chapter 2 of the full book' in html

    # Bound numbers: read from the artifact, formatted, marked, with the statement on hover.
    artifact = json.loads((claim_book.artifacts / f"{CLAIM}.json").read_text())
    statement = artifact["statement"]
    assert bound_values(html, "verified") == 4
    shift = f"{artifact['result']['rms_shift_deviation']:.3f}"
    assert f'<span class="claim-number">{shift}</span>' in html
    assert '<span class="claim-number">0.0</span>' in html  # fp32 raw variance, ":.1f"
    assert '<span class="claim-mark" aria-hidden="true">\u2713</span>' in html
    # A checked number says nothing more to a screen reader: the legend said it once.
    assert html.count('<span class="claim-sr"></span>') == bound_values(html, "verified")
    # The hover shows the statement's math as plain text (a title renders no LaTeX).
    assert f'title="{model.plain_math(statement)}"' in html.replace("&#x27;", "'")

    # The claim's page: statement, state, way back, fields, commands, the record.
    page = claim_book.page(CLAIM_PAGE)
    assert page, "no claim page"
    # Its math between $ signs is rendered by MathJax from \( \) (claim_nodes).
    assert re.sub(r"\$([^$]+)\$", r"\\(\1\\)", statement) in text_of(page)
    assert "claim-badge claim-verified" in page
    assert 'href="../chapters/page.html#claim-c15-invariance-001-' in page
    assert "15.1 A section" in page and "15.2 Another section" in page
    machine = json.loads((claim_book.site / "claims.json").read_text())
    rows = {row["field"]: row for row in machine["claims"][0]["fields"]}
    for field in artifact["comparisons"]:
        assert f'<code class="docutils literal notranslate"><span class="pre">{field}' in page
        # Each field a card: measured in the prose's format (claim_pages_model), not repr'd.
        assert f"<dd><p>{rows[field]['measured']}</p>" in page
    # The page cites rms_shift_deviation with :.3f: the card writes it so too.
    assert rows["rms_shift_deviation"]["measured"] == shift
    assert "The chapter reports three decimals." in page
    assert f"python -m claimbook claims verify {CLAIM}" in page
    assert f'verify_claim(\n    "{CLAIM}",\n    expected_harness=pin,\n)' in text_of(page)
    assert "<details><summary>Seeds, contract, provenance and digests</summary>" in page
    assert artifact["provenance"]["numpy"] in page
    published = claim_book.site / "claims" / f"{CLAIM}.json"
    assert published.read_bytes() == (claim_book.artifacts / f"{CLAIM}.json").read_bytes()
    assert f'href="{CLAIM}.json"' in page
    assert not (claim_book.site / "artifacts" / "claims").exists()

    # The ledger, in the table of contents, and claims.json for machines.
    ledger = claim_book.page("claims.html")
    assert "1 claim: 1 verified result." in ledger
    assert f'href="{CLAIM_PAGE}"' in ledger and "15.1 A section" in ledger
    assert 'href="claims.html"' in claim_book.page("intro.html")
    (entry,) = machine["claims"]
    assert entry["id"] == CLAIM and entry["state"] == "verified"
    assert entry["statement"] == statement
    assert entry["provenance"] == artifact["provenance"]
    assert {field["field"] for field in entry["fields"]} == set(artifact["comparisons"])
    assert entry["page"] == CLAIM_PAGE and entry["record"] == f"claims/{CLAIM}.json"
    assert entry["stated_in"][0]["page"] == PAGE
    assert set(machine["states"]) == set(model.STATE_CLASSES)

    # The claim page is in the search index.
    index = (claim_book.site / "searchindex.js").read_text()
    assert f'"{CLAIM_PAGE.removesuffix(".html")}"' in index


def test_a_failed_claim_shows_red_and_fails_every_strict_build(claim_book):
    registry = claim_book.registry / f"{CLAIM}.yaml"
    entry = yaml.safe_load(registry.read_text())
    entry["expect"]["rms_shift_deviation"]["value"] = 3.0
    registry.write_text(yaml.safe_dump(entry, sort_keys=False))
    assert verify_in(claim_book)["status"] == "failed"
    process = claim_book.build()
    assert process.returncode != 0
    assert f"claim {CLAIM} is failed" in process.log
    html = claim_book.page(PAGE)
    assert "claim-badge claim-failed" in html and "claim-verified" not in html
    assert bound_values(html, "failed") == 4
    assert '<span class="claim-mark" aria-hidden="true">\u2717</span>' in html
    assert "claim-badge claim-failed" in claim_book.page(CLAIM_PAGE)
    # Nothing changed, so Sphinx re-reads no page; the build must fail again all the same.
    again = claim_book.build()
    assert again.returncode != 0 and f"claim {CLAIM} is failed" in again.log


def test_an_artifact_from_another_harness_shows_stale_and_fails(claim_book):
    verify_in(claim_book)
    artifact = claim_book.artifacts / f"{CLAIM}.json"
    record = json.loads(artifact.read_text())
    record["provenance"]["version"] = "0.0.0"
    artifact.write_text(json.dumps(record, indent=2, sort_keys=True))
    process = claim_book.build()
    assert process.returncode != 0
    html = claim_book.page(PAGE)
    assert "claim-stale" in html and "claim-verified" not in html
    assert bound_values(html, "stale") == 4
    assert json.loads((claim_book.site / "claims.json").read_text())["claims"][0]["state"] == (
        "stale"
    )


def test_a_missing_artifact_shows_not_run_and_fails(claim_book):
    process = claim_book.build()
    assert process.returncode != 0
    html = claim_book.page(PAGE)
    assert "claim-badge claim-not-run" in html and bound_values(html, "not-run") == 4
    assert f"claim-value {CLAIM}.rms_shift_deviation: claim is not run" in process.log
    assert "no record" in html and not (claim_book.site / "claims" / f"{CLAIM}.json").exists()
    assert "not run" in claim_book.page(CLAIM_PAGE)


def test_an_unknown_id_or_field_fails_and_a_result_pasted_as_glue_is_named(claim_book):
    verify_in(claim_book)
    claim_book.edit(
        "chapters/page.md",
        "{claim}`c15-invariance-001`",
        "{claim}`c15-invariance-00l` {glue:text}`a_result:.2f`",
    )
    claim_book.edit("chapters/page.md", "rms_jacobian_rank`", "rms_jacobian_rnak`")
    process = claim_book.build()
    assert process.returncode != 0
    assert "unknown claim" in process.log
    assert CLAIM in process.log.split("unknown claim", 1)[1]  # the nearest id is suggested
    assert "has no result field 'rms_jacobian_rnak'" in process.log
    assert "pastes 'a_result' with plain glue" in process.log
    assert bound_values(claim_book.page(PAGE), "failed") == 1  # the unknown field's mark
    # The unknown id keeps failing the build when no page is re-read.
    again = claim_book.build()
    assert again.returncode != 0 and "unknown claim" in again.log


def test_a_symlink_in_the_artifacts_is_never_published(claim_book, tmp_path):
    verify_in(claim_book)
    artifact = claim_book.artifacts / f"{CLAIM}.json"
    outside = tmp_path / "elsewhere.json"
    outside.write_bytes(artifact.read_bytes())
    artifact.unlink()
    os.symlink(outside, artifact)
    (claim_book.artifacts / "extra.json").symlink_to(outside)
    process = claim_book.build()
    assert process.returncode != 0
    assert "is not a regular file in a real directory; it is not published" in process.log
    published = claim_book.site / "claims"
    assert not (published / f"{CLAIM}.json").exists()
    assert not (published / "extra.json").exists()
    assert not (claim_book.site / "artifacts" / "claims").exists()
    assert "no record" in claim_book.page(PAGE)


def test_an_artifacts_directory_that_is_a_symlink_is_never_published(claim_book, tmp_path):
    verify_in(claim_book)
    elsewhere = tmp_path / "elsewhere"
    claim_book.artifacts.rename(elsewhere)
    claim_book.artifacts.symlink_to(elsewhere, target_is_directory=True)
    process = claim_book.build()
    assert process.returncode != 0
    assert "is not a regular file in a real directory; it is not published" in process.log
    assert not (claim_book.site / "claims" / f"{CLAIM}.json").exists()


def test_every_registered_claim_gets_a_page_and_a_ledger_row(claim_book):
    claim_book.register("c15-running-state-001")
    verify_in(claim_book)
    claims.verify_claim(
        "c15-running-state-001",
        expected_harness=harness_pin(),
        registry_dir=claim_book.registry,
        artifacts_dir=claim_book.artifacts,
    )
    process = claim_book.build()
    # A registered claim no page states is still listed; being verified, it passes.
    assert process.returncode == 0, process.log[-3000:]
    running = claim_book.page("claims/c15-running-state-001.html")
    assert "not stated on any page" in running
    assert 'claim_seed("c15-running-state") = 316832669' in text_of(running)
    ledger = claim_book.page("claims.html")
    assert "2 claims: 2 verified results." in ledger
    assert ledger.count('class="claim-badge claim-verified') == 2
    machine = json.loads((claim_book.site / "claims.json").read_text())
    assert [entry["id"] for entry in machine["claims"]] == [CLAIM, "c15-running-state-001"]
    # An unchanged book gives the same claims.json bytes.
    before = (claim_book.site / "claims.json").read_bytes()
    claim_book.build()
    assert (claim_book.site / "claims.json").read_bytes() == before


def test_a_refuted_and_a_statistical_claim_render_their_kind_and_pass(kinds_book):
    for claim_id in ("t01-noise-001", "t01-shift-001"):
        claims.verify_claim(
            claim_id,
            expected_harness=harness_pin(),
            registry_dir=kinds_book.registry,
            artifacts_dir=kinds_book.artifacts,
        )
    process = kinds_book.build()
    assert process.returncode == 0, process.log[-4000:]
    html = kinds_book.page(PAGE)

    # Refuted: where the text names the account it reads "contradicted by measurement in this
    # setting" beside the account mark; the section's Evidence block holds the claim's badge,
    # in its own colour, and the account; the numbers that measure it are verified
    # measurements, with the verified mark and colour, and say nothing more to a screen reader.
    account = re.search(r'<a class="claim-account claim-refuted[^>]*>(.*?)</a>', html)
    assert account is not None
    assert (
        text_of(account.group(1)).strip() == "\u21af contradicted by measurement in this setting"
    )
    evidence = html[html.index('<details class="claim-evidence">') :]
    assert '<a class="claim-badge claim-refuted' in evidence
    assert "A common account: " in text_of(evidence)
    refuted_numbers = re.findall(r'<a class="([^"]*)"[^>]*data-claim-state="refuted"', html)
    assert refuted_numbers == ["claim-value claim-verified"]
    assert "\u2260" not in html and '<span class="claim-sr"></span>' in html
    # The page explains its marks once, near the top, linking to the page that explains them.
    assert text_of(html).count("Marks on this page: \u2713 a number the book recomputes") == 1
    assert f"{ACCOUNT_MARK} a common account, {ACCOUNT_WORDS}" in text_of(html)
    assert 'href="../intro.html#claim-marks"' in html
    refuted_page = text_of(kinds_book.page("claims/t01-shift-001.html"))
    # Its page leads with the account and who holds it, then the measurement that refutes it.
    assert refuted_page.index("A common account says:") < refuted_page.index(
        "The book's measurement, verified, refutes it:"
    )
    assert "What was measured" in refuted_page  # a card per field, measured and expected
    assert "shifting every input coordinate changes what a centered normalization" in (
        refuted_page
    )
    assert "a toy account written for this test fixture" in refuted_page

    # Statistical: mean, interval, and both, read from the artifact; intervals on hover.
    noise = json.loads((kinds_book.artifacts / "t01-noise-001.json").read_text())
    estimate = noise["result"]["estimate"]
    low, high = estimate["ci"]
    mean = f"{estimate['mean']:.3f}"
    assert f'<span class="claim-number">{mean}</span>' in html
    assert f'<span class="claim-number">[{low:.3f}, {high:.3f}]</span>' in html
    assert f"{mean} (95% CI {low:.3f} to {high:.3f})" in html
    # The badge's hover text writes the interval as the page does, with its seeds.
    hover = f"estimate: {estimate['mean']:.4g} (95% CI {low:.4g} to {high:.4g}) over 20 seeds."
    assert hover in html_text.unescape(html)
    noise_page = text_of(kinds_book.page("claims/t01-noise-001.html"))
    # Its card writes the field as the prose cites it (.3f), interval and all.
    assert f"{mean} (95% CI {low:.3f} to {high:.3f})" in noise_page
    assert f"{len(noise['seeds'])} seeds: " in noise_page and len(noise["seeds"]) == 20
    machine = json.loads((kinds_book.site / "claims.json").read_text())
    states = {entry["id"]: entry["state"] for entry in machine["claims"]}
    assert states == {"t01-noise-001": "verified", "t01-shift-001": "refuted"}
    ledger = text_of(kinds_book.page("claims.html"))
    assert "2 claims: 1 verified result, 1 refuted account." in ledger
    assert ledger.index("Verified results") < ledger.index("Refuted accounts")
    assert "Account refuted: " in ledger


def _search_terms(book, pagename: str) -> set[str]:
    """The words the site's search index has for ``pagename``."""
    text = (book.site / "searchindex.js").read_text()
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    number = index["docnames"].index(pagename)
    return {
        term
        for term, pages in index["terms"].items()
        if number == pages or (isinstance(pages, list) and number in pages)
    }


def test_a_claim_page_is_redone_only_when_what_it_shows_changed(claim_book):
    # A second chapter, so that an edit leaves some document unwritten (in a build that
    # writes every document, a claim page takes it for a change of theme or configuration
    # and is redone), and renders that carry the site over, as the driver's do.
    (claim_book.root / "chapters" / "other.md").write_text("# Other\n\nSome prose.\n")
    claim_book.edit(
        "_toc.yml",
        "      - file: chapters/page\n",
        "      - file: chapters/page\n      - file: chapters/other\n",
    )
    verify_in(claim_book)
    process = claim_book.build(carry_over=True)
    assert process.returncode == 0, process.log
    page = claim_book.site / CLAIM_PAGE
    pagename = CLAIM_PAGE.removesuffix(".html")
    first, words = page.stat().st_mtime_ns, _search_terms(claim_book, pagename)
    assert "coordin" in words  # a stem of its statement's words

    # Prose elsewhere: the page is not rendered or written again, and stays searchable.
    claim_book.edit("chapters/other.md", "Some prose.", "Some prose, edited.")
    assert claim_book.build(carry_over=True).returncode == 0
    assert page.stat().st_mtime_ns == first
    assert _search_terms(claim_book, pagename) == words

    # What the page shows (where the book states the claim): redone, and indexed afresh,
    # the words it no longer shows leaving the index.
    claim_book.edit("chapters/page.md", "## A section", "## A renamed zanzibar section")
    assert claim_book.build(carry_over=True).returncode == 0
    assert page.stat().st_mtime_ns != first
    assert "renamed zanzibar section" in claim_book.page(CLAIM_PAGE)
    assert _search_terms(claim_book, pagename) == words | {"renam", "zanzibar"}
    claim_book.edit("chapters/page.md", "## A renamed zanzibar section", "## A section")
    assert claim_book.build(carry_over=True).returncode == 0
    assert _search_terms(claim_book, pagename) == words

    # Its statement, in the registry: the same.
    registry = claim_book.registry / f"{CLAIM}.yaml"
    entry = yaml.safe_load(registry.read_text())
    entry["statement"] = entry["statement"].replace("coordinate", "quixotic coordinate", 1)
    registry.write_text(yaml.safe_dump(entry, sort_keys=False))
    verify_in(claim_book)
    assert claim_book.build(carry_over=True).returncode == 0
    assert _search_terms(claim_book, pagename) == words | {"quixot"}
