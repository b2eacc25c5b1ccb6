"""The site's chrome and the theme stack's HTML, mended on every page: scripts without repeats
or thebe, unstamped asset links, colour mode ``auto``, the proof index by number, the footer's
build stamp, the whole book's PDF while it is current, and the body mended for axe-core."""

import functools
import html
import itertools
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.domains import Index, IndexEntry

from claimbook import pdf_link
from claimbook.build_stamp import build_stamp
from claimbook.pipeline.site_outcome import site_key

_THEBE_FILES = ("sphinx-thebe.js", "sphinx-thebe.css")


def footer_html(stamp: dict[str, str]) -> str:
    """The footer line for ``stamp`` (see :func:`build_stamp`)."""
    shown = {key: html.escape(value) for key, value in stamp.items()}
    text = (
        f'Built from commit <code class="build-commit">{shown["commit"]}</code>'
        f' (<span class="build-date">{shown["date"]}</span>)'
    )
    if stamp["dirty"]:
        text += ' with <span class="build-dirty">uncommitted changes</span>'
    text += "."
    if stamp.get("environment"):
        text += (
            ' <span class="build-environment">Computed in an environment that differs from '
            f"requirements.txt: {shown['environment']}.</span>"
        )
    if stamp.get("engine"):
        text += (
            f' <span class="build-engine">Built with the engine at <code>{shown["engine"]}</code>,'
            " not this checkout's.</span>"
        )
    return f'<p class="build-stamp">{text}</p>'


_STAMP = re.compile(r'<p class="build-stamp">.*?</p>', re.DOTALL)


def _configure(app, config):
    config.html_context.setdefault("default_mode", "auto")
    options = config.html_theme_options
    footer = footer_html(build_stamp(app.srcdir))
    # The options outlive an application (a process that renders twice): replace the stamp.
    existing = _STAMP.sub("", options.get("extra_footer") or "")
    options["extra_footer"] = existing + footer
    printed = pdf_link.PDF.with_suffix(".json").is_file()
    config.trainable_book_pdf = (
        pdf_link.current(pdf_link.PDF, site_key(with_pdf=False)) if printed else ""
    )


def _pdf_button(app, pagename, templatename, context, doctree):
    buttons = context.get("header_buttons")
    if buttons is None:
        return
    for group in buttons:
        if group.get("label") == "download-buttons":
            group["buttons"] = [
                b for b in group["buttons"] if b.get("label") != "download-pdf-button"
            ]
    if app.config.trainable_book_pdf:
        button = {
            "type": "link",
            "url": context["pathto"](pdf_link.PDF.name, 1),
            "tooltip": "The whole book as one PDF",
            "icon": "fas fa-file-pdf",
            "label": "book-pdf-button",
        }
        buttons.insert(max(len(buttons) - 1, 0), button)  # before the full-screen button


def _copy_pdf(app, exception):
    if exception is None and app.config.trainable_book_pdf:
        shutil.copyfile(pdf_link.PDF, Path(app.outdir) / pdf_link.PDF.name)


def _is_thebe(script) -> bool:
    filename = str(getattr(script, "filename", "") or "")
    body = getattr(script, "attributes", {}).get("body", "")
    return filename.endswith(_THEBE_FILES) or "THEBE_JS_URL" in body


class ProofIndex(Index):
    """The proof index, by the numbers the pages show ("Theorem 15.1"), not by label."""

    name = "prf"
    localname = "Proof Index"
    shortname = "Proof"

    def generate(self, docnames=None):
        env = self.domain.env
        entries = []
        for label, values in getattr(env, "proof_list", {}).items():
            docname = values["docname"]
            if docnames and docname not in docnames:
                continue
            kind = values.get("realtype", "proof")
            number = (
                env.toc_fignumbers.get(docname, {}).get(values.get("countertype"), {}).get(label)
            )
            name = kind.capitalize() + (" " + ".".join(map(str, number)) if number else "")
            title = env.titles.get(docname)
            chapter = title.astext() if title is not None else docname
            entries.append((number or (), name, label, docname, chapter))
        content = {}
        for _number, name, label, docname, chapter in sorted(entries):
            content.setdefault(name.split(" ")[0], []).append(
                IndexEntry(name, 0, docname, label, "", "", chapter)
            )
        return sorted(content.items()), True


def _drop_thebe_config(app, doctree, docname):
    for node in list(doctree.findall(nodes.raw)):
        text = node.astext()
        if "text/x-thebe-config" in text or text.startswith("<script>kernelName"):
            node.parent.remove(node)


def _clean_assets(app, pagename, templatename, context, doctree):
    """Scripts and styles without thebe's and repeats, asset links unstamped, body mended."""
    scripts, seen, kept = context.get("script_files"), set(), []
    for script in scripts or ():
        attributes = getattr(script, "attributes", {})
        key = (str(getattr(script, "filename", script) or ""), tuple(sorted(attributes.items())))
        if key not in seen and not _is_thebe(script):
            kept.append(script)
        seen.add(key)
    if scripts is not None:
        scripts[:] = kept
    styles = context.get("css_files")
    if styles is not None:
        styles[:] = [
            s for s in styles if not str(getattr(s, "filename", s)).endswith(_THEBE_FILES)
        ]
    for name in ("css_tag", "js_tag"):
        if callable(context.get(name)):
            context[name] = functools.partial(_unstamped, context[name])
    if isinstance(context.get("body"), str):
        context["body"] = mend(context["body"])


def _unstamped(tag, asset) -> str:
    return _ASSET_STAMP.sub("", tag(asset))


_ASSET_STAMP = re.compile(r'\?v=[0-9a-f]{8}(?=")')
_TABLE_CONTAINER = re.compile(r'<div class="pst-scrollable-table-container">')


def mend(body: str) -> str:
    """The body with bibliography entries as list items, myst-nb's hidden-code toggle named by
    its visible text, and each scrolling table a focusable, labelled region."""
    body = body.replace('role="doc-biblioentry"', 'role="listitem"')
    body = body.replace('<summary aria-label="Toggle hidden content">', "<summary>")
    count = itertools.count(1)

    def region(_match: re.Match) -> str:
        return (
            '<div class="pst-scrollable-table-container" tabindex="0" role="region" '
            f'aria-label="Table {next(count)}, scrolls sideways">'
        )

    return _TABLE_CONTAINER.sub(region, body)


def _override_proof_index(app):
    domain = app.env.domains.get("prf") if app.env is not None else None
    if domain is not None:
        domain.indices = [ProofIndex if i.name == "prf" else i for i in domain.indices]


def setup(app):
    app.add_config_value("trainable_book_pdf", "", "html")  # the linked PDF's SHA-256
    app.connect("builder-inited", _override_proof_index)
    app.connect("config-inited", _configure)
    # After sphinx-thebe appends its configuration nodes (default priority 500).
    app.connect("doctree-resolved", _drop_thebe_config, priority=900)
    # After every extension has added its page assets (default priority is 500).
    app.connect("html-page-context", _clean_assets, priority=900)
    # After the theme's header buttons (priority 501).
    app.connect("html-page-context", _pdf_button, priority=600)
    app.connect("build-finished", _copy_pdf)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
