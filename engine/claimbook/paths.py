"""Every path the book uses and the names a path may be built from; the engine writes and
removes only :func:`build_product` paths.

>>> shown(artifact_path("c15-invariance-001"))
'artifacts/claims/c15-invariance-001.json'
"""

import os
import re
from collections.abc import Mapping
from pathlib import Path

from claimbook.errors import (
    InvalidChapterStemError,
    InvalidClaimIdError,
    OutsideBuildProductsError,
    RepositoryRootError,
)
from claimbook.text import find_unsafe, one_line

ROOT_ENVIRONMENT_VARIABLE = "TRAINABLE_ROOT"
# The registry's id grammar (claim_schema.json's "id" pattern; a test keeps them equal).
CLAIM_ID_PATTERN = "[a-z0-9]+(-[a-z0-9]+)*"
# A chapter stem: one file name (never "." or "..").
CHAPTER_STEM_PATTERN = "[A-Za-z0-9][A-Za-z0-9_.-]*"
MAX_NAME_LENGTH = 100  # characters of a claim id or a chapter stem
_CLAIM_ID = re.compile(CLAIM_ID_PATTERN)
_CHAPTER_STEM = re.compile(CHAPTER_STEM_PATTERN)


def find_repo_root(
    environ: Mapping[str, str] = os.environ, package_file: str | Path = __file__
) -> Path:
    """``$TRAINABLE_ROOT`` if set (RepositoryRootError if it is no folder), else the checkout
    that holds ``package_file``, resolved."""
    override = environ.get(ROOT_ENVIRONMENT_VARIABLE)
    if override:
        root = Path(override).expanduser().resolve()
        if not root.is_dir():
            raise RepositoryRootError(
                f"{ROOT_ENVIRONMENT_VARIABLE}={override!r} is not an existing directory; "
                "set it to the checkout that holds harness/, claims/ and chapters/, or unset "
                "it to use the checkout the harness was installed from"
            )
        return root
    return Path(package_file).resolve().parents[2]


REPO_ROOT = find_repo_root()
HARNESS_DIR = REPO_ROOT / "harness"
CLAIMS_DIR = REPO_ROOT / "claims"
CHAPTERS_DIR = REPO_ROOT / "chapters"
ARTIFACTS_DIR = REPO_ROOT / "artifacts"
CLAIM_ARTIFACTS_DIR = ARTIFACTS_DIR / "claims"
FIGURES_DIR = ARTIFACTS_DIR / "figures"
BUILD_DIR = REPO_ROOT / "_build"


def _checked(value: object, pattern: re.Pattern, error: type[Exception], rule: str) -> str:
    if isinstance(value, str) and len(value) <= MAX_NAME_LENGTH and pattern.fullmatch(value):
        return value
    raise error(f"{one_line(repr(value), 80)} is not a {rule}")


def check_claim_id(claim_id: object) -> str:
    return _checked(
        claim_id,
        _CLAIM_ID,
        InvalidClaimIdError,
        "claim id: an id is lower-case words and digits joined by hyphens, at most "
        f"{MAX_NAME_LENGTH} characters (e.g. c15-invariance-001); no path is built from it",
    )


def check_chapter_stem(stem: object) -> str:
    return _checked(
        stem,
        _CHAPTER_STEM,
        InvalidChapterStemError,
        "chapter name: chapters/<name>.md needs a name of letters, digits, '_', '.' and '-', "
        f"starting with a letter or digit, at most {MAX_NAME_LENGTH} characters; rename the "
        "file and its _toc.yml entry",
    )


def registry_path(claim_id: str, registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/<claim_id>.yaml`` (default ``claims/``); checks the id."""
    return Path(registry_dir or CLAIMS_DIR) / f"{check_claim_id(claim_id)}.yaml"


def artifact_path(claim_id: str, artifacts_dir: str | Path | None = None) -> Path:
    """``<artifacts_dir>/<claim_id>.json`` (default ``artifacts/claims/``); checks the id."""
    return Path(artifacts_dir or CLAIM_ARTIFACTS_DIR) / f"{check_claim_id(claim_id)}.json"


def _unlinked(path: Path) -> Path:  # its folders resolved, not itself
    return path.parent.resolve() / path.name


def build_product(path: str | Path) -> Path:
    """The absolute ``path`` if it is written plainly (no ``..``, ``.``, empty part, backslash
    or unsafe character) and, its folders resolved, is below ``artifacts/`` or ``_build/`` or
    is ``chapters/<stem>.ipynb``; else OutsideBuildProductsError."""
    text = str(path)
    parts = text.removeprefix("/").split("/")
    if find_unsafe(text) is None and "\\" not in text and not {"", ".", ".."} & set(parts):
        full = _unlinked(REPO_ROOT / text)  # an absolute path stays itself
        below = [top for top in map(_unlinked, (ARTIFACTS_DIR, BUILD_DIR)) if top in full.parents]
        notebook = full.suffix == ".ipynb" and _CHAPTER_STEM.fullmatch(full.stem)
        if below or (notebook and full.parent == _unlinked(CHAPTERS_DIR)):
            return REPO_ROOT / text
    raise OutsideBuildProductsError(
        f"{one_line(repr(text), 80)} is not a build product: the engine writes and removes "
        "only files under artifacts/ and _build/ and the executed notebooks "
        "chapters/<name>.ipynb (no '..', no link leading elsewhere); nothing was changed there"
    )


def shown(path: str | Path) -> str:
    """``path`` as a message names it: relative to :data:`REPO_ROOT` when inside it."""
    path = Path(path)
    if path.is_absolute() and path.is_relative_to(REPO_ROOT):
        return path.relative_to(REPO_ROOT).as_posix()
    return path.as_posix()


def refuse_linked_folders() -> None:
    """OutsideBuildProductsError if ``artifacts/`` or ``artifacts/claims/`` is a link."""
    for folder in (ARTIFACTS_DIR, CLAIM_ARTIFACTS_DIR):
        if folder.is_symlink():
            raise OutsideBuildProductsError(
                f"{shown(folder)}/ is a link to {os.readlink(folder)}: the build writes "
                "only into the book's own folders; replace the link with a folder (nothing "
                "was changed)"
            )
