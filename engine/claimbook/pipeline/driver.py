"""``python -m claimbook build|execute|render|outputs|chapters``: the build ``make`` runs.

Exit status (docs/engine.md): 0 built and every claim holds; 1 a chapter, a claim or the site
failed; 2 a bad claim id, registry file, path or environment, or a filesystem problem; 3
another build holds the lock. Every failure is one line (:mod:`claimbook.failures`)."""

import argparse
import contextlib
import functools
import json
import sys
import time

from claimbook import cache, claims, environment, paths
from claimbook.dependencies import one_reading
from claimbook.errors import BuildError, ChapterSourceError
from claimbook.failures import DOING, report
from claimbook.pipeline import build_report, keys, limits, sandbox, site_outcome
from claimbook.pipeline.checkout import build_lock, check_checkout, check_environment, lock_path
from claimbook.pipeline.claim_runs import ClaimComputation
from claimbook.pipeline.execute import execute_chapters, reassemble_chapter
from claimbook.pipeline.failed_build import failure_reason, mark_failed_build
from claimbook.pipeline.guard import ChapterGuard
from claimbook.pipeline.noop import forget_clean_build, record_clean_build
from claimbook.pipeline.render import SiteRender
from claimbook.pipeline.workers import kill_workers
from claimbook.sources import chapter_sources, read_chapter


def _selected_sources(only: list[str] | None) -> list:
    sources = chapter_sources()
    stems = [source.stem for source in sources]
    unknown = [name for name in only or () if name not in stems]
    if unknown:
        raise ChapterSourceError(
            f"no chapter named {', '.join(unknown)} in _toc.yml (chapters: {', '.join(stems)})"
        )
    return [source for source in sources if not only or source.stem in only]


def build(
    jobs: int | None = None,
    question: bool = False,
    out=print,
    only: list[str] | None = None,
    render_site: bool = True,
    kernels: bool = True,
    foreign_environment: bool = False,
) -> int:
    """Bring the site up to date; return the exit status. ``only``: those chapter stems;
    ``kernels=False``: a chapter that would execute fails the build; ``foreign_environment``:
    no record of a clean build. A failing build (not ``question``) marks the kept site."""
    started = time.perf_counter()
    printed: list[str] = []  # what a failing build's banner gives as the reason

    def noted(line: str) -> None:
        printed.append(line)
        out(line)

    with cache.one_build():
        try:
            selected = _selected_sources(only)
            if only:  # the claims those chapters verify, in order, once each
                found = (read_chapter(source).verified_claims for source in selected)
                claim_ids = list(dict.fromkeys(claim for ids in found for claim in ids))
            else:
                claim_ids = claims.list_claims()
            if question:
                return build_report.answer_question(selected, claim_ids, bool(only), out)
            paths.refuse_linked_folders()
            whole = not only and render_site
            if whole:  # only a whole build that ends clean leaves the record (.noop)
                forget_clean_build()
            with contextlib.ExitStack() as running:
                with one_reading():  # the plan's keys: of the modules as they are now
                    plans = [keys.plan_chapter(source) for source in selected]
                    computation = None
                    if kernels:
                        computation = ClaimComputation(claim_ids, jobs=jobs, report=noted)
                        running.callback(computation.stop)
                status, guard, executed = _execute(plans, computation, jobs, noted, kernels)
                if status is None and not render_site:
                    seconds = time.perf_counter() - started
                    noted(f"executed {executed} chapter(s) in {seconds:.1f} s")
                    status = 0
                elif status is None:
                    with one_reading():  # the chapters and claims have ended: modules are final
                        status = _render(guard, noted, started)
            if whole:  # a record a chapter's cell may have written meanwhile is never kept
                clean = status == 0 and not foreign_environment
                record_clean_build() if clean else forget_clean_build()
        except BaseException as error:  # interrupted too: the kept site says it failed
            if not question:
                mark_failed_build(failure_reason(printed, error), out)
            raise
        if status and not question:  # every failing exit: a banner on every kept page
            mark_failed_build(failure_reason(printed), out)
        return status


def _execute(plans, computation, jobs, out, kernels):
    """Reassemble and execute the chapters that need it; return ``(status, guard, chapters
    executed)``, the status None when the build goes on."""
    if computation is not None and computation.due:  # a chapter showing one executes too
        for index, plan in enumerate(plans):
            record = None if plan.execute else keys.read_record(plan.stem)
            again = [
                claim for claim in (record or {}).get("claims", ()) if claim in computation.due
            ]
            if again:
                reason = f"claims computed again: {keys.listed(again)}"
                plans[index] = plan._replace(action="execute", reason=reason)
    unregistered = build_report.unregistered_claims(plans)
    if unregistered:  # checked on every build: a cell that caught the error changes nothing
        for line in unregistered:
            out(line)
        out(f"make: FAILED: {len(unregistered)} chapter(s) verify a claim the registry lacks")
        return 1, None, 0
    pending = [plan for plan in plans if plan.execute]
    if kernels or not pending:
        for plan in [plan for plan in plans if plan.action == "reassemble"]:
            if reassemble_chapter(plan.source):
                out(f"{paths.shown(plan.source)}: reassembled ({plan.reason})")
            else:
                pending.append(plan._replace(action="execute", reason="code cells do not match"))
    if not kernels and pending:
        return build_report.refuse_to_execute(pending, out), None, 0
    if pending:
        site_outcome.mark_outdated(f"{len(pending)} chapter(s) to execute")
    for plan in pending:
        out(f"{paths.shown(plan.source)}: executing ({plan.reason})")
    if pending and (line := sandbox.notice()) is not None:
        out(line)
    running = {plan.stem for plan in pending}
    guard = ChapterGuard(computation, [plan for plan in plans if plan.stem not in running])
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
    if not all(run.ok for run in runs):
        out(
            "make: the site was not rendered; the previous one (if any) is kept and marked "
            f"outdated in {paths.shown(site_outcome.site_dir())}/OUTDATED.txt"
        )
        return 1, guard, len(pending)
    return None, guard, len(pending)


def _render(guard: ChapterGuard, out, started: float) -> int:
    """Render and publish the site unless it is current, check the guard once more, judge
    every claim and report; return the exit status."""
    outcome = site_outcome.read_outcome(note=out)
    same_pages = outcome is not None and outcome.get("pages") == site_outcome.pages_digest()
    key = site_outcome.site_key()
    current = outcome is not None and outcome["key"] == key
    differences = site_outcome.site_differences(outcome) if current else None
    published = None
    if current and differences is None:
        warnings = list(outcome["warnings"])
        out("site: unchanged since the last render")
    else:
        if differences is not None:
            out(f"site: {differences}; it is published again")
        site_outcome.mark_outdated("the site is being rendered")
        # Pages added or removed: every page is read again, from a new environment.
        fresh = outcome is None or bool(outcome.get("warnings")) or not same_pages
        out("site: rendering" + (" (every page re-read)" if fresh else ""))
        rendering = time.perf_counter()
        site = SiteRender(fresh, published=outcome)
        rendered, warnings = site.run()
        published = (site_outcome.publish(rendered), site.sources, site_outcome.judged_states())
        out(
            f"site: rendered and published in {time.perf_counter() - rendering:.1f} s "
            f"({len(site.written)} of {len(site.sources)} pages written)"
        )
    changed = guard.final_check()  # over the render and the publication too
    if changed:
        out(
            "make: files only the build writes changed before the build ended: "
            f"{'; '.join(changed[:5])}; put back as the build computed them"
        )
        return 1
    problems = build_report.claim_problems()  # judged by every build, never stored
    if published is not None:
        site_outcome.write_outcome(key, warnings, *published)
    return build_report.final_report(warnings, problems, time.perf_counter() - started, out)


def chapter_outputs(stem: str) -> list[str]:
    """The files chapter ``stem``'s record lists, then the record; BuildError if the chapter
    is not current here."""
    (source,) = _selected_sources([stem])
    plan = keys.plan_chapter(source)
    if plan.action != "none":
        raise BuildError(
            f"{paths.shown(source)} is not current here: would {plan.action} ({plan.reason})"
        )
    record = keys.read_record(stem)
    return [*sorted(record["outputs"]), paths.shown(keys.record_path(stem))]


_print = functools.partial(print, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m claimbook")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, said in (
        ("build", "bring the site up to date"),
        ("execute", "execute what changed in the named chapters (default all); no render"),
        ("render", "render and publish from the outputs present; fail if a chapter would execute"),
        ("outputs", "the files each named chapter's record lists, and the record"),
        ("chapters", "the chapter stems, in _toc.yml order"),
    ):
        command = commands.add_parser(name, help=said)
        if name in ("build", "execute"):
            command.add_argument("--jobs", type=int, default=None, help="parallel chapters")
        if name in ("build", "execute", "render"):
            command.add_argument(
                environment.ALLOW_OPTION,
                action="store_true",
                help="build even if the installed packages, Python or engine are not the book's "
                "(every page then says so)",
            )
        if name in ("execute", "outputs"):
            many = "*" if name == "execute" else "+"
            command.add_argument("chapters", nargs=many, metavar="CHAPTER", help="chapter stems")
        if name == "build":
            command.add_argument(
                "--question", action="store_true", help="exit 0 only if nothing would change"
            )
        if name == "chapters":
            command.add_argument("--json", action="store_true", help="one JSON list")
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
        with build_lock(lock_path()), limits.stops(limits.read_limits().build):
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
    except KeyboardInterrupt:  # Ctrl-C, or a stop (limits)
        line, status = limits.stopped_line()
        kill_workers()
        print(line, file=sys.stderr, flush=True)
        return status
    except Exception as error:  # one line and a status, never a traceback
        kill_workers()  # a chapter still running has no build to report to
        return report(error, DOING[options.command])
