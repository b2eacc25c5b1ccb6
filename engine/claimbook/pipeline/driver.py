"""The build that ``make`` runs: ``python -m claimbook build``, and its sibling commands.

``build``, ``execute CHAPTER``, ``render``, ``outputs CHAPTER`` and ``chapters``
(docs/engine.md; the last four spread a build over machines). ``build``, ``execute`` and
``render`` refuse an environment other than the book's (:func:`.checkout.check_environment`)
unless ``--allow-environment-mismatch``. Exit status: 0 built and every claim holds; 1 a
chapter, a claim or the site failed; 2 a bad claim id, registry file, path or environment, or
a filesystem problem; 3 another build holds the lock. Every failure is one line
(:mod:`claimbook.failures`)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from claimbook import cache, claims, environment, paths
from claimbook.dependencies import one_reading
from claimbook.errors import BuildError, ChapterSourceError
from claimbook.failures import DOING, report
from claimbook.pipeline import sandbox
from claimbook.pipeline.build_report import (
    answer_question,
    claim_problems,
    final_report,
    refuse_to_execute,
    unregistered_claims,
)
from claimbook.pipeline.checkout import check_checkout, check_environment
from claimbook.pipeline.claim_runs import ClaimComputation
from claimbook.pipeline.execute import execute_chapters, reassemble_chapter
from claimbook.pipeline.failed_build import failure_reason, mark_failed_build
from claimbook.pipeline.guard import ChapterGuard
from claimbook.pipeline.keys import ChapterPlan, plan_chapter, read_record, record_path
from claimbook.pipeline.limits import (
    BuildTimeout,
    end_everything,
    read_limits,
    stopped_line,
    stops,
)
from claimbook.pipeline.lock import build_lock
from claimbook.pipeline.noop import forget_clean_build, record_clean_build
from claimbook.pipeline.render import SiteRender
from claimbook.pipeline.site_outcome import (
    judged_states,
    mark_outdated,
    pages_digest,
    publish,
    read_outcome,
    site_differences,
    site_dir,
    site_key,
    write_outcome,
)
from claimbook.sources import chapter_sources, read_chapter


def _selected_sources(only: list[str] | None) -> list:
    sources = chapter_sources()
    if not only:
        return sources
    stems = [source.stem for source in sources]
    unknown = [name for name in only if name not in stems]
    if unknown:
        raise ChapterSourceError(
            f"no chapter named {', '.join(unknown)} in _toc.yml (chapters: {', '.join(stems)})"
        )
    return [source for source in sources if source.stem in only]


def build(
    jobs: int | None = None,
    question: bool = False,
    out=print,
    only: list[str] | None = None,
    render_site: bool = True,
    kernels: bool = True,
    foreign_environment: bool = False,
) -> int:
    """Bring the site up to date; return the exit status (see the module doc).

    ``only`` limits the build to those chapter stems; ``render_site=False`` stops after
    execution; ``kernels=False`` renders only (a chapter that would execute fails the build
    before anything is written); ``foreign_environment`` leaves no record of a clean build.
    """
    started = time.perf_counter()
    printed: list[str] = []  # what a failing build's banner gives as the reason

    def noted(line: str) -> None:
        printed.append(line)
        out(line)

    with cache.one_build():
        try:
            status = _build(
                started, jobs, question, noted, only, render_site, kernels, foreign_environment
            )
        except BaseException as error:  # interrupted too: the kept site says it failed
            if not question:
                mark_failed_build(failure_reason(printed, error), out)
            raise
        if status and not question:  # every failing exit: a banner on every kept page
            mark_failed_build(failure_reason(printed), out)
        return status


def _build(started, jobs, question, out, only, render_site, kernels, foreign_environment) -> int:
    selected = _selected_sources(only)
    claim_ids = _claims_of(selected) if only else claims.list_claims()
    if question:
        return answer_question(selected, claim_ids, bool(only), out)
    paths.refuse_linked_folders()
    whole = not only and render_site
    if whole:  # only a whole build that ends clean leaves the record (.noop)
        forget_clean_build()
    computation = None
    try:
        with one_reading():  # the plan's keys: of the modules as they are now
            plans = [plan_chapter(source) for source in selected]
            computation = ClaimComputation(claim_ids, jobs=jobs, report=out) if kernels else None
        status = _build_with(computation, plans, jobs, out, render_site, kernels, started)
    finally:
        if computation is not None:
            computation.stop()
    if whole:  # a record a chapter's cell may have written meanwhile is never kept
        clean = status == 0 and not foreign_environment
        record_clean_build() if clean else forget_clean_build()
    return status


def _build_with(computation, plans, jobs, out, render_site, kernels, started) -> int:
    """The part of :func:`build` after the claims due started."""
    plans = [_with_due_claims(plan, computation) for plan in plans]
    unregistered = unregistered_claims(plans)
    if unregistered:  # checked on every build: a cell that caught the error changes nothing
        for line in unregistered:
            out(line)
        out(f"make: FAILED: {len(unregistered)} chapter(s) verify a claim the registry lacks")
        return 1
    pending = [plan for plan in plans if plan.execute]
    if not kernels and pending:
        return refuse_to_execute(pending, out)
    for plan in plans:
        if plan.action == "reassemble":
            if reassemble_chapter(plan.source):
                out(f"{paths.shown(plan.source)}: reassembled ({plan.reason})")
            else:
                pending.append(
                    ChapterPlan(plan.stem, plan.source, "execute", "code cells do not match")
                )
    if not kernels and pending:
        return refuse_to_execute(pending, out)
    if pending:
        mark_outdated(f"{len(pending)} chapter(s) to execute")
    for plan in pending:
        out(f"{paths.shown(plan.source)}: executing ({plan.reason})")
    outcome = read_outcome(note=out)
    same_pages = outcome is not None and outcome.get("pages") == pages_digest()
    # Pages added or removed: every page is read again, from a new environment.
    fresh = outcome is None or bool(outcome.get("warnings")) or not same_pages

    if pending and (line := sandbox.notice()) is not None:
        out(line)
    running_stems = {plan.stem for plan in pending}
    guard = ChapterGuard(computation, [plan for plan in plans if plan.stem not in running_stems])
    runs = execute_chapters(
        [plan.source for plan in pending],
        jobs=jobs,
        report=out,
        environment=guard.environment,
        inspect=guard.inspect,
    )
    if computation is not None:
        computation.finish()
    if pending:
        out(f"claims: their artifacts checked after each chapter in {guard.seconds * 1000:.0f} ms")
    failed = [run for run in runs if not run.ok]
    if failed:
        out(
            "make: the site was not rendered; the previous one (if any) is kept and marked "
            f"outdated in {paths.shown(site_dir())}/OUTDATED.txt"
        )
        return 1
    if not render_site:
        out(f"executed {len(pending)} chapter(s) in {time.perf_counter() - started:.1f} s")
        return 0
    key = site_key()
    current = outcome is not None and outcome["key"] == key
    differences = site_differences(outcome) if current else None
    published = None
    if current and differences is None:
        warnings = list(outcome["warnings"])
        out("site: unchanged since the last render")
    else:
        if differences is not None:
            out(f"site: {differences}; it is published again")
        mark_outdated("the site is being rendered")
        out("site: rendering" + (" (every page re-read)" if fresh else ""))
        rendering = time.perf_counter()
        site = SiteRender(fresh, reuse_pages=same_pages, published=outcome)
        with one_reading():  # the chapters and claims have ended: the modules are final
            rendered, warnings = site.run()
            published = (publish(rendered), site.sources, judged_states())
        out(
            f"site: rendered and published in {time.perf_counter() - rendering:.1f} s "
            f"({len(site.written)} of {len(site.sources)} pages written)"
        )
    # The guard once more, over the render and the publication too.
    changed = guard.final_check()
    if changed:
        out(
            "make: files only the build writes changed before the build ended: "
            f"{'; '.join(changed[:5])}; put back as the build computed them"
        )
        return 1
    # Judged again by every build, from the registry and the artifacts: the stored outcome
    # is never read back as the claims' state.
    with one_reading():
        problems = claim_problems()
    if published is not None:
        write_outcome(key, warnings, problems, *published)
    return final_report(warnings, problems, time.perf_counter() - started, out)


def _claims_of(sources: list[Path]) -> list[str]:
    """The claims the chapters at ``sources`` verify, in order, once each."""
    found: dict[str, None] = {}
    for source in sources:
        found.update(dict.fromkeys(read_chapter(source).verified_claims))
    return list(found)


def _with_due_claims(plan: ChapterPlan, computation) -> ChapterPlan:
    """``plan``, or an execution when a claim the chapter shows is being computed again."""
    if computation is None or not computation.due or plan.execute:
        return plan
    record = read_record(plan.stem)
    shown = record["claims"] if record is not None else []
    again = [claim_id for claim_id in shown if claim_id in computation.due]
    if not again:
        return plan
    listed = ", ".join(again[:3]) + (f" and {len(again) - 3} more" if len(again) > 3 else "")
    return ChapterPlan(plan.stem, plan.source, "execute", f"claims computed again: {listed}")


def chapter_outputs(stem: str) -> list[str]:
    """The files chapter ``stem``'s record lists, then the record, relative to the root;
    :class:`BuildError` if the chapter is not current here."""
    (source,) = _selected_sources([stem])
    plan = plan_chapter(source)
    if plan.action != "none":
        raise BuildError(
            f"{paths.shown(source)} is not current here: would {plan.action} ({plan.reason})"
        )
    record = read_record(stem)
    return [*sorted(record["outputs"]), paths.shown(record_path(stem))]


def _print(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m claimbook")
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="bring the site up to date")
    build_parser.add_argument("--jobs", type=int, default=None, help="parallel chapters")
    build_parser.add_argument(
        "--question", action="store_true", help="exit 0 only if nothing would change"
    )
    execute_parser = commands.add_parser(
        "execute", help="execute what changed in the named chapters (default all); no render"
    )
    execute_parser.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter stems")
    execute_parser.add_argument("--jobs", type=int, default=None, help="parallel chapters")
    render_parser = commands.add_parser(
        "render",
        help="render and publish from the outputs present; fail if a chapter would execute",
    )
    for checked in (build_parser, execute_parser, render_parser):
        checked.add_argument(
            environment.ALLOW_OPTION,
            action="store_true",
            help="build even if the installed packages, Python or engine are not the book's "
            "(every page then says so)",
        )
    outputs_parser = commands.add_parser(
        "outputs", help="the files each named chapter's record lists, and the record"
    )
    outputs_parser.add_argument("chapters", nargs="+", metavar="CHAPTER", help="chapter stems")
    chapters_parser = commands.add_parser("chapters", help="the chapter stems, in _toc.yml order")
    chapters_parser.add_argument("--json", action="store_true", help="one JSON list")
    options = parser.parse_args(argv)
    if getattr(options, "jobs", None) is not None and options.jobs < 1:
        parser.error(f"--jobs must be a positive integer, got {options.jobs}")
    try:
        check_checkout()  # a copy whose .venv names another checkout would build that one
        if options.command == "chapters":
            stems = [source.stem for source in chapter_sources()]
            print(json.dumps(stems) if options.json else "\n".join(stems))
            return 0
        if options.command == "outputs":
            listed = [line for stem in options.chapters for line in chapter_outputs(stem)]
            print("\n".join(dict.fromkeys(listed)))
            return 0
        # Before the lock: a refused environment leaves everything as it was.
        foreign = bool(check_environment(options.allow_environment_mismatch, out=_print))
        with build_lock(paths.BUILD_DIR / ".build.lock"), stops(read_limits().build):
            if options.command == "execute":
                return build(
                    options.jobs,
                    out=_print,
                    only=options.chapters,
                    render_site=False,
                    foreign_environment=foreign,
                )
            if options.command == "render":
                return build(out=_print, kernels=False, foreign_environment=foreign)
            return build(options.jobs, options.question, out=_print, foreign_environment=foreign)
    except (KeyboardInterrupt, BuildTimeout) as stop:  # Ctrl-C, trainable_build_timeout
        line, status = stopped_line(stop)
        end_everything()
        print(line, file=sys.stderr, flush=True)
        return status
    except Exception as error:  # one line and a status, never a traceback
        end_everything()  # a chapter still running has no build to report to
        return report(error, DOING[options.command])
