"""The science is a plain numpy library: it imports nothing of the book that uses it."""

import subprocess
import sys
import tomllib
from pathlib import Path

import trainable_harness

PACKAGE = Path(trainable_harness.__file__).parent


def test_every_module_imports_with_the_engine_unimportable():
    # sys.modules["claimbook"] = None makes any import of the engine raise ImportError.
    script = (
        "import sys, pkgutil, importlib\n"
        "sys.modules['claimbook'] = None\n"
        "import trainable_harness\n"
        "names = [m.name for m in pkgutil.walk_packages(trainable_harness.__path__, "
        "'trainable_harness.')]\n"
        "for name in names: importlib.import_module(name)\n"
        "print(len(names))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 20


def test_no_module_names_the_engine_even_as_a_string():
    naming = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if "claimbook" in path.read_text(encoding="utf-8")
    ]
    assert naming == []


def test_importing_the_package_changes_no_import_machinery():
    script = (
        "import sys\n"
        "before = (list(sys.meta_path), list(sys.path_hooks))\n"
        "import trainable_harness\n"
        "print((list(sys.meta_path), list(sys.path_hooks)) == before)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "True", done.stderr


def test_the_package_depends_on_numpy_alone():
    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]
    assert project["dependencies"] == ["numpy"]
