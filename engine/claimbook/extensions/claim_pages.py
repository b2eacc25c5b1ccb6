"""The site's views of every claim: its page ``claims/<id>.html`` (``templates/claim_page.html``),
its record ``claims/<id>.json``, ``claims.json`` and the ``claim-ledger`` directive. Every HTML
build judges every claim again; a claim page is rendered, indexed and written only when its
inputs changed.
"""

import json
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import jinja2
from bs4 import BeautifulSoup
from docutils import nodes
from docutils.utils import new_document
from markupsafe import Markup
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from claimbook import cache, paths
from claimbook import claims as claim_registry
from claimbook.dependencies import package_digest
from claimbook.errors import ClaimError
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import (
    badge_node,
    note_math,
    place_links,
    stated_in,
    statement_nodes,
)
from claimbook.pipeline.file_digests import open_regular

logger = logging.getLogger(__name__)

TEMPLATES = Path(__file__).parent / "templates"
_DIGEST_META = "trainable-claim-page"


def shown(value) -> str:
    """Text as it is, anything else as JSON, None as a dash."""
    if value is None:
        return "\u2014"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


TEMPLATE = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)
TEMPLATE.filters.update(shown=shown, first_up=_first_up)


def _catch_state(catch: Mapping, words: Mapping[str, str]) -> str:
    """Whether the last run of a mistake turned the claim red, and by which fields."""
    named = [
        words.get(red["field"], red["field"]) + " (a pinned value)" * (red.get("role") == "pinned")
        for red in catch.get("red", [])
    ]
    if catch["state"] == "caught":
        return f"Caught by {', '.join(named)}." if named else "Caught."
    if catch["state"] == "not caught" and catch.get("error"):
        return "Not caught: the computation raised an error under it."
    if catch["state"] == "not caught":
        return "Not caught: every field still meets its expectation."
    return "Not run yet for this version of the claim and the book's code."


def claim_page(info: Mapping, render) -> str:
    """The body of ``claims/<id>.html`` for a :func:`~.claim_pages_model.describe`, its docutils
    parts written by ``render``."""
    docname = info["page"].removesuffix(".html")
    words = {field["field"]: field["words"] for field in info["fields"]}
    kind = nodes.Text(f" {info['kind']} claim of chapter {info['chapter']}")
    state = nodes.paragraph("", "", badge_node(docname, info), kind, classes=["claim-page-state"])
    key = info["key"] if isinstance(info["key"], Mapping) else {"key": info["key"]}
    provenance = sorted((info["provenance"] or {}).items())
    for name, value in sorted(key.items()):
        if isinstance(value, Mapping):
            provenance += sorted(value.items())
        else:
            provenance.append(("key" if name == "digest" else name.replace("_", " "), value))
    if "registry digest" not in dict(provenance):  # a key of the current format holds it
        provenance.append(("registry digest", info["registry_digest"]))
    return TEMPLATE.get_template("claim_page.html").render(
        info=info,
        state=Markup(render(state)),
        statement=Markup(render(nodes.paragraph("", "", *statement_nodes(info["statement"])))),
        measurement_lead=model.measurement_lead(info["state"]),
        meaning=model.state_meaning(info["state"], info["reason"]),
        results={True: ("Met", "claim-card-met"), False: ("Not met", "claim-card-missed")},
        catches=[
            (
                _first_up(catch["perturbation"].rpartition(".")[2].replace("_", " ")),
                _first_up(catch["says"]),
                _catch_state(catch, words),
            )
            for catch in info["catches"]
        ],
        places=Markup(render(place_links(docname, info))),
        contract=[*sorted(info["contract"].items()), ("compute", info["compute"])],
        provenance=provenance,
        record=info["record"] and model.relative_uri(docname, info["record"]),
    )


def searched_text(body: str) -> str:
    """The words of a claim page's body that a reader searches: all but commands and digests."""
    soup = BeautifulSoup(body, "html.parser")
    for unsearched in soup.select("#re-verify, #details"):
        unsearched.decompose()
    return soup.get_text(" ")


def describe_all(app) -> list[dict]:
    """Every registered claim, judged again and described once a build (for the ledger and the
    claim pages); an unusable entry is warned of."""
    if getattr(app.builder, "trainable_described", None) is not None:
        return app.builder.trainable_described
    places = stated_in(app.env)
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
    app.builder.trainable_described = described
    return described


def _collect_pages(app):
    """Judge every claim; render, index and write the claim pages whose digest (description,
    sidebar, engine code and template) changed, or all of them when Sphinx wrote every document
    (a change of theme or configuration); an unchanged page keeps its search entry."""
    if app.builder.format != "html" or not paths.CLAIMS_DIR.is_dir():
        return []
    described = describe_all(app)
    env, outdir = app.env, Path(app.outdir)
    # Sphinx writes every document after a change of theme or configuration: redo every page.
    incremental = not env.found_docs <= getattr(app.builder, "trainable_written", set())
    sidebar = {
        name: (str(env.titles.get(name)), str(env.tocs.get(name))) for name in env.found_docs
    }
    navigation = repr([sorted(sidebar.items()), sorted(env.toc_secnumbers.items())])
    engine = package_digest("claimbook"), cache.file_bytes(TEMPLATES / "claim_page.html")
    changed = []
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
        meta = f'<meta name="{_DIGEST_META}" content="{digest}"'
        try:
            unchanged = meta.encode() in (outdir / f"{pagename}.html").read_bytes()[:8192]
        except OSError:
            unchanged = False
        if not (incremental and unchanged):
            changed.append((info, pagename, meta))
    indexer = getattr(app.builder, "indexer", None)
    if indexer is not None:  # drop the entries of pages rewritten or no longer registered
        current = {info["page"].removesuffix(".html") for info in described}
        documents = {name for name in indexer._titles if not name.startswith("claims/")}
        rewritten = {pagename for _, pagename, _ in changed}
        type(indexer).prune(indexer, documents | (current - rewritten))
    render = lambda node: app.builder.render_partial(node)["fragment"]  # noqa: E731
    pages = []
    for info, pagename, meta in changed:
        title = f"Claim {info['id']}"
        if "$" in info["statement"]:
            note_math(env, pagename)  # MathJax for the statement's math
        body = claim_page(info, render)
        if indexer is not None:  # its title, and its words but commands and digests
            document = new_document(pagename)
            document += nodes.section(
                "",
                nodes.title("", title),
                nodes.paragraph("", searched_text(body)),
                ids=[f"claim-{info['id']}"],
            )
            indexer.feed(pagename, "", title, document)
        context = {"title": title, "body": body, "display_toc": False, "metatags": meta + " />\n"}
        pages.append((pagename, context, "page.html"))
    _publish(outdir, described)
    return pages


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
    text = model.ledger_json(described)
    target = outdir / model.LEDGER_JSON
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def _keep_claim_pages_in_search_index(app) -> None:
    """Note which documents Sphinx writes, and keep the registered claim pages through its
    pruning of the search index (it keeps only documents); :func:`_collect_pages` prunes the
    ones it rewrites."""
    builder = app.builder
    if not hasattr(builder, "load_indexer"):  # not an HTML builder
        return
    load = builder.load_indexer

    def load_indexer(docnames):
        indexer, prune = builder.indexer, builder.indexer.prune
        kept = {model.page_path(claim_id)[:-5] for claim_id in claim_registry.list_claims()}
        indexer.prune = lambda names: prune(set(names) | kept)
        builder.trainable_written, builder.trainable_described = set(docnames), None
        load(docnames)

    builder.load_indexer = load_indexer


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
    statement = nodes.paragraph("", "", *statement_nodes(info["statement"]))
    account = model.account_line(info.get("refutes"))
    if account is None:
        return statement
    said = "Account refuted: " if info["state"] == "refuted" else "Account it tests: "
    line = nodes.paragraph(
        "", "", nodes.strong("", said), nodes.Text(account), classes=["claim-ledger-account"]
    )
    return nodes.container("", statement, line, classes=["claim-ledger-statement"])


def _row(cells: list[nodes.Element]) -> nodes.row:
    return nodes.row("", *(nodes.entry("", cell) for cell in cells))


def _table(docname: str, claims: list[dict]) -> nodes.table:
    head = [nodes.paragraph("", text) for text in ("claim", "stated in", "statement")]
    rows = [
        [
            nodes.paragraph("", "", badge_node(docname, info)),
            place_links(docname, info, inline=True),
            _statement_cell(info),
        ]
        for info in claims
    ]
    table = nodes.tgroup("", *(nodes.colspec(colwidth=1) for _ in head), cols=3)
    table += [nodes.thead("", _row(head)), nodes.tbody("", *map(_row, rows))]
    return nodes.table("", table, classes=["claim-table", "claim-ledger-table"])


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


def ledger(docname: str, described: list[dict]) -> nodes.container:
    """A summary, then a table of claims per chapter in each of :data:`LEDGER_GROUPS` (none
    empty), in the order the book states them."""
    counts = Counter(info["state"] for info in described)
    states = [state for state in claim_registry.STATES if counts[state]]
    shown = ", ".join(_counted(counts[s], *_SUMMARY_WORDS.get(s, (s, s))) for s in states)
    summary = f"{_counted(len(described), 'claim', 'claims')}: {shown}."
    node = nodes.container(classes=["claim-ledger"])
    node += nodes.paragraph("", summary, classes=["claim-ledger-summary"])
    titles = {}  # chapter -> its label where the book first states one of its claims
    for info in described:
        if info["stated_in"]:
            titles.setdefault(info["chapter"], info["stated_in"][0]["chapter"])
    for key, title, states in LEDGER_GROUPS:
        members = sorted(
            (info for info in described if info["state"] in states), key=_ledger_order
        )
        if members:
            classes = ["claim-ledger-group", f"claim-ledger-{key}"]
            node += nodes.rubric("", title, classes=classes)
        for chapter in sorted({info["chapter"] for info in members}):
            label = f"Chapter {titles.get(chapter, chapter)}"
            node += nodes.rubric("", label, classes=["claim-ledger-chapter"])
            node += _table(docname, [info for info in members if info["chapter"] == chapter])
    return node


def _fill_ledger(app, doctree, docname) -> None:
    for placeholder in list(doctree.findall(claim_ledger)):
        note_math(app.env, docname)  # the statements' math
        placeholder.replace_self(ledger(docname, describe_all(app)))


def setup(app):
    app.add_node(claim_ledger)
    app.add_directive("claim-ledger", ClaimLedgerDirective)
    app.connect("doctree-resolved", _fill_ledger)
    app.connect("builder-inited", _keep_claim_pages_in_search_index)
    app.connect("html-collect-pages", _collect_pages)
    # env_version: an environment (and its doctrees) stored with another layout is read afresh.
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
        "version": "3",
        "env_version": 2,
    }
