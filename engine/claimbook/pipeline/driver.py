"""The build that ``make`` runs: ``python -m claimbook build`` (see :mod:`claimbook.__main__`).

::

    build [--jobs N]     plan, execute what changed, render, publish; exit 1 on any failure
          [--allow-environment-mismatch]
                         build even when the environment is not the lock's (every page
                         then says how); without it such a build exits 2 before anything
    build --question     exit 0 only if the tree is built, current and clean (does nothing)
    execute [CHAPTER ...] execute what changed in those chapters (default all), no render
    render               plan like build, but start no kernel: exit 1 naming each chapter
                         that would execute; otherwise render and publish as build does
    outputs CHAPTER ...  the files a chapter's record lists, and the record, one per line
    chapters [--json]    the chapter stems, in the order of _toc.yml
    matrix-check         the CI matrix run locally, compared with one build (see .matrix)

``execute CHAPTER`` on one machine, ``outputs CHAPTER`` to know what to carry to another,
and ``render`` there once every chapter's outputs are in place: a build spread over machines
(``.github/workflows/book.yml``). ``render`` may still reassemble a chapter whose prose alone
changed (that needs no kernel), as ``build`` does.

``build``, ``execute`` and ``render`` start by comparing the environment with the book's
(:func:`check_environment`): the installed distributions and Python with the lock
(:mod:`claimbook.environment`) and the running engine with the one the book holds
(:func:`claimbook.pipeline.checkout.check_engine`). A difference refuses the command in one
line naming it (exit 2), unless ``--allow-environment-mismatch`` is given (``make
ALLOW_ENV_MISMATCH=1``): then each difference is printed, the build goes on, every page's
footer names them, and the build leaves no record of a clean build
(:mod:`claimbook.pipeline.noop`), so the next one compares the environment again.

Exit status: 0 built and every claim holds; 1 a chapter, a claim or the site build failed
(the message says which, and the same inputs fail the same way every time); 2 a bad claim
id, registry file or path, a filesystem problem, or an environment that is not the book's;
3 another build holds the lock. Every failure is one line, never a traceback
(:mod:`claimbook.failures`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from claimbook import cache, claims, environment, paths
from claimbook.claims.ratios import wide_tolerance_problems
from claimbook.claims.record import read_claim_record
from claimbook.errors import (
    BuildError,
    ChapterSourceError,
    ClaimError,
    EnvironmentMismatchError,
    OutsideBuildProductsError,
)
from claimbook.failures import DOING, report
from claimbook.pipeline import sandbox
from claimbook.pipeline.checkout import check_checkout, check_engine
from claimbook.pipeline.claim_runs import ClaimComputation, due_claims
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
from claimbook.pipeline.mutation_runs import StaleMutations, stale_claims
from claimbook.pipeline.noop import forget_clean_build, hash_tree, record_clean_build
from claimbook.pipeline.render import (
    SiteRender,
    mark_outdated,
    pages_digest,
    publish,
    read_outcome,
    site_differences,
    site_dir,
    site_key,
    write_outcome,
)
from claimbook.settings import results_pasted_as_glue
from claimbook.sources import chapter_sources
from claimbook.startup_code import foreign_startup_files
from claimbook.text import one_line


def _claim_problems() -> list[str]:
    """One line per registered claim whose state fails the build, with its failed fields, or
    whose registry file is refused (the refusal, in one line)."""
    problems = []
    for claim_id in claims.list_claims():
        try:
            judgement = claims.judge(claim_id)
        except ClaimError as error:  # a registry file that cannot be read: a problem, kept
            problems.append(f"claim {claim_id}: {one_line(error)}")
            continue
        if not judgement.fails_build:
            problems.extend(_wide_tolerances(claim_id, judgement.artifact))
            continue
        if judgement.state == "failed" and judgement.artifact is not None:
            lines = claims.failure_summary(judgement.artifact) or [judgement.reason]
            problems.extend(f"claim {line}" for line in lines)
        else:
            problems.append(f"claim {claim_id} is {judgement.state}: {judgement.reason}")
    return problems


def _wide_tolerances(claim_id: str, artifact) -> list[str]:
    """Fields of a statistical claim wider than 10 standard errors without a stated reason
    (:func:`claimbook.claims.ratios.wide_tolerance_problems`)."""
    if artifact is None or artifact.get("kind") != "statistical":
        return []
    expect = claims.load_claim(claim_id).expect
    return wide_tolerance_problems(claim_id, expect, artifact.get("result") or {})


def _relative(path) -> str:
    return path.relative_to(paths.REPO_ROOT).as_posix()


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

    ``only`` limits planning and execution to those chapter stems, and ``render_site=False``
    stops after execution (one job of a build spread over machines). ``kernels=False`` is the
    render-only mode: a chapter that would execute fails the build, one line each, before
    anything is written. ``foreign_environment`` says the build runs in an environment that
    is not the book's (allowed: :func:`check_environment`); it then leaves no record of a
    clean build.
    """
    started = time.perf_counter()
    printed: list[str] = []  # what a failing build's banner gives as the reason

    def noted(line: str) -> None:
        printed.append(line)
        out(line)

    # Every cached value of a previous build in this process is dropped; the render's
    # Sphinx application shares this build's.
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


def check_environment(allow: bool = False, out=print) -> list[str]:
    """Compare the environment with the book's; refuse a difference unless ``allow``.

    Returns
    -------
    list of str
        The differences allowed (each printed through ``out``, one line each), or none.

    Raises
    ------
    EnvironmentMismatchError
        If the engine running is not the book's own
        (:func:`claimbook.pipeline.checkout.check_engine`), the installed distributions or
        Python differ from the lock (:func:`claimbook.environment.check_environment`), or
        site-packages holds start-up code no distribution installed
        (:func:`claimbook.startup_code.foreign_startup_files`), and ``allow`` is false; one
        line naming them.
    """
    found = []
    engine = check_engine(allow)
    if engine is not None:
        found.append(f"built with the engine at {engine}, not this checkout's")
    differences = environment.check_environment(allow=allow)
    if differences:
        found.append(
            f"the environment differs from {environment.LOCK_NAME}: {'; '.join(differences)}"
        )
    foreign = foreign_startup_files()
    if foreign:
        names = ", ".join(str(path) for path in foreign)
        line = f"start-up code that no installed package put there: {names}"
        if not allow:
            raise EnvironmentMismatchError(
                f"{line}; every Python process would run it before the book's code. Remove "
                f"it, or build anyway with {environment.ALLOW_OPTION}"
            )
        found.append(line)
    for line in found:
        out(f"build: {line} ({environment.ALLOW_OPTION}: every page says so)")
    return found


def _build(started, jobs, question, out, only, render_site, kernels, foreign_environment) -> int:
    selected = _selected_sources(only)
    claim_ids = _claims_of(selected) if only else claims.list_claims()
    if question:
        due = due_claims(claim_ids, read_claim_record().artifacts)
        for claim_id, reason in due.items():
            out(f"claim {claim_id}: would be computed ({reason})")
        stale = stale_claims(claim_ids) if not only else []
        for claim_id in stale:
            out(f"claim {claim_id}: its mistakes would run (no current result)")
        plans = [plan_chapter(source) for source in selected]
        outcome = read_outcome(note=out)
        changed = [plan for plan in plans if plan.action != "none"]
        for plan in changed:
            out(f"{_relative(plan.source)}: would {plan.action} ({plan.reason})")
        unregistered = _unregistered_claims(plans)
        for line in unregistered:
            out(line)
        if changed or due or unregistered or stale:
            return 1
        if only:
            return 0
        if outcome is None or outcome.get("key") != site_key() or not site_dir().is_dir():
            out("the site would be rendered again")
            return 1
        differences = site_differences(outcome)
        if differences:
            out(f"the site would be published again ({differences})")
            return 1
        # The stored warnings are covered by the outcome's digest; the claims are judged anew.
        if outcome["warnings"] or _claim_problems():
            out("the tree is current, but its last build failed (run `make` to see why)")
            return 1
        out("up to date")
        return 0
    _refuse_linked_folders()
    whole = not only and render_site
    if whole:  # only a whole build that ends clean leaves the record (claimbook.pipeline.noop)
        forget_clean_build()
    computation = mutations = None
    try:
        plans = [plan_chapter(source) for source in selected]
        # The claims due compute in processes of their own from here on, beside the chapters,
        # and so do the mistakes of a whole build's claims that have no current result.
        computation = ClaimComputation(claim_ids, jobs=jobs, report=out) if kernels else None
        mutations = StaleMutations(claim_ids, out) if kernels and whole else None
        status = _build_with(
            (computation, mutations), plans, jobs, out, render_site, kernels, started
        )
    finally:
        if computation is not None:
            computation.stop()
        if mutations is not None:
            mutations.stop()
    if whole:  # a record a chapter's cell may have written meanwhile is never kept
        clean = status == 0 and not foreign_environment
        record_clean_build() if clean else forget_clean_build()
    return status


def _build_with(running, plans, jobs, out, render_site, kernels, started) -> int:
    """The part of :func:`build` after the claims due (and the stale mistakes) started."""
    computation, mutations = running
    plans = [_with_due_claims(plan, computation) for plan in plans]
    unregistered = _unregistered_claims(plans)
    if unregistered:  # checked on every build: a cell that caught the error changes nothing
        for line in unregistered:
            out(line)
        out(f"make: FAILED: {len(unregistered)} chapter(s) verify a claim the registry lacks")
        return 1
    pending = [plan for plan in plans if plan.execute]
    if not kernels and pending:
        return _refuse_to_execute(pending, out)
    for plan in plans:
        if plan.action == "reassemble":
            if reassemble_chapter(plan.source):
                out(f"{_relative(plan.source)}: reassembled ({plan.reason})")
            else:
                pending.append(
                    ChapterPlan(plan.stem, plan.source, "execute", "code cells do not match")
                )
    if not kernels and pending:
        return _refuse_to_execute(pending, out)
    if pending:
        mark_outdated(f"{len(pending)} chapter(s) to execute")
    for plan in pending:
        out(f"{_relative(plan.source)}: executing ({plan.reason})")
    # How the site will be rendered is known now (the last outcome, the pages that exist), so
    # the Sphinx application is made ready while the chapters execute in other processes.
    outcome = read_outcome(note=out)
    same_pages = outcome is not None and outcome.get("pages") == pages_digest()
    # Pages added or removed (the table of contents, the claims): every page is read again,
    # from a new environment (a stored one keeps the old table of contents' structures).
    fresh = outcome is None or bool(outcome.get("warnings")) or not same_pages
    prepared: list[SiteRender] = []

    def prepare(running: list) -> None:
        if computation is not None:  # pages judge claims: only once they are computed
            computation.finish()
        if mutations is not None:  # and show what their mistakes did
            mutations.finish()
        site = SiteRender(fresh, reuse_pages=same_pages, published=outcome)
        prepared.append(site)
        for source in _selected_sources(None):
            try:
                results_pasted_as_glue(source)  # the render's source check asks the same
            except ChapterSourceError:  # the render reports it on the chapter's page
                continue
        for claim_id in claims.list_claims():
            try:
                claims.load_claim(claim_id)
            except ClaimError:  # the render reports it, with the page that states the claim
                continue
        # The record of a clean end then reads only the files written from here on.
        hash_tree()

    if pending and (line := sandbox.notice()) is not None:
        out(line)
    running_stems = {plan.stem for plan in pending}
    guard = ChapterGuard(computation, [plan for plan in plans if plan.stem not in running_stems])
    try:
        runs = execute_chapters(
            [plan.source for plan in pending],
            jobs=jobs,
            report=out,
            meanwhile=prepare if render_site else None,
            environment=guard.environment,
            inspect=guard.inspect,
        )
        if computation is not None:
            computation.finish()
        if mutations is not None:
            mutations.finish()
        if pending:
            out(
                f"claims: their artifacts checked after each chapter in "
                f"{guard.seconds * 1000:.0f} ms"
            )
        failed = [run for run in runs if not run.ok]
        if failed:
            out(
                "make: the site was not rendered; the previous one (if any) is kept and marked "
                f"outdated in {_relative(site_dir())}/OUTDATED.txt"
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
            site = (
                prepared.pop()
                if prepared
                else SiteRender(fresh, reuse_pages=same_pages, published=outcome)
            )
            rendered, warnings = site.run()
            published = (publish(rendered), site.sources)
            out(
                f"site: rendered and published in {time.perf_counter() - rendering:.1f} s "
                f"({len(site.written)} of {len(site.sources)} pages written)"
            )
    finally:
        for unused in prepared:
            unused.discard()
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
    problems = _claim_problems()
    if published is not None:
        write_outcome(key, warnings, problems, *published)
    seconds = time.perf_counter() - started
    if warnings or problems:
        shown = _shown_warnings(warnings, problems)
        for line in shown:
            out(line)
        for line in problems:
            out(line)
        out(
            f"make: FAILED in {seconds:.1f} s: {len(shown)} site warning(s), "
            f"{len(problems)} claim problem(s); the site shows them: "
            f"{site_dir() / 'index.html'}"
        )
        return 1
    out(f"The book is built ({seconds:.1f} s): {site_dir() / 'index.html'}")
    return 0


def _refuse_linked_folders() -> None:
    """Refuse, before anything is written, a build whose ``artifacts/`` (or
    ``artifacts/claims/``) is a link: the engine writes only into the book's own folders.

    Raises
    ------
    OutsideBuildProductsError
        Naming the link and where it leads, in one line.
    """
    import os

    for folder in (paths.ARTIFACTS_DIR, paths.CLAIM_ARTIFACTS_DIR):
        if folder.is_symlink():
            raise OutsideBuildProductsError(
                f"{paths.shown(folder)}/ is a link to {os.readlink(folder)}: the build writes "
                "only into the book's own folders; replace the link with a folder (nothing "
                "was changed)"
            )


def _shown_warnings(warnings: list[str], problems: list[str]) -> list[str]:
    """The site's warnings as the build prints them: one line per problem.

    A warning that a claim fails the build is left out when a claim problem names that
    claim (that line says it, with its numbers), and a warning repeated at other places
    (a claim shown on several pages, a role used twice) is printed once, with how many
    places more.
    """
    failing = {line.split()[1] for line in problems if line.startswith("claim ")}
    shown: dict[str, list[str]] = {}
    for line in warnings:
        _where, marker, message = line.partition(" WARNING: ")
        if not marker:
            shown.setdefault(line, [line])
            continue
        words = message.split()
        if len(words) > 2 and words[0] == "claim" and words[2] == "is" and words[1] in failing:
            continue
        shown.setdefault(message, []).append(line)
    lines = []
    for places in shown.values():
        more = len(places) - 1
        lines.append(
            places[0] + (f" (and {more} more place{'s' if more > 1 else ''})" if more else "")
        )
    return lines


def _claims_of(sources: list[Path]) -> list[str]:
    """The claims the chapters at ``sources`` verify, in order, once each."""
    from claimbook.sources import read_chapter

    found: dict[str, None] = {}
    for source in sources:
        found.update(dict.fromkeys(read_chapter(source).verified_claims))
    return list(found)


def _unregistered_claims(plans: list[ChapterPlan]) -> list[str]:
    """One line per chapter whose code verifies a claim id that ``claims/`` does not hold.

    The ids come from the chapter's record when its source is unchanged, else from the
    source, so an unchanged book is checked without parsing a chapter.
    """
    from claimbook.sources import read_chapter

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
                f"{_relative(plan.source)}: verifies {', '.join(missing)}, which claims/ does "
                "not hold: add the registry file or correct the id"
            )
    return lines


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


def _refuse_to_execute(plans: list[ChapterPlan], out) -> int:
    """The render-only mode's failure: one line per chapter that would execute, and why."""
    for plan in plans:
        out(f"{_relative(plan.source)}: would execute ({plan.reason}); render starts no kernel")
    out(
        f"make: render-only: {len(plans)} chapter(s) have no current outputs here; nothing "
        "was executed or rendered (run `python -m claimbook execute CHAPTER` where the "
        "chapter is built, and bring the files `python -m claimbook outputs CHAPTER` lists)"
    )
    return 1


def chapter_outputs(stem: str) -> list[str]:
    """The files chapter ``stem``'s record lists, then the record, relative to the root.

    Raises
    ------
    BuildError
        If the chapter is not current here (never executed, or its key or an output does not
        match its record): the list would not be what a render needs.
    """
    (source,) = _selected_sources([stem])
    plan = plan_chapter(source)
    if plan.action != "none":
        raise BuildError(
            f"{_relative(source)} is not current here: would {plan.action} ({plan.reason})"
        )
    record = read_record(stem)
    return [*sorted(record["outputs"]), _relative(record_path(stem))]


def _print(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["matrix-check"]:
        from claimbook.pipeline import matrix

        return matrix.main(argv[1:])
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
    commands.add_parser("matrix-check", help="the CI matrix, locally (see `matrix-check --help`)")
    options = parser.parse_args(argv)
    started = time.monotonic()
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
        line, status = stopped_line(stop, started)
        end_everything()
        print(line, file=sys.stderr, flush=True)
        return status
    except Exception as error:  # one line and a status, never a traceback
        end_everything()  # a chapter still running has no build to report to
        return report(error, DOING[options.command])
