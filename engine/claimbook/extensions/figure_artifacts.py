"""Figure artifacts on the page: caption download links, alt text, tap to open full size.

MyST syntax this extension adds:

- ``{figure-artifact}`fig-label``` -- in a figure's caption, links to the files
  ``glue_figure(fig, "fig-label")`` wrote: ``artifacts/figures/<label>.svg`` and ``.png``
  (:mod:`claimbook.figures`). The files are named by label, so no figure number is
  computed here; the role checks that Sphinx numbered a figure of that name on the same page
  and that both files exist, and warns otherwise (``-W`` makes that a failed build).

For every such figure, the extension also

- sets the image's alt text from the caption (its first sentence) when the figure has none
  of its own (a ``:alt:`` option, written for the figure: what it shows), and
- wraps the image in a link to the SVG, so a tap on a phone opens the figure at full size
  with labels a reader can zoom, and
- gives the image the width a desktop shows it at, :data:`~claimbook.figures.FIGURE_WIDTH`
  at :data:`~claimbook.figures.DISPLAY_PX_PER_POINT` CSS px per point (540 px): a wide column
  does not blow the figure's text up past a sensible size, and a narrow one shrinks it
  (``max-width: 100%``, ``_static/site.css``).

After an HTML build, the figure artifacts (regular files only, no symlink followed, no hidden
temporaries) are copied to ``artifacts/figures/`` in the site.
"""

from __future__ import annotations

import posixpath
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from claimbook import paths
from claimbook.errors import InvalidFigureLabelError
from claimbook.figures import DISPLAY_PX_PER_POINT, FIGURE_WIDTH, figure_files

logger = logging.getLogger(__name__)

SITE_FIGURES = "artifacts/figures"
# The widest a page shows a figure, in CSS px.
DISPLAY_WIDTH = f"{round(FIGURE_WIDTH * 72 * DISPLAY_PX_PER_POINT)}px"
ARTIFACT_SUFFIXES = (".svg", ".png")


class figure_artifact(nodes.Inline, nodes.Element):
    """Placeholder for a figure's artifact links, resolved once figures are numbered."""


class FigureArtifactRole(SphinxRole):
    """``{figure-artifact}`label``` -- links to the saved artifacts of figure ``label``."""

    def run(self):
        return [figure_artifact(label=self.text.strip())], []


def _site_uri(docname: str, target: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(docname) or ".")


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
            refuri=_site_uri(docname, f"{SITE_FIGURES}/{path.name}"),
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
        missing = [path.name for path in (svg, png) if not path.is_file()]
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
                image["width"] = DISPLAY_WIDTH
                if not isinstance(image.parent, nodes.reference):
                    link = nodes.reference(
                        "",
                        "",
                        refuri=_site_uri(docname, f"{SITE_FIGURES}/{svg.name}"),
                        classes=["figure-full-size"],
                        reftitle="Open the figure at full size (SVG)",
                    )
                    image.replace_self(link)
                    link += image
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
    source = paths.FIGURES_DIR
    if not source.is_dir() or source.is_symlink():
        return
    for path in sorted(source.iterdir()):
        if path.is_symlink() or not path.is_file() or path.name.startswith("."):
            continue
        if path.suffix in ARTIFACT_SUFFIXES:
            shutil.copyfile(path, destination / path.name)


def setup(app):
    app.add_role("figure-artifact", FigureArtifactRole())
    app.add_node(figure_artifact)
    app.connect("doctree-resolved", _resolve_figure_artifacts)
    app.connect("build-finished", _copy_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "2"}
