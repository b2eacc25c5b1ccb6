"""``python -m checks mutate``: each mistake a claim's ``catches`` names, applied alone in a
child of a forkserver that imported the engine and the harness, recomputes the claim there
and records its status and red fields in the record :mod:`claimbook.claims.mistakes` reads
(modes, record, exit status: docs/claims.md).
"""

import argparse
import concurrent.futures
import datetime
import importlib
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
import types
from collections.abc import Mapping, Sequence
from multiprocessing import forkserver
from pathlib import Path

from claimbook import instruments, paths
from claimbook.atomic import write_text_atomically
from claimbook.claims import mistakes
from claimbook.claims.record import compute_artifact
from claimbook.claims.registry import Claim, list_claims, load_claim
from claimbook.errors import RegistryError
from claimbook.pipeline.claim_runs import claim_environment

MISTAKES_PACKAGE = "claim_mistakes"  # the mistake files' package, so one may import another
_ERROR_LIMIT = 400
# Imported once by the forkserver (which never applies a mistake), so that a child costs
# its computation, not an interpreter's start; the harness modules are the mistakes' imports.
_SERVER_PRELOAD = [
    "numpy",
    "scipy.special",
    instruments.PACKAGE,
    f"{instruments.PACKAGE}.small_batch",
    f"{instruments.PACKAGE}.precision",
    "checks.mutate",
]


def load_mistakes(module: str, registry_dir: str | Path | None = None):
    """The mistake file ``<registry_dir>/mistakes/<module>.py`` as ``claim_mistakes.<module>``
    (imported once per folder); :class:`RegistryError` if it is absent or raises."""
    folder = mistakes.mistakes_dir(registry_dir).resolve()
    package = sys.modules.get(MISTAKES_PACKAGE)
    if package is None or list(getattr(package, "__path__", [])) != [str(folder)]:
        for name in [n for n in sys.modules if n.split(".")[0] == MISTAKES_PACKAGE]:
            del sys.modules[name]  # the mistakes of another registry
        package = sys.modules[MISTAKES_PACKAGE] = types.ModuleType(MISTAKES_PACKAGE)
        package.__path__ = [str(folder)]
    path, name = folder / f"{module}.py", f"{MISTAKES_PACKAGE}.{module}"
    if name not in sys.modules and not path.is_file():
        raise RegistryError(f"the mistakes file {paths.shown(path)} does not exist")
    try:
        return importlib.import_module(name)
    except Exception as error:
        raise RegistryError(
            f"the mistakes file {paths.shown(path)} cannot be loaded "
            f"({type(error).__name__}: {error})"
        ) from error


def resolve_perturbation(name: str, claim=None):
    """The function ``<module>.<function>`` of the mistakes beside ``claim``'s registry file
    (default ``claims/``); :class:`RegistryError` naming what is missing."""
    where = f"{paths.shown(claim.path)}: field catches: " if claim is not None else ""
    registry_dir = Path(claim.path).parent if claim is not None else None
    module_name, _, function_name = name.rpartition(".")
    try:
        module = load_mistakes(module_name, registry_dir)
    except RegistryError as error:
        raise RegistryError(f"{where}perturbation {name!r}: {error}") from None
    function = getattr(module, function_name, None)
    if callable(function):
        return function
    names = getattr(module, "__all__", dir(module))
    known = sorted(n for n in names if callable(getattr(module, n, None)))
    path = paths.shown(mistakes.mistakes_dir(registry_dir) / f"{module_name}.py")
    raise RegistryError(
        f"{where}perturbation {name!r}: the mistakes file {path} has no function "
        f"{function_name!r}" + (f"; it has {', '.join(known)}" if known else "")
    )


def field_role(expectation: Mapping) -> str:
    """``"pinned"`` (a non-zero ``value`` or ``mean.value``) or ``"subject"``."""
    bound = expectation.get("mean") if isinstance(expectation.get("mean"), Mapping) else None
    value = (bound or expectation).get("value")
    if isinstance(value, int | float) and not isinstance(value, bool) and value != 0:
        return "pinned"
    return "subject"


def red_field(field: str, comparison: Mapping, expectation: Mapping | None) -> dict:
    """One field a mistake turned red: name, role (``"unregistered"`` without an
    expectation), expected, tolerance and got (a statistical field's mean and CI)."""
    got = comparison.get("got")
    if isinstance(got, Mapping):
        got = {k: got[k] for k in ("mean", "ci") if k in got} or None
    elif isinstance(got, float) and not math.isfinite(got):
        got = repr(got)
    elif isinstance(got, list):
        got = None
    return {
        "field": field,
        "role": field_role(expectation) if expectation is not None else "unregistered",
        "expected": comparison.get("expected"),
        "tolerance": comparison.get("tolerance"),
        "got": got,
    }


def write_record(path: str | Path, entries: Mapping[str, Mapping]) -> None:
    """Write ``entries`` into the record at ``path`` (keeping its others), atomically."""
    merged = {**mistakes.read_record(path), **entries}
    document = {"version": mistakes.VERSION, "claims": dict(sorted(merged.items()))}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(Path(path), json.dumps(document, indent=2, sort_keys=True) + "\n")


def _judge_in_child(claim_id, perturbation, registry_dir, imports, outcome_path, output_path):
    """One mistake's child: apply it, recompute the claim; the outcome (an exception too) as
    JSON to ``outcome_path``, the output (a crash's last words) to ``output_path``."""
    output = os.open(output_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    try:
        for module in imports:
            importlib.import_module(module)
        claim = load_claim(claim_id, registry_dir=registry_dir)
        resolve_perturbation(perturbation, claim)()
        artifact = compute_artifact(claim)
        red = [
            red_field(field, comparison, claim.expect.get(field))
            for field, comparison in sorted(artifact["comparisons"].items())
            if not comparison["passed"]
        ]
        error = artifact["error"] and artifact["error"][:_ERROR_LIMIT]
        outcome = {"status": artifact["status"], "red": red, "error": error}
    except Exception as error:  # recorded by the parent as this mistake's error
        outcome = {"status": None, "red": [], "error": f"{type(error).__name__}: {error}"}
    Path(outcome_path).write_text(json.dumps(outcome), encoding="utf-8")


def _server():
    """The forkserver context, its server started (once) in a build's claim environment."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_SERVER_PRELOAD)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(claim_environment())  # one BLAS thread, as a build's
    try:
        forkserver.ensure_running()  # started once per process; a no-op when running
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return context


def _run_one(context, claim: Claim, catch: dict, registry_dir, imports, scratch: Path) -> dict:
    """One mistake of one claim, in a child: what the record keeps of it."""
    name = f"{claim.id}--{catch['perturbation']}"
    outcome_path, output_path = scratch / f"{name}.json", scratch / f"{name}.out"
    start = time.perf_counter()
    arguments = (claim.id, catch["perturbation"], registry_dir, list(imports))
    child = context.Process(
        target=_judge_in_child,
        args=(*arguments, str(outcome_path), str(output_path)),
        name=f"mutate {name}",
    )
    child.start()
    child.join()
    seconds = time.perf_counter() - start
    try:
        outcome = json.loads(outcome_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # the child ended before it wrote its outcome
        said = output_path.read_text(errors="replace") if output_path.exists() else ""
        tail = (said.strip().splitlines() or [f"exit status {child.exitcode}"])[-1]
        outcome = {"status": None, "red": [], "error": tail[:_ERROR_LIMIT]}
    return {
        **catch,
        "caught": outcome["status"] == "failed" and outcome["error"] is None,
        **outcome,
        "seconds": round(seconds, 2),
    }


def _judge_all(claims, registry_dir, imports, jobs, committed) -> dict[str, list[dict]]:
    """Per claim, its mistakes' outcomes, run in children longest first (by the committed
    record's times, so no long one starts last); every mistake is resolved before any runs."""
    for claim in claims:
        named = [catch["perturbation"] for catch in claim.catches or []]
        twice = sorted({name for name in named if named.count(name) > 1})
        if twice:
            raise RegistryError(
                f"{paths.shown(claim.path)}: field catches: perturbation {twice[0]!r} is named "
                "twice"
            )
        for name in named:
            resolve_perturbation(name, claim)
    seconds = {
        (claim_id, catch.get("perturbation")): float(catch.get("seconds") or 0.0)
        for claim_id, entry in mistakes.read_record(committed).items()
        if isinstance(entry, dict)
        for catch in entry.get("catches", [])
        if isinstance(catch, dict)
    }
    tasks = [(claim, catch) for claim in claims for catch in claim.catches or []]
    tasks.sort(key=lambda t: -seconds.get((t[0].id, t[1]["perturbation"]), 0.0))
    cores = os.cpu_count() or 1
    jobs = max(1, min(jobs or cores, cores, len(tasks) or 1))
    folder = None if registry_dir is None else str(registry_dir)
    context = _server() if tasks else None
    with (
        tempfile.TemporaryDirectory(prefix="mutate-") as scratch,
        concurrent.futures.ThreadPoolExecutor(jobs) as pool,
    ):
        futures = {
            (claim.id, catch["perturbation"]): pool.submit(
                _run_one, context, claim, catch, folder, imports, Path(scratch)
            )
            for claim, catch in tasks
        }
        return {
            claim.id: [
                futures[(claim.id, c["perturbation"])].result() for c in claim.catches or []
            ]
            for claim in claims
        }


def run_mutations(
    claim_ids: Sequence[str] | None = None,
    *,
    registry_dir: str | Path | None = None,
    record: str | Path | None = None,
    mode: str = "write",
    jobs: int | None = None,
    imports: Sequence[str] = (),
) -> int:
    """Run the mistakes of ``claim_ids`` (default all) in ``mode`` (``"write"``, ``"check"``
    or ``"stale"``); the exit status. ``record`` defaults to the committed record."""
    for module in imports:
        importlib.import_module(module)
    ids = list(claim_ids) if claim_ids else list_claims(registry_dir)
    claims = [load_claim(claim_id, registry_dir=registry_dir) for claim_id in ids]
    committed = mistakes.committed_record_path(registry_dir)
    record = committed if record is None else record
    digests: dict = {}
    keys = {claim.id: mistakes.mutation_key(claim, digests) for claim in claims}
    if mode == "stale":
        claims = [
            c
            for c in claims
            if c.catches and mistakes.current_entry(c, keys[c.id], record) is None
        ]
        if not claims:
            return 0
    start = time.perf_counter()
    outcomes = _judge_all(claims, registry_dir, imports, jobs, committed)
    elapsed = time.perf_counter() - start
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    entries = {
        claim.id: {"key": keys[claim.id], "when": when, "catches": outcomes[claim.id]}
        for claim in claims
        if claim.catches
    }
    if mode != "check":
        write_record(record, entries)
    status = _report(claims, outcomes, elapsed)
    if mode == "check":
        status = max(status, _disagreements(entries, committed))
    return status


def _summary(entry) -> list:
    """What ``--check`` compares: per mistake, whether caught and which fields went red."""
    return [
        (c.get("perturbation"), c.get("caught"), sorted(r.get("field") for r in c.get("red", [])))
        for c in entry.get("catches", [])
    ]


def _disagreements(entries, committed) -> int:
    """1 naming each claim whose committed result is not this run's (key or outcome)."""
    recorded = mistakes.read_record(committed)
    wrong = []
    for claim_id, entry in entries.items():
        old = recorded.get(claim_id)
        if not isinstance(old, dict) or old.get("key") != entry["key"]:
            wrong.append(f"{claim_id} (recorded for other code: run make mutate)")
        elif _summary(old) != _summary(entry):
            wrong.append(f"{claim_id} (recorded outcome differs: run make mutate)")
    if wrong:
        print(f"{paths.shown(committed)} disagrees: " + "; ".join(wrong))
    return 1 if wrong else 0


def _state(catch: dict) -> str:
    if catch["caught"]:
        return (
            "caught (red: " + ", ".join(f"{r['field']} [{r['role']}]" for r in catch["red"]) + ")"
        )
    if catch["error"] is not None:
        return f"NOT caught: the computation raised: {catch['error']}"
    return f"NOT caught: the claim stays {catch['status']}"


def _report(claims, outcomes, elapsed: float) -> int:
    catching_none, too_few, unnamed = [], [], []
    needed = mistakes.SUBJECT_FIELDS_NEEDED
    for claim in claims:
        own = outcomes.get(claim.id, [])
        if not own:
            unnamed.append(claim.id)
            continue
        caught = [c for c in own if c["caught"]]
        print(f"{claim.id}: catches {len(caught)} of {len(own)}")
        for catch in own:
            print(f"  {catch['perturbation']} [{catch['seconds']:.1f} s]: {_state(catch)}")
            subject = sum(1 for r in catch["red"] if r["role"] == "subject")
            if catch["caught"] and subject < needed:
                too_few.append(f"{claim.id}: {catch['perturbation']} ({subject})")
        if not caught:
            catching_none.append(claim.id)
    if unnamed:
        print(f"no mistake named yet: {', '.join(unnamed)}")
    print(f"{sum(map(len, outcomes.values()))} perturbations in {elapsed:.1f} s")
    if too_few:
        print(
            f"caught by fewer than {needed} fields that measure the claim's subject: "
            + "; ".join(too_few)
        )
    if catching_none:
        print("claims that catch none of their named perturbations: " + ", ".join(catching_none))
    return 1 if catching_none or too_few else 0


def main(argv: Sequence[str]) -> int:
    """``mutate [--check | --stale] [--registry DIR] [--record PATH] [--jobs N] [ID ...]``."""
    parser = argparse.ArgumentParser(
        prog="python -m checks mutate",
        description="apply each claim's named mistakes to the harness and record which "
        "fields each turns red",
    )
    parser.add_argument("claim_ids", nargs="*", metavar="ID")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--check", action="store_true", help="compare with the committed record")
    modes.add_argument("--stale", action="store_true", help="only claims with no current result")
    parser.add_argument("--registry", help="the registry directory (default claims/)")
    parser.add_argument("--record", help="where to record (default: the committed record)")
    parser.add_argument("--jobs", type=int, help="processes at once (default: the cores)")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        help="a module to import first, in every process (fixture computations)",
    )
    options = parser.parse_args(argv)
    if options.jobs is not None and options.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {options.jobs}")
    return run_mutations(
        options.claim_ids,
        registry_dir=options.registry,
        record=options.record,
        mode="check" if options.check else "stale" if options.stale else "write",
        jobs=options.jobs,
        imports=options.imports,
    )
