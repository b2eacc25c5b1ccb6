"""What a build says: claim problems and site warnings, one line each, and ``--question``."""

import re
from pathlib import Path

from claimbook import claims, paths
from claimbook.claims.compare import wide_tolerance_problems
from claimbook.claims.record import read_claim_record
from claimbook.errors import ChapterSourceError, ClaimError
from claimbook.pipeline.claim_runs import due_claims
from claimbook.pipeline.keys import ChapterPlan, plan_chapter, read_record
from claimbook.pipeline.site_outcome import read_outcome, site_differences, site_dir, site_key
from claimbook.sources import read_chapter
from claimbook.text import one_line

_CLAIM_WARNING = re.compile(r"claim (\S+) is ")


def claim_problems() -> list[str]:
    """One line per claim, judged now, whose state fails the build (its failed fields) or whose
    registry file is refused, and per statistical field too wide without a reason."""
    problems = []
    for claim_id in claims.list_claims():
        try:
            judgement = claims.judge(claim_id)
        except ClaimError as error:  # a registry file that cannot be read: a problem, kept
            problems.append(f"claim {claim_id}: {one_line(error)}")
            continue
        if not judgement.fails_build:
            problems.extend(wide_tolerances(claim_id, judgement.artifact))
        elif judgement.state == "failed" and judgement.artifact is not None:
            lines = claims.failure_summary(judgement.artifact) or [judgement.reason]
            problems.extend(f"claim {line}" for line in lines)
        else:
            problems.append(f"claim {claim_id} is {judgement.state}: {judgement.reason}")
    return problems


def wide_tolerances(claim_id: str, artifact) -> list[str]:
    """:func:`~claimbook.claims.compare.wide_tolerance_problems` of a statistical claim."""
    if artifact is None or artifact.get("kind") != "statistical":
        return []
    expect = claims.load_claim(claim_id).expect
    return wide_tolerance_problems(claim_id, expect, artifact.get("result") or {})


def unregistered_claims(plans: list[ChapterPlan]) -> list[str]:
    """One line per chapter verifying a claim id ``claims/`` lacks (an unchanged chapter's ids
    from its record, unparsed)."""
    registered = set(claims.list_claims())
    lines = []
    for plan in plans:
        record = read_record(plan.stem) if plan.action == "none" else None
        try:
            ids = record["claims"] if record else read_chapter(plan.source).verified_claims
        except ChapterSourceError:  # reported where the chapter is planned or rendered
            continue
        missing = [claim_id for claim_id in ids if claim_id not in registered]
        if missing:
            lines.append(
                f"{paths.shown(plan.source)}: verifies {', '.join(missing)}, which claims/ does "
                "not hold: add the registry file or correct the id"
            )
    return lines


def refuse_to_execute(plans: list[ChapterPlan], out) -> int:
    """The render-only mode's failure: one line per chapter that would execute, and why."""
    for plan in plans:
        out(f"{paths.shown(plan.source)}: would execute ({plan.reason}); render starts no kernel")
    out(
        f"make: render-only: {len(plans)} chapter(s) have no current outputs here; nothing "
        "was executed or rendered (run `python -m claimbook execute CHAPTER` where the "
        "chapter is built, and bring the files `python -m claimbook outputs CHAPTER` lists)"
    )
    return 1


def answer_question(selected: list[Path], claim_ids: list[str], partial: bool, out) -> int:
    """``build --question``, changing nothing: 0 if the chapters at ``selected``, their claims
    and (unless ``partial``) the site are current and the last build was clean; else say what
    a build would do and return 1."""
    due = due_claims(claim_ids, read_claim_record().artifacts)
    for claim_id, reason in due.items():
        out(f"claim {claim_id}: would be computed ({reason})")
    plans = [plan_chapter(source) for source in selected]
    outcome = read_outcome(note=out)
    changed = [plan for plan in plans if plan.action != "none"]
    for plan in changed:
        out(f"{paths.shown(plan.source)}: would {plan.action} ({plan.reason})")
    unregistered = unregistered_claims(plans)
    for line in unregistered:
        out(line)
    if changed or due or unregistered:
        return 1
    if partial:
        return 0
    if outcome is None or outcome.get("key") != site_key() or not site_dir().is_dir():
        said = "the site would be rendered again"
    elif differences := site_differences(outcome):
        said = f"the site would be published again ({differences})"
    # The stored warnings are covered by the outcome's digest; the claims are judged anew.
    elif outcome["warnings"] or claim_problems():
        said = "the tree is current, but its last build failed (run `make` to see why)"
    else:
        said = "up to date"
    out(said)
    return 0 if said == "up to date" else 1


def final_report(warnings: list[str], problems: list[str], seconds: float, out) -> int:
    """Print the site's ``warnings`` (a repeated one once, with how many more; none that a
    claim named in ``problems`` fails), the ``problems`` and a last line; 1 if any, else 0."""
    if not warnings and not problems:
        out(f"The book is built ({seconds:.1f} s): {site_dir() / 'index.html'}")
        return 0
    failing = {line.split()[1] for line in problems if line.startswith("claim ")}
    places: dict[str, list[str]] = {}
    for line in warnings:
        _where, marker, message = line.partition(" WARNING: ")
        if not marker:
            places.setdefault(line, [line])
        elif not ((found := _CLAIM_WARNING.match(message)) and found[1] in failing):
            places.setdefault(message, []).append(line)
    for first, *more in places.values():
        plural = "s" if len(more) > 1 else ""
        out(first + (f" (and {len(more)} more place{plural})" if more else ""))
    for line in problems:
        out(line)
    out(
        f"make: FAILED in {seconds:.1f} s: {len(places)} site warning(s), "
        f"{len(problems)} claim problem(s); the site shows them: {site_dir() / 'index.html'}"
    )
    return 1
