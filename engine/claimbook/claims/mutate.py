"""``python -m claimbook mutate [ID ...]``: every claim shown to be able to fail.

A registry entry's ``catches`` names the mistakes the claim exists to catch, each a
perturbation of the harness: a function in a mistakes file beside the registry
(``claims/mistakes/<module>.py``, named ``<module>.<function>``) that replaces one harness
function with a mistaken version, and a line saying what it gets wrong::

    catches:
      - perturbation: chapter16.sample_variance_batch_moments
        says: batch norm divides its statistics by m - 1

For each claim and each of its perturbations, the runner starts a process of its own (one
BLAS thread, at most ``os.cpu_count()`` at once), forked from a server process that has
imported the engine and the harness and never applies a perturbation (multiprocessing's
forkserver), applies the perturbation there (never editing a file), recomputes the claim
with the engine's computation and judge (:func:`~claimbook.claims.computations.run_computation`,
:func:`~claimbook.claims.store.build_artifact`) and reports its status and the fields that
failed. Nothing is written into ``artifacts/``. A perturbation *is caught* when the claim
is judged ``failed`` without the computation raising (an exception is recorded as an
error, not as a catch: a perturbation that breaks the computation shows nothing about the
claim's criteria).

The outcomes go to ``_build/mutations.json`` (atomically), per claim with the digests of its
registry entry and of the harness's sources and mistake files, so a record made before
either changed is recognised as stale (:func:`mutation_states`, which the claim pages
show). The command exits 1 when a claim catches none of its named perturbations, naming
the claim; a claim without ``catches`` is listed as "no mistake named yet", which is not a
failure; a perturbation name that does not exist is refused (exit 2) before anything runs.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from claimbook import instruments, paths
from claimbook.atomic import write_text_atomically
from claimbook.claims.registry import Claim, list_claims, load_claim
from claimbook.errors import RegistryError

__all__ = [
    "MISTAKES",
    "MISTAKES_PACKAGE",
    "RECORD_NAME",
    "Mutation",
    "harness_digest",
    "load_mistakes",
    "main",
    "mistakes_dir",
    "mutation_states",
    "record_path",
    "resolve_perturbation",
    "run_mutations",
]

MISTAKES = "mistakes"  # the folder of the mistakes, beside the registry's YAML files
# The package name the mistake files are loaded under (they are files, not an installed
# package): ``<MISTAKES_PACKAGE>.chapter16`` for ``<registry>/mistakes/chapter16.py``. A
# mistake file may import another one by that name (``from claim_mistakes.chapter15
# import ...``).
MISTAKES_PACKAGE = "claim_mistakes"
RECORD_NAME = "mutations.json"
_ERROR_LIMIT = 400


def record_path() -> Path:
    """``_build/mutations.json`` of the repository."""
    return paths.BUILD_DIR / RECORD_NAME


def mistakes_dir(registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/mistakes``: by default ``claims/mistakes/`` of the repository."""
    return Path(registry_dir if registry_dir is not None else paths.CLAIMS_DIR) / MISTAKES


def load_mistakes(module: str, registry_dir: str | Path | None = None):
    """The mistake file ``<registry_dir>/mistakes/<module>.py``, loaded by its path.

    Loaded once per process and directory (:func:`importlib.util.spec_from_file_location`)
    as ``claim_mistakes.<module>``, in a package of that name whose path is the folder, so
    that one mistake file can import another. The files import the harness; the harness
    never imports them.

    Raises
    ------
    RegistryError
        If the file does not exist, or raises when loaded (the message names the file).
    """
    folder = mistakes_dir(registry_dir).resolve()
    path = folder / f"{module}.py"
    package = sys.modules.get(MISTAKES_PACKAGE)
    if package is None or list(getattr(package, "__path__", [])) != [str(folder)]:
        for name in [n for n in sys.modules if n.split(".")[0] == MISTAKES_PACKAGE]:
            del sys.modules[name]  # the mistakes of another registry
        package = importlib.util.module_from_spec(
            importlib.machinery.ModuleSpec(MISTAKES_PACKAGE, None, is_package=True)
        )
        package.__path__ = [str(folder)]
        sys.modules[MISTAKES_PACKAGE] = package
    name = f"{MISTAKES_PACKAGE}.{module}"
    if name in sys.modules:
        return sys.modules[name]
    if not path.is_file():
        raise RegistryError(f"the mistakes file {paths.shown(path)} does not exist")
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except Exception as error:
        del sys.modules[name]
        raise RegistryError(
            f"the mistakes file {paths.shown(path)} cannot be loaded "
            f"({type(error).__name__}: {error})"
        ) from error
    return loaded


def resolve_perturbation(
    name: str, claim: Claim | None = None, registry_dir: str | Path | None = None
):
    """The function named ``<module>.<function>``: in the mistakes file ``<module>.py``.

    The file is in the ``mistakes/`` folder beside the claim's registry file (when
    ``claim`` is given), else beside ``registry_dir`` (default ``claims/``).

    Raises
    ------
    RegistryError
        If the file does not exist or cannot be loaded, or has no such function; the
        message names the perturbation, the file and the function (and the claim's
        registry file when given).
    """
    where = f"{paths.shown(claim.path)}: field catches: " if claim is not None else ""
    module_name, _, function_name = name.rpartition(".")
    if claim is not None:
        registry_dir = Path(claim.path).parent
    path = mistakes_dir(registry_dir) / f"{module_name}.py"
    try:
        module = load_mistakes(module_name, registry_dir)
    except RegistryError as error:
        raise RegistryError(f"{where}perturbation {name!r}: {error}") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        known = sorted(
            n
            for n in getattr(module, "__all__", dir(module))
            if callable(getattr(module, n, None))
        )
        raise RegistryError(
            f"{where}perturbation {name!r}: the mistakes file {paths.shown(path)} has no "
            f"function {function_name!r}" + (f"; it has {', '.join(known)}" if known else "")
        )
    return function


def harness_digest(registry_dir: str | Path | None = None) -> str:
    """SHA-256 of the harness package's Python sources and of the mistake files (their
    paths and bytes): a record made before either changed is stale."""
    root = instruments.package_dir()
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    folder = mistakes_dir(registry_dir)
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        digest.update(f"{MISTAKES}/{path.name}".encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class Mutation:
    """One perturbation of one claim, and what the claim said under it."""

    claim_id: str
    perturbation: str
    says: str
    status: str | None = None
    failed_fields: tuple[str, ...] = ()
    error: str | None = None
    seconds: float = 0.0

    @property
    def caught(self) -> bool:
        return self.status == "failed" and self.error is None

    def as_record(self) -> dict:
        return {
            "perturbation": self.perturbation,
            "says": self.says,
            "caught": self.caught,
            "status": self.status,
            "failed_fields": list(self.failed_fields),
            "error": self.error,
            "seconds": round(self.seconds, 2),
        }


# --- the child: one perturbation, one claim, in this process -------------------------------


def judge_perturbed(claim_id: str, perturbation: str, registry_dir: str | None) -> dict:
    """Apply ``perturbation`` here, recompute ``claim_id`` and judge it; write nothing."""
    from claimbook.claims.verify import compute_artifact

    claim = load_claim(claim_id, registry_dir=registry_dir)
    resolve_perturbation(perturbation, claim)()
    artifact = compute_artifact(claim)
    failed = sorted(f for f, c in artifact["comparisons"].items() if not c["passed"])
    error = artifact.get("error")
    return {
        "status": artifact["status"],
        "failed_fields": failed,
        "error": None if error is None else str(error)[:_ERROR_LIMIT],
    }


def _judge_in_child(
    claim_id: str,
    perturbation: str,
    registry_dir: str | None,
    imports: Sequence[str],
    outcome_path: str,
    output_path: str,
) -> None:
    """The child of one perturbation: judge it, write the outcome (JSON) to ``outcome_path``.

    Its standard output and error go to ``output_path`` (a computation's warnings, and the
    last words of a crash, which the parent reports); an exception is an outcome too.
    """
    output = os.open(output_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    try:
        for module in imports:
            importlib.import_module(module)
        outcome = judge_perturbed(claim_id, perturbation, registry_dir)
    except Exception as error:  # recorded by the parent as this perturbation's error
        outcome = {
            "status": None,
            "failed_fields": [],
            "error": f"{type(error).__name__}: {error}",
        }
    Path(outcome_path).write_text(json.dumps(outcome), encoding="utf-8")


# --- the parent ----------------------------------------------------------------------------

# What every child imports first: each child is forked from one server process that imported
# these once (multiprocessing's forkserver), so a perturbation costs its computation, not an
# interpreter's start and imports (about 0.4 CPU-s each, a quarter of `make mutate`'s CPU).
# The server never applies a perturbation: each child starts from the modules as imported.
_SERVER_PRELOAD = [
    "numpy",
    f"{instruments.PACKAGE}",
    # What the mistake files import first (they are files, loaded by path in each child).
    f"{instruments.PACKAGE}.small_batch",
    f"{instruments.PACKAGE}.precision",
    "claimbook.claims.verify",
    "claimbook.claims.mutate",
]


def _server():
    """multiprocessing's forkserver context, its server started in the environment of a
    build's claim processes (:func:`_environment`: one BLAS thread, read when numpy is
    imported; no build's record; one worker), which every child inherits. The server lives
    as long as this process: a later run in the same process reuses it as it was started."""
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_SERVER_PRELOAD)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(_environment())
    try:
        forkserver.ensure_running()  # started once per process; a no-op when running
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return context


def _environment() -> dict[str, str]:
    from claimbook.pipeline.claim_runs import _claim_environment

    return _claim_environment(1)  # one BLAS thread, one process per perturbation


def _run_one(
    context, claim: Claim, perturbation: str, says: str, registry_dir, imports, scratch: Path
) -> Mutation:
    name = f"{claim.id}--{perturbation}"
    outcome_path, output_path = scratch / f"{name}.json", scratch / f"{name}.out"
    start = time.perf_counter()
    child = context.Process(
        target=_judge_in_child,
        args=(
            claim.id,
            perturbation,
            None if registry_dir is None else str(registry_dir),
            list(imports),
            str(outcome_path),
            str(output_path),
        ),
        name=f"mutate {name}",
    )
    child.start()
    child.join()
    seconds = time.perf_counter() - start
    try:
        outcome = json.loads(outcome_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # the child ended before it wrote its outcome
        said = (
            output_path.read_text(encoding="utf-8", errors="replace")
            if output_path.exists()
            else ""
        )
        tail = (said.strip().splitlines() or [f"exit status {child.exitcode}"])[-1]
        outcome = {"status": None, "failed_fields": [], "error": tail[:_ERROR_LIMIT]}
    return Mutation(
        claim.id,
        perturbation,
        says,
        status=outcome["status"],
        failed_fields=tuple(outcome["failed_fields"]),
        error=outcome["error"],
        seconds=seconds,
    )


def run_mutations(
    claim_ids: Sequence[str] | None = None,
    *,
    registry_dir: str | Path | None = None,
    record: str | Path | None = None,
    jobs: int | None = None,
    imports: Sequence[str] = (),
    stream=None,
) -> int:
    """Run every named perturbation of ``claim_ids`` (default all); record; return the status.

    Returns 0, or 1 when a claim catches none of its perturbations (each such claim is named
    on ``stream``). Raises :class:`RegistryError` for an unknown perturbation before any
    runs.
    """
    stream = sys.stdout if stream is None else stream
    for module in imports:
        importlib.import_module(module)
    ids = list(claim_ids) if claim_ids else list_claims(registry_dir)
    claims = [load_claim(claim_id, registry_dir=registry_dir) for claim_id in ids]
    tasks = []
    for claim in claims:
        named = [catch["perturbation"] for catch in claim.catches or []]
        twice = sorted({name for name in named if named.count(name) > 1})
        if twice:
            raise RegistryError(
                f"{paths.shown(claim.path)}: field catches: perturbation {twice[0]!r} is "
                "named twice"
            )
        for catch in claim.catches or []:
            resolve_perturbation(catch["perturbation"], claim)  # refused before anything runs
            tasks.append((claim, catch["perturbation"], catch["says"]))
    jobs = max(1, min(jobs or os.cpu_count() or 1, os.cpu_count() or 1, len(tasks) or 1))
    start = time.perf_counter()
    # The longest first (by the last record's times), so no long one starts last.
    seconds = _recorded_seconds(record)
    started = sorted(tasks, key=lambda task: -seconds.get((task[0].id, task[1]), 0.0))
    context = _server()
    with (
        tempfile.TemporaryDirectory(prefix="mutate-") as scratch,
        concurrent.futures.ThreadPoolExecutor(jobs) as pool,
    ):
        futures = {
            (claim.id, name): pool.submit(
                _run_one, context, claim, name, says, registry_dir, imports, Path(scratch)
            )
            for claim, name, says in started
        }
        mutations = [futures[(claim.id, name)].result() for claim, name, _ in tasks]
    elapsed = time.perf_counter() - start
    _write_record(claims, mutations, record)
    return _report(claims, mutations, elapsed, stream)


def _read_record(record) -> dict:
    """The claims of the record at ``record`` (default ``_build/mutations.json``), or {}."""
    path = Path(record) if record is not None else record_path()
    try:
        claims = json.loads(path.read_text()).get("claims", {})
    except (OSError, json.JSONDecodeError, AttributeError):
        return {}
    return claims if isinstance(claims, dict) else {}


def _recorded_seconds(record) -> dict:
    return {
        (claim_id, catch.get("perturbation")): float(catch.get("seconds") or 0.0)
        for claim_id, entry in _read_record(record).items()
        if isinstance(entry, dict)
        for catch in entry.get("catches", [])
        if isinstance(catch, dict)
    }


def _write_record(claims: Sequence[Claim], mutations: Sequence[Mutation], record) -> None:
    path = Path(record) if record is not None else record_path()
    digests = {}  # per registry folder: its mistake files count
    entries = _read_record(record)
    for claim in claims:
        folder = Path(claim.path).parent
        if folder not in digests:
            digests[folder] = harness_digest(folder)
        entries[claim.id] = {
            "registry_digest": claim.registry_digest,
            "harness_digest": digests[folder],
            "catches": [m.as_record() for m in mutations if m.claim_id == claim.id],
        }
    document = {"version": 1, "claims": dict(sorted(entries.items()))}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps(document, indent=2, sort_keys=True) + "\n")


def _report(claims, mutations, elapsed: float, stream) -> int:
    catching_none = []
    unnamed = []
    for claim in claims:
        own = [m for m in mutations if m.claim_id == claim.id]
        if not own:
            unnamed.append(claim.id)
            continue
        caught = [m for m in own if m.caught]
        print(f"{claim.id}: catches {len(caught)} of {len(own)}", file=stream)
        for m in own:
            if m.caught:
                state = "caught (failed: " + ", ".join(m.failed_fields) + ")"
            elif m.error is not None:
                state = f"NOT caught: the computation raised: {m.error}"
            else:
                state = f"NOT caught: the claim stays {m.status}"
            print(f"  {m.perturbation} [{m.seconds:.1f} s]: {state}", file=stream)
        if not caught:
            catching_none.append(claim.id)
    if unnamed:
        print(f"no mistake named yet: {', '.join(unnamed)}", file=stream)
    print(f"{len(mutations)} perturbations in {elapsed:.1f} s", file=stream)
    if catching_none:
        print(
            "claims that catch none of their named perturbations: " + ", ".join(catching_none),
            file=stream,
        )
        return 1
    return 0


# --- what the pages show -------------------------------------------------------------------


def mutation_states(claim: Claim, record: str | Path | None = None) -> list[dict]:
    """Each named perturbation of ``claim`` with its state from the last mutate run.

    ``state`` is ``"caught"``, ``"not caught"``, or ``"not yet run"`` (no record of it, or
    a record made before the claim's registry entry or the harness changed).
    """
    entry: Mapping = {}
    if claim.catches:
        entry = _read_record(record).get(claim.id) or {}
        if not isinstance(entry, dict):
            entry = {}
        current = entry.get("registry_digest") == claim.registry_digest and entry.get(
            "harness_digest"
        ) == harness_digest(Path(claim.path).parent)
        if not current:
            entry = {}
    recorded = {c.get("perturbation"): c for c in entry.get("catches", []) if isinstance(c, dict)}
    states = []
    for catch in claim.catches or []:
        seen = recorded.get(catch["perturbation"])
        if seen is None:
            state = "not yet run"
        else:
            state = "caught" if seen.get("caught") else "not caught"
        states.append({**catch, "state": state})
    return states


def main(argv: Sequence[str]) -> int:
    """``mutate [--registry DIR] [--record PATH] [--jobs N] [--import MODULE] [ID ...]``."""
    parser = argparse.ArgumentParser(
        prog="python -m claimbook mutate",
        description="apply each claim's named perturbations of the harness and record which "
        "turn it red",
    )
    parser.add_argument("claim_ids", nargs="*", metavar="ID")
    parser.add_argument("--registry", help="the registry directory (default claims/)")
    parser.add_argument("--record", help="where to record (default _build/mutations.json)")
    parser.add_argument("--jobs", type=int, help="processes at once (default: the cores)")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        help="a module to import first, in every process (fixture computations)",
    )
    options = parser.parse_args([word for word in argv if word != "mutate"])
    if options.jobs is not None and options.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {options.jobs}")
    return run_mutations(
        options.claim_ids,
        registry_dir=options.registry,
        record=options.record,
        jobs=options.jobs,
        imports=options.imports,
    )
