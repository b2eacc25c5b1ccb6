"""trainable_harness.claimable: what the mark accepts, what it refuses, and field names."""

import types

import pytest

from trainable_harness.claimable import (
    MARK,
    WITNESS_PACKAGE,
    claim_computation,
    field_name,
    is_claim_computation,
)


def _witness_module_function():
    def shift_witness(seed=None):
        return {"shift": 0.0}

    shift_witness.__qualname__ = "shift_witness"  # as if defined at module level
    shift_witness.__module__ = f"{WITNESS_PACKAGE}.example"
    return shift_witness


def test_a_module_level_witness_function_is_marked_and_returned_unchanged():
    function = _witness_module_function()
    assert not is_claim_computation(function)
    assert claim_computation(function) is function
    assert is_claim_computation(function) and getattr(function, MARK) is True


def test_every_computation_a_registry_file_names_carries_the_mark():
    """The registry's computations are found by their mark alone (no list of modules)."""
    from claimbook.claims.registry import list_claims, load_claim, resolve_computation

    for claim_id in list_claims():
        assert is_claim_computation(resolve_computation(load_claim(claim_id).compute))


def _nested():
    def inner(seed=None):
        return {}

    inner.__module__ = f"{WITNESS_PACKAGE}.example"
    return inner


class _Holder:
    def method(self, seed=None):
        return {}


@pytest.mark.parametrize(
    "function",
    [
        print,  # a builtin
        (lambda seed=None: {}),  # a lambda
        _nested(),  # a nested function (its qualified name has "<locals>")
        _Holder().method,  # a bound method
        _Holder.method,  # a function defined in a class
        types.SimpleNamespace(),  # not a function at all
    ],
)
def test_anything_but_a_module_level_function_is_refused(function):
    with pytest.raises(TypeError, match="claim_computation marks module-level Python functions"):
        claim_computation(function)


def test_a_function_outside_the_witness_package_is_refused():
    function = _witness_module_function()
    for module in ("trainable_harness.layers", "trainable_harness.witnessesX.a", "os"):
        function.__module__ = module
        with pytest.raises(TypeError, match=f"of {WITNESS_PACKAGE}; got function"):
            claim_computation(function)


def test_a_mark_set_by_hand_to_another_value_does_not_count():
    function = _witness_module_function()
    setattr(function, MARK, "yes")
    assert not is_claim_computation(function)
    assert not is_claim_computation(types.SimpleNamespace(**{MARK: True}))


@pytest.mark.parametrize(
    ("prefix", "number", "point", "expected"),
    [
        ("shift", 0.1, "p", "shift_0p1"),
        ("shift", 1, "p", "shift_1"),
        ("momentum", 0.01, "_", "momentum_0_01"),
        ("scale", 1e-05, "p", "scale_1e-05"),
        ("depth", 64, "p", "depth_64"),
    ],
)
def test_field_names_hold_no_dot(prefix, number, point, expected):
    name = field_name(prefix, number, point=point)
    assert name == expected and "." not in name
