"""Tests of trainable_harness.errors: the one home of every error class of the harness."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import trainable_harness
from trainable_harness import errors


def harness_modules():
    for info in pkgutil.walk_packages(trainable_harness.__path__, "trainable_harness."):
        yield importlib.import_module(info.name)


def test_every_error_class_of_the_harness_is_defined_in_errors():
    elsewhere = sorted(
        f"{value.__module__}.{name}"
        for module in harness_modules()
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, errors.TrainableError)
        and value.__module__ != errors.__name__
    )
    assert elsewhere == []


def test_every_error_is_exported_is_a_value_error_and_has_a_docstring():
    classes = {
        name: value
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, Exception)
    }
    assert set(classes) <= set(errors.__all__)
    for name, error in classes.items():
        assert issubclass(error, errors.TrainableError) and issubclass(error, ValueError), name
        assert error.__doc__, name
        assert getattr(trainable_harness, name) is error  # the package re-exports it


def test_shared_checks_name_the_parameter_instead_of_python_errors():
    # float(10**400) raises Python's OverflowError; default_rng(-1) numpy's ValueError.
    with pytest.raises(errors.NonFiniteInputError, match="eps must be a finite number"):
        errors.check_eps(10**400)
    with pytest.raises(errors.SeedError, match="seed must be an integer >= 0, got -1"):
        errors.check_seed(-1)
    with pytest.raises(errors.SeedError, match=r"got 1\.0 \(float\)"):
        errors.check_seed(1.0)
    with pytest.raises(errors.TrainableError, match="lr must be a finite real number"):
        errors.check_real(10**400, "lr", error=errors.TrainableError)
    with pytest.raises(errors.ShapeError, match="n must be an integer >= 2, got nan"):
        errors.check_integer(float("nan"), "n", minimum=2, error=errors.ShapeError)
    assert errors.check_integer(np.float32(3.0), "n", minimum=2, error=errors.ShapeError) == 3
