"""The mark that makes a witness function usable as a claim's computation.

A registry file's ``compute:`` names a function by its dotted path, e.g.
``trainable_harness.witnesses.chapter15.invariance.invariance_witness``. The book engine
imports that module and accepts the function only if it carries the mark
:func:`claim_computation` sets, so nothing else in the package (let alone outside it) can be
reached from a registry file, and a new witness module needs no list entry anywhere. This
module imports nothing from the package or the engine: the mark is an attribute, not a
table.

Examples
--------
>>> def toy_witness(seed=None):
...     return {"ok": True}
>>> toy_witness.__module__ = "trainable_harness.witnesses.toy"
>>> claim_computation(toy_witness) is toy_witness and is_claim_computation(toy_witness)
True
>>> try:
...     claim_computation(print)
... except TypeError as error:
...     print(str(error).split("; ")[1])
got builtin_function_or_method 'print'
>>> field_name("shift", 0.1), field_name("momentum", 0.01, point="_")
('shift_0p1', 'momentum_0_01')
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

__all__ = [
    "MARK",
    "WITNESS_PACKAGE",
    "claim_computation",
    "field_name",
    "is_claim_computation",
]

MARK = "__claim_computation__"
WITNESS_PACKAGE = "trainable_harness.witnesses"


def claim_computation(function: Callable[..., Mapping]) -> Callable[..., Mapping]:
    """Mark ``function`` as a claim computation and return it unchanged.

    Parameters
    ----------
    function : function
        A module-level ``def`` in a module of :mod:`trainable_harness.witnesses` that takes
        no input but ``seed=`` and returns a mapping of result fields.

    Raises
    ------
    TypeError
        If ``function`` is not a plain Python function (a builtin, a lambda, a nested
        function or a method) or lives outside ``trainable_harness.witnesses``.
    """
    name = getattr(function, "__qualname__", "")
    if (
        not inspect.isfunction(function)
        or name != function.__name__
        or "<" in name
        or not str(function.__module__).startswith(WITNESS_PACKAGE + ".")
    ):
        raise TypeError(
            "claim_computation marks module-level Python functions of "
            f"{WITNESS_PACKAGE}; got {type(function).__name__} {name or function!r}"
        )
    setattr(function, MARK, True)
    return function


def is_claim_computation(function: object) -> bool:
    """True if ``function`` carries the mark :func:`claim_computation` sets."""
    return inspect.isfunction(function) and getattr(function, MARK, False) is True


def field_name(prefix: str, number: float, point: str = "p") -> str:
    """The result field a computation names for one ``number`` of a sweep.

    ``prefix + "_" + f"{number:g}"`` with the decimal point replaced by ``point``: a field
    name cannot hold a dot, because dots join the names of nested fields.
    """
    return f"{prefix}_" + f"{number:g}".replace(".", point)
