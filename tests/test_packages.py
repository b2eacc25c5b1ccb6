"""Each package declares what it imports: installed on its own (pip install ./engine), every
module it can import is there, and nothing it does not use is pulled in."""

import ast
import functools
import importlib.metadata
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"harness": "trainable_harness", "engine": "claimbook"}


def imported_top_levels(package: Path) -> set[str]:
    """The top-level names every ``import`` and ``from ... import`` of ``package`` names,
    those inside functions included; relative imports are the package's own."""
    names = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names


def declared(folder: str) -> set[str]:
    """Canonical names of the distributions ``folder/pyproject.toml`` depends on, extras
    included."""
    project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    return {canonicalize_name(Requirement(text).name) for text in requirements}


@functools.cache
def installed_distributions() -> dict[str, list[str]]:
    """Top-level module name -> the installed distributions that provide it (a scan of every
    installed distribution's metadata: once a process)."""
    return importlib.metadata.packages_distributions()


@pytest.mark.parametrize("folder", PACKAGES)
def test_every_third_party_import_is_a_declared_dependency(folder):
    own = PACKAGES[folder]
    distributions = installed_distributions()
    third_party = {
        name
        for name in imported_top_levels(ROOT / folder / own)
        if name != own and name not in sys.stdlib_module_names and name != "__future__"
    }
    assert third_party, "the scan found no third-party import"
    missing = {
        name: distributions.get(name, ["(not installed)"])
        for name in sorted(third_party)
        if not {canonicalize_name(d) for d in distributions.get(name, [])} & declared(folder)
    }
    assert not missing, f"{folder}/pyproject.toml does not declare what it imports: {missing}"


def test_the_scan_sees_an_import_inside_a_function(tmp_path):
    (tmp_path / "late.py").write_text("def f():\n    import yaml\n    from scipy import stats\n")
    (tmp_path / "own.py").write_text("from . import late\nimport os\n")
    assert imported_top_levels(tmp_path) == {"yaml", "scipy", "os"}
