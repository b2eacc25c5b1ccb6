"""Figure artifacts on the page: caption download links, alt text, tap to open full size.

``{figure-artifact}`label``` in a figure's caption links the files ``glue_figure(fig, label)``
wrote (``artifacts/figures/<label>.svg`` and ``.png``, :mod:`claimbook.figures`), warning
unless Sphinx numbered a figure of that name on the page and both files exist. The figure's
image gets the caption's first sentence as alt text (unless it has its own), the width a
desktop shows it at (:func:`claimbook.figures.display_width`), a link to its SVG (a tap on a
phone opens it full size) and, in a ``<picture>``, the drawing for a phone's column for
:data:`PHONE_MEDIA` (:mod:`claimbook.phone_figures`). After an HTML build the figure files
(regular files only, no symlink followed, no hidden temporaries) are copied into the site.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from claimbook import paths
from claimbook.errors import InvalidFigureLabelError
from claimbook.extensions.claim_pages_model import relative_uri
from claimbook.figures import display_width, figure_files, phone_figure_file

logger = logging.getLogger(__name__)

SITE_FIGURES = "artifacts/figures"
ARTIFACT_SUFFIXES = (".svg", ".png")
# Screens too narrow for the wide drawing at its full width (about 590 px and 48 px of
# margins); _static/phone.css uses the same query.
PHONE_MEDIA = "(max-width: 649.98px)"


class figure_artifact(nodes.Inline, nodes.Element):
    """Placeholder for a figure's artifact links, resolved once figures are numbered."""


class FigureArtifactRole(SphinxRole):
    """``{figure-artifact}`label``` -- links to the saved artifacts of figure ``label``."""

    def run(self):
        return [figure_artifact(label=self.text.strip())], []


class full_size_link(nodes.General, nodes.Element):
    """An image (its child) linking to its full-size SVG, in a ``<picture>`` whose ``<source>``
    is the phone drawing (``srcset``) if any (a docutils reference may hold only the image)."""


def _visit_full_size_link(translator, node):
    href, title = (html.escape(node[key], quote=True) for key in ("refuri", "reftitle"))
    translator.body.append(
        f'<a class="figure-full-size reference external image-reference" href="{href}" '
        f'title="{title}">'
    )
    if node.get("srcset"):
        source = html.escape(node["srcset"], quote=True)
        translator.body.append(f'<picture><source media="{PHONE_MEDIA}" srcset="{source}">')


def _depart_full_size_link(translator, node):
    translator.body.append("</picture></a>" if node.get("srcset") else "</a>")


def _skip(translator, node):
    """Other formats than HTML show the image alone."""


def _display_width(png: Path) -> str:
    with png.open("rb") as stream:
        return f"{display_width(stream.read(24))}px"


def _alt_text(caption: nodes.Element) -> str:
    """The caption's first sentence, as plain text (links and placeholders dropped)."""
    text = " ".join(
        node.astext()
        for node in caption.findall(nodes.Text)
        if not any(isinstance(a, figure_artifact) for a in _ancestors(node))
    )
    text = re.sub(r"\s+", " ", text).strip()
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return first or text


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


def _links(docname: str, label: str) -> nodes.inline:
    svg, png = figure_files(label)
    links = nodes.inline(classes=["figure-artifact-links"])
    links += nodes.Text("Download: ")
    for index, path in enumerate((svg, png)):
        if index:
            links += nodes.Text(" · ")
        links += nodes.reference(
            "",
            path.suffix[1:].upper(),
            refuri=relative_uri(docname, f"{SITE_FIGURES}/{path.name}"),
            classes=["figure-artifact"],
        )
    return links


def _resolve_figure_artifacts(app, doctree, docname):
    fignumbers = app.env.toc_fignumbers.get(docname, {}).get("figure", {})
    for node in list(doctree.findall(figure_artifact)):
        label = node["label"]
        try:
            svg, png = figure_files(label)
        except InvalidFigureLabelError as error:
            logger.warning("figure-artifact: %s", error, location=node)
            node.replace_self(nodes.Text(""))
            continue
        if label not in fignumbers:
            logger.warning("figure-artifact: no numbered figure named %r", label, location=node)
        phone = phone_figure_file(label)
        missing = [str(p.relative_to(svg.parent)) for p in (svg, png, phone) if not p.is_file()]
        if missing:
            logger.warning(
                "figure-artifact: artifacts/figures/%s missing (save it with "
                "glue_figure(fig, %r))",
                " and ".join(missing),
                label,
                location=node,
            )
        figure = next((a for a in _ancestors(node) if isinstance(a, nodes.figure)), None)
        if figure is not None:
            caption = next(iter(figure.findall(nodes.caption)), None)
            alt = _alt_text(caption) if caption is not None else ""
            for image in list(figure.findall(nodes.image)):
                if alt and not image.get("alt"):
                    image["alt"] = alt
                if png.is_file():
                    image["width"] = _display_width(png)
                if not isinstance(image.parent, full_size_link):
                    link = full_size_link(
                        refuri=relative_uri(docname, f"{SITE_FIGURES}/{svg.name}"),
                        reftitle="Open the figure at full size (SVG)",
                        srcset=relative_uri(docname, f"{SITE_FIGURES}/phone/{phone.name}")
                        if phone.is_file()
                        else "",
                    )
                    image.replace_self(link)
                    link += image
                    # Sphinx would link a scaled image to itself inside this link.
                    image["classes"].append("no-scaled-link")
        node.replace_self(_links(docname, label))


def _copy_figures(app, exception):
    """Publish figure artifacts (regular files only) beside the pages that link to them."""
    if exception is not None or app.builder.format != "html":
        return
    destination = Path(app.outdir) / SITE_FIGURES
    if destination.is_symlink() or destination.is_file():
        destination.unlink()
    elif destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    for source, target in (
        (paths.FIGURES_DIR, destination),
        (paths.FIGURES_DIR / "phone", destination / "phone"),
    ):
        if not source.is_dir() or source.is_symlink():
            continue
        target.mkdir(exist_ok=True)
        for path in sorted(source.iterdir()):
            if path.is_symlink() or not path.is_file() or path.name.startswith("."):
                continue
            if path.suffix in ARTIFACT_SUFFIXES:
                shutil.copyfile(path, target / path.name)


def setup(app):
    app.add_role("figure-artifact", FigureArtifactRole())
    app.add_node(figure_artifact)
    skip = (_skip, None)
    app.add_node(
        full_size_link,
        html=(_visit_full_size_link, _depart_full_size_link),
        latex=skip,
        text=skip,
        man=skip,
        texinfo=skip,
    )
    app.connect("doctree-resolved", _resolve_figure_artifacts)
    app.connect("build-finished", _copy_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "3"}
