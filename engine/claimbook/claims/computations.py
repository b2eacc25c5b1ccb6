"""Registered claim computations (marked ``@claim_computation`` in
:mod:`trainable_harness.witnesses`), and running one for a claim, once or once per seed."""

from __future__ import annotations

import difflib
import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from claimbook import instruments
from claimbook.claims.registry_schema import excerpt
from claimbook.errors import ComputationNotFoundError, WitnessResultError

_ERROR_LIMIT = 400  # characters of a computation's exception text kept in an artifact


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


@dataclass(frozen=True)
class Outcome:
    """One normalized result per call, up to the first failure, and its error (else None)."""

    results: list[dict]
    error: str | None


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


def run_computation(claim) -> Outcome:
    """Run ``claim``'s computation (once per seed if statistical, in order, stopping at the
    first error), never raising its error."""
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
            return Outcome(results, error)
    return Outcome(results, None)
