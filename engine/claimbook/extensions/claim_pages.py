"""A page per claim, the claim records, and ``claims.json``: the claim pages of the site.

Set up by ``claims`` (the roles that state claims). For every claim in the registry the HTML
build writes

- ``claims/<id>.html``, in the site's theme: the statement and its state; for a refuted claim
  the account it contradicts, its source and what the measurement shows; links back to every
  place the book states it; each field with expected, got, tolerance and the tolerance's
  reason; the seeds and intervals of a statistical claim; contract and provenance; the
  commands that re-verify it; and its raw record as a download;
- ``claims/<id>.json``, the record itself, copied only when it is a regular file the build
  wrote (a symlink in ``artifacts/`` is never followed, and is reported);
- ``claims.json`` at the site root: every claim with its state, fields, statement and
  provenance, for machines (sorted keys, no timestamps: an unchanged book gives the same
  bytes).

What each of them says is :mod:`~claimbook.extensions.claim_pages_model`'s (plain data);
this module builds the nodes and writes the files. The ledger is ``claim_ledger``'s (set up
from here). Every claim is judged again on every build, so a failed, stale or not-run claim
fails every strict build until it is fixed, whichever pages Sphinx re-read; a claim page
whose inputs did not change is not written again (``_collect_pages``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from numbers import Real
from pathlib import Path

from docutils import nodes
from docutils.utils import new_document
from sphinx.util import logging

from claimbook import claims as claim_registry
from claimbook import paths
from claimbook.errors import ClaimError
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import badge_node, place_links, section, shown, table
from claimbook.extensions.claim_places import repeat_problems, stated_in
from claimbook.extensions.claims import at_each_build

logger = logging.getLogger(__name__)


def _method_cell(value: dict, step: float | None) -> str:
    """The interval's method; for median-rank, that it is the median's interval, and the median."""
    if value.get("method") == "median-rank":
        return (
            "median-rank: the exact binomial order-statistic interval of the median "
            f"(median {model.shown_number(value.get('median'), step)}), not a t interval of "
            "the mean"
        )
    return value.get("method")


def _ratio_cell(field: dict) -> str:
    """The tolerance in standard errors of the seeds' mean, and why it is wide if it is."""
    ratio = field.get("tolerance_over_se")
    if ratio is None:
        return "not statistical" if field.get("passed") is not None else ""
    wide = field.get("wide_because")
    return f"{ratio}; wide because {wide}" if wide else ratio


def _key_rows(key) -> list[list]:
    """The key a claim was computed under, a row per part (never a JSON object): its digest,
    the environment's and registry entry's, and each harness function it ran with its digest."""
    if not isinstance(key, Mapping):
        return [["key", key]]
    rows = []
    for name, value in sorted(key.items()):
        label = "key" if name == "digest" else "key: " + name.replace("_", " ")
        if isinstance(value, Mapping):
            value = "; ".join(f"{part} {digest}" for part, digest in sorted(value.items()))
        rows.append([label, value])
    return rows


def describe_all(env) -> list[dict]:
    """Every registered claim, described for its page, the ledger and ``claims.json``.

    Each claim is judged again (:func:`claimbook.claims.judge`, whose cache makes that cheap
    when its files are unchanged); an unusable registry entry is reported and left out.
    """
    places = stated_in(env)
    described = []
    for claim_id in claim_registry.list_claims():
        try:
            claim = claim_registry.load_claim(claim_id)
            judgement = claim_registry.judge(claim_id)
        except ClaimError as error:
            where = paths.shown(paths.registry_path(claim_id))
            logger.warning("claim %s: %s", claim_id, error, location=where)
            continue
        publishable = model.publishable_record(claim_id) is not None
        described.append(model.describe(claim, judgement, places.get(claim_id, []), publishable))
    return described


# --- a claim's page --------------------------------------------------------------------------


_CATCH_STATES = {
    "caught": "the last mutate run turned it red",
    "not caught": "the last mutate run left it green",
    "not yet run": "not yet run",
}


def claim_page(info: Mapping) -> nodes.section:
    """The body of ``claims/<id>.html``."""
    docname = info["page"].removesuffix(".html")
    claim_id = info["id"]
    page = section(f"claim-{claim_id}", f"Claim {claim_id}")
    line = nodes.paragraph(classes=["claim-page-state"])
    line += badge_node(docname, model.badge(info))
    line += nodes.Text(f" {info['kind']} claim of chapter {info['chapter']}")
    page += line
    refutes = info["refutes"]
    if refutes:
        # The headline of a claim that registers an account is the account, with who holds it.
        account = nodes.container(classes=["claim-account"])
        account += nodes.paragraph("", "A common account says:", classes=["claim-account-lead"])
        account += nodes.block_quote(
            "",
            nodes.paragraph("", shown(refutes.get("account"))),
            nodes.attribution("", shown(refutes.get("source"))),
        )
        page += account
        lead = (
            "The book's measurement, verified, refutes it:"
            if info["state"] == "refuted"
            else f"The book's measurement that tests it is {info['state']}:"
        )
        page += nodes.paragraph("", lead, classes=["claim-measurement-lead"])
    page += nodes.block_quote(
        "", nodes.paragraph("", info["statement"]), classes=["claim-statement"]
    )
    meaning = nodes.paragraph(classes=["claim-meaning"])
    meaning += nodes.strong("", f"{model.STATE_WORDS[info['state']].capitalize()}: ")
    meaning += nodes.Text(model.STATE_MEANINGS[info["state"]])
    if info["state"] not in ("verified", "refuted"):
        meaning += nodes.Text(f" Why: {info['reason']}")
    page += meaning
    statistical = info["kind"] == "statistical"
    if info["error"]:
        page += nodes.paragraph("", f"The computation reported: {shown(info['error'])}")

    if refutes:
        title = (
            "How the measurement refutes the account"
            if info["state"] == "refuted"
            else "What the measurement is to show"
        )
        refuted = section("refuted", title)
        shows = nodes.bullet_list()
        for field in info["fields"]:
            text = model.field_texts(field, statistical=statistical)
            shows += nodes.list_item(
                "",
                nodes.paragraph(
                    "", f"{field['field']}: measured {text['got']}, expected {text['expected']}"
                ),
            )
        refuted += shows
        page += refuted

    if info.get("catches"):
        catches = section("catches", "The mistakes it catches")
        listed = nodes.bullet_list()
        for catch in info["catches"]:
            listed += nodes.list_item(
                "",
                nodes.paragraph(
                    "", f"This claim fails if {catch['says']}: {_CATCH_STATES[catch['state']]}."
                ),
            )
        catches += listed
        catches += nodes.paragraph(
            "",
            "Each mistake is planted alone in the book's code (claims/mistakes/) by "
            "python -m claimbook mutate, which recomputes the claim; the state is that of "
            "its last run.",
        )
        page += catches

    places = section("stated-in", "Where the book states it")
    places += place_links(docname, info)
    page += places

    fields = section("fields", "Fields")
    texts = {f["field"]: model.field_texts(f, statistical=statistical) for f in info["fields"]}
    fields += table(
        ["field", "expected", "got", "tolerance", "tolerance / SE", "reason", "passed"],
        [
            [
                nodes.literal("", field["field"]),
                texts[field["field"]]["expected"],
                texts[field["field"]]["got"],
                field["tolerance"],
                _ratio_cell(field),
                field["reason"],
                "not run" if field["passed"] is None else ("yes" if field["passed"] else "no"),
            ]
            for field in info["fields"]
        ],
        ["claim-fields"],
    )
    page += fields

    if info["seeds"] or info["statistics"]:
        stats = section("seeds-and-intervals", "Seeds and intervals")
        if info["seeds"]:
            stats += nodes.paragraph(
                "", f"{len(info['seeds'])} seeds: " + ", ".join(map(str, info["seeds"]))
            )
        rows = []
        steps = {f["field"]: model.resolution(f.get("expectation")) for f in info["fields"]}
        for name, value in info["statistics"].items():
            step = steps.get(name)
            rows.append(
                [
                    nodes.literal("", name),
                    model.shown_number(value["mean"], step),
                    model.shown_value(list(value["ci"]), step),
                    f"{level:.0%}" if isinstance(level := value.get("level"), Real) else level,
                    _method_cell(value, step),
                    ", ".join(model.shown_number(v, step) for v in value.get("per_seed") or []),
                ]
            )
        if rows:
            stats += table(
                ["field", "mean", "interval", "level", "method", "per seed"], rows, ["claim-stats"]
            )
        page += stats

    contract = section("contract", "Contract")
    contract += table(
        None,
        [[key, value] for key, value in sorted(info["contract"].items())]
        + [["compute", info["compute"]]],
        ["claim-contract"],
    )
    page += contract

    provenance = section("provenance", "Provenance")
    rows = [[key, value] for key, value in sorted((info["provenance"] or {}).items())]
    rows += _key_rows(info["key"])
    rows += [["registry digest", info["registry_digest"]]]
    provenance += table(None, rows, ["claim-provenance"])
    page += provenance

    again = section("re-verify", "Re-verify it")
    again += nodes.paragraph("", "From a checkout of the book, in its environment:")
    again += nodes.literal_block(
        "", f"python -m claimbook claims verify {claim_id}", language="bash"
    )
    again += nodes.paragraph("", "In the chapter's notebook, after its first cell:")
    again += nodes.literal_block(
        "",
        f'from trainable_harness import verify_claim\n\nverify_claim("{claim_id}", '
        "expected_harness=pin)",
        language="python",
    )
    page += again

    record = section("record", "Raw record")
    if info["record"]:
        record += nodes.paragraph(
            "",
            "",
            nodes.reference(
                "",
                Path(info["record"]).name,
                refuri=model.relative_uri(docname, info["record"]),
                classes=["claim-download"],
            ),
            nodes.Text(" is the record the build wrote (artifacts/claims), as a download."),
        )
    else:
        record += nodes.paragraph(
            "", "No record is published: there is none, or it is not a regular file."
        )
    page += record
    return page


# --- the records and claims.json ------------------------------------------------------------


def _publish(outdir: Path, described: list[dict]) -> None:
    pages = outdir / model.CLAIM_PAGES
    pages.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for info in described:
        source = paths.artifact_path(info["id"])
        data = model.publishable_record(info["id"]) if info["record"] else None
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


# --- writing the pages -------------------------------------------------------------------------


_DIGEST_META = "trainable-claim-page"
_DIGEST_PATTERN = re.compile(rb'<meta name="trainable-claim-page" content="([0-9a-f]{64})"')


def _note_written(app, doctree, docname) -> None:
    app._trainable_written = getattr(app, "_trainable_written", set()) | {docname}


def _forget_written(app) -> None:
    app._trainable_written = set()


def _navigation_digest(app) -> str:
    """SHA-256 of what a claim page shows besides its body: every page's title and sections."""
    env = app.env
    digest = hashlib.sha256()
    for docname in sorted(env.found_docs):
        title = env.titles.get(docname)
        toc = env.tocs.get(docname)
        numbers = env.toc_secnumbers.get(docname, {})
        entry = [
            docname,
            title.astext() if title is not None else "",
            toc.astext() if toc is not None else "",
            sorted((key, list(value)) for key, value in numbers.items()),
        ]
        digest.update(json.dumps(entry).encode())
    return digest.hexdigest()


def _unchanged(outdir: Path, pagename: str, digest: str) -> bool:
    """True if the page on disk carries ``digest`` (it was written from the same inputs)."""
    try:
        with open(outdir / f"{pagename}.html", "rb") as handle:
            head = handle.read(8192)
    except OSError:
        return False
    found = _DIGEST_PATTERN.search(head)
    return found is not None and found.group(1).decode() == digest


def _collect_pages(app):
    """Judge every claim; render, index and write the claim pages whose inputs changed.

    A claim page is a function of its claim's description (:func:`describe_all`: registry,
    judgement, artifact, the places that state it), the other pages' titles and sections
    (the navigation) and the engine's code. Its page on disk carries the digest of those
    inputs; when Sphinx did not write every document this build (it does when the
    configuration, the templates, the theme or an extension changed, which a claim page
    shows as well) and the digest on disk is the current one, the page is neither rendered
    nor written again, and its entry in the search index is the one the last build made
    (kept by :func:`_keep_claim_pages_in_search_index`). The ledger is always read again, so
    a build always gets here, and every claim is judged.
    """
    if app.builder.format != "html" or not paths.CLAIMS_DIR.is_dir():
        return []
    repeat_problems(app)
    described = describe_all(app.env)
    incremental = not app.env.found_docs <= getattr(app, "_trainable_written", set())
    navigation = _navigation_digest(app)
    changed = []
    for info in described:
        if claim_registry.state_fails_build(info["state"]):
            places = info["stated_in"]
            logger.warning(
                "claim %s is %s: %s",
                info["id"],
                info["state"],
                info["reason"],
                location=(
                    places[0]["page"].removesuffix(".html")
                    if places
                    else paths.shown(paths.registry_path(info["id"]))
                ),
            )
        pagename = info["page"].removesuffix(".html")
        digest = _inputs_digest(info, navigation)
        if not (incremental and _unchanged(Path(app.outdir), pagename, digest)):
            changed.append((info, pagename, digest))
    _index_claim_pages(app, [info["page"].removesuffix(".html") for info in described], changed)
    pages = []
    for info, pagename, digest in changed:
        title = f"Claim {info['id']}"
        body = claim_page(info)
        _feed_search_index(app, pagename, title, body)
        # The body is made afresh for this page and the index has its own copy: Sphinx may
        # render (and change) it in place, with no deep copy (a third of this loop's time).
        rendered = app.builder.render_partial(body)["fragment"]
        meta = f'<meta name="{_DIGEST_META}" content="{digest}" />\n'
        pages.append(
            (
                pagename,
                {"title": title, "body": rendered, "display_toc": False, "metatags": meta},
                "page.html",
            )
        )
    _publish(Path(app.outdir), described)
    return pages


def _inputs_digest(info: dict, navigation: str) -> str:
    """SHA-256 of what a claim page is made from (see :func:`_collect_pages`)."""
    from claimbook.dependencies import package_digest

    described = json.dumps(info, sort_keys=True, ensure_ascii=False, allow_nan=True)
    engine = package_digest("claimbook")
    return hashlib.sha256(f"{described}\0{navigation}\0{engine}".encode()).hexdigest()


_NOT_SEARCHED = {"seeds-and-intervals", "contract", "provenance", "record", "re-verify"}


def _searched_copy(node: nodes.Node) -> nodes.Node:
    """A deep copy of ``node`` without its sections in :data:`_NOT_SEARCHED`."""
    if not isinstance(node, nodes.Element):
        return node.deepcopy()
    copied = node.copy()
    for child in node.children:
        if isinstance(child, nodes.section) and set(child["ids"]) & _NOT_SEARCHED:
            continue
        copied += _searched_copy(child)
    return copied


def _claim_pagenames(app) -> set[str]:
    """The page names of every claim in the registry (``claims/<id>``)."""
    return {
        model.page_path(claim_id).removesuffix(".html")
        for claim_id in claim_registry.list_claims()
    }


def _keep_claim_pages_in_search_index(app) -> None:
    """Let the claim pages' entries in the last build's search index survive its loading.

    Sphinx loads the index the last build wrote and drops every page that is not one of its
    documents and is not rewritten; a claim page is neither. The index is loaded again in
    each build, so the builder's loading is wrapped once: while it runs, the index keeps the
    pages of the registry's claims. :func:`_index_claim_pages` then drops the ones that
    changed, which are indexed afresh, and those of claims no longer registered.
    """
    builder = app.builder
    if not hasattr(builder, "load_indexer"):  # not an HTML builder
        return
    load = builder.load_indexer

    def load_indexer(docnames):
        indexer = builder.indexer
        prune = indexer.prune
        claim_pages = _claim_pagenames(app)
        indexer.prune = lambda names: prune(set(names) | claim_pages)
        try:
            load(docnames)
        finally:
            indexer.prune = prune

    builder.load_indexer = load_indexer


def _index_claim_pages(app, current: list[str], changed: list[tuple]) -> None:
    """Keep the unchanged claim pages' index entries; drop the changed and unregistered ones.

    Every current claim page is kept through the index's last pruning (at the end of the
    build, which drops what is not a document), fed this build or not.
    """
    indexer = getattr(app.builder, "indexer", None)
    if indexer is None:
        return
    redo = {pagename for _, pagename, _ in changed}
    current = set(current)
    # The index's pages are the keys of its titles (sphinx.search.IndexBuilder); pruning to
    # all but the changed claim pages and the unregistered ones removes their old words.
    indexed = set(indexer._titles)
    stale = {name for name in indexed if name.startswith(f"{model.CLAIM_PAGES}/")} - current
    if redo or stale:
        indexer.prune(indexed - redo - stale)
    kept = getattr(indexer, "_trainable_pages", None)
    if kept is None:
        kept = indexer._trainable_pages = set()
        prune = indexer.prune
        indexer.prune = lambda docnames: prune(set(docnames) | kept)
    kept.update(current)


def _feed_search_index(app, pagename: str, title: str, body: nodes.Node) -> None:
    """Index a claim page (:func:`_index_claim_pages` keeps it through the last pruning)."""
    indexer = getattr(app.builder, "indexer", None)
    if indexer is None:
        return
    # A reader searches for what a claim says (statement, account, fields, reasons), not for
    # the numbers of its seeds, its contract, provenance and raw record, which the page shows
    # and which would only make the index larger and slower to build. Only the searched
    # parts are copied (the others are most of the page: copying them cost more than
    # indexing the rest).
    document = new_document(pagename)
    document += _searched_copy(body)
    indexer.feed(pagename, "", title, document)


def setup(app):
    app.setup_extension("claimbook.extensions.claim_ledger")
    at_each_build(app, _forget_written)
    app.connect("builder-inited", _keep_claim_pages_in_search_index)
    app.connect("doctree-resolved", _note_written)
    app.connect("html-collect-pages", _collect_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "2"}
