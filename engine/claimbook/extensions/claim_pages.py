"""A page per claim, the claim ledger, and ``claims.json``: what the site says about each claim.

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

The ledger is a ``claim-ledger`` directive (in ``claims.md``): every claim by chapter and
section, with its state and statement. Every claim is re-judged on every build, so a failed,
stale or not-run claim fails every strict build until it is fixed, whichever pages Sphinx
re-read; a claim page whose inputs did not change is not written again (``_collect_pages``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from docutils import nodes
from docutils.utils import new_document
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from claimbook import claims as claim_registry
from claimbook import paths
from claimbook.errors import ClaimError
from claimbook.extensions import claims as claim_roles

logger = logging.getLogger(__name__)

LEDGER_JSON = "claims.json"
STATE_MEANINGS = {
    "verified": "the build recomputed this claim with the book's instruments, and every "
    "field met its registered expectation.",
    "refuted": "the claim registers an account the book argues against; the build "
    "measured it, and the measurement contradicts the account as registered.",
    "failed": "the latest recomputation did not meet its registered expectation (or the "
    "record disagrees with itself); the strict build fails.",
    "stale": "the stored record was computed by other instruments or for another version "
    "of the registration; the strict build fails until it is recomputed.",
    "not run": "no record of a computation is on file; the strict build fails until one is made.",
}


# --- reading one claim -----------------------------------------------------------------------


def _chapter_of(env, docname: str) -> str:
    title = env.titles.get(docname)
    number = env.toc_secnumbers.get(docname, {}).get("")
    text = title.astext() if title is not None else docname
    return f"{'.'.join(map(str, number))}. {text}" if number else text


def _section_label(env, place: Mapping) -> str:
    numbers = env.toc_secnumbers.get(place["docname"], {})
    number = numbers.get(f"#{place['section_id']}") or (
        numbers.get("") if not place["section_id"] else None
    )
    title = env.titles.get(place["docname"])
    if not place["section"] or (title is not None and place["section"] == title.astext()):
        return _chapter_of(env, place["docname"])  # the chapter's opening, before 15.1
    if number:
        return f"{'.'.join(map(str, number))} {place['section']}"
    return place["section"]


def describe(env, claim_id: str, places: list[dict]) -> dict:
    """Everything the site says about one claim, as plain data (the page and JSON use it)."""
    entry = claim_roles.load_entry(claim_id)
    state, artifact, reason = claim_roles.claim_state(claim_id)
    artifact = artifact or {}
    expected = artifact.get("expected") or {}
    comparisons = artifact.get("comparisons") or {}
    fields = []
    for name in sorted(set(entry.expect) | set(comparisons)):
        comparison = comparisons.get(name) or {}
        expectation = expected.get(name) or entry.expect.get(name) or {}
        fields.append(
            {
                "field": name,
                "expected": comparison.get("expected", _expected_text(expectation)),
                "got": comparison.get("got"),
                "tolerance": comparison.get("tolerance", _tolerance_text(expectation)),
                "reason": comparison.get("reason", expectation.get("reason")),
                "passed": comparison.get("passed"),
            }
        )
    statistical = {
        name: value
        for name, value in sorted((artifact.get("result") or {}).items())
        if claim_roles.is_statistical(value)
    }
    return {
        "id": claim_id,
        "chapter": entry.chapter,
        "kind": artifact.get("kind", getattr(entry, "kind", "deterministic")),
        "state": state,
        "reason": reason,
        "statement": claim_roles.statement_of(claim_id, artifact or None),
        "refutes": artifact.get("refutes", getattr(entry, "refutes", None)),
        "fields": fields,
        "result": artifact.get("result"),
        "statistics": statistical,
        "seeds": artifact.get("seeds"),
        # The registered contract, with a derived seed shown with its derivation.
        "contract": {
            **(artifact.get("contract") or {}),
            **claim_registry.display_contract(claim_id),
        },
        "compute": artifact.get("compute", entry.compute),
        "key": artifact.get("key"),
        "registry_digest": artifact.get("registry_digest"),
        "provenance": artifact.get("provenance"),
        "error": artifact.get("error"),
        "page": f"{claim_roles.CLAIM_PAGES}/{claim_id}.html",
        "record": f"{claim_roles.CLAIM_PAGES}/{claim_id}.json"
        if claim_roles.artifact_is_publishable(claim_id)
        else None,
        "stated_in": [
            {
                "page": f"{place['docname']}.html",
                "anchor": place["anchor"],
                "chapter": _chapter_of(env, place["docname"]),
                "section": _section_label(env, place),
                "as": place["kind"],
            }
            for place in places
        ],
    }


def _expected_text(expectation: Mapping):
    for key in ("equals", "value", "interval"):
        if key in expectation:
            return expectation[key]
    return {key: value for key, value in expectation.items() if key != "reason"} or None


def _tolerance_text(expectation: Mapping) -> str | None:
    if "equals" in expectation:
        return "exact"
    for key in ("abs_tol", "rel_tol"):
        if key in expectation:
            return f"{key} {expectation[key]}"
    if "interval" in expectation:
        return "closed interval"
    return None


def _show(value) -> str:
    if value is None:
        return "\u2014"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


# --- docutils building blocks ----------------------------------------------------------------


def _table(headers: list[str] | None, rows: list[list], classes: list[str]) -> nodes.table:
    """A table; ``headers=None`` for a two-column list of names and values."""
    table = nodes.table(classes=["claim-table", *classes])
    group = nodes.tgroup(cols=len(headers) if headers else 2)
    table += group
    for _ in headers or (0, 0):
        group += nodes.colspec(colwidth=1)
    if headers:
        head = nodes.thead()
        group += head
        head += _row(headers)
    body = nodes.tbody()
    group += body
    for row in rows:
        body += _row(row)
    return table


def _row(cells: list) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        if isinstance(cell, nodes.Node):
            entry += nodes.paragraph("", "", cell) if isinstance(cell, nodes.Inline) else cell
        else:
            entry += nodes.paragraph("", _show(cell))
        row += entry
    return row


def _section(section_id: str, title: str) -> nodes.section:
    section = nodes.section(ids=[section_id])
    section += nodes.title("", title)
    return section


def _badge(docname: str, info: Mapping) -> nodes.reference:
    state = info["state"]
    return nodes.reference(
        "",
        "",
        nodes.inline("", info["id"], classes=["claim-id"]),
        nodes.inline("", state, classes=["claim-state"]),
        refuri=claim_roles.claim_page_uri(docname, info["id"]),
        reftitle=info["statement"],
        classes=["claim-badge", claim_roles.STATE_CLASSES[state]],
    )


def _first_per_section(places: list[dict]) -> list[dict]:
    """The first place in each section (a section may state a claim several times)."""
    seen, first = set(), []
    for place in places:
        key = (place["page"], place["section"])
        if key not in seen:
            seen.add(key)
            first.append(place)
    return first


def _place_links(docname: str, info: Mapping) -> nodes.Node:
    if not info["stated_in"]:
        return nodes.paragraph("", "not stated on any page")
    items = nodes.bullet_list(classes=["claim-places"])
    for place in _first_per_section(info["stated_in"]):
        uri = claim_roles.relative_uri(docname, place["page"]) + "#" + place["anchor"]
        label = f"{place['chapter']}, {place['section']}"
        if place["section"] == place["chapter"]:
            label = place["chapter"]
        items += nodes.list_item(
            "", nodes.paragraph("", "", nodes.reference("", label, refuri=uri))
        )
    return items


def claim_page(info: Mapping) -> nodes.section:
    """The body of ``claims/<id>.html``."""
    docname = info["page"].removesuffix(".html")
    claim_id = info["id"]
    page = _section(f"claim-{claim_id}", f"Claim {claim_id}")
    line = nodes.paragraph(classes=["claim-page-state"])
    line += _badge(docname, info)
    line += nodes.Text(f" {info['kind']} claim of chapter {info['chapter']}")
    page += line
    page += nodes.block_quote(
        "", nodes.paragraph("", info["statement"]), classes=["claim-statement"]
    )
    meaning = nodes.paragraph(classes=["claim-meaning"])
    meaning += nodes.strong("", f"{info['state'].capitalize()}: ")
    meaning += nodes.Text(STATE_MEANINGS[info["state"]])
    if info["state"] not in ("verified", "refuted"):
        meaning += nodes.Text(f" Why: {info['reason']}")
    page += meaning
    if info["error"]:
        page += nodes.paragraph("", f"The computation reported: {_show(info['error'])}")

    if info["refutes"]:
        refuted = _section("refuted", "What this claim contradicts")
        refutes = info["refutes"]
        refuted += nodes.paragraph(
            "", "", nodes.strong("", "The account: "), nodes.Text(_show(refutes.get("account")))
        )
        refuted += nodes.paragraph(
            "",
            "",
            nodes.strong("", "Where it is found: "),
            nodes.Text(_show(refutes.get("source"))),
        )
        shows = nodes.bullet_list()
        for field in info["fields"]:
            shows += nodes.list_item(
                "",
                nodes.paragraph(
                    "",
                    f"{field['field']}: measured {_show(field['got'])} against "
                    f"{_show(field['expected'])} ({_show(field['tolerance'])})",
                ),
            )
        refuted += nodes.paragraph("", "What the measurement shows:")
        refuted += shows
        page += refuted

    places = _section("stated-in", "Where the book states it")
    places += _place_links(docname, info)
    page += places

    fields = _section("fields", "Fields")
    fields += _table(
        ["field", "expected", "got", "tolerance", "reason", "passed"],
        [
            [
                nodes.literal("", field["field"]),
                field["expected"],
                field["got"],
                field["tolerance"],
                field["reason"],
                "not run" if field["passed"] is None else ("yes" if field["passed"] else "no"),
            ]
            for field in info["fields"]
        ],
        ["claim-fields"],
    )
    page += fields

    if info["seeds"] or info["statistics"]:
        stats = _section("seeds-and-intervals", "Seeds and intervals")
        if info["seeds"]:
            stats += nodes.paragraph(
                "", f"{len(info['seeds'])} seeds: " + ", ".join(map(str, info["seeds"]))
            )
        rows = []
        for name, value in info["statistics"].items():
            low, high = value["ci"]
            rows.append(
                [
                    nodes.literal("", name),
                    value["mean"],
                    f"[{low!r}, {high!r}]",
                    value.get("level"),
                    value.get("method"),
                    ", ".join(f"{v:.6g}" for v in value.get("per_seed") or []),
                ]
            )
        if rows:
            stats += _table(
                ["field", "mean", "interval", "level", "method", "per seed"], rows, ["claim-stats"]
            )
        page += stats

    contract = _section("contract", "Contract")
    contract += _table(
        None,
        [[key, value] for key, value in sorted(info["contract"].items())]
        + [["compute", info["compute"]]],
        ["claim-contract"],
    )
    page += contract

    provenance = _section("provenance", "Provenance")
    rows = [[key, value] for key, value in sorted((info["provenance"] or {}).items())]
    rows += [["key", info["key"]], ["registry digest", info["registry_digest"]]]
    provenance += _table(None, rows, ["claim-provenance"])
    page += provenance

    again = _section("re-verify", "Re-verify it")
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

    record = _section("record", "Raw record")
    if info["record"]:
        record += nodes.paragraph(
            "",
            "",
            nodes.reference(
                "",
                f"{claim_id}.json",
                refuri=f"{claim_id}.json",
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


# --- the ledger ------------------------------------------------------------------------------


class claim_ledger(nodes.General, nodes.Element):
    """Placeholder for the ledger, filled in once every page has been read."""


class ClaimLedgerDirective(SphinxDirective):
    """``claim-ledger`` -- every claim by chapter and section, with state and statement."""

    has_content = False

    def run(self):
        ledgers = self.env.domaindata.setdefault("trainable_claims", {})
        ledgers.setdefault("ledgers", set()).add(self.env.docname)
        for directory in (paths.CLAIMS_DIR, paths.CLAIM_ARTIFACTS_DIR):
            if directory.is_dir():
                for path in sorted(directory.iterdir()):
                    if path.is_file():
                        self.env.note_dependency(str(path))
        return [claim_ledger()]


def _purge_ledger(app, env, docname) -> None:
    env.domaindata.setdefault("trainable_claims", {}).setdefault("ledgers", set()).discard(docname)


def _merge_ledgers(app, env, docnames, other) -> None:
    theirs = other.domaindata.get("trainable_claims", {}).get("ledgers", set())
    mine = env.domaindata.setdefault("trainable_claims", {}).setdefault("ledgers", set())
    mine.update(theirs & set(docnames))


def _ledger_outdated(app, env, added, changed, removed):
    """Re-read the ledger on every build.

    It lists what other pages state and what every artifact says now; and a build with one
    outdated page goes on to write the claim pages, where every claim is judged again, so a
    claim that fails keeps failing the strict build even when no other page changed.
    """
    return sorted(env.domaindata.get("trainable_claims", {}).get("ledgers", set()))


def _all_claims(app) -> list[dict]:
    """Every registered claim described once per build (the ledger and the pages share it)."""
    cached = getattr(app, "_trainable_claims_described", None)
    if cached is not None:
        return cached
    places = claim_roles.references(app.env)
    described = []
    for claim_id in claim_registry.list_claims():
        try:
            described.append(describe(app.env, claim_id, places.get(claim_id, [])))
        except ClaimError as error:
            logger.warning("claim %s: %s", claim_id, error, location=f"claims/{claim_id}.yaml")
    app._trainable_claims_described = described
    return described


def _fill_ledger(app, doctree, docname) -> None:
    placeholders = list(doctree.findall(claim_ledger))
    if not placeholders:
        return
    described = _all_claims(app)
    ledger = nodes.container(classes=["claim-ledger"])
    for chapter in sorted({info["chapter"] for info in described}):
        group = [info for info in described if info["chapter"] == chapter]
        chapter_title = f"Chapter {chapter}"
        for info in group:
            if info["stated_in"]:
                chapter_title = f"Chapter {info['stated_in'][0]['chapter']}"
                break
        ledger += nodes.rubric("", chapter_title, classes=["claim-ledger-chapter"])
        rows = []
        for info in sorted(group, key=_ledger_order):
            rows.append(
                [
                    _badge(docname, info),
                    _sections_cell(docname, info),
                    info["statement"],
                ]
            )
        ledger += _table(["claim", "stated in", "statement"], rows, ["claim-ledger-table"])
    counts = {}
    for info in described:
        counts[info["state"]] = counts.get(info["state"], 0) + 1
    summary = ", ".join(
        f"{counts[state]} {state}" for state in claim_roles.STATE_CLASSES if state in counts
    )
    ledger.insert(
        0,
        nodes.paragraph(
            "", f"{len(described)} claims: {summary}.", classes=["claim-ledger-summary"]
        ),
    )
    for placeholder in placeholders:
        placeholder.replace_self(ledger.deepcopy())


def _ledger_order(info: Mapping):
    """Claims in the order the book first states them; unstated claims last, by id."""
    first = info["stated_in"][0] if info["stated_in"] else None
    if first is None:
        return (1, "", 0, info["id"])
    return (0, first["page"], int(first["anchor"].rsplit("-", 1)[1]), info["id"])


def _sections_cell(docname: str, info: Mapping) -> nodes.Node:
    if not info["stated_in"]:
        return nodes.paragraph("", "not stated on any page")
    para = nodes.paragraph()
    for index, place in enumerate(_first_per_section(info["stated_in"])):
        if index:
            para += nodes.Text("; ")
        uri = claim_roles.relative_uri(docname, place["page"]) + "#" + place["anchor"]
        para += nodes.reference("", place["section"], refuri=uri)
    return para


# --- the pages, the records and claims.json ---------------------------------------------------


def _read_regular_file(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file reached without following a symlink."""
    for parent in (path.parent, path.parent.parent):
        if parent.is_symlink():
            return None
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        with os.fdopen(descriptor, "rb") as handle:
            descriptor = -1
            return handle.read()
    finally:
        if descriptor >= 0:
            os.close(descriptor)


def _publish(outdir: Path, described: list[dict]) -> None:
    pages = outdir / claim_roles.CLAIM_PAGES
    pages.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for info in described:
        source = paths.CLAIM_ARTIFACTS_DIR / f"{info['id']}.json"
        data = _read_regular_file(source) if info["record"] else None
        if os.path.lexists(source) and data is None:
            logger.warning(
                "claim %s: artifacts/claims/%s.json is not a regular file in a real directory; "
                "it is not published",
                info["id"],
                info["id"],
                location=f"artifacts/claims/{info['id']}.json",
            )
        if data is not None:
            target = pages / f"{info['id']}.json"
            wanted.add(target.name)
            if not target.is_file() or target.read_bytes() != data:
                target.unlink(missing_ok=True)
                target.write_bytes(data)
        wanted.add(f"{info['id']}.html")
    for stale in pages.iterdir():
        if stale.name not in wanted and (stale.is_symlink() or stale.is_file()):
            stale.unlink()
    ledger = {
        "claims": described,
        "states": {state: STATE_MEANINGS[state] for state in claim_roles.STATE_CLASSES},
    }
    text = json.dumps(ledger, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    target = outdir / LEDGER_JSON
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


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
    """Judge every claim, feed every claim page to the search index, write the changed pages.

    A claim page is written again unless the file on disk carries the digest of the same
    title, body and navigation, and Sphinx did not write every document this build (it does
    when the configuration, the templates, the theme or an extension changed, which a claim
    page shows as well). The ledger is always read again, so a build always gets here.
    """
    if app.builder.format != "html" or not paths.CLAIMS_DIR.is_dir():
        return []
    claim_roles.repeat_problems(app)
    described = _all_claims(app)
    incremental = not app.env.found_docs <= getattr(app, "_trainable_written", set())
    navigation = _navigation_digest(app)
    pages = []
    for info in described:
        if claim_roles.state_fails_build(info["state"]):
            places = info["stated_in"]
            logger.warning(
                "claim %s is %s: %s",
                info["id"],
                info["state"],
                info["reason"],
                location=(
                    places[0]["page"].removesuffix(".html")
                    if places
                    else f"claims/{info['id']}.yaml"
                ),
            )
        body = claim_page(info)
        pagename = info["page"].removesuffix(".html")
        _feed_search_index(app, pagename, f"Claim {info['id']}", body)
        rendered = app.builder.render_partial(body.deepcopy())["fragment"]
        title = f"Claim {info['id']}"
        digest = hashlib.sha256(f"{title}\0{rendered}\0{navigation}".encode()).hexdigest()
        if incremental and _unchanged(Path(app.outdir), pagename, digest):
            continue
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


_NOT_SEARCHED = {"seeds-and-intervals", "contract", "provenance", "record", "re-verify"}


def _feed_search_index(app, pagename: str, title: str, body: nodes.Node) -> None:
    """Index a claim page, and keep Sphinx from pruning it as an unknown document."""
    indexer = getattr(app.builder, "indexer", None)
    if indexer is None:
        return
    document = new_document(pagename)
    document += body.deepcopy()
    # A reader searches for what a claim says (statement, account, fields, reasons), not for
    # the numbers of its seeds, its contract, provenance and raw record, which the page shows
    # and which would only make the index larger and slower to build.
    for section in list(document.findall(nodes.section)):
        if set(section["ids"]) & _NOT_SEARCHED:
            section.parent.remove(section)
    indexer.feed(pagename, "", title, document)
    kept = getattr(indexer, "_trainable_pages", None)
    if kept is None:
        kept = indexer._trainable_pages = set()
        prune = indexer.prune
        indexer.prune = lambda docnames: prune(set(docnames) | kept)
    kept.add(pagename)


def setup(app):
    app.add_node(claim_ledger)
    app.add_directive("claim-ledger", ClaimLedgerDirective)
    app.connect("env-get-outdated", _ledger_outdated)
    app.connect("env-purge-doc", _purge_ledger)
    app.connect("env-merge-info", _merge_ledgers)
    app.connect("doctree-resolved", _fill_ledger)
    claim_roles.at_each_build(app, _forget_written)
    app.connect("doctree-resolved", _note_written)
    app.connect("html-collect-pages", _collect_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
