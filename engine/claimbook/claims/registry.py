"""The claim registry: ``claims/<id>.yaml`` read, validated (``compute`` on every load) or
refused; seeds derived from names; running the ``@claim_computation`` an entry names.
"""

import copy
import difflib
import hashlib
import importlib
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np

from claimbook import cache, instruments, paths
from claimbook.claims.registry_schema import MAX_FILE_BYTES, excerpt, refusal, validated
from claimbook.errors import (
    ComputationNotFoundError,
    RegistryError,
    SeedNameError,
    UnknownClaimError,
    WitnessResultError,
)
from claimbook.text import one_line

# Validated entries by file name and bytes: a page asks for a claim once per bound number.
ENTRIES = cache.ContentCache("registry entries")
_ERROR_LIMIT = 400  # characters of a computation's exception text kept in an artifact
_LINK_REFUSED = (
    "is a symbolic link; a registry entry must be a regular file of claims/ (what a link "
    "points to can change without the book seeing it): replace the link with the file"
)


def claim_seed(name: str) -> int:
    """The seed derived from ``name``: the first 8 hex digits of ``sha256(name)``;
    :class:`SeedNameError` if ``name`` is not a string."""
    if not isinstance(name, str):
        raise SeedNameError(
            f"claim_seed: parameter name must be a str, got {type(name).__name__} {excerpt(name)}"
        )
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)


def claim_seeds(name: str, count: int) -> list[int]:
    """``[claim_seed(f"{name}/{k}") for k in range(count)]``; :class:`SeedNameError` unless
    ``name`` is a string and ``count`` an int >= 1."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SeedNameError(f"claim_seeds: parameter count must be an int >= 1, got {count!r}")
    claim_seed(name)  # type check on name
    return [claim_seed(f"{name}/{k}") for k in range(count)]


@dataclass(frozen=True)
class Claim:
    """One validated registry entry: the file's fields (``seed`` as ``seed_policy``; None
    when absent), ``path`` and ``registry_digest`` (SHA-256 of the file's bytes)."""

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
    catches: list | None = None

    @property
    def kind(self) -> str:
        """``"statistical"`` (a set of seeds) or ``"deterministic"``."""
        return "statistical" if self.seed_policy["policy"] == "derived-set" else "deterministic"

    @property
    def seed(self) -> int | None:
        """The seed passed to the computation: ``claim_seed(name)``, else None."""
        policy = self.seed_policy
        return claim_seed(policy["name"]) if policy["policy"] == "derived" else None

    @property
    def seeds(self) -> list[int] | None:
        """A statistical claim's seeds, ``claim_seeds(name, count)``; else None."""
        if self.kind != "statistical":
            return None
        return claim_seeds(self.seed_policy["name"], self.seed_policy["count"])

    @property
    def shown_contract(self) -> dict:
        """The contract as a page shows it: the seed's derivation and value, then the rest."""
        policy = self.seed_policy
        if policy["policy"] == "derived":
            seed = f'claim_seed("{policy["name"]}") = {self.seed}'
        elif policy["policy"] == "derived-set":
            seed = f'claim_seeds("{policy["name"]}", {policy["count"]}): {policy["count"]} seeds'
        else:
            seed = "none"
        return {"seed": seed, **self.contract}


def list_claims(registry_dir: str | Path | None = None) -> list[str]:
    """The registered ids (stems of ``<registry_dir>/*.yaml``, default ``claims/``), sorted;
    :class:`RegistryError` for a missing directory, a ``*.yml`` file, a symbolic link or a
    file not named ``<claim id>.yaml``."""
    registry = Path(registry_dir or paths.CLAIMS_DIR)
    try:
        entries = list(os.scandir(registry))  # one read: names and file types
    except (FileNotFoundError, NotADirectoryError):
        raise RegistryError(
            f"registry directory {registry} does not exist; the harness finds the repository "
            "from its editable install, or from the TRAINABLE_ROOT environment variable"
        ) from None
    linked = sorted(entry.name for entry in entries if entry.is_symlink())
    if linked:
        raise refusal(registry / linked[0], _LINK_REFUSED)
    misnamed = sorted(entry.name for entry in entries if entry.name.endswith(".yml"))
    if misnamed:
        raise refusal(registry, f"registry files must end in .yaml; rename {', '.join(misnamed)}")
    stems = sorted(
        Path(entry.name).stem
        for entry in entries
        if entry.name.endswith(".yaml") and entry.is_file()
    )
    unnamed = [stem for stem in stems if not _is_claim_id(stem)]
    if unnamed:
        raise refusal(
            registry,
            f"{excerpt(unnamed[0] + '.yaml')} is not named <id>.yaml with a claim id (lower-case "
            f"words and digits joined by hyphens, at most {paths.MAX_NAME_LENGTH} characters); "
            "rename it",
        )
    return stems


def _is_claim_id(name: str) -> bool:
    return len(name) <= paths.MAX_NAME_LENGTH and bool(re.fullmatch(paths.CLAIM_ID_PATTERN, name))


def _unknown_claim(claim_id: Any, registry: Path, known: list[str]) -> UnknownClaimError:
    candidates = [c for c in known if c != claim_id]
    nearest = difflib.get_close_matches(str(claim_id)[:200], candidates, n=3, cutoff=0.6)
    hint = (
        f"nearest registered ids: {', '.join(nearest)}"
        if nearest
        else f"registered ids: {', '.join(known) or '(none)'}"
    )
    return UnknownClaimError(
        one_line(
            f"unknown claim id {excerpt(claim_id)}: no registry file of that exact name in "
            f"{registry}; {hint}"
        )
    )


def load_claim(claim_id: str, *, registry_dir: str | Path | None = None) -> Claim:
    """The validated entry ``<registry_dir>/<claim_id>.yaml`` (default ``claims/``);
    :class:`UnknownClaimError` (naming the nearest ids) unless ``claim_id`` is one of
    :func:`list_claims`, checked before a path is built; :class:`RegistryError` for a
    symbolic link, a refused file or a ``compute`` that is not a registered computation."""
    registry = Path(registry_dir or paths.CLAIMS_DIR)
    if not (isinstance(claim_id, str) and _is_claim_id(claim_id)):
        raise _unknown_claim(claim_id, registry, list_claims(registry))
    path = paths.registry_path(claim_id, registry)
    if path.is_symlink():
        raise refusal(path, _LINK_REFUSED)
    if not path.is_file():
        raise _unknown_claim(claim_id, registry, list_claims(registry))
    with path.open("rb") as stream:
        raw = stream.read(MAX_FILE_BYTES + 1)  # a larger file is refused unread
    data = ENTRIES.get(cache.digest(path.name, raw), lambda: validated(raw, path))
    try:  # on every load: the witnesses may have changed since the entry was cached
        resolve_computation(data["compute"])
    except ComputationNotFoundError as error:
        raise refusal(path, f"field compute: {error}") from None
    data = copy.deepcopy(data)  # the cached entry is shared; callers may mutate theirs
    data["seed_policy"] = data.pop("seed")  # the schema's fields are the Claim's
    return Claim(**data, path=path, registry_digest=hashlib.sha256(raw).hexdigest())


def resolve_computation(name: str) -> Callable[..., Mapping]:
    """The marked function ``name``; :class:`ComputationNotFoundError` (naming the nearest)
    if it is outside the witnesses, its module cannot be imported, or it is not marked.

    >>> try:
    ...     resolve_computation("trainable_harness.witnesses.chapter15.epsilon.EPSILON_RATIOS")
    ... except ComputationNotFoundError as error:
    ...     print(str(error).split("; ")[1])
    did you mean trainable_harness.witnesses.chapter15.epsilon.epsilon_witness?
    """
    claimable = importlib.import_module(f"{instruments.PACKAGE}.claimable")
    module_name, _, function_name = str(name).rpartition(".")
    if not module_name.startswith(claimable.WITNESS_PACKAGE + "."):
        raise ComputationNotFoundError(
            f"{excerpt(name)} is not in {claimable.WITNESS_PACKAGE}; claim computations are "
            "functions marked with @claim_computation in its modules"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ComputationNotFoundError(
            f"{excerpt(name)}: module {excerpt(module_name)} cannot be imported ({error})"
        ) from None
    function = getattr(module, function_name, None)
    if (
        claimable.is_claim_computation(function)
        and function.__module__ == module_name
        and function.__qualname__ == function_name
    ):
        return function
    marked = sorted(
        f"{module_name}.{name}"
        for name, value in vars(module).items()
        if claimable.is_claim_computation(value) and value.__module__ == module_name
    )
    nearest = difflib.get_close_matches(str(name)[:200], marked, n=1)
    hint = f"; did you mean {nearest[0]}?" if nearest else ""
    raise ComputationNotFoundError(
        f"{excerpt(name)} is not a function marked with @claim_computation in {module_name}{hint}"
    )


def _json_scalar(value, field: str, claim) -> Any:
    """A JSON-ready scalar: numpy scalars as bool/int/float, NaN and inf as text."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        number = float(value)
        return number if math.isfinite(number) else repr(number)
    if isinstance(value, str):
        return value
    raise WitnessResultError(
        f"{claim.compute} returned {type(value).__name__} for result field {field} of "
        f"{claim.id}; result fields must be numbers, booleans or strings (nest dicts for groups)"
    )


def normalize_result(result, claim, prefix: str = "") -> dict:
    """A computation's mapping, checked, with JSON scalars; else :class:`WitnessResultError`."""
    if not isinstance(result, Mapping):
        raise WitnessResultError(
            f"{claim.compute} returned {type(result).__name__} for {prefix or 'the result'} "
            f"of {claim.id}; a mapping of result fields is expected"
        )
    normalized = {}
    for key, value in result.items():
        if not isinstance(key, str) or not key or "." in key:
            raise WitnessResultError(
                f"{claim.compute} returned the field name {str(key)[:80]!r} in {claim.id}; "
                "field names are non-empty strings without dots (dots join nested names)"
            )
        field = f"{prefix}{key}"
        if isinstance(value, Mapping):
            normalized[key] = normalize_result(value, claim, prefix=f"{field}.")
        else:
            normalized[key] = _json_scalar(value, field, claim)
    return normalized


def flatten(result: Mapping, prefix: str = "") -> dict:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``: the dotted field names the registry uses."""
    flat = {}
    for key, value in result.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, prefix=f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def run_computation(claim) -> tuple[list[dict], str | None]:
    """Run ``claim``'s computation, once per seed if statistical, in order, up to the first
    error: the normalized results and the error (else None), never raising it."""
    function = resolve_computation(claim.compute)  # load_claim checked the name
    results: list[dict] = []
    for seed in claim.seeds if claim.kind == "statistical" else [claim.seed]:
        arguments = {} if seed is None else {"seed": seed}
        try:
            results.append(normalize_result(function(**arguments), claim))
        except Exception as exc:  # recorded in the artifact: the chapter goes on
            error = f"{type(exc).__name__}: {exc}"
            if len(error) > _ERROR_LIMIT:
                error = error[: _ERROR_LIMIT - 3] + "..."
            return results, error
    return results, None
