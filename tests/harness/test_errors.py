"""Tests of trainable_harness.errors: the one home of every error class of the harness."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

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
