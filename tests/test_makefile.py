"""The Makefile's environment target: an environment made in another checkout is made again;
the book's own packages get bytecode that an edit can never leave stale.

``make -n`` (print, run nothing) on a copy of the Makefile beside a stand-in ``.venv``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claimbook import paths

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A directory with the Makefile, its inputs and a built-looking ``.venv``."""
    root = tmp_path / "copy"
    for name in ("harness", "engine", ".venv/bin"):
        (root / name).mkdir(parents=True)
    shutil.copy(paths.REPO_ROOT / "Makefile", root)
    shutil.copy(paths.REPO_ROOT / "requirements.txt", root)
    for name in ("harness/pyproject.toml", "engine/pyproject.toml"):
        (root / name).write_text("")
    python = root / ".venv/bin/python"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    stamp = root / ".venv/.installed"
    stamp.write_text("")
    later = (root / "requirements.txt").stat().st_mtime_ns + 10**9
    os.utime(stamp, ns=(later, later))
    return root.resolve()


def _dry_run(root: Path, target: str = "venv") -> str:
    process = subprocess.run(
        ["make", "-n", target], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert process.returncode == 0, process.stderr
    return process.stdout


def test_an_environment_made_here_is_kept(checkout):
    (checkout / ".venv/.checkout").write_text(f"{checkout}\n")
    assert "rm -rf .venv" not in _dry_run(checkout)


def test_an_environment_made_in_another_checkout_is_made_again_here(checkout):
    (checkout / ".venv/.checkout").write_text("/the/original\n")
    commands = _dry_run(checkout)
    assert "made for /the/original, not for " + str(checkout) in commands
    assert "rm -rf .venv" in commands
    assert "-m venv --without-pip .venv" in commands
    assert f"echo '{checkout}' > .venv/.checkout" in commands


def test_clean_in_a_copy_never_asks_the_originals_engine(checkout):
    (checkout / ".venv/.checkout").write_text("/the/original\n")
    (checkout / "_build").mkdir()
    (checkout / "artifacts").mkdir()
    # The stand-in .venv/bin/python does nothing: only the Makefile's own removal removes this.
    (checkout / "_build" / "site.json").write_text("{}")
    process = subprocess.run(["make", "clean"], cwd=checkout, capture_output=True, timeout=60)
    assert process.returncode == 0, process.stderr
    assert not (checkout / "_build").exists()


def test_an_older_environment_is_judged_by_its_activate_script(checkout):
    activate = checkout / ".venv/bin/activate"
    activate.write_text(f'VIRTUAL_ENV="{checkout}/.venv"\nexport VIRTUAL_ENV\n')
    assert "rm -rf .venv" not in _dry_run(checkout)
    activate.write_text('VIRTUAL_ENV="/the/original/.venv"\nexport VIRTUAL_ENV\n')
    assert "made for /the/original, not for" in _dry_run(checkout)


def test_the_tiers_that_collect_folders_collect_the_folders_conftest_names():
    """``make claims-check``, ``make book-check`` and ``make site-check`` pass pytest the
    folders that tests/conftest.py's TIER_FOLDERS holds; a test of theirs elsewhere is refused
    there."""
    from tests.conftest import TIER_FOLDERS

    text = (paths.REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    for tier, folders in TIER_FOLDERS.items():
        lines = text.splitlines()
        (line,) = [ln for ln in lines if f"$(call TIER,{tier})" in ln]
        assert line.split(" -q ", 1)[1].split() == list(folders), line


def _compile_command(commands: str) -> list[str]:
    """The environment recipe's ``compileall`` of the book's own packages, as arguments."""
    (line,) = [line for line in commands.splitlines() if "-m compileall" in line]
    return line.split("-m compileall", 1)[1].split()


def _import_value(root: Path) -> str:
    """``mod.VALUE`` imported by a fresh interpreter that may write bytecode."""
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}
    return subprocess.run(
        [sys.executable, "-c", "import mod; print(mod.VALUE)"],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.mark.parametrize("mode", ["recipe", "timestamp"])
def test_an_edit_within_one_second_never_runs_the_book_packages_stale_bytecode(
    checkout, tmp_path, mode
):
    """The build writes bytecode (``all`` empties PYTHONDONTWRITEBYTECODE). For the book's own
    packages the environment recipe compiles hash-checked bytecode: an edit of the same size
    with the same modification time runs the new code. Python's usual bytecode, checked
    against modification time and size, runs the old code there (the ``timestamp`` case, the
    hazard the recipe's mode exists for)."""
    (checkout / ".venv/.checkout").write_text("/the/original\n")
    arguments = _compile_command(_dry_run(checkout))
    assert arguments[-2:] == ["harness/trainable_harness", "engine/claimbook"], arguments
    for name in ("package.json", "package-lock.json"):  # MathJax's inputs, which `all` needs
        (checkout / name).write_text("{}")
    assert "build" in _dry_run(checkout, "all").split("PYTHONDONTWRITEBYTECODE= ", 1)[1]
    root = tmp_path / "package"
    root.mkdir()
    source = root / "mod.py"
    source.write_text("VALUE = 1\n")
    flags = arguments[:-2] if mode == "recipe" else ["-q"]
    subprocess.run([sys.executable, "-m", "compileall", *flags, "."], cwd=root, check=True)
    assert _import_value(root) == "1"
    stamp = source.stat().st_mtime_ns
    source.write_text("VALUE = 2\n")  # same size, and below the same second
    os.utime(source, ns=(stamp, stamp))
    assert _import_value(root) == ("2" if mode == "recipe" else "1")
