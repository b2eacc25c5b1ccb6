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
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from claimbook.errors import RepositoryRootError

__all__ = [
    "ARTIFACTS_DIR",
    "BUILD_DIR",
    "CHAPTERS_DIR",
    "CLAIMS_DIR",
    "CLAIM_ARTIFACTS_DIR",
    "FIGURES_DIR",
    "HARNESS_DIR",
    "REPO_ROOT",
    "ROOT_ENVIRONMENT_VARIABLE",
    "artifact_path",
    "find_repo_root",
    "registry_path",
    "shown",
]

ROOT_ENVIRONMENT_VARIABLE = "TRAINABLE_ROOT"


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


def registry_path(claim_id: str, registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/<claim_id>.yaml``; by default under ``claims/``."""
    directory = Path(registry_dir) if registry_dir is not None else CLAIMS_DIR
    return directory / f"{claim_id}.yaml"


def artifact_path(claim_id: str, artifacts_dir: str | Path | None = None) -> Path:
    """``<artifacts_dir>/<claim_id>.json``; by default under ``artifacts/claims/``."""
    directory = Path(artifacts_dir) if artifacts_dir is not None else CLAIM_ARTIFACTS_DIR
    return directory / f"{claim_id}.json"


def shown(path: str | Path) -> str:
    """A path as a message names it: relative to :data:`REPO_ROOT` when inside it."""
    path = Path(path)
    if path.is_absolute() and path.is_relative_to(REPO_ROOT):
        return path.relative_to(REPO_ROOT).as_posix()
    return path.as_posix()
