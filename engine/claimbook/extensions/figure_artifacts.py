"""Figure artifacts on the page: ``{figure-artifact}`label``` in a caption links the figure's
SVG and PNG; its image gets alt text, its width, a link to its SVG and the phone drawing; an
HTML build copies the figure files (regular files only) into the site."""

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
    """An image (its child) linking to its full-size SVG, in a ``<picture>`` with the phone
    drawing (``srcset``) if any."""


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


def _links(docname: str, svg: Path, png: Path) -> nodes.inline:
    links = nodes.inline("", "", nodes.Text("Download: "), classes=["figure-artifact-links"])
    for path in (svg, png):
        if path is png:
            links += nodes.Text(" · ")
        uri = relative_uri(docname, f"{SITE_FIGURES}/{path.name}")
        links += nodes.reference(
            "", path.suffix[1:].upper(), refuri=uri, classes=["figure-artifact"]
        )
    return links


def _dress_images(figure: nodes.figure, docname: str, svg: Path, png: Path, phone: Path) -> None:
    """Give a figure's images the caption's first sentence as alt text (unless they have
    their own), their desktop width, and a link to the full-size SVG."""
    caption = next(iter(figure.findall(nodes.caption)), None)
    text = " ".join(node.astext() for node in caption.findall(nodes.Text)) if caption else ""
    text = re.sub(r"\s+", " ", text).strip()
    alt = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0] or text
    for image in list(figure.findall(nodes.image)):
        if alt and not image.get("alt"):
            image["alt"] = alt
        if png.is_file():
            with png.open("rb") as stream:
                image["width"] = f"{display_width(stream.read(24))}px"
        if not isinstance(image.parent, full_size_link):
            phone_uri = relative_uri(docname, f"{SITE_FIGURES}/phone/{phone.name}")
            link = full_size_link(
                refuri=relative_uri(docname, f"{SITE_FIGURES}/{svg.name}"),
                reftitle="Open the figure at full size (SVG)",
                srcset=phone_uri if phone.is_file() else "",
            )
            image.replace_self(link)
            link += image
            image["classes"].append("no-scaled-link")  # Sphinx would link it to itself


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
        figure = node.parent
        while figure is not None and not isinstance(figure, nodes.figure):
            figure = figure.parent
        if figure is not None:
            _dress_images(figure, docname, svg, png, phone)
        node.replace_self(_links(docname, svg, png))


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
    figures = paths.FIGURES_DIR
    for source, target in ((figures, destination), (figures / "phone", destination / "phone")):
        if source.is_dir() and not source.is_symlink():
            target.mkdir(exist_ok=True)
            for path in sorted(source.iterdir()):
                regular = path.is_file() and not path.is_symlink()
                if regular and not path.name.startswith(".") and path.suffix in ARTIFACT_SUFFIXES:
                    shutil.copyfile(path, target / path.name)


def setup(app):
    app.add_role("figure-artifact", FigureArtifactRole())
    app.add_node(figure_artifact)
    app.add_node(full_size_link, html=(_visit_full_size_link, _depart_full_size_link))
    app.connect("doctree-resolved", _resolve_figure_artifacts)
    app.connect("build-finished", _copy_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "3"}
