"""Every path the book uses, in one place.

Chapters, the claims machinery and the build never spell a path by hand: they import it
from here. The repository root is found from this file's own location, because the
engine is installed in editable mode from ``engine/claimbook/``; that makes
every path independent of the working directory (Binder opens a notebook with the
notebook's folder as the working directory, papermill with whatever it was given).
Setting the environment variable ``TRAINABLE_ROOT`` overrides the root, for a checkout
the package was not installed from.

Layout (relative to :data:`REPO_ROOT`)::

    harness/                 HARNESS_DIR, the package source
    claims/                  CLAIMS_DIR, one ``<id>.yaml`` per claim
    chapters/                CHAPTERS_DIR, MyST-markdown notebooks
    artifacts/               ARTIFACTS_DIR, generated outputs
    artifacts/claims/        CLAIM_ARTIFACTS_DIR, one ``<id>.json`` per verified claim
    artifacts/figures/       FIGURES_DIR, saved chapter figures
    _build/                  BUILD_DIR, the site, executed-notebook keys, build records

A claim's two files are named by one function each: :func:`registry_path`
(``claims/<id>.yaml``) and :func:`artifact_path` (``artifacts/claims/<id>.json``); a
figure's by :func:`claimbook.figures.figure_files`. :func:`shown` is how a message names a
path (relative to the book when inside it).

Names are checked before a path is built from them. A claim id must match the registry's
id grammar, :data:`CLAIM_ID_PATTERN` (lower-case words and digits joined by hyphens, at
most :data:`MAX_NAME_LENGTH` characters; :func:`check_claim_id`), so ``"../../package"``
can never name ``package.json``; a chapter stem must be one plain file name
(:data:`CHAPTER_STEM_PATTERN`, :func:`check_chapter_stem`). Whatever the engine writes or
removes is a *build product*, :func:`build_product`: a path under ``artifacts/`` or
``_build/``, or an executed notebook ``chapters/<stem>.ipynb``; anything else is refused.

Examples
--------
>>> from claimbook import paths
>>> paths.CLAIMS_DIR == paths.REPO_ROOT / "claims"
True
>>> paths.CLAIM_ARTIFACTS_DIR.relative_to(paths.REPO_ROOT).as_posix()
'artifacts/claims'
>>> shown(artifact_path("c15-invariance-001"))
'artifacts/claims/c15-invariance-001.json'
>>> shown(registry_path("c15-invariance-001", "/elsewhere"))
'/elsewhere/c15-invariance-001.yaml'
>>> try:
...     artifact_path("../../package")
... except InvalidClaimIdError as error:
...     print(str(error).split(":")[0])
'../../package' is not a claim id
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from claimbook.errors import (
    InvalidChapterStemError,
    InvalidClaimIdError,
    OutsideBuildProductsError,
    RepositoryRootError,
)
from claimbook.text import find_unsafe, one_line

__all__ = [
    "ARTIFACTS_DIR",
    "BUILD_DIR",
    "CHAPTERS_DIR",
    "CHAPTER_STEM_PATTERN",
    "CLAIMS_DIR",
    "CLAIM_ARTIFACTS_DIR",
    "CLAIM_ID_PATTERN",
    "FIGURES_DIR",
    "HARNESS_DIR",
    "MAX_NAME_LENGTH",
    "REPO_ROOT",
    "ROOT_ENVIRONMENT_VARIABLE",
    "artifact_path",
    "build_product",
    "check_chapter_stem",
    "check_claim_id",
    "find_repo_root",
    "registry_path",
    "shown",
]

ROOT_ENVIRONMENT_VARIABLE = "TRAINABLE_ROOT"
# The registry's id grammar (claim_schema.json's "id" pattern, which a test keeps equal).
CLAIM_ID_PATTERN = "[a-z0-9]+(-[a-z0-9]+)*"
# A chapter stem: one file name that starts with a letter or digit (never "." or "..").
CHAPTER_STEM_PATTERN = "[A-Za-z0-9][A-Za-z0-9_.-]*"
MAX_NAME_LENGTH = 100  # characters of a claim id or a chapter stem
_CLAIM_ID = re.compile(CLAIM_ID_PATTERN)
_CHAPTER_STEM = re.compile(CHAPTER_STEM_PATTERN)


def find_repo_root(
    environ: Mapping[str, str] = os.environ, package_file: str | Path = __file__
) -> Path:
    """Return the repository root: ``$TRAINABLE_ROOT`` if set, else two levels above the package.

    Parameters
    ----------
    environ : mapping
        The environment to read ``TRAINABLE_ROOT`` from.
    package_file : path
        A file inside ``engine/claimbook/``; its grandparent's parent is the root.

    Returns
    -------
    pathlib.Path
        An absolute, resolved path.

    Raises
    ------
    RepositoryRootError
        If ``TRAINABLE_ROOT`` is set but is not an existing directory.

    Examples
    --------
    >>> find_repo_root({}, "/repo/engine/claimbook/paths.py").as_posix()
    '/repo'
    """
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
    # paths.py -> claimbook/ -> engine/ -> repository root
    return Path(package_file).resolve().parents[2]


REPO_ROOT = find_repo_root()
HARNESS_DIR = REPO_ROOT / "harness"
CLAIMS_DIR = REPO_ROOT / "claims"
CHAPTERS_DIR = REPO_ROOT / "chapters"
ARTIFACTS_DIR = REPO_ROOT / "artifacts"
CLAIM_ARTIFACTS_DIR = ARTIFACTS_DIR / "claims"
FIGURES_DIR = ARTIFACTS_DIR / "figures"
BUILD_DIR = REPO_ROOT / "_build"


def _quoted(value: object) -> str:
    return one_line(repr(value), 80)


def _is_name(value: object, pattern) -> bool:
    """Whether ``value`` is a string of at most :data:`MAX_NAME_LENGTH` matching ``pattern``."""
    return (
        isinstance(value, str) and len(value) <= MAX_NAME_LENGTH and bool(pattern.fullmatch(value))
    )


def check_claim_id(claim_id: object) -> str:
    """Return ``claim_id`` if it is of the registry's id grammar; refuse it otherwise.

    Raises
    ------
    InvalidClaimIdError
        If ``claim_id`` is not a string matching :data:`CLAIM_ID_PATTERN` with at most
        :data:`MAX_NAME_LENGTH` characters (so it holds no ``/``, ``.`` or ``..``).
    """
    if not _is_name(claim_id, _CLAIM_ID):
        raise InvalidClaimIdError(
            f"{_quoted(claim_id)} is not a claim id: an id is lower-case words and digits "
            f"joined by hyphens, at most {MAX_NAME_LENGTH} characters (e.g. "
            "c15-invariance-001); no path is built from it"
        )
    return claim_id


def check_chapter_stem(stem: object) -> str:
    """Return ``stem`` if it can name a chapter's files; refuse it otherwise.

    Raises
    ------
    InvalidChapterStemError
        If ``stem`` is not a string matching :data:`CHAPTER_STEM_PATTERN` (letters, digits,
        ``_``, ``.``, ``-``, starting with a letter or digit) with at most
        :data:`MAX_NAME_LENGTH` characters.
    """
    if not _is_name(stem, _CHAPTER_STEM):
        raise InvalidChapterStemError(
            f"{_quoted(stem)} is not a chapter name: chapters/<name>.md needs a name of "
            f"letters, digits, '_', '.' and '-', starting with a letter or digit, at most "
            f"{MAX_NAME_LENGTH} characters; rename the file and its _toc.yml entry"
        )
    return stem


def registry_path(claim_id: str, registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/<claim_id>.yaml``; by default under ``claims/``.

    Raises
    ------
    InvalidClaimIdError
        If ``claim_id`` is not of the id grammar (:func:`check_claim_id`).
    """
    directory = Path(registry_dir) if registry_dir is not None else CLAIMS_DIR
    return directory / f"{check_claim_id(claim_id)}.yaml"


def artifact_path(claim_id: str, artifacts_dir: str | Path | None = None) -> Path:
    """``<artifacts_dir>/<claim_id>.json``; by default under ``artifacts/claims/``.

    Raises
    ------
    InvalidClaimIdError
        If ``claim_id`` is not of the id grammar (:func:`check_claim_id`).
    """
    directory = Path(artifacts_dir) if artifacts_dir is not None else CLAIM_ARTIFACTS_DIR
    return directory / f"{check_claim_id(claim_id)}.json"


def _unlinked(folder: Path) -> Path:
    """``folder`` with the folders above it resolved, not itself: a top folder that is a link
    resolves to somewhere else, so nothing below it counts as a build product."""
    return folder.parent.resolve() / folder.name


def build_product(path: str | Path) -> Path:
    """The absolute path of a build product the engine may write or remove; refuse the rest.

    A build product lies below :data:`ARTIFACTS_DIR` or :data:`BUILD_DIR` (not the folder
    itself), or is an executed notebook ``chapters/<stem>.ipynb`` directly in
    :data:`CHAPTERS_DIR`. A relative ``path`` is read relative to :data:`REPO_ROOT` and must
    be written plainly, with ``/``: no ``..``, ``.``, empty part, backslash or unsafe
    character (:mod:`claimbook.text`). The folders above ``path`` are resolved, so a link
    among them that leads elsewhere is refused, and so is everything below ``artifacts/``,
    ``_build/`` or ``chapters/`` when that folder is itself a link; the last part may be a
    link (a caller removes it, never follows it).

    Raises
    ------
    OutsideBuildProductsError
        If ``path`` is not a build product; the message names it.

    Examples
    --------
    >>> build_product("artifacts/claims/c15-invariance-001.json") == (
    ...     ARTIFACTS_DIR / "claims" / "c15-invariance-001.json"
    ... )
    True
    >>> try:
    ...     build_product("artifacts/../package.json")
    ... except OutsideBuildProductsError as error:
    ...     print(str(error).split(":")[0])
    'artifacts/../package.json' is not a build product
    """
    text = str(path)
    candidate = Path(path)
    plain = (
        text != ""
        and find_unsafe(text) is None
        and "\\" not in text
        and ".." not in PurePosixPath(text).parts
        and (candidate.is_absolute() or PurePosixPath(text).as_posix() == text)
        and not any(part in ("", ".") for part in text.removeprefix("/").split("/"))
    )
    if plain:
        absolute = candidate if candidate.is_absolute() else REPO_ROOT / candidate
        full = absolute.parent.resolve() / absolute.name
        for top in (ARTIFACTS_DIR, BUILD_DIR):
            top = _unlinked(top)
            if full != top and full.is_relative_to(top):
                return absolute
        notebook = full.suffix == ".ipynb" and _CHAPTER_STEM.fullmatch(full.stem)
        if notebook and full.parent == _unlinked(CHAPTERS_DIR):
            return absolute
    raise OutsideBuildProductsError(
        f"{_quoted(text)} is not a build product: the engine writes and removes only files "
        "under artifacts/ and _build/ and the executed notebooks chapters/<name>.ipynb "
        "(no '..', no link leading elsewhere); nothing was changed there"
    )


def shown(path: str | Path) -> str:
    """A path as a message names it: relative to :data:`REPO_ROOT` when inside it."""
    path = Path(path)
    if path.is_absolute() and path.is_relative_to(REPO_ROOT):
        return path.relative_to(REPO_ROOT).as_posix()
    return path.as_posix()


def refuse_linked_folders() -> None:
    """Refuse, before anything is written, a build whose ``artifacts/`` (or
    ``artifacts/claims/``) is a link: the engine writes only into the book's own folders.

    Raises
    ------
    OutsideBuildProductsError
        Naming the link and where it leads, in one line.
    """
    for folder in (ARTIFACTS_DIR, CLAIM_ARTIFACTS_DIR):
        if folder.is_symlink():
            raise OutsideBuildProductsError(
                f"{shown(folder)}/ is a link to {os.readlink(folder)}: the build writes "
                "only into the book's own folders; replace the link with a folder (nothing "
                "was changed)"
            )
