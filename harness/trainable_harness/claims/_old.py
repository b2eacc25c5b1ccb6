"""Claims: the registry, ``verify_claim``, harness pins and claim artifacts.

Every numeric statement of the book is a *claim*: an id, one sentence, the harness function
that computes it, what each computed field must equal, and the contract it was measured
under (seed, dtype, device, estimator). The pieces:

- **Registry.** ``claims/<id>.yaml``, one file per claim, parsed with PyYAML's safe loader
  (duplicate keys refused) and validated against ``claim_schema.json`` with jsonschema.
  ``compute`` names ``trainable_harness.<module>.<function>``; nothing outside the harness
  is ever imported from a registry file. ``expect`` maps every result field (dotted for
  nested fields) to ``{equals: v}``, ``{value: v, abs_tol: t, reason: ...}``,
  ``{value: v, rel_tol: t, reason: ...}`` or ``{interval: [lo, hi], reason: ...}``.
- **Pins.** :func:`harness_pin` is the running harness's identity: its version plus the
  first 12 hex digits of a SHA-256 over its ``*.py`` and ``*.json`` sources. A chapter
  holds, as a literal ``pin = "..."`` in its first code cell, the pin it was written
  against; :func:`verify_claim` refuses a different one (:class:`StalePinError`) until
  ``make repin`` (``python -m trainable_harness repin``) rewrites the chapters.
- **Artifacts.** :func:`verify_claim` recomputes the claim by calling its registered
  function (never from notebook variables), compares every field, and writes
  ``artifacts/claims/<id>.json`` atomically and deterministically (sorted keys, no
  timestamps: verifying twice gives byte-identical files).
- **Badges.** :func:`badge_state` says what a page may show: ``"verified"``, ``"failed"``,
  ``"stale"`` or ``"not run"``; an artifact whose stored status or fields disagree with its
  own stored result under the current registry is shown as failed, never as verified.
  :func:`check_artifact` goes further and recomputes.

Examples
--------
>>> claim_seed("c15-running-state")
316832669
>>> load_claim("c15-invariance-001").contract["device"]
'CPU'
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib
import json
import math
import os
import platform
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import yaml

from trainable_harness import paths
from trainable_harness.errors import (
    ClaimFailedError,
    MissingArtifactError,
    RegistryError,
    StaleArtifactError,
    StalePinError,
    TamperedArtifactError,
    UnknownClaimError,
    WitnessResultError,
)

__all__ = [
    "BADGE_STATES",
    "Claim",
    "ClaimReport",
    "PinUpdate",
    "RepinReport",
    "artifact_path",
    "badge_state",
    "check_artifact",
    "claim_seed",
    "display_contract",
    "harness_pin",
    "harness_source_sha256",
    "list_claims",
    "load_claim",
    "repin",
    "repin_chapters",
    "verify_claim",
]

BADGE_STATES = ("verified", "failed", "stale", "not run")

PACKAGE_DIR = Path(__file__).resolve().parent
_ID_PATTERN = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_CHAPTER_PREFIX = re.compile(r"c(\d+)-")
_COMPUTE_PATTERN = re.compile(r"trainable_harness\.[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*")
# The literal pin line of a chapter's first code cell; anything after the closing quote stays.
_PIN_LINE = re.compile(r'^(?P<indent>[ \t]*)pin = "(?P<pin>[^"\r\n]*)"', re.MULTILINE)
_SCHEMA = json.loads(
    resources.files("trainable_harness").joinpath("claim_schema.json").read_text()
)
_VALIDATOR = jsonschema.Draft202012Validator(_SCHEMA)
_MISSING = object()


# --- seeds and pins ---------------------------------------------------------------------------


def claim_seed(name: str) -> int:
    """The claim-specific seed: the first 8 hex digits of ``sha256(name)`` as an integer.

    A registry's ``seed: {policy: derived, name: ...}`` means this value, so a seed is
    derived from a readable name instead of being chosen (and re-chosen) by hand.

    Examples
    --------
    >>> claim_seed("c15-running-state")
    316832669
    """
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)


def harness_source_sha256(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 over the sorted relative paths and bytes of the harness's ``*.py``/``*.json``.

    Each file contributes its POSIX relative path, a NUL byte and the digest of its bytes,
    so renaming a file changes the hash as much as editing it does.

    Examples
    --------
    >>> len(harness_source_sha256())
    64
    """
    sources = [
        path
        for pattern in ("*.py", "*.json")
        for path in package_dir.rglob(pattern)
        if "__pycache__" not in path.parts
    ]
    digest = hashlib.sha256()
    for relative in sorted(path.relative_to(package_dir).as_posix() for path in sources):
        digest.update(relative.encode() + b"\0")
        digest.update(hashlib.sha256((package_dir / relative).read_bytes()).digest())
    return digest.hexdigest()


def harness_pin() -> str:
    """The running harness's identity: ``f"{__version__}+{first 12 hex of the source hash}"``.

    Examples
    --------
    >>> from trainable_harness import __version__
    >>> version, source = harness_pin().split("+")
    >>> version == __version__ and source == harness_source_sha256()[:12]
    True
    """
    from trainable_harness import __version__  # late: the package imports this module

    return f"{__version__}+{harness_source_sha256()[:12]}"


# --- the registry ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One validated registry entry, ``claims/<id>.yaml``.

    Attributes
    ----------
    id, chapter, statement, compute : as in the registry file.
    seed_policy : dict
        ``{"policy": "none"}`` or ``{"policy": "derived", "name": ...}``.
    contract : dict
        ``dtype``, ``device`` and ``estimator``, free text shown on the page.
    expect : dict
        Result field (dotted for nested fields) -> expectation.
    path : pathlib.Path
        The registry file.
    registry_digest : str
        SHA-256 of the registry file's bytes.
    """

    id: str
    chapter: int
    statement: str
    seed_policy: dict
    contract: dict
    compute: str
    expect: dict
    path: Path
    registry_digest: str

    @property
    def seed(self) -> int | None:
        """The seed passed to the witness: ``claim_seed(name)``, or None for ``policy: none``."""
        if self.seed_policy["policy"] == "derived":
            return claim_seed(self.seed_policy["name"])
        return None


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a repeated mapping key is an error, not a silent win."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _registry_dir(registry_dir: str | Path | None) -> Path:
    return Path(registry_dir) if registry_dir is not None else paths.CLAIMS_DIR


def _artifacts_dir(artifacts_dir: str | Path | None) -> Path:
    return Path(artifacts_dir) if artifacts_dir is not None else paths.CLAIM_ARTIFACTS_DIR


def list_claims(registry_dir: str | Path | None = None) -> list[str]:
    """The ids of the registered claims (the stems of ``claims/*.yaml``), sorted.

    Raises
    ------
    RegistryError
        If the registry directory does not exist, or holds a ``*.yml`` file (which would
        otherwise be ignored without a word).

    Examples
    --------
    >>> "c15-invariance-001" in list_claims()
    True
    """
    registry = _registry_dir(registry_dir)
    if not registry.is_dir():
        raise RegistryError(
            f"registry directory {registry} does not exist; the harness finds the repository "
            "from its editable install, or from the TRAINABLE_ROOT environment variable"
        )
    misnamed = sorted(path.name for path in registry.glob("*.yml"))
    if misnamed:
        raise RegistryError(
            f"{registry}: registry files must end in .yaml; rename {', '.join(misnamed)}"
        )
    return sorted(path.stem for path in registry.glob("*.yaml"))


def _unknown_claim(claim_id: str, registry: Path) -> UnknownClaimError:
    known = list_claims(registry)
    nearest = difflib.get_close_matches(claim_id, known, n=3, cutoff=0.6)
    hint = (
        f"nearest registered ids: {', '.join(nearest)}"
        if nearest
        else f"registered ids: {', '.join(known) or '(none)'}"
    )
    return UnknownClaimError(
        f"unknown claim id {claim_id!r}: there is no {registry / (claim_id + '.yaml')}; {hint}"
    )


def _field_name(path) -> str:
    """Render a jsonschema path; keys holding dots (nested result fields) go in brackets."""
    rendered = ""
    for part in path:
        if isinstance(part, int):
            rendered += f"[{part}]"
        elif "." in part:
            rendered += f"[{part}]"
        else:
            rendered += f".{part}" if rendered else part
    return rendered or "(top level)"


def _innermost(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """Descend into a failed ``oneOf`` along the branch the entry most likely meant.

    That branch is the one with the fewest failed constants (a wrong ``policy``) and then the
    fewest errors, so a missing ``reason`` is reported as such, not as "matches no schema".
    """
    if error.validator not in ("oneOf", "anyOf") or not error.context:
        return [error]
    branches: dict[int, list] = {}
    for sub_error in error.context:
        branches.setdefault(sub_error.relative_schema_path[0], []).append(sub_error)

    def score(index: int) -> tuple[int, int, int]:
        branch = branches[index]
        return (sum(e.validator == "const" for e in branch), len(branch), index)

    chosen = branches[min(branches, key=score)]
    return [inner for sub_error in chosen for inner in _innermost(sub_error)]


def _schema_problem(error: jsonschema.ValidationError) -> str:
    field = _field_name(error.absolute_path)
    message = error.message
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        # Name the unexpected field itself, not its parent.
        allowed = error.schema.get("properties", {})
        unexpected = sorted(key for key in error.instance if key not in allowed)
        field = ", ".join(_field_name([*error.absolute_path, key]) for key in unexpected)
        message = "not allowed here (no such field in claim_schema.json)"
    if error.validator == "pattern":
        shown = error.instance if len(error.instance) <= 60 else error.instance[:57] + "..."
        message = f"{shown!r} has the wrong form; expected: {error.schema.get('description')}"
    if error.validator == "type" and isinstance(error.instance, str):
        with contextlib.suppress(ValueError):
            float(error.instance)
            # PyYAML follows YAML 1.1, where 5e-4 (no dot) is a string: write 5.0e-4.
            message += (
                " (YAML reads a number without a decimal point, like 5e-4, as text; write 5.0e-4)"
            )
    return f"field {field}: {message}"


def _parse_registry_file(path: Path) -> tuple[Any, str]:
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        data = yaml.load(raw.decode("utf-8"), Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except UnicodeDecodeError as exc:
        raise RegistryError(f"{path}: not UTF-8 text ({exc})") from exc
    except yaml.YAMLError as exc:
        raise RegistryError(f"{path}: not valid YAML: {exc}") from exc
    return data, digest


def _check_consistency(data: dict, path: Path) -> None:
    """Checks across fields that a JSON schema cannot state."""
    if data["id"] != path.stem:
        raise RegistryError(
            f"{path}: field id is {data['id']!r} but the file is named {path.name}; "
            "the id must equal the file stem"
        )
    prefix = _CHAPTER_PREFIX.match(data["id"])
    if prefix and int(prefix.group(1)) != data["chapter"]:
        raise RegistryError(
            f"{path}: field chapter is {data['chapter']} but the id {data['id']!r} "
            f"names chapter {int(prefix.group(1))}"
        )
    for field, expectation in data["expect"].items():
        if "interval" in expectation and expectation["interval"][0] > expectation["interval"][1]:
            raise RegistryError(
                f"{path}: field expect[{field}].interval is {expectation['interval']}; "
                "write it as [lower, upper] with lower <= upper"
            )


def load_claim(claim_id: str, *, registry_dir: str | Path | None = None) -> Claim:
    """Read, validate and return the registry entry ``<registry_dir>/<claim_id>.yaml``.

    Parameters
    ----------
    claim_id : str
        The claim's id, e.g. ``"c15-invariance-001"``.
    registry_dir : path, optional
        Defaults to :data:`trainable_harness.paths.CLAIMS_DIR`.

    Raises
    ------
    UnknownClaimError
        If no such file exists; the message lists the nearest registered ids.
    RegistryError
        If the file is not YAML or breaks the schema; the message names file and field.

    Examples
    --------
    >>> try:
    ...     load_claim("c15-invariance-01")
    ... except UnknownClaimError as error:
    ...     print(str(error).split("; ")[-1])
    nearest registered ids: c15-invariance-001
    """
    registry = _registry_dir(registry_dir)
    path = registry / f"{claim_id}.yaml"
    if not isinstance(claim_id, str) or not _ID_PATTERN.fullmatch(claim_id) or not path.is_file():
        raise _unknown_claim(str(claim_id), registry)
    data, digest = _parse_registry_file(path)
    errors = [inner for error in _VALIDATOR.iter_errors(data) for inner in _innermost(error)]
    if errors:
        errors.sort(key=lambda error: list(map(str, error.absolute_path)))
        problems = "; ".join(_schema_problem(error) for error in errors)
        raise RegistryError(f"{path}: {problems}")
    _check_consistency(data, path)
    return Claim(
        id=data["id"],
        chapter=data["chapter"],
        statement=data["statement"],
        seed_policy=data["seed"],
        contract=data["contract"],
        compute=data["compute"],
        expect=data["expect"],
        path=path,
        registry_digest=digest,
    )


def display_contract(claim_id: str, *, registry_dir: str | Path | None = None) -> dict:
    """The claim line's contract as page text: ``seed``, ``dtype``, ``device``, ``estimator``.

    Read from the registry (not the artifact), so the line shows what the claim promises
    even before it has run. A derived seed shows its derivation and its value.

    Examples
    --------
    >>> display_contract("c15-invariance-001")["seed"]
    'none'
    >>> display_contract("c15-running-state-001")["seed"]
    'claim_seed("c15-running-state") = 316832669'
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    if claim.seed is None:
        seed = "none"
    else:
        seed = f'claim_seed("{claim.seed_policy["name"]}") = {claim.seed}'
    return {"seed": seed, **claim.contract}


# --- computing a result ----------------------------------------------------------------------


def _resolve_compute(claim: Claim):
    """Import the registered function; refuse, before importing, anything outside the harness."""
    if not _COMPUTE_PATTERN.fullmatch(claim.compute):
        raise RegistryError(
            f"{claim.path}: field compute is {claim.compute!r}; it must name "
            "trainable_harness.<module>.<function>"
        )
    module_name, _, function_name = claim.compute.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise RegistryError(
            f"{claim.path}: field compute names module {module_name}, which does not exist"
        ) from exc
    function = getattr(module, function_name, None)
    # Defined in that module, not merely imported into it (numpy or hashlib functions are).
    if not callable(function) or getattr(function, "__module__", None) != module_name:
        raise RegistryError(
            f"{claim.path}: field compute names {claim.compute}, which is not a function "
            f"defined in {module_name}"
        )
    return function


def _json_scalar(value, field: str, claim: Claim):
    """A JSON-ready Python scalar; numpy scalars become bool/int/float, NaN/inf become text."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        number = float(value)
        # JSON has no NaN or infinity; keep them visible (and failing) as text.
        return number if math.isfinite(number) else repr(number)
    if isinstance(value, str):
        return value
    raise WitnessResultError(
        f"{claim.compute} returned {type(value).__name__} for result field {field} of "
        f"{claim.id}; result fields must be numbers, booleans or strings (nest dicts for groups)"
    )


def _normalize_result(result, claim: Claim, prefix: str = "") -> dict:
    if not isinstance(result, Mapping):
        raise WitnessResultError(
            f"{claim.compute} returned {type(result).__name__} for {prefix or 'the result'} "
            f"of {claim.id}; a mapping of result fields is expected"
        )
    normalized = {}
    for key, value in result.items():
        if not isinstance(key, str) or not key or "." in key:
            raise WitnessResultError(
                f"{claim.compute} returned the field name {key!r} in {claim.id}; field names "
                "are non-empty strings without dots (dots join nested field names)"
            )
        field = f"{prefix}{key}"
        if isinstance(value, Mapping):
            normalized[key] = _normalize_result(value, claim, prefix=f"{field}.")
        else:
            normalized[key] = _json_scalar(value, field, claim)
    return normalized


def _flatten(result: Mapping, prefix: str = "") -> dict:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``: the dotted field names the registry uses."""
    flat = {}
    for key, value in result.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, prefix=f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _compute_result(claim: Claim) -> dict:
    """Call the registered function (with ``seed=`` under a derived policy) and normalize."""
    function = _resolve_compute(claim)
    keyword_arguments = {} if claim.seed is None else {"seed": claim.seed}
    return _normalize_result(function(**keyword_arguments), claim)


# --- comparing and building an artifact ------------------------------------------------------


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _equal_exactly(expected, got) -> bool:
    """Equality that keeps booleans, numbers and strings apart (``True == 1`` in Python)."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool) and expected == got
    if isinstance(expected, str) or isinstance(got, str):
        return isinstance(expected, str) and isinstance(got, str) and expected == got
    return got == expected


def _compare(expectation: Mapping, got) -> dict:
    """One field's comparison record: expected, got, tolerance (as shown), passed."""
    if got is _MISSING:
        got_shown, got = None, _MISSING
    else:
        got_shown = got
    if "equals" in expectation:
        expected, tolerance = expectation["equals"], "exact"
        passed = got is not _MISSING and _equal_exactly(expected, got)
    elif "abs_tol" in expectation:
        expected, bound = expectation["value"], expectation["abs_tol"]
        tolerance = f"abs_tol {bound!r} ({expectation['reason']})"
        passed = _is_number(got) and abs(got - expected) <= bound
    elif "rel_tol" in expectation:
        expected, bound = expectation["value"], expectation["rel_tol"]
        tolerance = f"rel_tol {bound!r} ({expectation['reason']})"
        passed = _is_number(got) and abs(got - expected) <= bound * abs(expected)
    else:
        expected = list(expectation["interval"])
        tolerance = f"closed interval ({expectation['reason']})"
        passed = _is_number(got) and expected[0] <= got <= expected[1]
    return {"expected": expected, "got": got_shown, "tolerance": tolerance, "passed": passed}


def _comparisons(claim: Claim, result: Mapping) -> dict:
    """Compare every expectation; a field without expectation (or vice versa) fails too."""
    flat = _flatten(result)
    comparisons = {
        field: _compare(expectation, flat.get(field, _MISSING))
        for field, expectation in claim.expect.items()
    }
    for field in flat.keys() - claim.expect.keys():
        comparisons[field] = {
            "expected": None,
            "got": flat[field],
            "tolerance": "no expectation registered",
            "passed": False,
        }
    return comparisons


def _provenance() -> dict:
    source_sha256 = harness_source_sha256()
    return {
        "harness_pin": harness_pin(),
        "harness_source_sha256": source_sha256,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def _build_artifact(claim: Claim, result: Mapping, provenance: Mapping, error) -> dict:
    """The artifact as a pure function of claim, result, provenance and a witness error."""
    comparisons = {} if error is not None else _comparisons(claim, result)
    verified = error is None and all(record["passed"] for record in comparisons.values())
    return {
        "id": claim.id,
        "chapter": claim.chapter,
        "statement": claim.statement,
        "status": "verified" if verified else "failed",
        "error": error,
        "compute": claim.compute,
        "result": dict(result),
        "expected": claim.expect,
        "comparisons": comparisons,
        "contract": {"seed": claim.seed, **claim.contract},
        "registry_digest": claim.registry_digest,
        "provenance": dict(provenance),
    }


def _artifact_text(artifact: Mapping) -> str:
    return json.dumps(artifact, sort_keys=True, indent=2, allow_nan=False) + "\n"


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``.

    A crash at any point leaves either the old file or the new one, never a torn file, and
    no temporary file behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)  # mkstemp creates 0600; artifacts are read by the site build
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def artifact_path(claim_id: str, artifacts_dir: str | Path | None = None) -> Path:
    """``<artifacts_dir>/<claim_id>.json``; by default under ``artifacts/claims/``.

    Examples
    --------
    >>> artifact_path("c15-invariance-001").relative_to(paths.REPO_ROOT).as_posix()
    'artifacts/claims/c15-invariance-001.json'
    """
    return _artifacts_dir(artifacts_dir) / f"{claim_id}.json"


def _failure_message(claim: Claim, artifact: Mapping, path: Path) -> str:
    lines = [
        f"{field}: expected {record['expected']!r}, got {record['got']!r}, "
        f"tolerance {record['tolerance']}"
        for field, record in sorted(artifact["comparisons"].items())
        if not record["passed"]
    ]
    return (
        f"claim {claim.id} failed ({claim.compute}); artifact written with status failed "
        f"to {path}:\n  " + "\n  ".join(lines)
    )


def _coverage_message(claim: Claim, artifact: Mapping) -> str | None:
    """Name registry/witness mismatches: fields without expectation, expectations without field."""
    comparisons = artifact["comparisons"]
    unexpected = sorted(f for f, r in comparisons.items() if r["expected"] is None)
    absent = sorted(f for f, r in comparisons.items() if r["got"] is None)
    if not unexpected and not absent:
        return None
    parts = []
    if unexpected:
        parts.append(f"result fields without an expectation: {', '.join(unexpected)}")
    if absent:
        parts.append(
            f"expectations naming fields the witness does not return: {', '.join(absent)}"
        )
    return f"{claim.path}: field expect does not match {claim.compute}: " + "; ".join(parts)


def verify_claim(
    claim_id: str,
    expected_harness: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> dict:
    """Recompute a registered claim, compare it with its registry, and write its artifact.

    Parameters
    ----------
    claim_id : str
        The claim's id.
    expected_harness : str
        The pin the caller was written against (a chapter's ``pin`` literal); must equal
        :func:`harness_pin`.
    registry_dir, artifacts_dir : path, optional
        Default to ``claims/`` and ``artifacts/claims/`` of the repository.

    Returns
    -------
    dict
        The artifact: ``id``, ``status``, ``statement``, ``chapter``, ``result``,
        ``expected``, ``comparisons`` (per field: expected, got, tolerance, passed),
        ``contract`` (seed, dtype, device, estimator), ``registry_digest`` and
        ``provenance`` (harness pin and source hash, Python, numpy, platform, machine).

    Raises
    ------
    UnknownClaimError, RegistryError
        For an unknown id or a malformed registry file.
    StalePinError
        If ``expected_harness`` is not the running harness's pin; nothing is computed.
    ClaimFailedError
        If a field misses its expectation; the artifact is written first, with status
        ``"failed"``.
    RegistryError
        Also when the witness's fields and the registry's expectations do not match one
        to one (failed artifact written first).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     claim = verify_claim("c15-invariance-001", harness_pin(), artifacts_dir=scratch)
    >>> claim["status"], claim["result"]["centered_jacobian_rank"]
    ('verified', 2)
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    current = harness_pin()
    if expected_harness != current:
        raise StalePinError(
            f"claim {claim_id} was asked for harness {expected_harness!r}, but the running "
            f"harness is {current!r}; run `make repin` to re-pin every chapter (it re-verifies "
            "the claims and reports which results changed)"
        )
    path = artifact_path(claim.id, artifacts_dir)
    provenance = _provenance()
    try:
        result = _compute_result(claim)
    except Exception as exc:
        # Record the failure so that no earlier artifact keeps saying verified.
        error = f"{type(exc).__name__}: {exc}"
        _write_atomically(path, _artifact_text(_build_artifact(claim, {}, provenance, error)))
        exc.add_note(f"while verifying claim {claim.id}; artifact {path} written as failed")
        raise
    artifact = _build_artifact(claim, result, provenance, error=None)
    _write_atomically(path, _artifact_text(artifact))
    if artifact["status"] != "verified":
        coverage = _coverage_message(claim, artifact)
        if coverage is not None:
            raise RegistryError(coverage)
        raise ClaimFailedError(_failure_message(claim, artifact, path))
    return artifact


# --- reading artifacts back: badges and checks -----------------------------------------------


_ARTIFACT_SHAPE = {
    "status": str,
    "result": dict,
    "provenance": dict,
    "registry_digest": str,
}


def _read_artifact(path: Path) -> dict:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TamperedArtifactError(f"{path} is not readable JSON ({exc})") from exc
    if not isinstance(stored, dict):
        raise TamperedArtifactError(f"{path} holds {type(stored).__name__}, not an artifact")
    for key, kind in _ARTIFACT_SHAPE.items():
        if not isinstance(stored.get(key), kind):
            raise TamperedArtifactError(f"{path}: field {key} is missing or not a {kind.__name__}")
    return stored


def _staleness(claim: Claim, stored: Mapping) -> str | None:
    """Why an artifact no longer describes the current harness and registry, or None."""
    provenance = stored["provenance"]
    current_pin = harness_pin()
    if provenance.get("harness_pin") != current_pin or (
        provenance.get("harness_source_sha256") != harness_source_sha256()
    ):
        return (
            f"artifact written by harness {provenance.get('harness_pin')!r}; the running "
            f"harness is {current_pin!r}"
        )
    if stored["registry_digest"] != claim.registry_digest:
        return f"artifact computed from another version of {claim.path.name}"
    return None


def _leaves(value, prefix: tuple = ()) -> dict:
    if isinstance(value, Mapping):
        leaves = {}
        for key, item in value.items():
            leaves.update(_leaves(item, (*prefix, str(key))))
        return leaves or {prefix: {}}
    return {prefix: value}


def _differences(stored: Mapping, expected: Mapping, limit: int = 8) -> list[str]:
    """Fields where two artifacts differ, compared as JSON text (so 1, 1.0 and true differ)."""
    stored_leaves, expected_leaves = _leaves(stored), _leaves(expected)
    differences = []
    for key in sorted(stored_leaves.keys() | expected_leaves.keys()):
        on_disk = json.dumps(stored_leaves.get(key, "(absent)"), sort_keys=True)
        wanted = json.dumps(expected_leaves.get(key, "(absent)"), sort_keys=True)
        if on_disk != wanted:
            differences.append(f"{_field_name(key)}: on disk {on_disk}, expected {wanted}")
    if len(differences) > limit:
        differences = [*differences[:limit], f"... and {len(differences) - limit} more"]
    return differences


def badge_state(
    claim_id: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> tuple[str, dict | None, str]:
    """What a page may show for a claim, judged from its artifact without recomputing.

    Returns
    -------
    state : str
        ``"not run"`` (no artifact); ``"failed"`` (unreadable artifact, status failed, or a
        stored status or field that its own stored result does not support under the
        current registry); ``"stale"`` (written by another harness pin or another version
        of the registry file); else ``"verified"``.
    artifact : dict or None
        The stored artifact, when it could be read.
    reason : str
        One line saying why.

    Raises
    ------
    UnknownClaimError, RegistryError
        For an unknown id or a malformed registry file (a site build should fail).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     badge_state("c15-invariance-001", artifacts_dir=scratch)[0]
    'not run'
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    path = artifact_path(claim.id, artifacts_dir)
    if not path.is_file():
        return "not run", None, f"no artifact at {path}"
    try:
        stored = _read_artifact(path)
    except TamperedArtifactError as exc:
        return "failed", None, str(exc)
    stale = _staleness(claim, stored)
    if stale is not None:
        return "stale", stored, stale
    try:
        result = _normalize_result(stored["result"], claim)
    except WitnessResultError as exc:
        return "failed", stored, f"{path}: stored result is malformed ({exc})"
    rebuilt = _build_artifact(claim, result, stored["provenance"], stored.get("error"))
    differences = _differences(stored, rebuilt)
    if differences:
        return (
            "failed",
            stored,
            f"{path} disagrees with its own stored result under {claim.path.name}: "
            + "; ".join(differences),
        )
    if stored["status"] != "verified":
        return "failed", stored, f"{path} records status failed"
    return (
        "verified",
        stored,
        f"{path} verified under harness {stored['provenance']['harness_pin']}",
    )


def check_artifact(
    claim_id: str,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> dict:
    """Recompute a claim and compare it with its artifact on disk, without writing anything.

    Returns
    -------
    dict
        The stored artifact, when it matches the recomputation in every field except the
        machine description in ``provenance``.

    Raises
    ------
    MissingArtifactError
        If there is no artifact.
    StaleArtifactError
        If it was written by another harness pin or another version of the registry file.
    TamperedArtifactError
        If it is unreadable, or its status, result or any derived field differs from what
        the recomputation gives; the message lists the fields.
    """
    claim = load_claim(claim_id, registry_dir=registry_dir)
    path = artifact_path(claim.id, artifacts_dir)
    if not path.is_file():
        raise MissingArtifactError(
            f"claim {claim.id} has no artifact at {path}; run "
            "`python -m trainable_harness claims verify` to write it"
        )
    stored = _read_artifact(path)
    stale = _staleness(claim, stored)
    if stale is not None:
        raise StaleArtifactError(
            f"{path}: {stale}; run `python -m trainable_harness claims verify` to rewrite it"
        )
    try:
        result, error = _compute_result(claim), None
    except Exception as exc:
        result, error = {}, f"{type(exc).__name__}: {exc}"
    recomputed = _build_artifact(claim, result, stored["provenance"], error)
    differences = _differences(stored, recomputed)
    if differences:
        raise TamperedArtifactError(
            f"{path} disagrees with a fresh recomputation of {claim.id}: " + "; ".join(differences)
        )
    return stored


# --- re-pinning chapters ---------------------------------------------------------------------


@dataclass(frozen=True)
class PinUpdate:
    """One chapter file's pin lines before and after :func:`repin_chapters`."""

    path: Path
    old_pins: tuple[str, ...]
    new_pin: str

    @property
    def changed(self) -> bool:
        return any(old != self.new_pin for old in self.old_pins)


@dataclass(frozen=True)
class ClaimReport:
    """One claim after re-verification: its status and how its result moved."""

    id: str
    status: str
    changes: tuple[str, ...]
    had_artifact: bool
    message: str = ""


@dataclass(frozen=True)
class RepinReport:
    """What :func:`repin` did: the chapter pin updates and each claim's re-verification."""

    pin: str
    pin_updates: tuple[PinUpdate, ...]
    claims: tuple[ClaimReport, ...]

    @property
    def all_verified(self) -> bool:
        return all(report.status == "verified" for report in self.claims)


def repin_chapters(chapters_dir: str | Path | None = None) -> tuple[PinUpdate, ...]:
    """Rewrite every ``pin = "..."`` line of ``chapters/*.md`` to the current :func:`harness_pin`.

    Files without a pin line are left alone (a chapter without claims needs none); files
    whose pin is already current are not rewritten.
    """
    directory = Path(chapters_dir) if chapters_dir is not None else paths.CHAPTERS_DIR
    pin = harness_pin()
    updates = []
    for chapter in sorted(directory.glob("*.md")):
        text = chapter.read_bytes().decode("utf-8")  # bytes keep the file's line endings
        old_pins = tuple(match["pin"] for match in _PIN_LINE.finditer(text))
        if not old_pins:
            continue
        update = PinUpdate(path=chapter, old_pins=old_pins, new_pin=pin)
        if update.changed:
            new_text = _PIN_LINE.sub(lambda match: f'{match["indent"]}pin = "{pin}"', text)
            _write_atomically(chapter, new_text)
        updates.append(update)
    return tuple(updates)


def _result_changes(old: Mapping | None, new: Mapping) -> tuple[str, ...]:
    if old is None:
        return ()
    old_flat, new_flat = _flatten(old), _flatten(new)
    return tuple(
        f"{field}: {old_flat.get(field, '(absent)')!r} -> {new_flat.get(field, '(absent)')!r}"
        for field in sorted(old_flat.keys() | new_flat.keys())
        if json.dumps(old_flat.get(field)) != json.dumps(new_flat.get(field))
    )


def _stored_result(claim_id: str, artifacts_dir) -> Mapping | None:
    path = artifact_path(claim_id, artifacts_dir)
    try:
        return _read_artifact(path)["result"] if path.is_file() else None
    except TamperedArtifactError:
        return None


def repin(
    chapters_dir: str | Path | None = None,
    *,
    registry_dir: str | Path | None = None,
    artifacts_dir: str | Path | None = None,
) -> RepinReport:
    """Re-pin every chapter, re-verify every claim, and report whose results changed.

    The results on disk before re-verification are the baseline for "changed".
    """
    ids = list_claims(registry_dir)
    before = {claim_id: _stored_result(claim_id, artifacts_dir) for claim_id in ids}
    updates = repin_chapters(chapters_dir)
    pin = harness_pin()
    reports = []
    for claim_id in ids:
        try:
            artifact = verify_claim(
                claim_id, pin, registry_dir=registry_dir, artifacts_dir=artifacts_dir
            )
            status, message = artifact["status"], ""
        except Exception as exc:  # report every claim, then let the caller fail
            status, message = "failed", f"{type(exc).__name__}: {exc}"
        after = _stored_result(claim_id, artifacts_dir) or {}
        reports.append(
            ClaimReport(
                id=claim_id,
                status=status,
                changes=_result_changes(before[claim_id], after),
                had_artifact=before[claim_id] is not None,
                message=message,
            )
        )
    return RepinReport(pin=pin, pin_updates=updates, claims=tuple(reports))
