"""Checks shared by the tests of the instrument packages split into modules.

Each package (``layers``, ``mlp``, ``moments``, ``small_batch``) is one public surface over
its modules: every public name has exactly one home module, the package's ``__all__`` is
the union of its modules' ``__all__``, and the package hands out the very objects its
modules define.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def module_of(package: ModuleType, name: str) -> ModuleType:
    """The module ``<package>.<name>``."""
    return importlib.import_module(f"{package.__name__}.{name}")


def assert_exports_exactly(package: ModuleType, modules, private=()) -> None:
    """``package.__all__`` is the union of ``modules``' ``__all__``, each name in one home."""
    names = [name for module in modules for name in module_of(package, module).__all__]
    assert len(names) == len(set(names))  # each name has one home
    assert sorted(names) == sorted(package.__all__)
    for module in private:
        assert module_of(package, module).__all__ == []


def assert_same_objects(package: ModuleType, module: str, extra=(), *also: ModuleType) -> None:
    """Each public name of ``module`` (and ``extra``) is the same object in ``package``
    and in each of ``also`` (e.g. the top-level ``trainable_harness``)."""
    home = module_of(package, module)
    for name in (*home.__all__, *extra):
        for reexporter in (package, *also):
            assert getattr(reexporter, name) is getattr(home, name), (reexporter, name)
