"""The claim registry: ``claims/<id>.yaml``, read, validated and refused when unusable.

One file per claim, read and refused by :mod:`claimbook.claims.registry_schema`, whose
docstring lists the rules (each refusal one line naming the file and the field); a
``compute`` that is not a registered claim computation is refused here, on every load.

Ids
---
A claim id is lower-case words and digits joined by hyphens, at most 100 characters
(:func:`claimbook.paths.check_claim_id`, the schema's ``id`` pattern); :func:`load_claim`
accepts only an id that is exactly one of :func:`list_claims`, before any path is built
from it.

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

import copy
import difflib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claimbook import cache, paths
from claimbook.claims.computations import resolve_computation
from claimbook.claims.registry_schema import validated
from claimbook.claims.registry_yaml import MAX_FILE_BYTES, excerpt, refusal
from claimbook.errors import (
    ComputationNotFoundError,
    RegistryError,
    SeedNameError,
    UnknownClaimError,
)
from claimbook.text import one_line

__all__ = [
    "Claim",
    "claim_seed",
    "claim_seeds",
    "display_contract",
    "list_claims",
    "load_claim",
]


# Validated entries by file name and bytes, in this process: a page build asks for the same
# claim once per bound number, and parsing YAML in Python is slow.
ENTRIES = cache.ContentCache("registry entries")


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
    catches : list of dict or None
        ``[{"perturbation": ..., "says": ...}, ...]``: the mistakes the claim exists to catch,
        each a function of ``claims/mistakes/<file>.py`` (see
        :mod:`claimbook.claims.mutate`).
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
    catches: list | None = None

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


_LINK_REFUSED = (
    "is a symbolic link; a registry entry must be a regular file of claims/ (what a link "
    "points to can change without the book seeing it): replace the link with the file"
)


def _registry_dir(registry_dir: str | Path | None) -> Path:
    return Path(registry_dir) if registry_dir is not None else paths.CLAIMS_DIR


def list_claims(registry_dir: str | Path | None = None) -> list[str]:
    """The ids of the registered claims (the stems of ``claims/*.yaml``), sorted.

    Raises
    ------
    RegistryError
        If the registry directory does not exist, or holds a ``*.yml`` file (which would
        otherwise be ignored without a word), or a symbolic link (the message names it).

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
    linked = sorted(entry.name for entry in entries if entry.is_symlink())
    if linked:  # its target could change, or lie outside the book, without the book seeing
        raise refusal(registry / linked[0], _LINK_REFUSED)
    misnamed = sorted(entry.name for entry in entries if entry.name.endswith(".yml"))
    if misnamed:
        raise RegistryError(
            one_line(f"{registry}: registry files must end in .yaml; rename {', '.join(misnamed)}")
        )
    stems = sorted(
        Path(entry.name).stem
        for entry in entries
        if entry.name.endswith(".yaml") and entry.is_file()
    )
    unnamed = [stem for stem in stems if not _is_claim_id(stem)]
    if unnamed:
        raise RegistryError(
            one_line(
                f"{paths.shown(registry)}: {excerpt(unnamed[0] + '.yaml')} is not named "
                "<id>.yaml with a claim id (lower-case words and digits joined by hyphens, at "
                f"most {paths.MAX_NAME_LENGTH} characters); rename it"
            )
        )
    return stems


def _is_claim_id(name: str) -> bool:
    try:
        paths.check_claim_id(name)
    except UnknownClaimError:
        return False
    return True


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
        one_line(
            f"unknown claim id {shown}: no registry file of that exact name in {registry}; {hint}"
        )
    )


# --- reading and refusing -------------------------------------------------------------------


def _check_compute(data: dict, path: Path) -> None:
    try:
        resolve_computation(data["compute"])
    except ComputationNotFoundError as error:
        raise refusal(path, f"field compute: {error}") from None


def _entry_key(path: Path, raw: bytes) -> str:
    """The key of a validated entry: the file's name and bytes."""
    return cache.digest(path.name, raw)


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
        If the file is a symbolic link, is larger than 64 KiB, is not usable YAML, breaks the
        schema or a rule of :mod:`claimbook.claims.registry_schema`, or names an unregistered
        computation; the message is one line naming file and field.

    Examples
    --------
    >>> try:
    ...     load_claim("c15-invariance-01")
    ... except UnknownClaimError as error:
    ...     print(str(error).split("; ")[-1].split(", ")[0])  # the nearest comes first
    nearest registered ids: c15-invariance-001
    """
    registry = _registry_dir(registry_dir)
    # A well-formed id before any path is built from it; the directory is listed only to
    # say which ids are near an unknown one (a build loads every claim, often twice).
    if not (isinstance(claim_id, str) and _is_claim_id(claim_id)):
        raise _unknown_claim(claim_id, registry, list_claims(registry))
    path = paths.registry_path(claim_id, registry)
    if path.is_symlink():
        raise refusal(path, _LINK_REFUSED)
    if not path.is_file():
        raise _unknown_claim(claim_id, registry, list_claims(registry))
    with path.open("rb") as stream:
        raw = stream.read(MAX_FILE_BYTES + 1)  # a larger file is refused unread
    data = ENTRIES.get(_entry_key(path, raw), lambda: validated(raw, path))
    _check_compute(data, path)  # checked on every load: the witnesses may have changed since
    # A fresh copy each time: the cached entry is shared, and callers may mutate theirs.
    return _claim(copy.deepcopy(data), path, hashlib.sha256(raw).hexdigest())


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
        catches=data.get("catches"),
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
