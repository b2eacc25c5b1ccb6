"""A page per claim, ``claims/<id>.html``: the claim pages of the site.

Set up by ``claims`` (the roles that state claims). On every HTML build every claim in the
registry is judged again (:func:`describe_all`), so a failed, stale or not-run claim fails
every strict build until it is fixed, whichever pages Sphinx re-read; then each claim page
whose inputs changed is rendered (its body is :mod:`~claimbook.extensions.claim_page_body`'s),
indexed for search (:mod:`~claimbook.extensions.claim_search`) and written, and the records
and ``claims.json`` are published (:mod:`~claimbook.extensions.claim_records`). What a page
says is :mod:`~claimbook.extensions.claim_pages_model`'s (plain data). The ledger is
``claim_ledger``'s (set up from here).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from sphinx.util import logging

from claimbook import claims as claim_registry
from claimbook import paths
from claimbook.dependencies import package_digest
from claimbook.errors import ClaimError
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions import claim_search
from claimbook.extensions.claim_nodes import note_math
from claimbook.extensions.claim_page_body import claim_page
from claimbook.extensions.claim_places import repeat_problems, stated_in
from claimbook.extensions.claim_records import publish, publishable_record
from claimbook.extensions.claims import at_each_build

logger = logging.getLogger(__name__)


def describe_all(env) -> list[dict]:
    """Every registered claim, described for its page, the ledger and ``claims.json``.

    Each claim is judged again (:func:`claimbook.claims.judge`, whose cache makes that cheap
    when its files are unchanged); an unusable registry entry is reported and left out.
    """
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
    (kept by :mod:`~claimbook.extensions.claim_search`). The ledger is always read again, so
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
    claim_search.index_claim_pages(
        app, [info["page"].removesuffix(".html") for info in described], changed
    )
    pages = []
    for info, pagename, digest in changed:
        title = f"Claim {info['id']}"
        body = claim_page(info)
        if "$" in info["statement"]:
            note_math(app.env, pagename)  # MathJax for the statement's math
        claim_search.feed_search_index(app, pagename, title, body)
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
    publish(Path(app.outdir), described)
    return pages


def _inputs_digest(info: dict, navigation: str) -> str:
    """SHA-256 of what a claim page is made from (see :func:`_collect_pages`)."""
    described = json.dumps(info, sort_keys=True, ensure_ascii=False, allow_nan=True)
    engine = package_digest("claimbook")
    return hashlib.sha256(f"{described}\0{navigation}\0{engine}".encode()).hexdigest()


def setup(app):
    app.setup_extension("claimbook.extensions.claim_ledger")
    at_each_build(app, _forget_written)
    app.connect("builder-inited", claim_search.keep_claim_pages_in_search_index)
    app.connect("doctree-resolved", _note_written)
    app.connect("html-collect-pages", _collect_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "3"}
