"""Claims on the page: badges, bound numbers, claim lines, and where each claim is stated.

MyST syntax this extension adds:

- ``{claim}`c15-invariance-001``` -- an inline badge whose colour and word are the claim's
  state (verified, refuted, failed, stale, not run), linking to the claim's page
  ``claims/<id>.html``; hovering shows the statement (and a statistical claim's intervals);
- ``{claim-value}`c15-invariance-001.rms_shift_deviation:.3f``` -- a number the prose states
  as a result, read from the claim's artifact field (dotted for nested fields) and formatted
  with the Python format spec after the colon. For a statistical field,
  ``<field>.mean:.3f`` is the mean, ``<field>.ci:.2f`` the interval ``[lo, hi]`` and a bare
  ``<field>:.2f`` reads "m (95% CI lo to hi)". The number links to the claim's page and
  carries a mark for its state that a reader sees without hovering, a state word for screen
  readers, and the statement on hover and on keyboard focus;
- a ``claim-line`` directive -- "Claim <badge> · seed · dtype · device · estimator · record"
  with the contract read from the registry and a link to the published JSON record;
- ``{claim-state}`stale``` -- a sample badge of one state, for the legend on the landing page;
- ``{book-chapter}`2``` -- a reference to a chapter of the full book that this edition does
  not contain, rendered as text (never a link to a missing page).

Figure artifacts (``{figure-artifact}``) are ``figure_artifacts.py``'s.

The state always comes from ``artifacts/claims/<id>.json`` through
:func:`claimbook.claims.badge_state`; nothing here decides that a claim holds. An
unknown claim id or field, a missing artifact, and any state that
``state_fails_build`` names (failed, stale, not run) is logged as a warning with its location,
which the strict build (``-W``) turns into a failure, while the page still shows the mark.

Where each claim is stated (document, section, anchor) is collected when a page is read and
kept in the build environment; ``claim_pages`` (set up from here) turns it into the claim
pages, the ledger and ``claims.json``. The same module re-checks every claim on every build,
so a failing claim fails every build, not only the one that re-read its page.

A chapter's prose may paste with ``{glue:text}``/``{glue}`` only the names its code glues
through :func:`claimbook.settings.glue_setting` (settings and inputs); a result goes
through ``{claim-value}``. The check reads the chapter source with
:mod:`claimbook.sources` and warns for each result pasted through plain glue.
"""

from __future__ import annotations

import copy
import math
import posixpath
from collections.abc import Mapping
from numbers import Real
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from claimbook import claims as claim_registry
from claimbook import paths
from claimbook.errors import ChapterSourceError, ClaimError, UnknownClaimError
from claimbook.settings import results_pasted_as_glue

logger = logging.getLogger(__name__)

# The site path of a claim's page and of its published JSON record (beside the page).
CLAIM_PAGES = "claims"
STATE_CLASSES = {
    "verified": "claim-verified",
    "refuted": "claim-refuted",
    "failed": "claim-failed",
    "stale": "claim-stale",
    "not run": "claim-not-run",
}
# The mark a bound number carries, so that its state is visible without hovering or colour.
STATE_MARKS = {
    "verified": "\u2713",  # check mark
    "refuted": "\u2260",  # not equal: the measurement contradicts the registered account
    "failed": "\u2717",  # ballot x
    "stale": "~",
    "not run": "?",
}


# --- what the registry and the artifacts say ---------------------------------------------------


def state_fails_build(state: str) -> bool:
    """True for a state the strict build must refuse (the harness decides, when it can)."""
    decide = getattr(claim_registry, "state_fails_build", None)
    if decide is not None:
        return bool(decide(state))
    return state not in ("verified", "refuted")


def _file_stamp(path: Path) -> tuple | None:
    try:
        status = path.lstat()
    except OSError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_mode)


_judged: dict[tuple, tuple[str, dict | None, str]] = {}


def claim_state(claim_id: str) -> tuple[str, dict | None, str]:
    """``(state, artifact or None, reason)``; raises :class:`UnknownClaimError`.

    Reasons name files by absolute path; the page shows them relative to the book. A page
    asks about the same claim many times (once per bound number): the judgement is kept for
    the rest of the build while the registry entry and the artifact are the same files
    (inode, size, modification time); every build starts afresh (:func:`_forget_states`).
    """
    stamp = (
        claim_id,
        _file_stamp(paths.CLAIMS_DIR / f"{claim_id}.yaml"),
        _file_stamp(paths.CLAIM_ARTIFACTS_DIR / f"{claim_id}.json"),
    )
    if stamp not in _judged:
        state, artifact, reason = claim_registry.badge_state(claim_id)
        if state not in STATE_CLASSES:
            state, reason = "failed", f"unrecognized state {state!r}: {reason}"
        _judged[stamp] = (state, artifact, reason.replace(f"{paths.REPO_ROOT}/", ""))
    state, artifact, reason = _judged[stamp]
    return state, copy.deepcopy(artifact), reason


def _forget_states(app) -> None:
    """Judge every claim afresh in each build (the harness files may have changed since)."""
    _judged.clear()


def at_each_build(app, forget) -> None:
    """Call ``forget(app)`` when ``app`` is made and when each of its builds starts reading.

    For state an extension keeps for one build only.
    """
    app.connect("builder-inited", forget)
    app.connect("env-before-read-docs", lambda app, env, docnames: forget(app))


def load_entry(claim_id: str):
    """The registry entry (raises :class:`UnknownClaimError` for an unknown id)."""
    return claim_registry.load_claim(claim_id)


def statement_of(claim_id: str, artifact: Mapping | None) -> str:
    if artifact and isinstance(artifact.get("statement"), str):
        return artifact["statement"]
    return load_entry(claim_id).statement


def _format_number(value, spec: str) -> str:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{value!r} is not a number")
    return format(value, spec)


def is_statistical(value) -> bool:
    return isinstance(value, Mapping) and "mean" in value and "ci" in value


def _level_percent(level) -> str:
    if not isinstance(level, Real):
        return "95%"
    return f"{level * 100 if level <= 1 else level:g}%"


def format_value(value, spec: str = "") -> str:
    """Page text of a result field: a number, an interval ``[lo, hi]``, or a statistical
    field's "m (95% CI lo to hi)"; ``spec`` is a Python format spec applied to each number.

    Raises
    ------
    ValueError
        If the value is none of these, or ``spec`` does not apply to it.

    Examples
    --------
    >>> format_value(2.0553, ".3f")
    '2.055'
    >>> format_value([0.1, 0.25], ".2f")
    '[0.10, 0.25]'
    >>> format_value({"mean": 1.0, "ci": [0.9, 1.1], "level": 0.95}, ".2f")
    '1.00 (95% CI 0.90 to 1.10)'
    >>> format_value(True)
    'true'
    """
    if is_statistical(value):
        low, high = value["ci"]
        return (
            f"{_format_number(value['mean'], spec)} ({_level_percent(value.get('level'))} CI "
            f"{_format_number(low, spec)} to {_format_number(high, spec)})"
        )
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return f"[{_format_number(value[0], spec)}, {_format_number(value[1], spec)}]"
    if isinstance(value, bool) and not spec:
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value) and not spec:
        return str(value)
    return _format_number(value, spec)


def field_value(result: Mapping, field: str):
    """The value at dotted ``field`` of a result; raises KeyError naming the missing part.

    A result may nest fields (``{"a": {"b": 1}}``) or key them by their dotted name, as a
    statistical claim's record does (``{"a.b": {"mean": ..., "ci": ...}}``): at each level
    the longest dotted key present wins, so ``a.b.ci`` reaches the interval either way.
    """
    parts = field.split(".")
    value, index = result, 0
    while index < len(parts):
        if not isinstance(value, Mapping):
            raise KeyError(".".join(parts[: index + 1]))
        for end in range(len(parts), index, -1):
            key = ".".join(parts[index:end])
            if key in value:
                value, index = value[key], end
                break
        else:
            raise KeyError(".".join(parts[: index + 1]))
    return value


def badge_summary(claim_id: str, artifact: Mapping | None) -> str:
    """Hover text: the statement, with a statistical claim's intervals."""
    summarize = getattr(claim_registry, "badge_summary", None)
    if summarize is not None and artifact is not None:
        return summarize(artifact)
    text = statement_of(claim_id, artifact)
    intervals = [
        f"{name}: {format_value(value, '.4g')}"
        for name, value in sorted(((artifact or {}).get("result") or {}).items())
        if is_statistical(value)
    ]
    return text + ("" if not intervals else " [" + "; ".join(intervals) + "]")


def claim_page_uri(docname: str, claim_id: str) -> str:
    return relative_uri(docname, f"{CLAIM_PAGES}/{claim_id}.html")


def relative_uri(docname: str, target: str) -> str:
    """URI of a site-root-relative ``target`` as seen from page ``docname``."""
    return posixpath.relpath(target, posixpath.dirname(docname) or ".")


def artifact_is_publishable(claim_id: str) -> bool:
    """True when the artifact is a regular file (not a symlink) inside a real directory."""
    path = paths.CLAIM_ARTIFACTS_DIR / f"{claim_id}.json"
    return path.is_file() and not any(
        part.is_symlink() for part in (path, path.parent, path.parent.parent)
    )


# --- nodes -----------------------------------------------------------------------------------


class claim_value(nodes.Inline, nodes.TextElement):
    """A number bound to a claim field; rendered by :func:`visit_claim_value_html`."""


def visit_claim_value_html(self, node) -> None:
    state = node["state"]
    attributes = {
        "title": node["tooltip"],
        "data-claim": node["claim"],
        "data-claim-state": state,
    }
    tag = "a" if node.get("refuri") else "span"
    if tag == "a":
        attributes["href"] = node["refuri"]
    else:
        attributes["tabindex"] = "0"  # focusable, so the statement shows on keyboard focus
    self.body.append(self.starttag(node, tag, "", **attributes))
    self.body.append(f'<span class="claim-number">{self.encode(node["display"])}</span>')
    self.body.append(
        f'<span class="claim-mark" aria-hidden="true">{STATE_MARKS.get(state, "?")}</span>'
    )
    self.body.append(
        f'<span class="claim-sr"> (claim {self.encode(node["claim"])}: {state})</span>'
    )
    self.body.append(f"</{tag}>")
    raise nodes.SkipNode


def _plain_claim_values(app, doctree, _docname) -> None:
    """Builders other than HTML show a bound number as text with its state in brackets."""
    if app.builder.format == "html":
        return
    for node in list(doctree.findall(claim_value)):
        node.replace_self(nodes.Text(f"{node['display']} [{node['state']}]"))


# --- roles and directives --------------------------------------------------------------------


def _note_claim_dependencies(env, claim_id: str) -> None:
    for dependency in (
        paths.CLAIMS_DIR / f"{claim_id}.yaml",
        paths.CLAIM_ARTIFACTS_DIR / f"{claim_id}.json",
    ):
        if dependency.exists():
            env.note_dependency(str(dependency))


def _remember_problem(env, location, message: str) -> None:
    """Keep a page's warning in the environment, so an unchanged page repeats it next build."""
    problems = env.domaindata.setdefault("trainable_claims", {}).setdefault("problems", {})
    problems.setdefault(env.docname, []).append((message, _line_of(location)))


def _line_of(location) -> int | None:
    if isinstance(location, tuple) and len(location) == 2:
        return location[1]
    return None


def _warn(env, location, message: str) -> None:
    logger.warning(message, location=location)
    _remember_problem(env, location, message)


def _problem_word(error: ClaimError) -> str:
    return "unknown claim" if isinstance(error, UnknownClaimError) else "claim registry"


def _mark_reference(node, env, claim_id: str, kind: str) -> None:
    """Give ``node`` an anchor and note it as a place that states ``claim_id``."""
    serial = env.new_serialno("trainable-claim")
    node["ids"].append(f"claim-{claim_id}-{serial}")
    node["trainable-claim"] = claim_id
    node["trainable-claim-kind"] = kind


def _badge(env, claim_id: str, location, *, kind: str = "badge") -> nodes.reference | None:
    """Build the badge node for ``claim_id``, warning when it is unknown or fails the build."""
    try:
        state, artifact, reason = claim_state(claim_id)
    except ClaimError as error:
        _warn(env, location, f"{_problem_word(error)}: {error}")
        return None
    _note_claim_dependencies(env, claim_id)
    if state_fails_build(state):
        _warn(env, location, f"claim {claim_id} is {state}: {reason}")
    tooltip = badge_summary(claim_id, artifact)
    if state != "verified":
        tooltip += f" ({state}: {reason})"
    badge = nodes.reference(
        "",
        "",
        nodes.inline("", claim_id, classes=["claim-id"]),
        nodes.inline("", state, classes=["claim-state"]),
        refuri=claim_page_uri(env.docname, claim_id),
        classes=["claim-badge", STATE_CLASSES[state]],
        reftitle=tooltip,
    )
    badge["claim-state"] = state
    _mark_reference(badge, env, claim_id, kind)
    return badge


class ClaimRole(SphinxRole):
    """``{claim}`id``` -- the inline badge of one claim."""

    def run(self):
        badge = _badge(self.env, self.text.strip(), self.get_location())
        if badge is None:
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        return [badge], []


def parse_claim_value(text: str) -> tuple[str, str, str]:
    """``"<id>.<field>[:spec]"`` -> ``(id, field, spec)``; raises ValueError if malformed.

    Examples
    --------
    >>> parse_claim_value("c15-invariance-001.rms_shift_deviation:.3f")
    ('c15-invariance-001', 'rms_shift_deviation', '.3f')
    >>> parse_claim_value("c16-x-001.gap.ci")
    ('c16-x-001', 'gap.ci', '')
    """
    reference, _, spec = text.strip().partition(":")
    claim_id, _, field = reference.partition(".")
    if not claim_id or not field or any(not part for part in field.split(".")):
        raise ValueError(f"claim-value expects <claim-id>.<field>[:format], got {text.strip()!r}")
    return claim_id, field, spec


class ClaimValueRole(SphinxRole):
    """``{claim-value}`id.field:spec``` -- a result field read from the claim's artifact."""

    def run(self):
        env, location = self.env, self.get_location()
        try:
            claim_id, field, spec = parse_claim_value(self.text)
        except ValueError as error:
            _warn(env, location, str(error))
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        try:
            state, artifact, reason = claim_state(claim_id)
        except ClaimError as error:
            _warn(env, location, f"claim-value: {_problem_word(error)}: {error}")
            node = claim_value(
                "", claim=claim_id, state="failed", display=self.text.strip(), tooltip=str(error)
            )
            node["classes"] += ["claim-value", STATE_CLASSES["failed"]]
            return [node], []
        _note_claim_dependencies(env, claim_id)
        tooltip = statement_of(claim_id, artifact)
        display = "?"
        if artifact is None:
            _warn(env, location, f"claim-value {claim_id}.{field}: claim is {state}: {reason}")
        else:
            try:
                value = field_value(artifact.get("result") or {}, field)
                display = format_value(value, spec)
                if is_statistical(value):
                    tooltip += f" [{field}: {format_value(value, '.4g')}]"
            except KeyError as missing:
                _warn(
                    env,
                    location,
                    f"claim-value: claim {claim_id} has no result field {missing.args[0]!r} "
                    f"(fields: {', '.join(sorted(artifact.get('result') or {}))})",
                )
                state = "failed"
            except ValueError as error:
                _warn(env, location, f"claim-value {claim_id}.{field}: {error} (spec {spec!r})")
                state = "failed"
            else:
                if state_fails_build(state):
                    _warn(env, location, f"claim {claim_id} is {state}: {reason}")
        if state != "verified":
            tooltip += f" ({state}: {reason})"
        node = claim_value(
            "",
            claim=claim_id,
            state=state,
            display=display,
            tooltip=tooltip,
            refuri=claim_page_uri(env.docname, claim_id),
        )
        node["classes"] += ["claim-value", STATE_CLASSES[state]]
        _mark_reference(node, env, claim_id, "value")
        return [node], []


class ClaimLineDirective(SphinxDirective):
    """The claim line: badge, seed, dtype, device, estimator and a link to the JSON record."""

    required_arguments = 1
    has_content = False

    def run(self):
        claim_id = self.arguments[0].strip()
        location = self.get_location()
        badge = _badge(self.env, claim_id, location, kind="line")
        if badge is None:
            return []
        contract = claim_registry.display_contract(claim_id)
        line = nodes.paragraph(classes=["claim-line"])
        line += nodes.strong("", "Claim ")
        line += badge
        for field in ("seed", "dtype", "device", "estimator"):
            if field not in contract:
                continue
            line += nodes.inline("", " · ", classes=["claim-sep"])
            line += nodes.inline("", f"{field}: {contract[field]}", classes=[f"claim-{field}"])
        line += nodes.inline("", " · ", classes=["claim-sep"])
        if artifact_is_publishable(claim_id):
            line += nodes.reference(
                "",
                "record (JSON)",
                refuri=relative_uri(self.env.docname, f"{CLAIM_PAGES}/{claim_id}.json"),
                classes=["claim-record"],
            )
        else:
            line += nodes.inline("", "no record", classes=["claim-record"])
        return [line]


class ClaimStateRole(SphinxRole):
    """``{claim-state}`verified``` -- a sample badge for a state, as the legend shows it."""

    def run(self):
        state = self.text.strip()
        if state not in STATE_CLASSES:
            logger.warning(
                "claim-state expects one of %s, got %r",
                ", ".join(STATE_CLASSES),
                state,
                location=self.get_location(),
            )
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        badge = nodes.inline(
            "",
            "",
            nodes.inline("", state, classes=["claim-state"]),
            classes=["claim-badge", STATE_CLASSES[state]],
        )
        return [badge], []


class ClaimValueSampleRole(SphinxRole):
    """``{claim-value-sample}`verified 2.055``` -- how a bound number looks in a state."""

    def run(self):
        state, _, display = self.text.strip().rpartition(" ")
        if state not in STATE_CLASSES:
            logger.warning(
                "claim-value-sample expects '<state> <text>' with a state of %s, got %r",
                ", ".join(STATE_CLASSES),
                self.text,
                location=self.get_location(),
            )
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        node = claim_value(
            "", claim="sample", state=state, display=display, tooltip=f"a {state} result"
        )
        node["classes"] += ["claim-value", STATE_CLASSES[state]]
        return [node], []


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
        return [
            nodes.abbreviation(
                "",
                f"Chapter {number}",
                explanation=f"Chapter {number} of the full book; it is not part of this edition.",
                classes=["book-chapter"],
            )
        ], []


# --- where each claim is stated --------------------------------------------------------------


def _claims_data(env) -> dict:
    data = env.domaindata.setdefault("trainable_claims", {})
    data.setdefault("references", {})
    data.setdefault("problems", {})
    return data


def _collect_references(app, doctree) -> None:
    """Record, for each claim, the sections of this page that state it (with anchors)."""
    env = app.env
    found = []
    for node in doctree.findall(nodes.Element):
        claim_id = node.get("trainable-claim")
        if not claim_id:
            continue
        section = node.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        found.append(
            {
                "claim": claim_id,
                "kind": node.get("trainable-claim-kind", "badge"),
                "anchor": node["ids"][0],
                "section_id": section["ids"][0] if section is not None and section["ids"] else "",
                "section": section[0].astext() if section is not None else "",
                "line": node.line,
            }
        )
    _claims_data(env)["references"][env.docname] = found


def _purge(app, env, docname) -> None:
    data = _claims_data(env)
    data["references"].pop(docname, None)
    data["problems"].pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    data, theirs = _claims_data(env), _claims_data(other)
    for key in ("references", "problems"):
        for docname in docnames:
            if docname in theirs[key]:
                data[key][docname] = theirs[key][docname]


def references(env) -> dict[str, list[dict]]:
    """Claim id -> the places that state it: dicts with docname, section, anchor, kind."""
    by_claim: dict[str, list[dict]] = {}
    for docname, found in sorted(_claims_data(env)["references"].items()):
        for place in found:
            by_claim.setdefault(place["claim"], []).append({"docname": docname, **place})
    return by_claim


def _remember_read(app, env, docnames) -> None:
    app._trainable_docs_read = set(docnames)


def repeat_problems(app) -> None:
    """Warn again for pages this build did not re-read, so strictness outlives one build."""
    read = getattr(app, "_trainable_docs_read", set())
    for docname, problems in sorted(_claims_data(app.env)["problems"].items()):
        if docname in read:
            continue
        for message, line in problems:
            logger.warning(message, location=(docname, line))


# --- settings against results in a chapter's prose ------------------------------------------


def _check_glue(app, docname, source) -> None:
    """Warn when a chapter states a result through plain glue (see
    :func:`claimbook.settings.results_pasted_as_glue`)."""
    if not docname.startswith("chapters/"):
        return
    chapter_source = Path(app.srcdir) / f"{docname}.md"
    if not chapter_source.is_file():
        return
    try:
        problems = results_pasted_as_glue(chapter_source)
    except ChapterSourceError as error:
        _warn(app.env, (docname, None), str(error))
        return
    for name in problems:
        _warn(
            app.env,
            (docname, None),
            f"{chapter_source.name} pastes {name!r} with plain glue, but its code does not "
            "glue it with glue_setting(): show a result with {claim-value}`<id>.<field>`, "
            "and glue a setting with glue_setting",
        )


def setup(app):
    app.add_role("claim", ClaimRole())
    app.add_role("claim-value", ClaimValueRole())
    app.add_role("claim-value-sample", ClaimValueSampleRole())
    app.add_role("book-chapter", BookChapterRole())
    app.add_role("claim-state", ClaimStateRole())
    app.add_directive("claim-line", ClaimLineDirective)
    app.add_node(claim_value, html=(visit_claim_value_html, None))
    at_each_build(app, _forget_states)
    app.connect("env-before-read-docs", _remember_read)
    app.connect("source-read", _check_glue)
    app.connect("doctree-read", _collect_references)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _plain_claim_values)
    app.setup_extension("claimbook.extensions.claim_pages")
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "2"}
