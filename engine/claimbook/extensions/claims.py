"""Claims in the prose (docs/claims.md): badges, bound numbers, claim cards, each section's
Evidence block, samples of a state and ``{book-chapter}``. An unknown id or field, a missing
artifact and a failing state are warnings with a location; the mark is still drawn."""

from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from claimbook import cache, paths
from claimbook import claims as claim_registry
from claimbook.errors import ChapterSourceError, ClaimError, UnknownClaimError
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_nodes import (
    ACCOUNT_MARK,
    ACCOUNT_WORDS,
    badge_node,
    drawn,
    mark_legend,
    mark_statement,
    number_said,
    refuse_foreign_marks,
    sections_of,
    setup_places,
    warn,
)
from claimbook.extensions.claim_pages import publishable_record
from claimbook.numbers import format_value, is_statistical
from claimbook.settings import results_pasted_as_glue

logger = logging.getLogger(__name__)


class claim_value(nodes.Inline, nodes.TextElement):
    """A number bound to a claim field; rendered by :func:`visit_claim_value_html`."""


def visit_claim_value_html(self, node) -> None:
    state, tag = node["state"], "a" if node.get("refuri") else "span"
    attributes = {"title": node["tooltip"], "data-claim": node["claim"], "data-claim-state": state}
    if tag == "a":
        attributes["href"] = node["refuri"]
    else:
        attributes["tabindex"] = "0"  # focusable, so the statement shows on keyboard focus
    self.body.append(
        self.starttag(node, tag, "", **attributes)
        + f'<span class="claim-number">{self.encode(node["display"])}</span>'
        + f'<span class="claim-mark" aria-hidden="true">{model.STATE_MARKS[state]}</span>'
        + f'<span class="claim-sr">{number_said(state)}</span></{tag}>'
    )
    raise nodes.SkipNode


class claim_account(nodes.Inline, nodes.TextElement):
    """A refuted account's mark and :data:`ACCOUNT_WORDS`, linking to the claim's page."""


def visit_account_html(self, node) -> None:
    names = {
        "href": node["refuri"],
        "title": node["tooltip"],
        "data-claim": node["trainable-claim"],
    }
    mark = f'<span class="claim-mark" aria-hidden="true">{ACCOUNT_MARK}</span> '
    self.body.append(self.starttag(node, "a", "", **names) + f"{mark}{ACCOUNT_WORDS}</a>")
    raise nodes.SkipNode


def _claim_value_node(claim_id: str, state: str, display: str, tooltip: str, **extra):
    node = claim_value("", claim=claim_id, state=state, display=display, tooltip=tooltip, **extra)
    node["classes"] += ["claim-value", model.NUMBER_CLASSES[state]]
    return drawn(node)


# The legend sits after a page's title and the short lines under it (subtitle, topic and lens
# chips): at most this many paragraphs of at most this many characters.
_LEADING_LINES, _SHORT_LINE = 4, 240


def _finish_marks(app, doctree, docname) -> None:
    """A legend under the title of a page with bound numbers."""
    states = [node["state"] for node in doctree.findall(claim_value) if node["claim"] != "sample"]
    top = next(iter(doctree.findall(nodes.section)), None)
    if not states or top is None or not isinstance(top[0], nodes.title):
        return
    index = 1
    while (
        index < min(len(top), 1 + _LEADING_LINES)
        and isinstance(top[index], nodes.paragraph)
        and len(top[index].astext()) <= _SHORT_LINE
    ):
        index += 1
    # The explanation of the marks: the page labelled ``claim-marks``.
    labels = app.env.get_domain("std").labels
    target, anchor, _ = labels.get("claim-marks", ("intro", "claim-marks", ""))
    uri = model.relative_uri(docname, f"{target}.html") + f"#{anchor}"
    accounts = any(True for _ in doctree.findall(claim_account))
    top.insert(index, mark_legend(states, accounts, uri))


def _judged(env, claim_id: str, location, prefix: str = ""):
    """``(claim, judgement)``, its files noted as dependencies; warns and raises ClaimError."""
    try:
        found = claim_registry.load_claim(claim_id), claim_registry.judge(claim_id)
    except ClaimError as error:
        problem = "unknown claim" if isinstance(error, UnknownClaimError) else "claim registry"
        warn(env, location, f"{prefix}{problem}: {error}")
        raise
    for dependency in (paths.registry_path(claim_id), paths.artifact_path(claim_id)):
        if dependency.exists():
            env.note_dependency(str(dependency))
    return found


def claim_badge(env, claim_id: str, location, *, kind: str = "badge") -> nodes.reference | None:
    """The badge node of ``claim_id``, warning when it is unknown or fails the build."""
    try:
        claim, judgement = _judged(env, claim_id, location)
    except ClaimError:
        return None
    if judgement.fails_build:
        warn(env, location, f"claim {claim_id} is {judgement.state}: {judgement.reason}")
    node = badge_node(env.docname, model.summary_of(claim, judgement))
    mark_statement(node, env, claim_id, kind)
    return node


class ClaimRole(SphinxRole):
    """``{claim}`id``` -- the inline badge of one claim; a refuted claim's account mark."""

    def run(self):
        badge = claim_badge(self.env, self.text.strip(), self.get_location())
        if badge is None:
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        if badge["claim-state"] != "refuted":
            return [badge], []
        claim_id = badge["trainable-claim"]
        refutes = claim_registry.load_claim(claim_id).refutes
        account = claim_account(
            "",
            refuri=badge["refuri"],
            tooltip=f"A common account: {model.account_line(refutes)}",
            classes=["claim-account", model.STATE_CLASSES["refuted"]],
            ids=badge["ids"],
        )
        account["trainable-claim"] = claim_id
        account["trainable-claim-kind"] = badge["trainable-claim-kind"]
        return [drawn(account)], []


class ClaimValueRole(SphinxRole):
    """``{claim-value}`id.field:spec``` -- a result field read from the claim's artifact."""

    def run(self):
        env, location = self.env, self.get_location()
        try:
            claim_id, field, spec = model.parse_claim_value(self.text)
        except ValueError as error:
            warn(env, location, str(error))
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        try:
            claim, judgement = _judged(env, claim_id, location, "claim-value: ")
        except ClaimError as error:
            return [_claim_value_node(claim_id, "failed", self.text.strip(), str(error))], []
        state, artifact, reason = judgement
        tooltip = model.plain_math(model.summary_of(claim, judgement)["statement"])
        display, problem = "?", None
        if artifact is None:
            problem = f"claim-value {claim_id}.{field}: claim is {state}: {reason}"
        else:
            result = artifact.get("result") or {}
            try:
                value = model.field_value(result, field)
                display = format_value(value, spec)
            except KeyError as missing:
                problem = (
                    f"claim-value: claim {claim_id} has no result field {missing.args[0]!r} "
                    f"(fields: {', '.join(sorted(result))})"
                )
            except ValueError as error:
                problem = f"claim-value {claim_id}.{field}: {error} (spec {spec!r})"
            else:
                if is_statistical(value):
                    tooltip += f" [{field}: {format_value(value, '.4g')}]"
                if claim_registry.state_fails_build(state):
                    warn(env, location, f"claim {claim_id} is {state}: {reason}")
            state = "failed" if problem and artifact is not None else state
        if problem:
            warn(env, location, problem)
        if state == "refuted":
            tooltip += f" A common account, {ACCOUNT_WORDS}: {model.account_line(claim.refutes)}"
        elif state != "verified":
            tooltip += f" ({state}: {reason})"
        uri = model.relative_uri(env.docname, model.page_path(claim_id))
        node = _claim_value_node(claim_id, state, display, tooltip, refuri=uri)
        node["trainable-claim-cited"] = [field, spec]  # the claim page writes it so too
        mark_statement(node, env, claim_id, "value")
        return [node], []


class SampleRole(SphinxRole):
    """``{claim-state}`verified``` and ``{claim-value-sample}`verified 2.055```: samples."""

    def run(self):
        number = self.name == "claim-value-sample"
        state, display = self.text.strip(), ""
        if number:
            state, _, display = state.rpartition(" ")
        if state not in model.STATE_CLASSES:
            expected = "'<state> <text>'" if number else "'<state>'"
            states = ", ".join(model.STATE_CLASSES)
            problem = f"{self.name} expects {expected} with a state of {states}, got {self.text!r}"
            logger.warning(problem, location=self.get_location())
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        if number:
            return [_claim_value_node("sample", state, display, f"a {state} result")], []
        word = nodes.inline("", model.STATE_WORDS[state], classes=["claim-state"])
        badge = nodes.inline("", "", word, classes=["claim-badge", model.STATE_CLASSES[state]])
        return [drawn(badge)], []


class BookChapterRole(SphinxRole):
    """``{book-chapter}`2``` -- a chapter of the full book, which this edition lacks."""

    def run(self):
        number = self.text.strip()
        if not number.isdigit():
            logger.warning(
                "book-chapter expects a chapter number, got %r",
                number,
                location=self.get_location(),
            )
        explanation = f"Chapter {number} of the full book; it is not part of this edition."
        chapter = nodes.abbreviation(
            "", f"Chapter {number}", explanation=explanation, classes=["book-chapter"]
        )
        return [chapter], []


def _check_glue(app, docname, source) -> None:
    """Warn when a chapter states a result through plain glue."""
    chapter_source = Path(app.srcdir) / f"{docname}.md"
    if not docname.startswith("chapters/") or not chapter_source.is_file():
        return
    try:
        problems = results_pasted_as_glue(chapter_source)
    except ChapterSourceError as error:
        problems = []
        warn(app.env, (docname, None), str(error))
    for name in problems:
        warn(
            app.env,
            (docname, None),
            f"{chapter_source.name} pastes {name!r} with plain glue, but its code does not "
            "glue it with glue_setting(): show a result with {claim-value}`<id>.<field>`, "
            "and glue a setting with glue_setting",
        )


def _card(env, claim_id: str, location) -> nodes.container | None:
    """A claim's card: badge, statement, contract, record link; a refuted claim's account."""
    badge = claim_badge(env, claim_id, location, kind="line")
    if badge is None:
        return None
    claim = claim_registry.load_claim(claim_id)
    statement = nodes.inline("", f" {claim.statement}", classes=["claim-statement"])
    details = nodes.paragraph(classes=["claim-contract"])
    for field in ("seed", "dtype", "device", "estimator"):
        if field in claim.shown_contract:
            value = claim.shown_contract[field]
            details += nodes.inline("", f"{field}: {value}", classes=[f"claim-{field}"])
            details += nodes.inline("", " · ", classes=["claim-sep"])
    if publishable_record(claim_id) is not None:
        uri = model.relative_uri(env.docname, model.record_path(claim_id))
        details += nodes.reference("", "record (JSON)", refuri=uri, classes=["claim-record"])
    else:
        details += nodes.inline("", "no record", classes=["claim-record"])
    line = nodes.paragraph("", "", badge, statement, classes=["claim-line"])
    card = nodes.container("", line, details, classes=["claim-card"])
    if badge["claim-state"] == "refuted":
        account = nodes.Text(f"{model.account_line(claim.refutes)}; {ACCOUNT_WORDS}.")
        lead = nodes.strong("", "A common account: ")
        card += nodes.paragraph("", "", lead, account, classes=["claim-account-refuted"])
    return card


def evidence_block(cards: list[nodes.Node]) -> list[nodes.Node]:
    """A section's claim cards, collapsed under "Evidence" (``<details>`` in HTML)."""
    count = f"{len(cards)} claim{'s' if len(cards) != 1 else ''}"
    opening = (
        '<details class="claim-evidence">\n'
        f'<summary>Evidence <span class="claim-evidence-count">({count})</span></summary>\n'
    )
    return [
        nodes.raw("", opening, format="html"),
        nodes.container("", *cards, classes=["claim-evidence-cards"]),
        nodes.raw("", "</details>\n", format="html"),
    ]


class ClaimLineDirective(SphinxDirective):
    """``claim-line`` -- a claim's card, shown in its section's Evidence block."""

    required_arguments = 1

    def run(self):
        card = _card(self.env, self.arguments[0].strip(), self.get_location())
        return [] if card is None else [card]


def _evidence_place(node) -> tuple[nodes.section | None, bool]:
    """The section whose Evidence block lists ``node``'s claim (a top-level one, else the page's),
    and whether the block goes before its subsections."""
    sections = sections_of(node)
    if not sections:
        return None, False
    if len(sections) >= 2:
        return sections[-2], False
    return sections[0], any(isinstance(child, nodes.section) for child in sections[0])


def gather_evidence(app, doctree) -> None:
    """Move each section's claim cards, and one for each other claim it binds a number to,
    into its collapsed Evidence block."""
    env = app.env
    places: dict[int, tuple] = {}  # id(section) -> (section, before_subsections, cards, ids)
    for node in list(doctree.findall(lambda n: isinstance(n, (claim_value, nodes.container)))):
        if isinstance(node, claim_value) and node["claim"] != "sample":
            claim_id = node["claim"]
        elif isinstance(node, nodes.container) and "claim-card" in node["classes"]:
            claim_id = next(node.findall(nodes.reference))["trainable-claim"]  # its badge
        else:
            continue
        section, before = _evidence_place(node)
        if section is None:
            continue
        _, _, cards, seen = places.setdefault(id(section), (section, before, [], set()))
        if isinstance(node, nodes.container):
            node.parent.remove(node)
        elif claim_id not in seen:
            node = _card(env, claim_id, (env.docname, node.line))
        if node is not None and claim_id not in seen:
            seen.add(claim_id)
            cards.append(node)
    for section, before, cards, _ in places.values():
        if before:
            first = next(i for i, child in enumerate(section) if isinstance(child, nodes.section))
            section[first:first] = evidence_block(cards)
        else:
            section.extend(evidence_block(cards))


def setup(app):
    app.add_role("claim", ClaimRole())
    app.add_role("claim-value", ClaimValueRole())
    app.add_role("claim-value-sample", SampleRole())
    app.add_role("claim-state", SampleRole())
    app.add_role("book-chapter", BookChapterRole())
    app.add_node(claim_value, html=(visit_claim_value_html, None))
    app.add_node(claim_account, html=(visit_account_html, None))
    app.connect("builder-inited", lambda app: cache.reset_for_application())
    setup_places(app)
    app.connect("source-read", _check_glue)
    app.connect("doctree-resolved", _finish_marks)
    app.add_directive("claim-line", ClaimLineDirective)
    app.connect("doctree-read", gather_evidence, priority=400)  # before places are noted
    app.setup_extension("claimbook.extensions.claim_pages")
    # After every other handler: the ledger and the legend are drawn at doctree-resolved.
    app.connect("doctree-resolved", refuse_foreign_marks, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "3"}
