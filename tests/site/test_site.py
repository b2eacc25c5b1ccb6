"""Checks of the built site (`make site-check`, after `make`): what a reader will see.

Expectations come from the chapter sources, the claim registry and the git tree, never from
the HTML itself. Two layers:

- the HTML as built (BeautifulSoup): numbering, figures and their artifacts, badges, sources
  and their labels, links, scripts, the footer;
- a real browser (Debian's chromium through Playwright) over every page at 390 px and every
  page but the claim pages after the first (one template) at 1366 and 800 px: navigation
  opens and closes, nothing logged to the console, no request to another host, figures
  sharp and reachable, their smallest text readable and formulas within the width at each
  width (``tests/helpers/width_checks.py``), focus visible, badge and claim-line contrast in
  light and dark mode, and the printed book (``book_pdf``, what ``make pdf`` runs:
  ``test_book_pdf.py``).

A page with a failure at a width is captured there, in ``_build/screenshots/`` (build
products); every page at every width, and whole chapters, only with ``SITE_SCREENSHOTS=1``
(``make screenshots``).
"""

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from urllib.parse import unquote, urlsplit

import pytest
import width_checks
from bs4 import BeautifulSoup

from claimbook import claims, figures, paths, sources

pytestmark = pytest.mark.site

SITE = paths.REPO_ROOT / "_build" / "html"
SCREENSHOTS = paths.REPO_ROOT / "_build" / "screenshots"
AXE = paths.REPO_ROOT / "node_modules" / "axe-core" / "axe.min.js"  # npm, package.json
WIDTHS = (1366, 800, 390)
PHONE = 390
AXE_WIDTHS = (1366, PHONE)  # axe-core runs at these widths, in light and dark mode
NARROW = 992  # below this width the theme hides both sidebars behind their toggles
TEXT_CONTRAST = 4.5
BORDER_CONTRAST = 3.0


def chapter_stems():
    return [source.stem for source in sources.chapter_sources()]


def chapter_page(stem):
    page = SITE / "chapters" / f"{stem}.html"
    if not page.exists():
        pytest.fail(f"{page} is missing: run `make` before the site checks")
    return page


def chapter_page_files(stem):
    """The pages of chapter ``stem`` in reading order: its own, then each later page its
    source declares (:func:`claimbook.sources.chapter_pages`)."""
    later = sources.chapter_pages(paths.CHAPTERS_DIR / f"{stem}.md")
    pages = [chapter_page(stem), *(SITE / "chapters" / f"{page.file}.html" for page in later)]
    missing = [page for page in pages if not page.exists()]
    if missing:
        pytest.fail(f"{missing[0]} is missing: run `make` before the site checks")
    return pages


@functools.cache
def chapter_soup(stem):
    """A chapter as one document: its first page with the articles of the later ones appended
    (what the chapter says, whichever page says it; ids a page numbers itself, such as
    ``id3``, may repeat between pages)."""
    first, *later = chapter_page_files(stem)
    soup = BeautifulSoup(first.read_text(encoding="utf-8"), "html.parser")
    article = soup.select_one("article.bd-article")
    for page in later:
        other = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for child in list(other.select_one("article.bd-article").children):
            article.append(child.extract())
    return soup


def chapter_title(stem):
    """The chapter's title: the first level-1 heading of its prose."""
    for _, text in chapter_source(stem).markdown_cells():
        for line in text.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    raise AssertionError(f"{stem} has no title")


def chapter_source(stem):
    return sources.read_chapter(paths.CHAPTERS_DIR / f"{stem}.md")


@functools.cache
def soup_of(page):
    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")


@functools.cache
def ids_of(page):
    """Every ``id`` on the page (a link's fragment is looked up here, not by a tree search:
    chapter 16 holds hundreds of links into itself and thousands of elements)."""
    return frozenset(element["id"] for element in soup_of(page).find_all(id=True))


def cited_claims(stem):
    chapter = chapter_source(stem)
    ids = {role.content.strip() for role in chapter.roles() if role.name == "claim"}
    ids |= {d.argument.strip() for d in chapter.directives() if d.name == "claim-line"}
    return ids


def site_pages():
    """Every page of the site: not the theme's template fragments under _static, nor the
    root ``index.html``, which only redirects to ``intro.html``."""
    return sorted(
        page
        for page in SITE.rglob("*.html")
        if "_static" not in page.relative_to(SITE).parts and page != SITE / "index.html"
    )


@pytest.fixture(params=chapter_stems())
def chapter(request):
    stem = request.param
    return stem, chapter_soup(stem)


# ------------------------------------------------------------------------- the built HTML --


def test_every_named_figure_has_its_number_alt_text_and_downloadable_artifacts(chapter):
    stem, soup = chapter
    labels = figures.figure_labels(chapter_source(stem))
    number = sources.chapter_number(stem)
    assert labels, f"{stem} has no named figure"
    alt_written = {
        str(directive.options["name"]): str(directive.options["alt"])
        for directive in chapter_source(stem).directives()
        if directive.options.get("name") and directive.options.get("alt")
    }
    numbers = []
    for label in labels:
        figure = soup.find(id=label)
        assert figure is not None and figure.name == "figure", f"figure {label} is not on the page"
        numbers.append(figure.find(class_="caption-number").get_text(strip=True))
        image = figure.find("img")
        assert image is not None and image.get("src"), f"figure {label} has no image"
        caption = figure.find(class_="caption-text").get_text(" ", strip=True)
        alt = image.get("alt", "")
        assert alt and alt != image["src"] and "_images/" not in alt, (label, alt)
        # Written for the figure (the source's :alt:), or the caption's start without one;
        # either way in sentences a screen reader reads well: no space before punctuation.
        written = alt_written.get(label)
        expected = written or " ".join(caption.split())[:40]
        assert " ".join(alt.split()).startswith(" ".join(expected.split())[:40]), (label, alt)
        assert not re.search(r"\s[,.;:!?]", alt), (label, alt)
        full_size = image.find_parent("a", class_="figure-full-size")
        assert full_size is not None, f"{label}: the image does not open the full-size figure"
        assert full_size["href"].endswith(f"artifacts/figures/{label}.svg")
        links = [a["href"] for a in figure.select("a.figure-artifact")]
        assert [link.rsplit("/", 1)[-1] for link in links] == [f"{label}.svg", f"{label}.png"]
        for link in links:
            assert (chapter_page(stem).parent / link).resolve().is_file(), link
    # Sphinx numbers the figures in the order they appear: 16.1, 16.2, ...
    assert numbers == [f"Figure {number}.{k}" for k in range(1, len(labels) + 1)]


def test_every_cited_claim_shows_a_verified_badge_and_a_card_in_its_sections_evidence(chapter):
    stem, soup = chapter
    claims = cited_claims(stem)
    assert claims, f"{stem} cites no claim"
    badges = soup.select("details.claim-evidence .claim-card a.claim-badge")
    states = {badge.find(class_="claim-id").get_text(): badge["class"] for badge in badges}
    for claim_id in claims:
        assert claim_id in states, f"no badge for {claim_id}"
        assert {"claim-verified", "claim-refuted"} & set(states[claim_id]), (
            f"{claim_id} badge is {states[claim_id]}"
        )
    assert not soup.select(".claim-failed, .claim-stale, .claim-not-run")
    cards = soup.select(".claim-card")
    assert all(card.find_parent("details", class_="claim-evidence") for card in cards)
    for card in cards:
        text = card.get_text(" ", strip=True)
        for field in ("seed:", "dtype:", "device:", "estimator:", "record (JSON)"):
            assert field in text, f"claim card lacks {field!r}: {text}"


def test_every_bound_number_and_badge_links_to_an_existing_claim_page(chapter):
    stem, soup = chapter
    bound = soup.select(".claim-value")
    assert bound, f"{stem} binds no number to a claim"
    for node in bound + soup.select("a.claim-badge"):
        href = node.get("href")
        assert href and href.startswith("../claims/") and href.endswith(".html"), node
        assert (SITE / "chapters" / href).resolve().is_file(), f"{href} is missing"
        assert node.get("title"), f"{href}: no statement on hover"
    for node in bound:
        assert node.get("data-claim-state") in ("verified", "refuted"), node
        assert node.select_one(".claim-mark") and node.select_one(".claim-sr"), node


def test_every_registered_claim_has_a_page_a_record_and_a_ledger_row():
    registered = claims.list_claims()
    ledger = soup_of(SITE / "claims.html")
    rows = {a.find(class_="claim-id").get_text() for a in ledger.select("a.claim-badge")}
    assert rows == set(registered)
    machine = json.loads((SITE / "claims.json").read_text(encoding="utf-8"))
    assert [entry["id"] for entry in machine["claims"]] == registered
    for entry in machine["claims"]:
        page = soup_of(SITE / entry["page"])
        text = page.get_text(" ", strip=True)
        # Its math between $ signs is rendered by MathJax from \( \) (claim_nodes).
        shown = re.sub(r"\$([^$]+)\$", r"\\(\1\\)", entry["statement"])
        assert "".join(shown.split()) in "".join(text.split()), entry["id"]
        assert f"python -m claimbook claims verify {entry['id']}" in text
        assert entry["record"] and (SITE / entry["record"]).is_file()
        assert entry["stated_in"], f"{entry['id']} is stated on no page"


def test_every_published_record_holds_its_claims_outcome_seeds_and_intervals():
    """The record each claim page links (the build's artifact, published): the outcome the
    registry names (refuted exactly when it names an account), computed on the registered
    seeds; for a statistical claim every field summarised over all of them by an interval
    at the registered level and method (the field's own ``interval_method`` where it names
    one) that holds the mean (the median, for the median's interval). ``make test`` leans
    on this and on its rebuild for the claims it does not compute a second time (the claims
    tier's ``whole_claim`` tests)."""
    machine = json.loads((SITE / "claims.json").read_text(encoding="utf-8"))
    statistical = 0
    for entry in machine["claims"]:
        claim = claims.load_claim(entry["id"])
        record = json.loads((SITE / entry["record"]).read_text(encoding="utf-8"))
        assert record["id"] == claim.id and record["error"] is None, claim.id
        assert record["status"] == ("refuted" if claim.refutes else "verified"), claim.id
        assert all(row["passed"] for row in record["comparisons"].values()), claim.id
        if claim.kind != "statistical":
            continue
        statistical += 1
        assert record["seeds"] == list(claim.seeds), claim.id
        for field, summary in record["result"].items():
            where = f"{claim.id} {field}"
            assert summary["level"] == claim.statistics["level"], where
            method = claim.expect[field].get("interval_method", claim.statistics["method"])
            assert summary["method"] == method, where
            assert len(summary["per_seed"]) == len(claim.seeds), where
            centre = summary["median"] if method == "median-rank" else summary["mean"]
            assert summary["ci"][0] <= centre <= summary["ci"][1], where
    assert statistical >= 10, statistical  # the book's statistical claims (13 today)


# A decimal number as a page prints it (not part of a version such as 3.11.7, of a word, or
# of an identifier such as arXiv:1502.03167).
DECIMAL = re.compile(r"(?<![\w.:])-?\d+\.\d+(?:e[+-]?\d+)?(?![\w.])")
LONGEST_DECIMAL = 8  # significant digits; a claim page rounds to 7 (claim_pages_model)


def test_claim_pages_show_rounded_numbers_and_expectations_in_words():
    """No claim page prints a raw JSON object (an expectation such as {"above": 2.0, ...})
    or a float with more digits than its tolerance could resolve; the record beside it
    keeps every digit."""
    failures = []
    for claim_id in claims.list_claims():
        article = soup_of(SITE / "claims" / f"{claim_id}.html").select_one(".bd-article")
        text = article.get_text(" ", strip=True)
        if re.search(r"\{\s*\"", text):
            failures.append(f"{claim_id}: raw JSON: {re.search(r'.{0,30}{.{0,40}', text)[0]}")
        for number in DECIMAL.findall(text):
            mantissa = number.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
            if len(mantissa) > LONGEST_DECIMAL:
                failures.append(f"{claim_id}: {number} has {len(mantissa)} significant digits")
    assert not failures, "\n".join(failures[:40])


def _refuting_claims():
    """The registered claims that quote an account, with their judged state."""
    for claim_id in claims.list_claims():
        claim = claims.load_claim(claim_id)
        if claim.refutes:
            yield claim, claims.judge(claim_id).state


def test_refuted_accounts_read_as_the_books_findings():
    # A refuted claim is the book's verified measurement against a quoted account: its
    # numbers carry the verified mark, its badge says "account refuted", the account and its
    # source stand beside it; never the mark or colour of a failure. In a chapter, where the
    # text names the account, the account mark reads "contradicted by measurement in this
    # setting".
    refuting = list(_refuting_claims())
    assert refuting, "the registry quotes no account"
    ledger = soup_of(SITE / "claims.html")
    refuted_group = ledger.find(class_="claim-ledger-refuted")
    for claim, state in refuting:
        page = soup_of(SITE / "claims" / f"{claim.id}.html")
        text = " ".join(page.get_text(" ", strip=True).split())
        assert "A common account says:" in text and claim.refutes["account"] in text
        if state != "refuted":  # failed, stale or not run: shown as that, never as refuted
            assert page.select_one(f".claim-{state.replace(' ', '-')}") is not None
            continue
        assert "The book's measurement, verified, refutes it:" in text
        badge = page.select_one("a.claim-badge.claim-refuted .claim-state")
        assert badge is not None and badge.get_text() == "account refuted"
        row = next(
            a.find_parent("tr")
            for a in ledger.select("a.claim-badge")
            if a.find(class_="claim-id").get_text() == claim.id
        )
        assert (
            refuted_group is not None
            and row.find_previous(class_="claim-ledger-group") is refuted_group
        ), f"{claim.id} is not among the refuted accounts"
        assert "Account refuted: " + claim.refutes["account"] in " ".join(
            row.get_text(" ", strip=True).split()
        )
    for stem in chapter_stems():
        soup = chapter_soup(stem)
        assert "\u2260" not in soup.get_text()
        for number in soup.select(".claim-value[data-claim-state='refuted']"):
            assert "claim-verified" in number["class"], number
            assert number.select_one(".claim-mark").get_text() == "\u2713"
            assert (
                "A common account, contradicted by measurement in this setting:"
                in (number["title"])
            )
        for account in soup.select("a.claim-account"):
            assert "claim-refuted" in account["class"]
            # Named, so that a failed build can rewrite it (claimbook.pipeline.failed_build).
            assert account["href"].endswith(f"claims/{account['data-claim']}.html")
            text = " ".join(account.get_text(" ", strip=True).split())
            assert text == "\u21af contradicted by measurement in this setting", text


def test_every_chapter_page_explains_its_marks_before_the_first(chapter):
    stem, _ = chapter
    for page in chapter_page_files(stem):
        soup = soup_of(page)
        legend = soup.select_one(".claim-legend")
        assert legend is not None, f"{page.name} has no legend of its marks"
        first = soup.select_one(".claim-value")
        assert first is not None and legend in first.find_all_previous(class_="claim-legend")
        marks = {mark.get_text() for mark in soup.select(".claim-value .claim-mark")}
        marks |= {mark.get_text() for mark in soup.select(".claim-account .claim-mark")}
        shown = {mark.get_text() for mark in legend.select(".claim-legend-mark")}
        assert marks == shown, (page.name, marks, shown)
        link = legend.find("a", href=True)
        assert link is not None and link["href"] == "../checking.html#claim-marks"
    assert soup_of(SITE / "checking.html").find(id="claim-marks") is not None


def test_sections_and_equations_carry_the_chapter_number(chapter):
    stem, soup = chapter
    number = sources.chapter_number(stem)
    title = soup.select_one("section > h1")
    assert title.get_text(" ", strip=True).startswith(f"{number}.")
    sections = [h.get_text(" ", strip=True) for h in soup.select("section > h2")]
    assert sections and all(text.startswith(f"{number}.") for text in sections), sections
    equation_numbers = [str(label.contents[0]).strip() for label in soup.select("span.eqno")]
    assert equation_numbers == [f"({number}.{k})" for k in range(1, len(equation_numbers) + 1)]


def test_chapter_15_has_its_theorem_and_proof():
    soup = soup_of(chapter_page("normalization-invariance"))
    theorem = soup.select_one("div.theorem")
    assert theorem is not None and "Theorem 15.1" in theorem.get_text(" ", strip=True)
    assert soup.select_one("div.proof") is not None


def test_the_proof_index_lists_theorems_by_their_numbers():
    index = soup_of(SITE / "prf-prf.html").select_one("table.indextable")
    entries = [a.get_text(strip=True) for a in index.select("a[href*='#']") if a.code]
    assert "Theorem 15.1" in entries, entries
    assert not [e for e in entries if e.startswith("thm-")], entries


def test_every_chapter_ends_with_a_sources_section_holding_its_bibliography(chapter):
    stem, soup = chapter
    cited = {role.content for role in chapter_source(stem).roles() if role.name.startswith("cite")}
    cited = {key.strip() for keys in cited for key in keys.split(",")}
    last = soup.select("section > h1, section > h2")[-1]  # a later page's sections are h1
    assert re.sub(r"^\d+\.\d+\.\s*|#$", "", last.get_text(" ", strip=True)).strip() == "Sources"
    bibliography = last.find_parent("section").select_one("div.bibliography, .citation-list")
    assert bibliography is not None, f"{stem}: the Sources section holds no bibliography"
    assert len(bibliography.select(".citation")) == len(cited)
    assert "doi.org" in bibliography.decode() or "arxiv.org" in bibliography.decode()


def test_citation_labels_in_the_list_match_the_citations_in_the_text(chapter):
    # Author-year in the text ("Santurkar et al. [2018]", "[Ba et al., 2016]") and the same
    # "Author, Year" label in the list.
    stem, _ = chapter
    checked = 0
    citations = [
        (page, citation)
        for page in map(soup_of, chapter_page_files(stem))
        for citation in page.select("span.bibtex-citation")
    ]
    for page, citation in citations:
        for link in citation.select("a.reference.internal[href]"):
            path, _, fragment = link["href"].partition("#")
            entry = (soup_of(SITE / "chapters" / path) if path else page).find(id=fragment)
            assert entry is not None, link["href"]
            label = entry.select_one(".label").get_text(strip=True).strip("[]")
            shown = " ".join(link.get_text().split())
            if not re.search(r",\s*\d{4}[a-z]?$", shown):  # textual: "Author [Year]"
                author = " ".join(citation.get_text().split("[")[0].split())
                shown = f"{author}, {shown}"
            assert " ".join(shown.split()) == label, (stem, shown, label)
            checked += 1
    assert checked, f"{stem} cites nothing"


def test_chips_link_to_their_glossary():
    intro = soup_of(SITE / "intro.html")
    for stem in chapter_stems():
        chips = soup_of(chapter_page(stem)).select("span.sd-badge, a.sd-badge")
        assert chips, f"{stem} has no chips"
        for chip in chips:
            link = chip if chip.name == "a" else chip.find_parent("a")
            assert link is not None, f"{stem}: chip {chip.get_text()!r} is not a link"
            target = urlsplit(link["href"])
            assert target.path.endswith("intro.html") and intro.find(id=target.fragment), link


def test_no_number_on_a_page_is_a_python_repr(chapter):
    # A glued numpy scalar renders as "np.float64(...)" unless it was converted to float.
    _, soup = chapter
    text = soup.get_text(" ")
    assert not re.search(r"np\.(float|int|bool)\w*\(", text)


def _internal_links():
    for page in site_pages():
        soup = soup_of(page)
        for tag, attribute in (("a", "href"), ("img", "src"), ("script", "src"), ("link", "href")):
            for element in soup.find_all(tag):
                target = element.get(attribute)
                if not target or urlsplit(target).scheme or target.startswith("//"):
                    continue
                yield page, target


def test_every_internal_link_resolves_to_a_file_of_the_site():
    # Badges, bound numbers, claim pages, artifacts, figures, the favicon: all of them.
    broken = []
    for page, target in _internal_links():
        parts = urlsplit(target)
        path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not path.is_relative_to(SITE.resolve()) or not path.is_file():
            broken.append(f"{page.relative_to(SITE)} -> {target}")
        elif parts.fragment and path.suffix == ".html":
            if parts.fragment not in ids_of(path):
                broken.append(f"{page.relative_to(SITE)} -> {target} (no such anchor)")
    assert not broken, "\n".join(broken)


def test_badges_link_to_pages_of_the_site():
    badges = [
        (page, a) for page in site_pages() for a in soup_of(page).select("a.claim-badge[href]")
    ]
    assert badges
    for page, badge in badges:
        assert not urlsplit(badge["href"]).scheme, f"{page.name}: {badge['href']}"


def test_pages_load_nothing_from_and_name_no_other_host_in_a_script():
    for page in site_pages():
        soup = soup_of(page)
        for element in soup.find_all(["script", "link"]):
            source = element.get("src") or (
                element.get("href") if "stylesheet" in (element.get("rel") or []) else None
            )
            assert not (source and urlsplit(source).scheme), f"{page.name} loads {source}"
            if element.name == "script" and element.string:
                hosts = re.findall(r"(?:https?:)?//([\w.-]+\.[a-z]{2,})", element.string)
                assert not hosts, f"{page.name}: an inline script names {hosts}"


def test_every_page_has_a_favicon():
    for page in site_pages():
        soup = soup_of(page)
        icon = soup.find("link", rel="icon")
        assert icon is not None and icon.get("href"), f"{page.name} has no favicon"


def _git(*arguments):
    return subprocess.run(
        ["git", "-C", str(paths.REPO_ROOT), *arguments], capture_output=True, text=True
    )


def test_every_page_names_the_commit_and_date_it_was_built_from():
    stamps = {}
    for page in site_pages():
        stamp = soup_of(page).select_one(".build-stamp")
        assert stamp is not None, f"{page.relative_to(SITE)} has no build stamp in its footer"
        stamps[page] = stamp.get_text(" ", strip=True)
    assert len(set(stamps.values())) == 1, set(stamps.values())
    stamp = soup_of(next(iter(stamps))).select_one(".build-stamp")
    commit = stamp.select_one(".build-commit").get_text(strip=True)
    date = stamp.select_one(".build-date").get_text(strip=True)
    assert re.fullmatch(r"[0-9a-f]{7,40}", commit), commit
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date), date
    assert _git("cat-file", "-e", f"{commit}^{{commit}}").returncode == 0, commit


# ------------------------------------------------------------------------------ a browser --


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass  # the test reports what matters; one line per asset would drown it


@pytest.fixture(scope="module")
def served_site():
    if not (SITE / "intro.html").exists():
        pytest.fail(f"{SITE} has no intro.html: run `make` before the site checks")
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed: `make site-check` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


class PageLog:
    """Console messages, page errors, failed responses and off-host requests of one page,
    since it was made or last :meth:`cleared <clear>` (a page that visits several URLs in
    turn clears its log before each)."""

    def __init__(self, page, origin):
        self.clear()
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on(
            "response",
            lambda r: (
                self.problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None
            ),
        )
        page.on(
            "request",
            lambda r: None if r.url.startswith((origin, "data:")) else self.off_host.append(r.url),
        )

    def clear(self):
        self.problems, self.off_host = [], []

    def _console(self, message):
        if message.type in ("error", "warning", "assert"):
            self.problems.append(f"console {message.type}: {message.text}")


SIDEBAR_STATE = """selector => {
  const element = document.querySelector(selector);
  if (!element) return null;
  const box = element.getBoundingClientRect();
  const style = getComputedStyle(element);
  return style.visibility === "visible" && style.display !== "none" && box.width > 0
    && box.right > 1 && box.left < window.innerWidth - 1;
}"""


# How long a sidebar may take to reach a state: the theme animates, and on a loaded machine
# (four runnable processes on two cores) an animation of a few tenths of a second and the
# handler that starts it can take seconds. A longer wait only delays a real failure.
STATE_WAIT_MS = 15_000


def _shown(page, sidebar, expected):
    """Whether ``sidebar`` reaches the ``expected`` state within :data:`STATE_WAIT_MS`."""
    try:
        page.wait_for_function(
            f"s => ({SIDEBAR_STATE})(s) === {str(expected).lower()}",
            arg=sidebar,
            timeout=STATE_WAIT_MS,
        )
    except Exception:  # playwright's TimeoutError: the state was not reached
        return not expected
    return expected


def _focus_inside(page, sidebar) -> bool:
    """Whether focus moves into ``sidebar`` within :data:`STATE_WAIT_MS`."""
    try:
        page.wait_for_function(
            "s => !!document.querySelector(s)?.contains(document.activeElement)",
            arg=sidebar,
            timeout=STATE_WAIT_MS,
        )
    except Exception:  # playwright's TimeoutError: focus stayed outside
        return False
    return True


# Running CSS transitions and animations of the page (finite ones: a spinner loops forever).
ANIMATING = """() => document.getAnimations().some(a => a.playState === "running"
  && a.effect && a.effect.getComputedTiming().endTime !== Infinity)"""


def _settled(page):
    """Wait (at most :data:`STATE_WAIT_MS`) until no transition or animation is running."""
    try:
        page.wait_for_function(f"!({ANIMATING})()", timeout=STATE_WAIT_MS)
    except Exception:  # playwright's TimeoutError: still animating; the checks say what fails
        pass


# What the browser checks read, once the page's load event has fired (the page, its styles,
# scripts and images): MathJax's first typesetting and the fonts the page and MathJax use.
READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
}"""


def _open(page, url):
    """Go to ``url`` and wait until it is ready to be checked (:data:`READY`)."""
    page.goto(url, wait_until="load")
    page.evaluate(READY)


def _check_navigation(page, width):
    """Each sidebar toggle opens its sidebar and a second action closes it again."""
    failures = []
    for side in ("primary", "secondary"):
        sidebar = f".bd-sidebar-{side}"
        toggle = page.locator(f"button.{side}-toggle:visible")
        if page.locator(sidebar).count() == 0:
            # Every page has the chapter list; a page without sections may lack the other.
            if side == "primary":
                failures.append(f"no primary sidebar at {width} px")
            continue
        if width >= NARROW:
            if side == "primary":  # open at desktop width; the toggle collapses and restores
                if not page.evaluate(SIDEBAR_STATE, sidebar):
                    failures.append("primary sidebar not shown at desktop width")
                    continue
                toggle.first.click(timeout=5000)
                if _shown(page, sidebar, False):
                    failures.append("primary sidebar does not collapse")
                toggle.first.click(timeout=5000)
                if not _shown(page, sidebar, True):
                    failures.append("primary sidebar does not come back")
            continue
        has_content = page.evaluate(
            "s => !!document.querySelector(s + ' nav, ' + s + ' .bd-toc-item')", sidebar
        )
        if toggle.count() == 0:
            if side == "primary" or has_content:
                failures.append(f"no visible {side} toggle at {width} px")
            continue
        if page.evaluate(SIDEBAR_STATE, sidebar):
            failures.append(f"{side} sidebar open before its toggle is pressed")
        toggle.first.click(timeout=5000)
        if not _shown(page, sidebar, True):
            failures.append(f"{side} toggle does not open the sidebar at {width} px")
        _settled(page)  # let the opening transition end before closing
        # The theme closes a sidebar on Escape only while focus is inside it, and moves focus
        # there 100 ms after the click (a timer, which a loaded machine runs late).
        if not _focus_inside(page, sidebar):
            failures.append(f"{side} toggle does not move focus into the sidebar at {width} px")
        page.keyboard.press("Escape")
        if _shown(page, sidebar, False):
            failures.append(f"{side} sidebar does not close at {width} px")
    return failures


SEARCH_CONTROLS = """() => [...document.querySelectorAll(
    'header .search-button, header .search-button-field, header input[type=search],'
    + ' .bd-header-article .search-button, .bd-header-article .search-button-field,'
    + ' .bd-sidebar-primary .search-button-field, .bd-sidebar-primary input[type=search]')]
  .filter(e => { const b = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return b.width > 0 && b.height > 0 && s.visibility === 'visible'
      && b.right > 0 && b.left < window.innerWidth; }).length"""

FIGURE_SIZES = """() => [...document.querySelectorAll('figure img')].map(img => ({
  src: img.currentSrc, natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
  complete: img.complete, linked: !!img.closest('a.figure-full-size')}))"""


def _page_name(page):
    return str(page.relative_to(SITE)).replace("/", "__").removesuffix(".html")


# What fits a narrow screen (390 and 800 px): the document does not scroll sideways; every
# display equation fits its box or scrolls inside a focusable box with a visible cue (a
# gradient at its edges); no inline formula or table reaches past the viewport; captions are
# no larger than the body text; a bound number's mark is at least 0.8 of its text's size.
PHONE_LAYOUT = """() => {
  const vw = document.documentElement.clientWidth, problems = [];
  const wide = document.documentElement.scrollWidth;
  if (wide > vw) problems.push(`the page scrolls sideways: scrollWidth ${wide}`);
  const scroller = element => {
    for (let n = element; n && n !== document.body; n = n.parentElement) {
      const s = getComputedStyle(n);
      const scrolls = ['auto', 'scroll'].includes(s.overflowX);
      if (scrolls && n.scrollWidth > n.clientWidth + 1) return n;
    }
    return null;
  };
  const outermost = element => {  // the widest box that scrolls it (a table's, say)
    let found = null;
    for (let n = scroller(element); n; n = scroller(n.parentElement)) found = n;
    return found;
  };
  const label = e => (e.closest('[id]') || e).id || e.className;
  for (const math of document.querySelectorAll('mjx-container[display="true"]')) {
    const box = math.getBoundingClientRect(), name = `equation ${label(math)}`;
    if (math.scrollWidth <= math.clientWidth + 1 && box.right <= vw + 1) continue;
    const region = scroller(math);
    if (!region) {
      problems.push(`${name} is clipped (${math.scrollWidth} px in ${math.clientWidth})`);
      continue;
    }
    const edge = region.getBoundingClientRect();
    if (region.tabIndex < 0) problems.push(`${name} scrolls in a box no key reaches`);
    if (!getComputedStyle(region).backgroundImage.includes('gradient'))
      problems.push(`${name} scrolls with no cue at its edges`);
    if (edge.left < -1 || edge.right > vw + 1) problems.push(`${name}: box leaves the viewport`);
  }
  for (const math of document.querySelectorAll('mjx-container:not([display="true"])')) {
    const box = (outermost(math) || math).getBoundingClientRect();  // a long one scrolls
    if (box.width && (box.right > vw + 1 || box.left < -1))
      problems.push(`inline formula in ${label(math)} ends at ${Math.round(box.right)} px`);
  }
  for (const table of document.querySelectorAll('.bd-article table')) {
    const box = (table.closest('.pst-scrollable-table-container') || table)
      .getBoundingClientRect();
    if (box.right > vw + 1) problems.push(`a table ends at ${Math.round(box.right)} px`);
  }
  const paragraph = document.querySelector('.bd-article p') || document.body;
  const body = parseFloat(getComputedStyle(paragraph).fontSize);
  for (const caption of document.querySelectorAll('figcaption p, figcaption')) {
    const size = parseFloat(getComputedStyle(caption).fontSize);
    if (size > body + 0.01) problems.push(`a caption is ${size} px, the body ${body} px`);
  }
  for (const mark of document.querySelectorAll('.claim-value .claim-mark')) {
    const own = parseFloat(getComputedStyle(mark).fontSize);
    const text = parseFloat(getComputedStyle(mark.parentElement).fontSize);
    if (own < 0.8 * text) {
      problems.push(`a claim mark is ${own} px beside ${text} px text`);
      break;
    }
  }
  const pill = document.querySelector('#pst-back-to-top');
  if (pill && getComputedStyle(pill).display !== 'none')
    problems.push('"Back to top" can show over the text');
  return problems;
}"""

# The statement of the bound number nearest the right edge, shown on keyboard focus: where
# its pop-up (the number's ::after) lands, from its computed position, width and transform.
POPUP_BOX = """element => {
  const s = getComputedStyle(element, '::after');
  if (s.content === 'none' || s.display === 'none') return null;
  const shift = new DOMMatrix(s.transform === 'none' ? undefined : s.transform).m41;
  const left = s.position === 'fixed' ? parseFloat(s.left) + shift
    : element.getBoundingClientRect().left + parseFloat(s.left) + shift;
  return {left, right: left + parseFloat(s.width), vw: document.documentElement.clientWidth,
          position: s.position};
}"""


def _check_phone_layout(page):
    failures = page.evaluate(PHONE_LAYOUT)
    numbers = page.locator(".claim-value[href]")
    # Only numbers a reader can reach: one inside a closed dropdown (an exercise's answer)
    # keeps a layout box but cannot take focus.
    reachable = [
        k
        for k in range(numbers.count())
        if numbers.nth(k).evaluate("e => e.checkVisibility() && !e.closest('details:not([open])')")
    ]
    if reachable:
        rightmost = max(
            reachable,
            key=lambda k: numbers.nth(k).evaluate("e => e.getBoundingClientRect().right"),
        )
        number = numbers.nth(rightmost)
        number.scroll_into_view_if_needed()
        number.focus()
        page.keyboard.press("Shift")  # keyboard modality: the focus ring and the pop-up show
        box = number.evaluate(POPUP_BOX)
        if box is None:
            failures.append("a focused bound number shows no statement")
        elif box["left"] < 0 or box["right"] > box["vw"] + 0.5:
            failures.append(f"a bound number's statement opens off-screen: {box}")
        number.blur()
    return failures


# What 390 px leaves out of axe-core's reach: the sidebars (closed behind their toggles) and
# the header's desktop controls. The rest of a page, the article first, is checked whole at
# 390 px in both schemes, where more of it scrolls and wraps than at any wider width; at
# 1366 px axe-core checks this chrome, which is all a wider width adds.
DESKTOP_CHROME = (".bd-header", ".bd-sidebar-primary", ".bd-sidebar-secondary", ".bd-footer")


def _axe_context(width):
    """axe-core's context at ``width``: the whole page at phone width, the page's chrome
    (:data:`DESKTOP_CHROME`) at 1366 px. Nothing is left out: the tooltip the navigation
    check leaves open on a header button is checked where it is (:func:`_in_each_scheme`)."""
    if width == PHONE:
        return {"include": [["html"]]}
    return {"include": [[selector] for selector in DESKTOP_CHROME]}


def _in_each_scheme(page, width, badges_expected):
    """axe-core's violations, in light mode and (colour) in dark mode, and at phone width the
    contrast of every claim badge and claim line in both: one list of failures. At phone
    width axe-core checks the whole page, wider only its chrome (:func:`_axe_context`).

    The page's own scheme is set as the theme's switch sets it; colour is the only rule a
    scheme changes, so the dark pass runs that rule alone. ``badges_expected``: the page's
    HTML holds a claim badge or claim line, so the browser must find at least one.
    """
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: `make` installs it (npm ci, package.json)")
    page.add_script_tag(path=str(AXE))
    # What axe-core measures is the page at rest: a tooltip fading in or out as the pointer or
    # focus moves (the theme switch below restyles the header under the pointer) was measured
    # part-way, its white text on a nearly transparent background (a colour-contrast failure
    # seen under load). Without transitions every change lands at once, in its final colours.
    page.add_style_tag(
        content="*, *::before, *::after { transition: none !important; "
        "animation: none !important; }"
    )
    # The Bootstrap tooltip the navigation check left open on a header button is in that
    # button's landmark (_static/site.js); Bootstrap alone appends it to <body>, outside every
    # landmark (axe: region), where this check failed on every page.
    found = []
    for mode, rules in (("light", None), ("dark", ["color-contrast"])):
        # Setting the theme and reading a style starts any colour transition; wait for its end.
        page.evaluate(
            f"document.documentElement.dataset.theme = '{mode}';"
            " getComputedStyle(document.body).color"
        )
        _settled(page)
        options = {"resultTypes": ["violations"]}
        if rules:
            options["runOnly"] = {"type": "rule", "values": rules}
        found_now = page.evaluate("([c, o]) => axe.run(c, o)", [_axe_context(width), options])
        for violation in found_now["violations"]:
            targets = "; ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
            found.append(
                f"axe {mode}: {violation['id']} ({violation['impact']}, "
                f"{len(violation['nodes'])} nodes: {targets})"
            )
        if width == PHONE:
            found += [f"{mode}: {f}" for f in _badge_contrast(page, badges_expected)]
    page.evaluate("document.documentElement.dataset.theme = 'light'")
    return found


def _badge_contrast(page, expected):
    """Text against background (at least :data:`TEXT_CONTRAST`) and the border against what
    is outside it (:data:`BORDER_CONTRAST`) of every claim badge and claim line shown."""
    failures, elements = [], page.evaluate(COLOURS)
    if expected and not any(element["texts"] for element in elements):
        failures.append("the HTML has claim badges or lines; the browser found none with text")
    for element in elements:
        for text in element["texts"]:
            ratio = contrast(text["color"], text["background"])
            if ratio < TEXT_CONTRAST:
                failures.append(f"{text['text']!r} {ratio:.2f}:1")
        if element["borderWidth"] > 0:
            ratio = contrast(element["border"], element["outside"])
            if ratio < BORDER_CONTRAST:
                failures.append(f"border of {element['cls']} {ratio:.2f}:1")
    return failures


# The pages at each width are checked in PAGE_GROUPS[width] tests (every n-th page of the
# sorted list from the group's index on), so pytest-xdist shares them between its workers.
# A test that has started is no one else's to take: when the last to start is long, the
# other core idles until it ends, so no group takes longer than the printed book's test, the
# longest of the tier (about 24 s with both cores busy; every page at phone width, where
# axe-core checks the whole page in light and dark mode, is about 120 s of test time, each
# other width about 45 s).
PAGE_GROUPS = {1366: 5, 800: 4, PHONE: 8}


def _later_claim_pages():
    """The claim pages after the first. One extension writes them all from one template
    (:mod:`claimbook.extensions.claim_pages`) with the same sidebar: the first stands for
    their layout at the wider widths and for their navigation at every width."""
    return sorted(p for p in site_pages() if p.parent == SITE / "claims")[1:]


def pages_at(width):
    """The pages checked at ``width``: every page at phone width, where a layout breaks first;
    at the wider widths every page but :func:`_later_claim_pages`."""
    if width == PHONE:
        return site_pages()
    later = set(_later_claim_pages())
    return [p for p in site_pages() if p not in later]


FOCUSABLE_HEADER = "header button:visible, .bd-header-article button:visible"


def _check_focus_rings(page, width):
    """Every header control, focused from the keyboard, shows a ring of at least 2 px."""
    failures = []
    page.keyboard.press("Shift")  # keyboard modality, as a reader who tabs: after the clicks
    controls = page.locator(FOCUSABLE_HEADER)
    if controls.count() < 2:
        failures.append(f"{controls.count()} header controls at {width} px")
    for index in range(controls.count()):
        control = controls.nth(index)
        control.focus()
        ring = control.evaluate(
            "e => { const s = getComputedStyle(e); return [s.outlineStyle, "
            "parseFloat(s.outlineWidth), e.matches(':focus-visible')]; }"
        )
        label = control.get_attribute("aria-label") or control.get_attribute("title")
        if ring[0] == "none" or ring[1] < 2:
            failures.append(f"{label!r} focused without a ring ({ring})")
        control.blur()
    return failures


DESKTOP = 1366  # where a chapter page's badges are checked in place, and captured whole
# Every page captured at every width, chapters whole too (`make screenshots`, for people);
# otherwise only a page with a failure, at the width it failed, as it was when checked.
EVERY_SCREENSHOT = os.environ.get("SITE_SCREENSHOTS") == "1"


def _check_badges_in_place(page, path):
    """A chapter page at desktop width: the browser has every verified badge the HTML has,
    and the first one a reader can reach (outside a closed answer: an exercises page opens
    with them), scrolled to, is visible. With :data:`EVERY_SCREENSHOT` the whole page is
    captured too: a tall image (chapter 16's first page is over 20 000 px) that takes
    10-60 s and checks nothing, kept for people by ``make screenshots``."""
    failures = []
    shown = page.locator("a.claim-verified")
    expected = len(soup_of(path).select("a.claim-verified"))
    if shown.count() != expected:
        failures.append(f"{shown.count()} verified badges in the browser, {expected} in the HTML")
    first = shown.evaluate_all("all => all.findIndex(e => !e.closest('details:not([open])'))")
    if first >= 0:
        shown.nth(first).scroll_into_view_if_needed()
        if not shown.nth(first).is_visible():
            failures.append("the first verified badge is not visible when scrolled to")
    if EVERY_SCREENSHOT:
        page.screenshot(
            path=str(SCREENSHOTS / f"chapters__{path.stem}-full.png"),
            full_page=True,
            timeout=180_000,
        )
    return failures


# How tall a claim page may be on a phone (844 px of screen), its details closed: a page is
# its cards, each with its reasons, and at most five screens of the rest (headline, account,
# mistakes, places, commands). Before the digests of the functions a claim ran were collapsed,
# a claim page was 14 000 px tall.
SCREEN = 844
CARD_SCREENS = 1.5
REST_SCREENS = 5
CLAIM_PAGE_FIT = """() => {
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


def _check_claim_page_fits(page, path):
    """A claim page at phone width, its details closed and then open: nothing scrolls
    sideways, no card is taller than :data:`CARD_SCREENS` screens, the rest of the page at
    most :data:`REST_SCREENS`, the details are collapsed, and a card per registered field."""
    failures = []
    closed = page.evaluate(CLAIM_PAGE_FIT)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    opened = page.evaluate(CLAIM_PAGE_FIT)
    for state, fit in (("closed", closed), ("open", opened)):
        if fit["width"] > fit["viewport"] or fit["wide"]:
            failures.append(f"({state}) scrolls sideways: {fit}")
    if closed["tallest"] > CARD_SCREENS * SCREEN:
        failures.append(f"a card is {closed['tallest']:.0f} px tall")
    if closed["height"] - closed["cards"] > REST_SCREENS * SCREEN:
        failures.append(f"{closed['height'] - closed['cards']:.0f} px besides cards")
    if not opened["height"] > closed["height"]:
        failures.append("its details are not collapsed")
    cards = page.locator(".claim-card").count()
    if cards != len(claims.load_claim(path.stem).expect):
        failures.append(f"{cards} cards")
    return failures


def _check_figures_and_formulas(page, path):
    """A chapter page with its dropdowns open, at the page's width: its figures' text and its
    formulas' scrolling (:mod:`width_checks`), and at the widest width on paper too."""
    width = page.viewport_size["width"]
    soup = soup_of(path)
    page.evaluate(width_checks.OPEN_DROPDOWNS)
    failures = width_checks.check_figures(page, width, SITE, soup)
    failures += width_checks.check_formulas(page, width, soup)
    if width == max(WIDTHS):
        failures += width_checks.check_printed_cues(page)
    return failures


@pytest.mark.parametrize(
    ("width", "group"), [(width, group) for width in WIDTHS for group in range(PAGE_GROUPS[width])]
)
def test_every_page_at_every_width(width, group, served_site, browser):
    """Console, hosts, search and figures, for every page; navigation for every
    page but :func:`_later_claim_pages`; below 992 px the phone layout (:data:`PHONE_LAYOUT`,
    the statement pop-up); at 1366 and 390 px axe-core in light and dark mode, and at 390 px
    the contrast of claim badges and lines in both (:func:`_in_each_scheme`); on the first
    chapter's page a focus ring on every header control (:func:`_check_focus_rings`); at
    1366 px every chapter page's badges in place (:func:`_check_badges_in_place`); at 390 px
    every claim page's fit, details closed and open (:func:`_check_claim_page_fits`); on every
    chapter page its figures' text and formulas' widths, dropdowns open
    (:func:`_check_figures_and_formulas`). A page
    with a failure is captured (:data:`EVERY_SCREENSHOT`: every page)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    failures = []
    later_claim_pages = set(_later_claim_pages())
    context = browser.new_context(viewport={"width": width, "height": 900})
    # One tab visits the pages in turn, as a reader does: each is a new document (nothing the
    # checks change outlives it but the HTTP cache), and a tab per page would start a
    # renderer process per page, about half of this test's CPU time.
    page = context.new_page()
    log = PageLog(page, served_site)
    for path in pages_at(width)[group :: PAGE_GROUPS[width]]:
        name = str(path.relative_to(SITE))
        log.clear()
        failed_before = len(failures)
        _open(page, f"{served_site}/{name}")
        if page.locator(".math").count():
            # Attached, not visible: a page's first equation may be in a closed answer.
            page.wait_for_selector("mjx-container", state="attached", timeout=20_000)
            if page.locator("mjx-merror").count():
                failures.append(f"{name}: MathJax reported an equation error")
        searches = page.evaluate(SEARCH_CONTROLS)
        if searches != 1:
            failures.append(f"{name} @ {width}: {searches} search controls in the header/sidebar")
        for figure in page.evaluate(FIGURE_SIZES):
            if not figure["complete"] or figure["natural"] == 0:
                failures.append(f"{name}: figure {figure['src']} did not load")
            elif figure["natural"] < 2 * figure["shown"]:
                failures.append(f"{name} @ {width}: {figure['src']} is not 2x its display size")
            if not figure["linked"]:
                failures.append(f"{name}: {figure['src']} does not open at full size")
        if path not in later_claim_pages:
            failures += [f"{name} @ {width}: {f}" for f in _check_navigation(page, width)]
        if width < NARROW:
            failures += [f"{name} @ {width}: {f}" for f in _check_phone_layout(page)]
        if width in AXE_WIDTHS:
            badges = bool(soup_of(path).select_one(".claim-badge, .claim-line"))
            failures += [f"{name} @ {width}: {f}" for f in _in_each_scheme(page, width, badges)]
        shot = SCREENSHOTS / f"{_page_name(path)}-{width}.png"
        if EVERY_SCREENSHOT:  # before the checks below scroll the page
            page.screenshot(path=str(shot))
        if path == chapter_page(chapter_stems()[0]):
            failures += [f"{name} @ {width}: {f}" for f in _check_focus_rings(page, width)]
        if width == DESKTOP and path.parent == SITE / "chapters":  # scrolls: after the capture
            failures += [f"{name} @ {width}: {f}" for f in _check_badges_in_place(page, path)]
        if width == PHONE and path.parent == SITE / "claims":  # opens the details: last
            failures += [f"{name} @ {width}: {f}" for f in _check_claim_page_fits(page, path)]
        if path.parent == SITE / "chapters":  # opens the dropdowns: last
            failures += [f"{name} @ {width}: {f}" for f in _check_figures_and_formulas(page, path)]
        failures += [f"{name} @ {width}: {p}" for p in log.problems]
        failures += [f"{name} @ {width}: requested {url}" for url in log.off_host]
        if len(failures) > failed_before and not EVERY_SCREENSHOT:
            page.screenshot(path=str(shot))  # as the checks left it: the failure's viewport
            failures.append(f"{name} @ {width}: captured in {shot.relative_to(paths.REPO_ROOT)}")
    context.close()
    assert not failures, "\n".join(failures)


def _luminance(rgb):
    def channel(value):
        value /= 255
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(v) for v in rgb[:3])
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first, second):
    """WCAG 2 contrast ratio of two sRGB colours."""
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_contrast_formula_matches_the_wcag_reference_values():
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)
    assert contrast((10, 20, 30), (10, 20, 30)) == pytest.approx(1.0)


COLOURS = """() => {
  const rgb = c => { const m = c.match(/[\\d.]+/g); return m ? m.map(Number) : null; };
  const background = e => {
    for (let n = e; n; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c && (c.length < 4 || c[3] > 0.99)) return c;
    }
    return rgb(getComputedStyle(document.body).backgroundColor) || [255, 255, 255];
  };
  return [...document.querySelectorAll('.claim-badge, .claim-line')].map(e => {
    const s = getComputedStyle(e);
    const border = e.classList.contains('claim-line') ? s.borderLeftColor : s.borderTopColor;
    const borderWidth = e.classList.contains('claim-line') ? s.borderLeftWidth : s.borderTopWidth;
    const texts = [...e.querySelectorAll('*')].concat([e])
      .filter(n => [...n.childNodes].some(c => c.nodeType === 3 && c.textContent.trim()))
      .map(n => ({text: n.textContent.trim().slice(0, 30), color: rgb(getComputedStyle(n).color),
                  background: background(n)}));
    return {cls: e.className, texts, border: rgb(border), borderWidth: parseFloat(borderWidth),
            outside: background(e.parentElement)};
  });
}"""
