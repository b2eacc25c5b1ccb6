"""The Makefile's environment target: an environment made in another checkout is made again.

``make -n`` (print, run nothing) on a copy of the Makefile beside a stand-in ``.venv``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
    assert "-m venv .venv" in commands
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
