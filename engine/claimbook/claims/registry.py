"""The claim registry: ``claims/<id>.yaml``, read, validated and refused when unusable.

One file per claim, parsed with a PyYAML safe loader that also refuses repeated keys and
anchors/aliases (so a small alias-expanding file cannot grow into a huge document), then
validated against ``claim_schema.json`` and a few cross-field checks. A registry file is
refused, with its path and the field named, when it holds a non-finite number (``.inf``,
``.nan``), a control character in any text, or a ``compute`` that is not a registered
claim computation. Messages quote at most :data:`EXCERPT` characters of an offending value.

Seeds
-----
``seed: {policy: derived, name: N}`` passes ``claim_seed(N)``; a *statistical* claim has
``seed: {policy: derived-set, name: N, count: n}`` and runs once per seed of
``claim_seeds(N, n) = [claim_seed(f"{N}/0"), ..., claim_seed(f"{N}/{n-1}")]`` (n >= 2 by
the schema; a conclusion drawn from randomness uses n >= 10).

Examples
--------
>>> claim_seed("c15-running-state")
316832669
>>> claim_seeds("toy", 2) == [claim_seed("toy/0"), claim_seed("toy/1")]
True
>>> load_claim("c15-invariance-001").kind
'deterministic'
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from claimbook import cache, paths
from claimbook.errors import (
    ComputationNotFoundError,
    RegistryError,
    SeedNameError,
    UnknownClaimError,
)

__all__ = [
    "Claim",
    "claim_seed",
    "claim_seeds",
    "display_contract",
    "list_claims",
    "load_claim",
]

EXCERPT = 80  # characters of an offending value a message may quote
_MAX_PROBLEMS = 6
# Validated entries by file name and bytes: a page build asks for the same claim once per
# bound number, and parsing YAML in Python is slow.
_ENTRIES = cache.ContentCache("registry entries")
_CHAPTER_PREFIX = re.compile(r"c(\d+)-")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_STATISTICAL_KINDS = ("ci_within", "mean", "fraction")
_SCHEMA = json.loads(resources.files("claimbook.claims").joinpath("claim_schema.json").read_text())
_VALIDATOR = jsonschema.Draft202012Validator(_SCHEMA)


def excerpt(value: Any, limit: int = EXCERPT) -> str:
    """``repr(value)`` cut to ``limit`` characters, with an ellipsis and the full length.

    Examples
    --------
    >>> excerpt("a" * 200).endswith("... (202 characters)")
    True
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 3]}... ({len(text)} characters)"


# --- seeds ----------------------------------------------------------------------------------


def claim_seed(name: str) -> int:
    """The claim-specific seed: the first 8 hex digits of ``sha256(name)`` as an integer.

    A registry's ``seed: {policy: derived, name: ...}`` means this value, so a seed is
    derived from a readable name instead of being chosen (and re-chosen) by hand.

    Raises
    ------
    SeedNameError
        If ``name`` is not a string.

    Examples
    --------
    >>> claim_seed("c15-running-state")
    316832669
    """
    if not isinstance(name, str):
        raise SeedNameError(
            f"claim_seed: parameter name must be a str, got {type(name).__name__} {excerpt(name)}"
        )
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)


def claim_seeds(name: str, count: int) -> list[int]:
    """The seeds of a statistical claim: ``[claim_seed(f"{name}/{k}") for k in range(count)]``.

    Raises
    ------
    SeedNameError
        If ``name`` is not a string or ``count`` is not a positive integer.

    Examples
    --------
    >>> claim_seeds("c16-example", 3)[0] == claim_seed("c16-example/0")
    True
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SeedNameError(f"claim_seeds: parameter count must be an int >= 1, got {count!r}")
    claim_seed(name)  # type check on name
    return [claim_seed(f"{name}/{k}") for k in range(count)]


# --- the registry entry -----------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One validated registry entry, ``claims/<id>.yaml``.

    Attributes
    ----------
    id, chapter, statement, compute : as in the registry file.
    seed_policy : dict
        ``{"policy": "none"}``, ``{"policy": "derived", "name": ...}`` or
        ``{"policy": "derived-set", "name": ..., "count": n}``.
    contract : dict
        ``dtype``, ``device`` and ``estimator``, free text shown on the page.
    expect : dict
        Result field (dotted for nested fields) -> expectation.
    path : pathlib.Path
        The registry file.
    registry_digest : str
        SHA-256 of the registry file's bytes.
    statistics : dict or None
        ``{"level": ..., "method": "t" | "bootstrap"}`` for a statistical claim.
    refutes : dict or None
        ``{"account": ..., "source": ...}`` for a claim that refutes a common account.
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
    statistics: dict | None = None
    refutes: dict | None = None

    @property
    def kind(self) -> str:
        """``"statistical"`` (a set of seeds) or ``"deterministic"``."""
        return "statistical" if self.seed_policy["policy"] == "derived-set" else "deterministic"

    @property
    def seed(self) -> int | None:
        """The seed passed to the witness: ``claim_seed(name)``, else None."""
        if self.seed_policy["policy"] == "derived":
            return claim_seed(self.seed_policy["name"])
        return None

    @property
    def shown_contract(self) -> dict:
        """The contract as a page shows it: a derived seed with its derivation and value, a
        seed set with its derivation and size, then ``dtype``, ``device``, ``estimator``."""
        policy = self.seed_policy
        if policy["policy"] == "derived":
            seed = f'claim_seed("{policy["name"]}") = {self.seed}'
        elif policy["policy"] == "derived-set":
            seed = f'claim_seeds("{policy["name"]}", {policy["count"]}): {policy["count"]} seeds'
        else:
            seed = "none"
        return {"seed": seed, **self.contract}

    @property
    def seeds(self) -> list[int] | None:
        """A statistical claim's seeds, :func:`claim_seeds` of its name and count; else None."""
        if self.kind == "statistical":
            return claim_seeds(self.seed_policy["name"], self.seed_policy["count"])
        return None


class _StrictSafeLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing repeated keys and anchors/aliases outright."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(
                None,
                None,
                "anchors and aliases (&name, *name) are not allowed in a registry file",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {excerpt(key)}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _registry_dir(registry_dir: str | Path | None) -> Path:
    return Path(registry_dir) if registry_dir is not None else paths.CLAIMS_DIR


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
    try:
        # One read of the directory (asked for on every load_claim): names and file types.
        entries = list(os.scandir(registry))
    except (FileNotFoundError, NotADirectoryError):
        raise RegistryError(
            f"registry directory {registry} does not exist; the harness finds the repository "
            "from its editable install, or from the TRAINABLE_ROOT environment variable"
        ) from None
    misnamed = sorted(entry.name for entry in entries if entry.name.endswith(".yml"))
    if misnamed:
        raise RegistryError(
            f"{registry}: registry files must end in .yaml; rename {', '.join(misnamed)}"
        )
    return sorted(
        Path(entry.name).stem
        for entry in entries
        if entry.name.endswith(".yaml") and entry.is_file()
    )


def _unknown_claim(claim_id: Any, registry: Path, known: list[str]) -> UnknownClaimError:
    shown = excerpt(claim_id)
    candidates = [c for c in known if c != claim_id]
    nearest = (
        difflib.get_close_matches(claim_id[:200], candidates, n=3, cutoff=0.6)
        if isinstance(claim_id, str)
        else []
    )
    hint = (
        f"nearest registered ids: {', '.join(nearest)}"
        if nearest
        else f"registered ids: {', '.join(known) or '(none)'}"
    )
    return UnknownClaimError(
        f"unknown claim id {shown}: no registry file of that exact name in {registry}; {hint}"
    )


# --- reading and refusing -------------------------------------------------------------------


def _field_name(path) -> str:
    """Render a field path; keys holding dots (nested result fields) go in brackets."""
    rendered = ""
    for part in path:
        if isinstance(part, int):
            rendered += f"[{part}]"
        elif len(str(part)) > 60:
            rendered += f"[{str(part)[:57]}...]"
        elif "." in str(part) or not str(part):
            rendered += f"[{part}]"
        else:
            rendered += f".{part}" if rendered else str(part)
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
    instance = error.instance
    if not isinstance(instance, dict | list):
        # jsonschema quotes the whole value; quote a short excerpt instead.
        message = message.replace(repr(instance), excerpt(instance))
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        # Name the unexpected field itself, not its parent.
        allowed = error.schema.get("properties", {})
        unexpected = sorted(str(key) for key in instance if key not in allowed)
        field = ", ".join(_field_name([*error.absolute_path, key]) for key in unexpected[:5])
        message = "not allowed here (no such field in claim_schema.json)"
    elif isinstance(instance, dict | list) and len(message) > 2 * EXCERPT:
        message = f"{excerpt(instance)} fails {error.validator} {excerpt(error.validator_value)}"
    if error.validator == "pattern":
        message = (
            f"{excerpt(instance)} has the wrong form; expected: {error.schema.get('description')}"
        )
    if error.validator == "type" and isinstance(instance, str):
        with contextlib.suppress(ValueError):
            float(instance)
            # PyYAML follows YAML 1.1, where 5e-4 (no dot) is a string: write 5.0e-4.
            message += (
                " (YAML reads a number without a decimal point, like 5e-4, as text; write 5.0e-4)"
            )
    return f"field {field}: {message}"


def _parse_registry_text(raw: bytes, path: Path) -> Any:
    try:
        return yaml.load(raw.decode("utf-8"), Loader=_StrictSafeLoader)  # a SafeLoader subclass
    except UnicodeDecodeError as exc:
        raise RegistryError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except yaml.YAMLError as exc:
        text = str(exc)
        if len(text) > 6 * EXCERPT:
            text = text[: 6 * EXCERPT] + " ..."
        raise RegistryError(f"{path}: not valid YAML: {text}") from exc


def _walk(value, path=()):
    """Every (field path, leaf or key) of a parsed registry document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), key
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))
    else:
        yield path, value


def _refuse_unusable_values(data: Any, path: Path) -> None:
    """Non-finite numbers and control characters, anywhere in the file."""
    for field, value in _walk(data):
        if isinstance(value, float) and not math.isfinite(value):
            raise RegistryError(
                f"{path}: field {_field_name(field)}: {value!r} is not a finite number; "
                "values and tolerances must be finite"
            )
        if isinstance(value, str) and _CONTROL.search(value):
            character = _CONTROL.search(value).group()
            raise RegistryError(
                f"{path}: field {_field_name(field)}: control character {character!r} in "
                f"{excerpt(value)}; text fields hold printable characters only"
            )


def _check_consistency(data: dict, path: Path) -> None:
    """Checks across fields that a JSON schema cannot state."""
    if data["id"] != path.stem:
        raise RegistryError(
            f"{path}: field id is {excerpt(data['id'])} but the file is named "
            f"{excerpt(path.name)}; the id must equal the file stem"
        )
    prefix = _CHAPTER_PREFIX.match(data["id"])
    if prefix and int(prefix.group(1)) != data["chapter"]:
        raise RegistryError(
            f"{path}: field chapter is {data['chapter']} but the id {data['id']!r} "
            f"names chapter {int(prefix.group(1))}"
        )
    statistical = data["seed"]["policy"] == "derived-set"
    if statistical and "statistics" not in data:
        raise RegistryError(
            f"{path}: field statistics is required with seed policy derived-set, e.g. "
            "statistics: {level: 0.95, method: t}"
        )
    if not statistical and "statistics" in data:
        raise RegistryError(
            f"{path}: field statistics is only for seed policy derived-set (a statistical claim)"
        )
    for field, expectation in data["expect"].items():
        for bounds_name in ("interval", "ci_within"):
            bounds = expectation.get(bounds_name)
            if bounds is not None and bounds[0] > bounds[1]:
                raise RegistryError(
                    f"{path}: field expect[{field}].{bounds_name} is {bounds}; "
                    "write it as [lower, upper] with lower <= upper"
                )
        kind = next((k for k in _STATISTICAL_KINDS if k in expectation), None)
        if kind is not None and not statistical:
            raise RegistryError(
                f"{path}: field expect[{field}].{kind} needs a statistical claim "
                "(seed policy derived-set)"
            )


def _check_compute(data: dict, path: Path) -> None:
    from claimbook.claims.computations import resolve_computation

    try:
        resolve_computation(data["compute"])
    except ComputationNotFoundError as error:
        raise RegistryError(f"{path}: field compute: {error}") from None


def load_claim(claim_id: str, *, registry_dir: str | Path | None = None) -> Claim:
    """Read, validate and return the registry entry ``<registry_dir>/<claim_id>.yaml``.

    Parameters
    ----------
    claim_id : str
        The claim's id, e.g. ``"c15-invariance-001"``; it must be exactly one of
        :func:`list_claims` (case-sensitive, whatever the filesystem).
    registry_dir : path, optional
        Defaults to :data:`claimbook.paths.CLAIMS_DIR`.

    Raises
    ------
    UnknownClaimError
        If no such claim is registered; the message lists the nearest other ids.
    RegistryError
        If the file is not usable YAML, breaks the schema, or names an unregistered
        computation; the message names file and field.

    Examples
    --------
    >>> try:
    ...     load_claim("c15-invariance-01")
    ... except UnknownClaimError as error:
    ...     print(str(error).split("; ")[-1].split(", ")[0])  # the nearest comes first
    nearest registered ids: c15-invariance-001
    """
    registry = _registry_dir(registry_dir)
    known = list_claims(registry)
    if not isinstance(claim_id, str) or claim_id not in known:
        raise _unknown_claim(claim_id, registry, known)
    path = paths.registry_path(claim_id, registry)
    raw = path.read_bytes()
    data = _ENTRIES.get(cache.digest(path.name, raw), lambda: _validated(raw, path))
    _check_compute(data, path)  # checked on every load: the witnesses may have changed since
    # A fresh copy each time: the cached entry is shared, and callers may mutate theirs.
    return _claim(copy.deepcopy(data), path, hashlib.sha256(raw).hexdigest())


def _validated(raw: bytes, path: Path) -> dict:
    """The registry file's data, refused unless it is usable (everything but ``compute``)."""
    data = _parse_registry_text(raw, path)
    _refuse_unusable_values(data, path)
    errors = [inner for error in _VALIDATOR.iter_errors(data) for inner in _innermost(error)]
    if errors:
        errors.sort(key=lambda error: list(map(str, error.absolute_path)))
        problems = [_schema_problem(error) for error in errors]
        if len(problems) > _MAX_PROBLEMS:
            problems = [*problems[:_MAX_PROBLEMS], f"... and {len(problems) - _MAX_PROBLEMS} more"]
        raise RegistryError(f"{path}: {'; '.join(problems)}")
    _check_consistency(data, path)
    return data


def _claim(data: dict, path: Path, digest: str) -> Claim:
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
        statistics=data.get("statistics"),
        refutes=data.get("refutes"),
    )


def display_contract(claim_id: str, *, registry_dir: str | Path | None = None) -> dict:
    """The claim line's contract as page text: ``seed``, ``dtype``, ``device``, ``estimator``.

    Read from the registry (not the artifact), so the line shows what the claim promises
    even before it has run (see :attr:`Claim.shown_contract`).

    Examples
    --------
    >>> display_contract("c15-invariance-001")["seed"]
    'none'
    >>> display_contract("c15-running-state-001")["seed"]
    'claim_seed("c15-running-state") = 316832669'
    """
    return load_claim(claim_id, registry_dir=registry_dir).shown_contract
