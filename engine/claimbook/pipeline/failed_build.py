"""After a failed build, the site kept in ``_build/html`` says so on every page.

Each page gets a banner and each claim mark the state judged now; the pages then differ from
the site's record, so the next build publishes again.
"""

import functools
import json
import re
from datetime import UTC, datetime
from html import escape
from pathlib import Path

from claimbook import claims, paths
from claimbook.atomic import write_text_atomically
from claimbook.failures import failure_line
from claimbook.text import one_line

BANNER_ID = "claimbook-failed-build"
_END = f"<!-- /{BANNER_ID} -->"
_OLD_BANNER = re.compile(rf'<div[^>]*\bid="{BANNER_ID}"[^>]*>.*?{re.escape(_END)}\n?', re.S)
_TOPS = (re.compile(r"<main\b[^>]*>", re.I), re.compile(r"<body\b[^>]*>", re.I))
_MARKED = re.compile(r"claim-badge|claim-value|claim-legend|claim-meaning|claim-account")
# White on dark red (10:1), whatever the theme; wraps at any width.
_STYLE = (
    "margin:0 0 1rem 0;padding:0.75rem 1rem;background:#8b0000;color:#ffffff;"
    "border:2px solid #ffffff;outline:2px solid #8b0000;border-radius:4px;font-size:1rem;"
    "line-height:1.5;overflow-wrap:anywhere;text-align:left"
)
REASON_LIMIT = 400  # characters of the reason a banner shows
# The lines that say why, in the order a reader needs them: a chapter that failed, a claim id
# the registry lacks or a chapter a render-only build would execute, a claim, a Sphinx warning.
_CAUSES = (
    re.compile(r"^(?!make:)\S+: FAILED after "),
    re.compile(r"which claims/ does not hold|render starts no kernel"),
    re.compile(r"^claim (?!\S+: computing \()"),
    re.compile(r"\b(WARNING|ERROR|CRITICAL):"),
)


def failure_reason(lines: list[str], error: BaseException | None = None) -> str:
    """Why a build failed, in one line, from the lines it printed (and what it raised).

    >>> failure_reason(["claim a: computing (stale)", "claim a x: expected 1, got 2", "make: 1"])
    'claim a x: expected 1, got 2'
    >>> failure_reason(["a.md: FAILED after 1.0 s: boom", "b.md: FAILED after 2.0 s: bang"])
    'a.md: FAILED after 1.0 s: boom (and 1 more)'
    >>> failure_reason([], KeyboardInterrupt())
    'the build was interrupted'
    """
    if isinstance(error, KeyboardInterrupt):
        return "the build was interrupted"
    if error is not None:
        return one_line(failure_line(error, "building the book").removeprefix("make: "))
    found = list(dict.fromkeys(line.strip() for c in _CAUSES for line in lines if c.search(line)))
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return one_line(found[0], REASON_LIMIT - len(more)) + more
    summary = [line.removeprefix("make: ") for line in lines if line.startswith("make: ")]
    if summary:
        return one_line(summary[-1], REASON_LIMIT)
    return "the build stopped without a reason it could name"


def _utc(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@functools.cache
def _judged(claim_id: str) -> tuple[str, str]:
    try:
        state, _artifact, reason = claims.judge(claim_id)
    except Exception as error:  # a failure path: whatever it is, not verified
        return "failed", one_line(error, REASON_LIMIT)
    return state, reason


def mark_failed_build(reason: str, note=None, now: datetime | None = None) -> int:
    """Put the banner ("This site is from the build of <UTC>. The latest build, at <UTC>,
    failed: <reason>") on every page of the kept site, replacing an earlier one, and in
    ``OUTDATED.txt``; show each claim mark and ``claims.json`` entry as judged now. Return the
    number of pages marked; never raises (what fails is said through ``note``)."""
    site = paths.BUILD_DIR / "html"
    if not site.is_dir():
        return 0
    note = note or (lambda line: None)
    _judged.cache_clear()
    try:
        # The site's pages: not the theme's templates or the sources under ``_*``.
        pages = sorted(
            page
            for page in site.rglob("*.html")
            if not any(part.startswith("_") for part in page.relative_to(site).parts[:-1])
            and page.is_file()
            and not page.is_symlink()
        )
        outcome = paths.BUILD_DIR / "site.json"  # written as the kept site was published
        built = _utc(outcome.stat().st_mtime) if outcome.is_file() else "an unknown time"
        said = f"This site is from the build of {built}."
        failed = f"The latest build, at {_utc((now or datetime.now(UTC)).timestamp())}, failed: "
        reason = one_line(reason, REASON_LIMIT)
        banner = (
            f'<div id="{BANNER_ID}" class="claimbook-failed-build" role="alert" style="{_STYLE}">'
            f'<p style="margin:0;color:#ffffff"><strong>{escape(said)}</strong> '
            f"{escape(failed + reason)}</p></div>{_END}\n"
        )
        marked = 0
        for page in pages:
            try:
                html = _OLD_BANNER.sub("", page.read_text(encoding="utf-8"))
                html = _rewrite_marks(html) if _MARKED.search(html) else html
                top = next(filter(None, (top.search(html) for top in _TOPS)), None)
                if top is None:  # a page without a body (the root's redirect): after it
                    html = html.rstrip("\n") + "\n" + banner
                else:
                    html = html[: top.end()] + "\n" + banner + html[top.end() :]
                write_text_atomically(page, html)
                marked += 1
            except (OSError, UnicodeDecodeError, ValueError) as error:
                note(f"site: {paths.shown(page)} could not be marked: {one_line(error)}")
        _rewrite_ledger(site / "claims.json", note)
        outdated = site / "OUTDATED.txt"  # what a build that started said there: kept after
        kept = outdated.read_text(errors="replace").splitlines() if outdated.is_file() else []
        kept = [text for text in kept if not text.startswith("This site is from the build of")]
        write_text_atomically(outdated, "\n".join([f"{said} {failed}{reason}", *kept]) + "\n")
        return marked
    except Exception as error:  # reported; the build's own failure stands
        note(f"site: the kept site could not be marked as failed: {one_line(error)}")
        return 0


def _rewrite_ledger(path: Path, note) -> None:
    """``claims.json`` with each entry's state and reason as judged now."""
    try:
        ledger = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    except (OSError, ValueError) as error:
        note(f"site: {paths.shown(path)} could not be read: {one_line(error)}")
        return
    entries = ledger.get("claims") if isinstance(ledger, dict) else None
    changed = False
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            state, reason = _judged(entry["id"])
            if entry.get("state") != state:
                entry["state"], entry["reason"] = state, reason
                changed = True
    if changed:
        text = json.dumps(ledger, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        write_text_atomically(path, text)


def _rewrite_marks(html: str) -> str:
    """``html`` with each claim mark showing another state than the one judged now rewritten
    to it: badges, bound numbers, common accounts, the legend, a claim page's meaning and lead."""
    # Imported only when a build failed with a site to mark (the one path that parses HTML).
    from bs4 import BeautifulSoup

    from claimbook.extensions import claim_pages_model as model
    from claimbook.extensions.claim_nodes import ACCOUNT_WORDS, legend_parts, number_said

    soup = BeautifulSoup(html, "html.parser")
    by_class = {name: state for state, name in model.STATE_CLASSES.items()}
    changed = False

    def restate(node, css: str, title: str, state: str, reason: str) -> None:
        nonlocal changed
        node["class"] = [name for name in node.get("class", []) if name not in by_class] + [css]
        node["title"] = f"{title} (now {state}: {reason})".strip()
        changed = True

    for badge in soup.select(".claim-badge"):
        shown_id = badge.select_one(".claim-id")
        if shown_id is None:  # a sample badge of the landing page's legend
            continue
        state, reason = _judged(shown_id.get_text())
        if [by_class[name] for name in badge.get("class", []) if name in by_class] == [state]:
            continue
        restate(badge, model.STATE_CLASSES[state], badge.get("title", ""), state, reason)
        if (word := badge.select_one(".claim-state")) is not None:
            word.string = model.STATE_WORDS[state]
        meaning = badge.find_parent(class_="claim-page-state")
        meaning = meaning.find_next_sibling(class_="claim-meaning") if meaning else None
        if meaning is not None:
            lead, sentence = model.state_meaning(state, reason)
            meaning.clear()
            meaning.append(soup.new_tag("strong", string=lead))
            meaning.append(sentence)
    # Unless its claim is refuted, a common account's mark becomes the claim's badge, an
    # Evidence card drops its account line and a claim page's lead names the state.
    for account in soup.select("a.claim-account[data-claim]"):
        claim_id = account["data-claim"]
        state, reason = _judged(claim_id)
        if state != "refuted":
            title = f"{account.get('title', '')} (now {state}: {reason})".strip()
            badge = BeautifulSoup(
                f'<a class="claim-badge {model.STATE_CLASSES[state]}" '
                f'href="{escape(account.get("href", ""))}" title="{escape(title)}">'
                f'<span class="claim-id">{escape(claim_id)}</span> '
                f'<span class="claim-state">{model.STATE_WORDS[state]}</span></a>',
                "html.parser",
            ).a
            account.replace_with(badge)
            changed = True
    for line in soup.select(".claim-card .claim-account-refuted"):
        shown_id = line.find_parent(class_="claim-card").select_one(".claim-id")
        if shown_id is not None and _judged(shown_id.get_text())[0] != "refuted":
            line.decompose()
            changed = True
    lead = soup.select_one(".claim-measurement-lead")
    shown_id = soup.select_one(".claim-page-state .claim-id")
    if lead is not None and shown_id is not None:
        said = model.measurement_lead(_judged(shown_id.get_text())[0])
        if lead.get_text() != said:
            lead.string = said
            changed = True
    numbers = [
        node for node in soup.select(".claim-value[data-claim]") if node["data-claim"] != "sample"
    ]
    for number in numbers:
        state, reason = _judged(number["data-claim"])
        if number.get("data-claim-state") == state:
            continue
        # Its hover said the account was contradicted, which only a refuted claim's is.
        title = number.get("title", "").split(f" A common account, {ACCOUNT_WORDS}")[0]
        number["data-claim-state"] = state
        restate(number, model.NUMBER_CLASSES[state], title, state, reason)
        if (mark := number.select_one(".claim-mark")) is not None:
            mark.string = model.STATE_MARKS[state]
        if (said := number.select_one(".claim-sr")) is not None:
            said.string = number_said(state)
    legend = soup.select_one("p.claim-legend")
    if changed and legend is not None and numbers:
        link = legend.find("a")
        legend.clear()
        states = [number["data-claim-state"] for number in numbers]
        for part in legend_parts(states, soup.select_one(".claim-account") is not None):
            if isinstance(part, tuple):
                mark, css = part
                part = soup.new_tag("span", attrs={"class": ["claim-legend-mark", css]})
                part.string = mark
            legend.append(part)
        if link is not None:
            legend.append(link)
    return str(soup) if changed else html
