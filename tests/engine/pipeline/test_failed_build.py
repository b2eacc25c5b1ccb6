"""A failed build says so on every page it keeps, and no mark there contradicts the verdict.

Each test builds the tiny fixture book green, breaks it, and reads every HTML page of
``_build/html`` (the theme's templates under ``_static`` aside) as a reader's browser would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup

pytestmark = pytest.mark.book

BANNER_ID = "claimbook-failed-build"  # claimbook.pipeline.failed_build.BANNER_ID

CLAIM = "c15-invariance-001"


def _pages(site: Path) -> list[Path]:
    return sorted(
        page
        for page in site.rglob("*.html")
        if not any(part.startswith("_") for part in page.relative_to(site).parts)
    )


def _banners(site: Path) -> dict[str, str]:
    """Each page's banner text ("" for a page without one)."""
    found = {}
    for page in _pages(site):
        banner = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").find(id=BANNER_ID)
        found[page.relative_to(site).as_posix()] = "" if banner is None else banner.get_text()
    return found


def _shown_verified(site: Path, claim_id: str) -> list[str]:
    """The pages with a mark that says ``claim_id`` is verified (a badge or a number)."""
    pages = []
    for page in _pages(site):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        badges = [
            badge
            for badge in soup.select(".claim-badge.claim-verified")
            if badge.select_one(".claim-id") is not None
            and badge.select_one(".claim-id").get_text() == claim_id
        ]
        numbers = soup.select(f'[data-claim="{claim_id}"][data-claim-state="verified"]')
        if badges or numbers:
            pages.append(page.relative_to(site).as_posix())
    return pages


def test_a_failed_claim_bans_its_green_marks_and_bannered_pages_until_fixed(tiny_book):
    site = tiny_book.path("_build/html")
    assert _shown_verified(site, CLAIM), "the green build shows the claim verified"
    # The claim fails and so does the chapter that verifies it: the site is not rendered.
    tiny_book.edit(f"claims/{CLAIM}.yaml", "value: 2.055", "value: 2.155")
    tiny_book.edit(
        "chapters/beta.md",
        "claim = verify",
        "raise RuntimeError('broken on purpose')\nclaim = verify",
    )
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    banners = _banners(site)
    assert len(banners) >= 4 and all(banners.values()), banners
    for text in banners.values():
        assert "This site is from the build of" in text
        assert "The latest build, at" in text
        assert "RuntimeError: broken on purpose" in text and "\n" not in text.strip()
    assert _shown_verified(site, CLAIM) == []
    assert "failed" in tiny_book.path(f"_build/html/claims/{CLAIM}.html").read_text()
    assert "broken on purpose" in (site / "OUTDATED.txt").read_text()
    # Fixed: the next build publishes a site whole, with no banner and the claim green.
    tiny_book.edit(f"claims/{CLAIM}.yaml", "value: 2.155", "value: 2.055")
    tiny_book.edit("chapters/beta.md", "raise RuntimeError('broken on purpose')\n", "")
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert not any(_banners(site).values())
    assert _shown_verified(site, CLAIM)
    assert not (site / "OUTDATED.txt").exists()


def test_a_failing_claim_alone_leaves_a_banner_with_its_numbers(tiny_book):
    site = tiny_book.path("_build/html")
    tiny_book.edit(f"claims/{CLAIM}.yaml", "value: 2.055", "value: 2.155")
    for _attempt in range(2):  # rendered, then "unchanged since the last render"
        process = tiny_book.build()
        assert process.returncode == 1, process.stdout
        banners = _banners(site)
        assert all(banners.values()), banners
        assert all(
            f"{CLAIM} rms_shift_deviation: expected 2.155" in t for t in banners.values()
        ), banners
        assert _shown_verified(site, CLAIM) == []
    # One banner a page, however many builds failed, with the site's own build time.
    page = (site / "chapters" / "alpha.html").read_text(encoding="utf-8")
    assert page.count(f'id="{BANNER_ID}"') == 1


def test_a_failing_chapter_leaves_banners_on_the_kept_site(tiny_book):
    site = tiny_book.path("_build/html")
    tiny_book.edit(
        "chapters/beta.md",
        "from claimbook.chapter import verify_claim\n",
        "from claimbook.chapter import verify_claim\n\nraise RuntimeError('broken on purpose')\n",
    )
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    banners = _banners(site)
    assert all(banners.values()), banners
    assert all("chapters/beta.md: FAILED" in text for text in banners.values())
    assert "claim-verified" in (site / "chapters" / "alpha.html").read_text()  # still true
