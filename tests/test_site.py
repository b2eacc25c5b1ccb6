"""Checks of the built site (`make site-check`, after `make`): what a reader will see.

Expectations come from the chapter sources and the claim registry, never from the HTML itself:
every figure a chapter names must appear with the number the book gives it, every claim a
chapter cites must show a verified badge, and nothing may link to a page that is not there.
"""

import functools
import http.server
import json
import re
import shutil
import threading
from urllib.parse import unquote, urlsplit

import pytest
from bs4 import BeautifulSoup

from trainable_harness import claims, figures, paths

pytestmark = pytest.mark.site

SITE = paths.REPO_ROOT / "_build" / "html"
SCREENSHOTS = paths.REPO_ROOT / "_build" / "screenshots"
CLAIM_REFERENCE = re.compile(r"\{claim\}`([^`]+)`|```\{claim-line\}\s+(\S+)")


def chapter_stems():
    return figures.chapter_files()


def chapter_page(stem):
    page = SITE / "chapters" / f"{stem}.html"
    if not page.exists():
        pytest.fail(f"{page} is missing: run `make` before the site checks")
    return page


@functools.cache
def soup_of(page):
    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")


def cited_claims(stem):
    source = (paths.CHAPTERS_DIR / f"{stem}.md").read_text(encoding="utf-8")
    return {a or b for a, b in CLAIM_REFERENCE.findall(source)}


@pytest.fixture(params=chapter_stems())
def chapter(request):
    stem = request.param
    return stem, soup_of(chapter_page(stem))


def test_every_numbered_figure_appears_with_its_number_and_artifact(chapter):
    stem, soup = chapter
    source = (paths.CHAPTERS_DIR / f"{stem}.md").read_text(encoding="utf-8")
    labels = figures.figure_labels(source)
    number = figures.chapter_number(stem)
    assert labels, f"{stem} has no numbered figure"
    for index, label in enumerate(labels, start=1):
        figure = soup.find(id=label)
        assert figure is not None, f"figure {label} is not on the page"
        caption_number = figure.find(class_="caption-number")
        assert caption_number.get_text(strip=True) == f"Figure {number}.{index}"
        image = figure.find("img")
        assert image is not None and image.get("src"), f"figure {label} has no image"
        artifact = figure.find("a", class_="figure-artifact")
        assert artifact is not None, f"caption of {label} does not link its artifact"
        assert artifact["href"].endswith(f"artifacts/figures/figure-{number}.{index}.png")


def test_every_cited_claim_shows_a_verified_badge_and_a_claim_line(chapter):
    stem, soup = chapter
    claims = cited_claims(stem)
    assert claims, f"{stem} cites no claim"
    badges = soup.select("a.claim-badge")
    states = {badge.find(class_="claim-id").get_text(): badge["class"] for badge in badges}
    for claim_id in claims:
        assert claim_id in states, f"no badge for {claim_id}"
        assert {"claim-verified", "claim-refuted"} & set(states[claim_id]), (
            f"{claim_id} badge is {states[claim_id]}"
        )
    assert not soup.select(".claim-failed, .claim-stale, .claim-not-run")
    lines = soup.select("p.claim-line")
    assert {line.find(class_="claim-id").get_text() for line in lines} <= claims
    for line in lines:
        text = line.get_text(" ", strip=True)
        for field in ("seed:", "dtype:", "device:", "estimator:", "record (JSON)"):
            assert field in text, f"claim line lacks {field!r}: {text}"


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
        assert entry["statement"] in text
        assert f"python -m trainable_harness claims verify {entry['id']}" in text
        assert entry["record"] and (SITE / entry["record"]).is_file()
        assert entry["stated_in"], f"{entry['id']} is stated on no page"


def test_sections_and_equations_carry_the_chapter_number(chapter):
    stem, soup = chapter
    number = figures.chapter_number(stem)
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


def test_every_chapter_ends_with_its_bibliography(chapter):
    stem, soup = chapter
    source = (paths.CHAPTERS_DIR / f"{stem}.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"\{cite[:a-z]*\}`([^`]+)`", source))
    bibliography = soup.select_one("div.bibliography, .citation-list")
    assert bibliography is not None
    assert len(bibliography.select(".citation")) == len(cited)
    assert "doi.org" in bibliography.decode()


def test_no_number_on_a_page_is_a_python_repr(chapter):
    # A glued numpy scalar renders as "np.float64(...)" unless it was converted to float.
    _, soup = chapter
    text = soup.get_text(" ")
    assert not re.search(r"np\.(float|int|bool)\w*\(", text)


def site_pages():
    """Every page of the site (the theme's template fragments under _static are not pages)."""
    return [page for page in SITE.rglob("*.html") if "_static" not in page.parts]


def _internal_links():
    for page in site_pages():
        soup = soup_of(page)
        for tag, attribute in (("a", "href"), ("img", "src"), ("script", "src"), ("link", "href")):
            for element in soup.find_all(tag):
                target = element.get(attribute)
                if not target or urlsplit(target).scheme or target.startswith("//"):
                    continue
                yield page, target


def test_no_internal_link_is_broken():
    broken = []
    for page, target in _internal_links():
        parts = urlsplit(target)
        path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not path.exists():
            broken.append(f"{page.relative_to(SITE)} -> {target}")
        elif parts.fragment and path.suffix == ".html":
            if soup_of(path).find(id=parts.fragment) is None:
                broken.append(f"{page.relative_to(SITE)} -> {target} (no such anchor)")
    assert not broken, "\n".join(broken)


def test_pages_load_no_script_or_style_from_a_third_party():
    for page in site_pages():
        soup = soup_of(page)
        for element in soup.find_all(["script", "link"]):
            source = element.get("src") or (
                element.get("href") if element.get("rel") == ["stylesheet"] else None
            )
            assert not (source and urlsplit(source).scheme), f"{page.name} loads {source}"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass  # the test reports what matters; one line per asset would drown it


@pytest.fixture(scope="module")
def served_site():
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


@pytest.mark.parametrize("stem", chapter_stems())
def test_a_browser_shows_badges_figures_and_typeset_equations(stem, served_site, browser):
    chapter_page(stem)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside = []
    page.on(
        "request",
        lambda request: (
            outside.append(request.url) if not request.url.startswith(served_site) else None
        ),
    )
    page.goto(f"{served_site}/chapters/{stem}.html", wait_until="networkidle")
    page.wait_for_selector("mjx-container", timeout=20_000)
    assert page.locator("mjx-container").count() > 0
    badges = page.locator("a.claim-verified")
    assert badges.count() >= len(cited_claims(stem))
    badges.first.scroll_into_view_if_needed()
    assert badges.first.is_visible()
    images = page.locator("figure img")
    assert images.count() >= len(
        figures.figure_labels((paths.CHAPTERS_DIR / f"{stem}.md").read_text(encoding="utf-8"))
    )
    for index in range(images.count()):
        images.nth(index).scroll_into_view_if_needed()
        assert images.nth(index).evaluate("img => img.complete && img.naturalWidth > 0")
    assert not page.locator("mjx-merror").count(), "MathJax reported an equation error"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{stem}.png"), full_page=True)
    page.close()
    assert not outside, f"the page requested other hosts: {outside}"
