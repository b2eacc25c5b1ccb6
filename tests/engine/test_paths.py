"""Tests of the one module that owns the book's paths."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scratch_book import point_paths_at

from claimbook import paths
from claimbook.errors import (
    InvalidChapterStemError,
    InvalidClaimIdError,
    OutsideBuildProductsError,
    RepositoryRootError,
    UnknownClaimError,
)
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


NOT_CLAIM_IDS = [
    "../../package",
    "../../../outside",
    "/etc/passwd",
    "claims/c15-invariance-001",
    "c15-invariance-001.json",
    "C15-invariance-001",
    "c15--invariance",
    "-c15",
    "",
    "a" * 101,
    "c15\x00",
    "c15\u202e",
    None,
    15,
]


@pytest.mark.parametrize("claim_id", NOT_CLAIM_IDS)
def test_a_path_is_never_built_from_a_claim_id_outside_the_grammar(claim_id, tmp_path):
    for name_a_file in (paths.artifact_path, paths.registry_path):
        with pytest.raises(InvalidClaimIdError) as caught:
            name_a_file(claim_id)
        message = str(caught.value)
        assert "is not a claim id: an id is lower-case words and digits joined by hyphens" in (
            message
        )
        assert message.endswith("no path is built from it")
        with pytest.raises(InvalidClaimIdError):
            name_a_file(claim_id, tmp_path)
    # An unknown id to every caller that already refuses unknown ids.
    assert issubclass(InvalidClaimIdError, UnknownClaimError)


def test_the_id_grammar_is_the_registry_schemas():
    schema_file = Path(paths.__file__).parent / "claims" / "claim_schema.json"
    schema = json.loads(schema_file.read_text())["properties"]["id"]
    assert schema["pattern"] == f"^{paths.CLAIM_ID_PATTERN}$"
    assert schema["maxLength"] == paths.MAX_NAME_LENGTH
    assert paths.check_claim_id("a" * 100) == "a" * 100


@pytest.mark.parametrize(
    "stem", ["..", ".", "", "-x", ".hidden", "a/b", "a b", "x\x1b", "a" * 101]
)
def test_a_chapter_stem_that_cannot_name_a_file_is_refused(stem):
    with pytest.raises(InvalidChapterStemError, match="is not a chapter name"):
        paths.check_chapter_stem(stem)


@pytest.mark.parametrize("stem", ["alpha", "batch-normalization", "chapter-01", "v1.2_x"])
def test_a_chapter_stem_of_letters_digits_and_dashes_is_accepted(stem):
    assert paths.check_chapter_stem(stem) == stem


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A book root in ``tmp_path`` with the engine's paths pointed at it."""
    return point_paths_at(tmp_path / "book", monkeypatch)


@pytest.mark.parametrize(
    "relative",
    [
        "artifacts/claims/c15-invariance-001.json",
        "artifacts/figures/fig.svg",
        "_build/keys/alpha.json",
        "_build/html/index.html",
        "chapters/alpha.ipynb",
    ],
)
def test_build_products_are_under_artifacts_and_build_or_executed_notebooks(tree, relative):
    assert paths.build_product(relative) == tree / relative
    assert paths.build_product(tree / relative) == tree / relative


@pytest.mark.parametrize(
    "relative",
    [
        "package.json",
        "chapters/alpha.md",
        "claims/c15-invariance-001.yaml",
        "artifacts",
        "_build",
        "artifacts/../package.json",
        "artifacts/claims/../../package.json",
        "./artifacts/x.json",
        "artifacts//x.json",
        "artifacts/./x.json",
        "artifacts\\..\\package.json",
        "artifacts/x\x00.json",
        "chapters/sub/alpha.ipynb",
        "chapters/..ipynb",
        "",
        "/etc/passwd",
        "../outside/x.json",
    ],
)
def test_anything_else_is_not_a_build_product(tree, relative):
    with pytest.raises(OutsideBuildProductsError) as caught:
        paths.build_product(relative)
    assert str(caught.value).split(": ")[0].endswith("is not a build product")


def test_a_link_among_the_folders_that_leads_elsewhere_is_refused(tree):
    (tree / "artifacts" / "claims").symlink_to(tree.parent / "outside", target_is_directory=True)
    with pytest.raises(OutsideBuildProductsError):
        paths.build_product("artifacts/claims/c15-invariance-001.json")
    # The link itself is a build product: it is removed, never followed.
    assert paths.build_product("artifacts/claims") == tree / "artifacts" / "claims"


def test_nothing_below_a_top_folder_that_is_a_link_is_a_build_product(tree):
    (tree / "_build").rmdir()
    (tree / "_build").symlink_to(tree.parent / "outside", target_is_directory=True)
    with pytest.raises(OutsideBuildProductsError):
        paths.build_product("_build/keys/alpha.json")
