"""Tests of the one module that owns the book's paths."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from claimbook import paths
from claimbook.errors import RepositoryRootError
from claimbook.paths import find_repo_root


def test_root_is_the_checkout_the_package_runs_from():
    # The engine is installed editable, so its own file lies under REPO_ROOT/engine/, and the
    # root holds what the book is made of.
    assert Path(paths.__file__).resolve().is_relative_to(paths.REPO_ROOT / "engine")
    assert (paths.CLAIMS_DIR / "c15-invariance-001.yaml").is_file()
    assert (paths.CHAPTERS_DIR / "normalization-invariance.md").is_file()
    assert paths.REPO_ROOT.is_absolute()


def test_environment_variable_overrides_the_root(tmp_path):
    assert find_repo_root({"TRAINABLE_ROOT": str(tmp_path)}) == tmp_path.resolve()


def test_empty_environment_variable_is_ignored():
    package_file = "/somewhere/engine/claimbook/paths.py"
    assert find_repo_root({"TRAINABLE_ROOT": ""}, package_file) == Path("/somewhere")


def test_environment_variable_naming_a_missing_directory_is_refused(tmp_path):
    missing = tmp_path / "no-such-checkout"
    with pytest.raises(RepositoryRootError, match=r"TRAINABLE_ROOT=.*no-such-checkout"):
        find_repo_root({"TRAINABLE_ROOT": str(missing)})


def _paths_in_fresh_interpreter(cwd, extra_environment=None):
    environment = {k: v for k, v in os.environ.items() if k != "TRAINABLE_ROOT"}
    environment.update(extra_environment or {})
    script = "from claimbook import paths; print(paths.REPO_ROOT); print(paths.CLAIMS_DIR)"
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout.splitlines()


def test_paths_do_not_depend_on_the_working_directory(tmp_path):
    root, claims_dir = _paths_in_fresh_interpreter(cwd=tmp_path)
    assert Path(root) == paths.REPO_ROOT
    assert Path(claims_dir) == paths.CLAIMS_DIR


def test_environment_variable_is_read_at_import(tmp_path):
    root, claims_dir = _paths_in_fresh_interpreter(
        cwd=tmp_path, extra_environment={"TRAINABLE_ROOT": str(tmp_path)}
    )
    assert Path(root) == tmp_path.resolve()
    assert Path(claims_dir) == tmp_path.resolve() / "claims"


def test_a_claims_files_are_named_by_one_function_each(tmp_path):
    assert paths.registry_path("c0-toy-001") == paths.CLAIMS_DIR / "c0-toy-001.yaml"
    assert paths.artifact_path("c0-toy-001") == paths.CLAIM_ARTIFACTS_DIR / "c0-toy-001.json"
    assert paths.registry_path("c0-toy-001", tmp_path) == tmp_path / "c0-toy-001.yaml"
    assert paths.artifact_path("c0-toy-001", str(tmp_path)) == tmp_path / "c0-toy-001.json"


def test_messages_name_paths_inside_the_book_relative_to_it(tmp_path):
    assert paths.shown(paths.artifact_path("c0-toy-001")) == "artifacts/claims/c0-toy-001.json"
    outside = tmp_path / "c0-toy-001.json"
    assert paths.shown(outside) == outside.as_posix()
    assert paths.shown("relative/name.json") == "relative/name.json"
