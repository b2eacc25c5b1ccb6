"""Tests of claimbook.instruments, and of the one direction imports go between the packages.

The instruments (``trainable_harness``) import the engine; the engine never imports the
instruments in its code (only by the dotted names the book gives it, at run time). Read
from the sources with ``ast``, so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

from claimbook import dependencies, instruments, paths

ENGINE = paths.REPO_ROOT / "engine" / "claimbook"


def _imported_modules(path: Path) -> set[str]:
    """Every module an ``import`` or ``from ... import`` anywhere in ``path`` names."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_engine_module_imports_the_instruments():
    offenders = {
        path.relative_to(ENGINE).as_posix(): sorted(
            name for name in _imported_modules(path) if name.split(".")[0] == instruments.PACKAGE
        )
        for path in sorted(ENGINE.rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}


_TOOLS = ("bench", "book_pdf", "checks")


def test_no_engine_module_imports_the_tools_beside_it():
    """The benchmark (``bench/``), the PDF printer (``book_pdf/``) and the checks of the book
    (``checks/``) import the engine; the engine never imports them."""
    offenders = {
        path.relative_to(ENGINE).as_posix(): sorted(
            name for name in _imported_modules(path) if name.split(".")[0] in _TOOLS
        )
        for path in sorted(ENGINE.rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_package_is_found_and_versioned_without_importing_it():
    assert (dependencies.package_folder(instruments.PACKAGE) / "__init__.py").is_file()
    version_file = dependencies.package_folder(instruments.PACKAGE) / "_version.py"
    assert f'__version__ = "{instruments.version()}"' in version_file.read_text()
