"""The site's views of every claim: a page per claim (``claims/<id>.html``), its record
(``claims/<id>.json``), ``claims.json``, and the ``claim-ledger`` directive.

Every HTML build judges every claim again (:func:`describe_all`), so a failing claim fails every
strict build. A claim page whose inputs changed is rendered (:mod:`.claim_page`), indexed
and written; an unchanged one keeps its file and search entry. Files are written only when their
bytes change. The ledger's page is read again on every build.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from bs4 import BeautifulSoup
from docutils import nodes
from docutils.utils import new_document
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from claimbook import cache, paths
from claimbook import claims as claim_registry
from claimbook.claims.judgement import STATES
from claimbook.dependencies import package_digest
from claimbook.errors import ClaimError
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import (
    badge_node,
    note_math,
    place_links,
    stated_in,
)
from claimbook.extensions.claim_page import TEMPLATES, claim_page, statement_html
from claimbook.pipeline.file_digests import open_regular

logger = logging.getLogger(__name__)


def describe_all(env) -> list[dict]:
    """Every registered claim, judged again and described; an unusable entry is warned of."""
    places = stated_in(env)
    described, digests = [], {}
    for claim_id in claim_registry.list_claims():
        try:
            claim = claim_registry.load_claim(claim_id)
            judgement = claim_registry.judge(claim_id)
        except ClaimError as error:
            where = paths.shown(paths.registry_path(claim_id))
            logger.warning("claim %s: %s", claim_id, error, location=where)
            continue
        publishable = publishable_record(claim_id) is not None
        stated = places.get(claim_id, [])
        described.append(model.describe(claim, judgement, stated, publishable, digests))
    return described


_DIGEST_META = "trainable-claim-page"


def _navigation(env) -> str:
    """What a claim page shows besides its body: every page's title, sections and numbers."""
    return repr(
        [
            (
                name,
                str(env.titles.get(name)),
                str(env.tocs.get(name)),
                env.toc_secnumbers.get(name),
            )
            for name in sorted(env.found_docs)
        ]
    )


def _unchanged(outdir: Path, pagename: str, digest: str) -> bool:
    """True if the page on disk carries ``digest`` (it was written from the same inputs)."""
    try:
        head = (outdir / f"{pagename}.html").read_bytes()[:8192]
    except OSError:
        return False
    return f'<meta name="{_DIGEST_META}" content="{digest}"'.encode() in head


def _collect_pages(app):
    """Judge every claim; render, index and write the claim pages whose inputs changed.

    A page carries the digest of its description, the navigation and the engine's code and
    template; unless
    Sphinx wrote every document this build, a page whose digest on disk is current is not
    written again and keeps its search entry.
    """
    if app.builder.format != "html" or not paths.CLAIMS_DIR.is_dir():
        return []
    described = describe_all(app.env)
    incremental = not app.env.found_docs <= app._trainable_written
    engine = package_digest("claimbook"), cache.file_bytes(TEMPLATES / "claim_page.html")
    navigation = _navigation(app.env)
    changed = []
    render = lambda node: app.builder.render_partial(node)["fragment"]  # noqa: E731
    for info in described:
        pagename = info["page"].removesuffix(".html")
        if claim_registry.state_fails_build(info["state"]):
            places = info["stated_in"]
            where = (
                places[0]["page"][:-5] if places else paths.shown(paths.registry_path(info["id"]))
            )
            logger.warning(
                "claim %s is %s: %s", info["id"], info["state"], info["reason"], location=where
            )
        inputs = json.dumps(info, sort_keys=True, ensure_ascii=False, allow_nan=True)
        digest = cache.digest(inputs, navigation, *engine)
        if not (incremental and _unchanged(Path(app.outdir), pagename, digest)):
            changed.append((info, pagename, digest))
    indexer = getattr(app.builder, "indexer", None)
    if indexer is not None:  # drop the entries of pages rewritten or no longer registered
        current = {info["page"].removesuffix(".html") for info in described}
        documents = {name for name in indexer._titles if not name.startswith("claims/")}
        rewritten = {pagename for _, pagename, _ in changed}
        type(indexer).prune(indexer, documents | (current - rewritten))
    pages = []
    for info, pagename, digest in changed:
        title = f"Claim {info['id']}"
        if "$" in info["statement"]:
            note_math(app.env, pagename)  # MathJax for the statement's math
        if indexer is not None:  # the words a reader searches: no commands, no digests
            document = new_document(pagename)
            document += _searched(claim_page(info, render, searched=True))
            indexer.feed(pagename, "", title, document)
        meta = f'<meta name="{_DIGEST_META}" content="{digest}" />\n'
        body = claim_page(info, render)
        context = {"title": title, "body": body, "display_toc": False, "metatags": meta}
        pages.append((pagename, context, "page.html"))
    _publish(Path(app.outdir), described)
    return pages


def _searched(body: str) -> nodes.section:
    """What the search index reads of a claim page's HTML: its sections, titles and text."""

    def section(element) -> nodes.section:
        node = nodes.section(ids=[element["id"]])
        for child in element.children:
            if child.name == "section":
                node += section(child)
            elif child.name in ("h1", "h2"):
                node += nodes.title("", child.find(string=True, recursive=False))
            elif child.get_text().strip():
                node += nodes.paragraph("", child.get_text(" "))  # a word per text node
        return node

    return section(BeautifulSoup(body, "html.parser").section)


def publishable_record(claim_id: str, artifacts_dir: str | Path | None = None) -> bytes | None:
    """The artifact's bytes if it is a regular file reached without following a symlink (in
    the file, its folder or the folder above); else None. Only this is ever published."""
    path = paths.artifact_path(claim_id, artifacts_dir)
    if path.parent.is_symlink() or path.parent.parent.is_symlink():
        return None
    descriptor = open_regular(path)
    if descriptor is None:
        return None
    with open(descriptor, "rb") as handle:
        return handle.read()


def ledger_json(described: list[dict]) -> str:
    """The text of ``claims.json``: every claim described, and what each state means."""
    ledger = {
        "claims": described,
        "states": {state: model.STATE_MEANINGS[state] for state in STATES},
    }
    return json.dumps(ledger, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _publish(outdir: Path, described: list[dict]) -> None:
    """Write the records and ``claims.json``; remove the files of claims no longer there."""
    pages = outdir / model.CLAIM_PAGES
    pages.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for info in described:
        source = paths.artifact_path(info["id"])
        data = publishable_record(info["id"]) if info["record"] else None
        if os.path.lexists(source) and data is None:
            logger.warning(
                "claim %s: %s is not a regular file in a real directory; it is not published",
                info["id"],
                paths.shown(source),
                location=paths.shown(source),
            )
        if data is not None:
            target = outdir / info["record"]
            wanted.add(target.name)
            if not target.is_file() or target.read_bytes() != data:
                target.unlink(missing_ok=True)
                target.write_bytes(data)
        wanted.add(Path(info["page"]).name)
    for stale in pages.iterdir():
        if stale.name not in wanted and (stale.is_symlink() or stale.is_file()):
            stale.unlink()
    text = ledger_json(described)
    target = outdir / model.LEDGER_JSON
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def _keep_claim_pages_in_search_index(app) -> None:
    """Keep the registered claim pages through Sphinx's pruning of the search index (it keeps
    only documents); :func:`_collect_pages` prunes the ones it rewrites."""
    builder = app.builder
    if not hasattr(builder, "load_indexer"):  # not an HTML builder
        return
    load = builder.load_indexer

    def load_indexer(docnames):
        indexer, prune = builder.indexer, builder.indexer.prune
        kept = {model.page_path(claim_id)[:-5] for claim_id in claim_registry.list_claims()}
        indexer.prune = lambda names: prune(set(names) | kept)
        load(docnames)

    builder.load_indexer = load_indexer


LEDGER_GROUPS = (
    ("failing", "Failing: the build fails until these are fixed", ("failed", "stale", "not run")),
    ("verified", "Verified results", ("verified",)),
    (
        "refuted",
        "Refuted accounts: verified measurements that contradict a common account",
        ("refuted",),
    ),
)
_SUMMARY_WORDS = {
    "verified": ("verified result", "verified results"),
    "refuted": ("refuted account", "refuted accounts"),
}


def _counted(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _ledger_order(info: dict):
    """Claims in the order the book first states them; unstated claims last, by id."""
    if not info["stated_in"]:
        return (1, "", 0, info["id"])
    first = info["stated_in"][0]
    return (0, first["page"], int(first["anchor"].rsplit("-", 1)[1]), info["id"])


def ledger_groups(described: list[dict]) -> dict:
    """The ledger: ``{"summary", "groups": [{"id", "title", "chapters": [{"title",
    "claims"}]}]}``: claims by :data:`LEDGER_GROUPS` (an empty one left out), then by chapter
    in number order (titled as the book labels it), then in the order the book states them.
    """
    titles = {}  # chapter -> its label where the book first states one of its claims
    for info in described:
        if info["stated_in"]:
            titles.setdefault(info["chapter"], info["stated_in"][0]["chapter"])
    groups = []
    for key, title, states in LEDGER_GROUPS:
        members = sorted(
            (info for info in described if info["state"] in states), key=_ledger_order
        )
        chapters = [
            {
                "title": f"Chapter {titles.get(chapter, chapter)}",
                "claims": [info for info in members if info["chapter"] == chapter],
            }
            for chapter in sorted({info["chapter"] for info in members})
        ]
        if chapters:
            groups.append({"id": key, "title": title, "chapters": chapters})
    counts = Counter(info["state"] for info in described)
    shown = ", ".join(
        _counted(counts[s], *_SUMMARY_WORDS.get(s, (s, s))) for s in STATES if counts[s]
    )
    return {
        "summary": f"{_counted(len(described), 'claim', 'claims')}: {shown}.",
        "groups": groups,
    }


class claim_ledger(nodes.General, nodes.Element):
    """Placeholder for the ledger, filled in once every page has been read."""


class ClaimLedgerDirective(SphinxDirective):
    """``claim-ledger`` -- every claim by chapter and section, with state and statement."""

    def run(self):
        self.env.note_reread()  # it shows what every other page and artifact says
        for directory in (paths.CLAIMS_DIR, paths.CLAIM_ARTIFACTS_DIR):
            for path in sorted(directory.iterdir()) if directory.is_dir() else ():
                if path.is_file():
                    self.env.note_dependency(str(path))
        return [claim_ledger()]


def _statement_cell(info) -> nodes.Node:
    statement = nodes.paragraph(
        "", "", nodes.raw("", statement_html(info["statement"]), format="html")
    )
    account = model.account_line(info.get("refutes"))
    if account is None:
        return statement
    said = "Account refuted: " if info["state"] == "refuted" else "Account it tests: "
    line = nodes.paragraph(
        "", "", nodes.strong("", said), nodes.Text(account), classes=["claim-ledger-account"]
    )
    return nodes.container("", statement, line, classes=["claim-ledger-statement"])


def _ledger_table(rows: list[list[nodes.Element]]) -> nodes.table:
    """A chapter's table of claims: a head row, then a row of three cells per claim."""

    def row(cells: list[nodes.Element]) -> nodes.row:
        return nodes.row("", *(nodes.entry("", cell) for cell in cells))

    head = row([nodes.paragraph("", text) for text in ("claim", "stated in", "statement")])
    group = nodes.tgroup("", *(nodes.colspec(colwidth=1) for _ in head), cols=len(head))
    group += [nodes.thead("", head), nodes.tbody("", *map(row, rows))]
    return nodes.table("", group, classes=["claim-table", "claim-ledger-table"])


def _fill_ledger(app, doctree, docname) -> None:
    placeholders = list(doctree.findall(claim_ledger))
    if not placeholders:
        return
    shown = ledger_groups(describe_all(app.env))
    note_math(app.env, docname)  # the statements' math
    ledger = nodes.container(classes=["claim-ledger"])
    ledger += nodes.paragraph("", shown["summary"], classes=["claim-ledger-summary"])
    for group in shown["groups"]:
        classes = ["claim-ledger-group", f"claim-ledger-{group['id']}"]
        ledger += nodes.rubric("", group["title"], classes=classes)
        for chapter in group["chapters"]:
            ledger += nodes.rubric("", chapter["title"], classes=["claim-ledger-chapter"])
            rows = [
                [
                    nodes.paragraph("", "", badge_node(docname, info)),
                    place_links(docname, info, inline=True),
                    _statement_cell(info),
                ]
                for info in chapter["claims"]
            ]
            ledger += _ledger_table(rows)
    for placeholder in placeholders:
        placeholder.replace_self(ledger.deepcopy())


def setup(app):
    app.add_node(claim_ledger)
    app.add_directive("claim-ledger", ClaimLedgerDirective)
    app.connect("doctree-resolved", _fill_ledger)
    # Which documents Sphinx wrote this build (all of them: no claim page is kept).
    app.connect("builder-inited", lambda app: setattr(app, "_trainable_written", set()))
    app.connect(
        "env-before-read-docs", lambda app, env, names: setattr(app, "_trainable_written", set())
    )
    app.connect("builder-inited", _keep_claim_pages_in_search_index)
    app.connect("doctree-resolved", lambda app, doctree, name: app._trainable_written.add(name))
    app.connect("html-collect-pages", _collect_pages)
    # env_version: an environment (and its doctrees) stored with another layout is read afresh.
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
        "version": "3",
        "env_version": 2,
    }
