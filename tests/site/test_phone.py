"""Figures and formulas read at a phone's width and wider (the built site, in Chromium).

At 390, 800 and 1366 px, on every chapter page with its dropdowns open (a proof's or an
answer's equations count too):

- figure text: every numbered figure's smallest glyph, a log axis's exponent included, is at
  least :data:`~claimbook.figures.SMALLEST_TEXT_CSS_PX` as shown. The size is computed
  from the record of the image the browser chose (its ``currentSrc``): the smallest glyph in
  points the drawing wrote into its PNG (:data:`claimbook.figures.SMALLEST_TEXT_KEY`) times
  the CSS px a point is shown at (the displayed width over the PNG's width in points, from its
  pixels and dpi). At 390 px the image is the drawing made for a phone;
- display equations: none scrolls at 800 px or wider, at most one per page at 390 px;
- the scroll cue (site.css, phone.css): on a formula, inline or display, exactly when it
  overflows its box; never on paper (print media).
"""

import functools
from urllib.parse import unquote, urlsplit

import pytest

from claimbook import figures, paths
from tests.site.test_site import (
    SITE,
    _open,
    browser,
    chapter_page_files,
    chapter_stems,
    served_site,
)

pytestmark = pytest.mark.site

__all__ = ["browser", "served_site"]  # fixtures of the site tier, used here

WIDTHS = (390, 800, 1366)
PHONE = 390
SCROLLING_AT_PHONE = 1  # display equations a page may scroll at 390 px

OPEN_DROPDOWNS = "() => document.querySelectorAll('details').forEach(d => d.open = true)"
FIGURES = """() => [...document.querySelectorAll('figure[id] img')].map(img => ({
  label: img.closest('figure').id, src: img.currentSrc, natural: img.naturalWidth,
  shown: img.getBoundingClientRect().width}))"""
# Every formula: whether it overflows its box and whether it shows the scroll cue.
FORMULAS = """() => [...document.querySelectorAll(
    'span.math, div.math mjx-container[display="true"]')].map(box => ({
  display: box.matches('mjx-container'),
  name: (box.closest('[id]') || box).id + ': ' + box.textContent.trim().slice(0, 40),
  scroll: box.scrollWidth, client: box.clientWidth,
  cue: getComputedStyle(box).backgroundImage.includes('gradient')}))"""


def chapter_pages():
    return [page for stem in chapter_stems() for page in chapter_page_files(stem)]


@functools.cache
def image_record(path):
    """``(smallest glyph in pt, width in pt, width in px)`` of the site's PNG at ``path``."""
    from PIL import Image

    with Image.open(path) as image:
        smallest = image.info.get(figures.SMALLEST_TEXT_KEY)
        dpi = image.info.get("dpi", (None,))[0]
        pixels = image.size[0]
    assert smallest is not None and dpi, f"{path} records no smallest text or resolution"
    return float(smallest), pixels / dpi * 72, pixels


def _site_file(url):
    return SITE / unquote(urlsplit(url).path).lstrip("/")


def _check_figures(page, width):
    failures = []
    for figure in page.evaluate(FIGURES):
        label, file = figure["label"], _site_file(figure["src"])
        phone = file == SITE / "artifacts" / "figures" / "phone" / f"{label}.png"
        if phone != (width == PHONE):
            failures.append(f"{label}: shows {file.relative_to(SITE)} at {width} px")
        smallest_pt, width_pt, pixels = image_record(file)
        if figure["natural"] != pixels:
            failures.append(f"{label}: shows {figure['natural']} px, its file is {pixels} px")
        smallest_px = smallest_pt * figure["shown"] / width_pt
        if smallest_px < figures.SMALLEST_TEXT_CSS_PX:
            failures.append(
                f"{label}: smallest text {smallest_px:.2f} CSS px ({smallest_pt:g} pt in "
                f"{width_pt:.0f} pt shown {figure['shown']:.0f} px)"
            )
    return failures


def _check_formulas(page, width):
    failures = []
    formulas = page.evaluate(FORMULAS)
    scrolling = [f for f in formulas if f["display"] and f["scroll"] > f["client"] + 1]
    allowed = SCROLLING_AT_PHONE if width == PHONE else 0
    if len(scrolling) > allowed:
        failures.append(
            f"{len(scrolling)} display equations scroll (at most {allowed}): "
            + "; ".join(f"{f['name']} ({f['scroll']} px in {f['client']})" for f in scrolling)
        )
    for formula in formulas:
        overflows = formula["scroll"] > formula["client"] + 1
        if formula["cue"] != overflows:
            state = "a scroll cue but fits" if formula["cue"] else "no cue but overflows"
            failures.append(
                f"{formula['name']}: {state} ({formula['scroll']} px in {formula['client']})"
            )
    return failures


@pytest.mark.parametrize("width", WIDTHS)
def test_figures_and_formulas_fit_the_width(width, served_site, browser):
    pages = chapter_pages()
    assert len(pages) >= 2, pages
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    failures, figures_seen, formulas_seen = [], 0, 0
    for path in pages:
        name = str(path.relative_to(SITE))
        _open(page, f"{served_site}/{name}")
        page.evaluate(OPEN_DROPDOWNS)
        figures_seen += len(page.evaluate(FIGURES))
        formulas_seen += len(page.evaluate(FORMULAS))
        failures += [f"{name} @ {width}: {f}" for f in _check_figures(page, width)]
        failures += [f"{name} @ {width}: {f}" for f in _check_formulas(page, width)]
        if width == max(WIDTHS):  # paper: no formula shows a cue
            page.emulate_media(media="print")
            cued = [f["name"] for f in page.evaluate(FORMULAS) if f["cue"]]
            page.emulate_media(media="screen")
            if cued:
                failures.append(f"{name} printed: {len(cued)} formulas with a cue: {cued[:3]}")
    context.close()
    # The checks saw what the chapters hold: a test over no figure or formula checks nothing.
    labels = [
        label
        for stem in chapter_stems()
        for label in figures.figure_labels(paths.CHAPTERS_DIR / f"{stem}.md")
    ]
    assert figures_seen == len(labels) and formulas_seen > 100, (figures_seen, labels)
    assert not failures, "\n".join(failures)
