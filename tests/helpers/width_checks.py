"""Figures and formulas read at a page's width (the built site, in Chromium), for the site
tier's pass over every page (``tests/site/test_site.py``), on a chapter page with its
dropdowns open (a proof's or an answer's equations count too):

- figure text: every numbered figure's smallest glyph, a log axis's exponent included, is at
  least :data:`~claimbook.figures.SMALLEST_TEXT_CSS_PX` as shown. The size is computed
  from the record of the image the browser chose (its ``currentSrc``): the smallest glyph in
  points the drawing wrote into its PNG (:data:`claimbook.figures.SMALLEST_TEXT_KEY`) times
  the CSS px a point is shown at (the displayed width over the PNG's width in points, from its
  pixels and dpi). At :data:`PHONE` px the image is the drawing made for a phone;
- display equations: none scrolls at 800 px or wider, at most :data:`SCROLLING_AT_PHONE` per
  page at :data:`PHONE` px;
- the scroll cue (site.css, phone.css): on a formula, inline or display, exactly when it
  overflows its box; never on paper (print media).

Each check also compares how many figures and formulas the browser found with the page's
HTML, so that a query matching nothing cannot pass.
"""

import functools
from pathlib import Path
from urllib.parse import unquote, urlsplit

from claimbook import figures

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


@functools.cache
def image_record(path: Path) -> tuple[float, float, int]:
    """``(smallest glyph in pt, width in pt, width in px)`` of the site's PNG at ``path``."""
    from PIL import Image

    with Image.open(path) as image:
        smallest = image.info.get(figures.SMALLEST_TEXT_KEY)
        dpi = image.info.get("dpi", (None,))[0]
        pixels = image.size[0]
    assert smallest is not None and dpi, f"{path} records no smallest text or resolution"
    return float(smallest), pixels / dpi * 72, pixels


def check_figures(page, width: int, site: Path, soup) -> list[str]:
    """Each numbered figure of the open ``page`` (HTML ``soup``, built site ``site``): the
    drawing for its width, shown at its file's size, its smallest text readable."""
    failures = []
    found = page.evaluate(FIGURES)
    if len(found) != len(soup.select("figure[id] img")):
        failures.append(f"the browser found {len(found)} figures, the HTML has more or fewer")
    for figure in found:
        label = figure["label"]
        file = site / unquote(urlsplit(figure["src"]).path).lstrip("/")
        phone = file == site / "artifacts" / "figures" / "phone" / f"{label}.png"
        if phone != (width == PHONE):
            failures.append(f"{label}: shows {file.relative_to(site)} at {width} px")
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


def check_formulas(page, width: int, soup) -> list[str]:
    """The formulas of the open ``page`` (HTML ``soup``): display equations that scroll, and
    the scroll cue exactly on those that overflow."""
    failures = []
    formulas = page.evaluate(FORMULAS)
    if len(formulas) != len(soup.select("span.math, div.math")):
        failures.append(f"the browser found {len(formulas)} formulas, the HTML has more or fewer")
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


def check_printed_cues(page) -> list[str]:
    """On paper (print media) no formula of the open ``page`` shows a scroll cue."""
    page.emulate_media(media="print")
    cued = [f["name"] for f in page.evaluate(FORMULAS) if f["cue"]]
    page.emulate_media(media="screen")
    return [f"printed: {len(cued)} formulas with a cue: {cued[:3]}"] if cued else []
