"""The ``{figure-artifact}`` role (claimbook.extensions.figure_artifacts) on a tiny project."""

import sys
from io import StringIO

import pytest
from bs4 import BeautifulSoup
from PIL import Image
from sphinx.application import Sphinx

from claimbook import paths
from claimbook.extensions.figure_artifacts import PHONE_MEDIA
from claimbook.figures import DISPLAY_PX_PER_POINT, PNG_DPI

CONF = """
extensions = ["claimbook.extensions.figure_artifacts"]
numfig = True
"""
INDEX = """Title
=====

.. figure:: plot.png
   :name: fig-ok

   A first sentence. A second one. :figure-artifact:`fig-ok`

.. figure:: plot.png
   :name: fig-unsaved

   Not saved. :figure-artifact:`fig-unsaved`

Text with :figure-artifact:`fig-nowhere`.
"""
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

# Each test builds a small Sphinx project: the book tier.
pytestmark = pytest.mark.book


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The project built once; each test reads the page and the warnings."""
    tmp_path = tmp_path_factory.mktemp("figures")
    with pytest.MonkeyPatch.context() as monkeypatch:
        return _build(tmp_path, monkeypatch)


def _build(tmp_path, monkeypatch):
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(CONF)
    (source / "index.rst").write_text(INDEX)
    (source / "plot.png").write_bytes(PNG)
    figures = tmp_path / "artifacts" / "figures"
    figures.mkdir(parents=True)
    (figures / "fig-ok.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    # A drawing 5 in wide at the book's resolution, and the one for a phone.
    Image.new("RGB", (5 * PNG_DPI, 10)).save(figures / "fig-ok.png")
    (figures / "phone").mkdir()
    (figures / "phone" / "fig-ok.png").write_bytes(PNG)
    (figures / ".fig-ok.png.tmp").write_bytes(b"partial")  # never published
    (figures / "link.png").symlink_to(tmp_path / "src" / "plot.png")  # never followed
    monkeypatch.setattr(paths, "FIGURES_DIR", figures)
    warnings = StringIO()
    app = Sphinx(
        str(source),
        str(source),
        str(tmp_path / "out"),
        str(tmp_path / "doctrees"),
        "html",
        status=None,
        warning=warnings,
        freshenv=True,
    )
    app.build()
    sys.modules.pop("figure_artifacts", None)
    soup = BeautifulSoup((tmp_path / "out" / "index.html").read_text(), "html.parser")
    return soup, warnings.getvalue(), tmp_path / "out"


def test_a_saved_figure_gets_links_alt_text_and_a_full_size_link(built):
    soup, _, out = built
    figure = soup.find(id="fig-ok")
    links = [a["href"] for a in figure.select("a.figure-artifact")]
    assert links == ["artifacts/figures/fig-ok.svg", "artifacts/figures/fig-ok.png"]
    image = figure.find("img")
    assert image["alt"] == "A first sentence."
    assert image.find_parent("a", class_="figure-full-size")["href"] == links[0]
    # At most DISPLAY_PX_PER_POINT CSS px a point of the drawing: 5 in, 360 pt.
    assert image["style"] == f"width: {round(360 * DISPLAY_PX_PER_POINT)}px;"
    published = sorted(
        str(p.relative_to(out / "artifacts" / "figures"))
        for p in (out / "artifacts" / "figures").rglob("*")
        if p.is_file()
    )
    assert published == ["fig-ok.png", "fig-ok.svg", "phone/fig-ok.png"]


def test_a_narrow_screen_gets_the_drawing_for_a_phone(built):
    soup, _, _ = built
    image = soup.find(id="fig-ok").find("img")
    picture = image.parent
    assert picture.name == "picture" and picture.parent.name == "a"
    [source] = picture.find_all("source")
    assert source["media"] == PHONE_MEDIA
    assert source["srcset"] == "artifacts/figures/phone/fig-ok.png"
    assert picture.find_all(recursive=False)[-1] is image  # the wide drawing, elsewhere
    # A figure with no drawing for a phone is a link to its SVG, with no picture.
    unsaved = soup.find(id="fig-unsaved").find("img")
    assert unsaved.parent.name == "a" and not soup.find(id="fig-unsaved").find("picture")


def test_missing_files_and_unknown_labels_are_warnings(built):
    _, warnings, _ = built
    assert "fig-unsaved.svg and fig-unsaved.png and phone/fig-unsaved.png missing" in warnings
    assert "no numbered figure named 'fig-nowhere'" in warnings
    assert "fig-ok" not in warnings
