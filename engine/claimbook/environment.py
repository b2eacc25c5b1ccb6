"""The running environment compared with the lock (``requirements.txt``).

A claim's artifact and a chapter's outputs are computed in the environment, so a build
first compares it with the lock it is keyed on (a few milliseconds):

- **Distributions.** Every requirement of the lock whose marker holds here must be installed
  (as :mod:`importlib.metadata` finds it on ``sys.path``, names compared canonically) at a
  version its specifier allows. A distribution installed but not locked is no difference,
  nor are the book's own packages (:data:`NOT_LOCKED`). The lock is read as pip reads a
  requirements file: comments, blank and option lines skipped, continuations joined,
  per-requirement options (``--hash``) dropped, an included file (``-r``) not followed.
- **Python.** The lock names no Python version; the running one must satisfy the
  ``requires-python`` of the book's packages (:data:`PROJECT_FILES`).

:func:`differences` lists what differs, one phrase each; :func:`check_environment` raises
:class:`~claimbook.errors.EnvironmentMismatchError` naming them unless allowed
(``--allow-environment-mismatch``). :func:`installed_digest` is what the environment adds to
a key beyond the lock's bytes: empty when every pin is what is installed. The lock's parse
and the scan of installed distributions are cached (:func:`functools.cache`;
:func:`installed_versions` ``.cache_clear()`` forgets the scan).

Examples
--------
>>> lock = b"numpy==2.4.6\\nold-thing==1.0; python_version < '3'\\n"
>>> [(entry.name, entry.specifier) for entry in locked_requirements(lock)]
[('numpy', '==2.4.6')]
>>> compare(locked_requirements(lock), {"numpy": "2.3.5"})
['numpy 2.3.5 installed, 2.4.6 locked']
>>> compare(locked_requirements(lock), {})
['numpy not installed, 2.4.6 locked']
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import platform
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from claimbook import paths
from claimbook.errors import EnvironmentMismatchError

__all__ = [
    "ALLOW_OPTION",
    "LOCK_NAME",
    "NOT_LOCKED",
    "PROJECT_FILES",
    "LockedRequirement",
    "check_environment",
    "compare",
    "differences",
    "installed_digest",
    "installed_versions",
    "locked_requirements",
    "mismatch_message",
    "python_difference",
]

LOCK_NAME = "requirements.txt"
ALLOW_OPTION = "--allow-environment-mismatch"
# The book's own packages, installed in editable mode from harness/ and engine/, not locked.
NOT_LOCKED = frozenset({"trainable-harness", "claimbook"})
# Whose ``requires-python`` the running Python must satisfy (relative to the root).
PROJECT_FILES = ("engine/pyproject.toml", "harness/pyproject.toml")
_SHOWN = 5  # differences named in the one-line failure; the rest are counted
_OPTION = re.compile(r"\s--[A-Za-z]")  # a per-requirement option (--hash=...) ends the line
_COMMENT = re.compile(r"(^|\s)#.*$")


@dataclass(frozen=True)
class LockedRequirement:
    """One requirement of the lock that applies to this interpreter."""

    name: str  # as the lock spells it (importlib_metadata)
    key: str  # canonical (importlib-metadata), as distributions are compared
    specifier: str  # "==2.4.6"; empty for none (a URL requirement)
    pinned: str | None  # the version of an exact pin, else None

    def allows(self, version: str) -> bool:
        """Whether ``version`` satisfies the specifier (pre-releases included)."""
        if self.pinned is not None and version == self.pinned:
            return True
        try:
            return SpecifierSet(self.specifier).contains(Version(version), prereleases=True)
        except (InvalidSpecifier, InvalidVersion):
            return False


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement of a requirements file, as pip reads
    one: continuations (a line ending in a backslash) joined, then comments, blank lines and
    option lines dropped, and a requirement's own options (``--hash=...``) cut off."""
    joined, parts, start = [], [], 1
    for number, raw in enumerate(text.splitlines(), 1):
        if not parts:
            start = number
        if raw.endswith("\\"):
            parts.append(raw[:-1])
            continue
        joined.append((start, " ".join([*parts, raw])))
        parts = []
    if parts:
        joined.append((start, " ".join(parts)))
    lines = []
    for number, line in joined:
        line = _OPTION.split(" " + _COMMENT.sub("", line), maxsplit=1)[0].strip()
        if line and not line.startswith("-"):
            lines.append((number, line))
    return lines


@functools.cache
def _parsed(lock: bytes, marker_environment: str | None) -> tuple[LockedRequirement, ...]:
    environment = json.loads(marker_environment) if marker_environment else None
    found = []
    for number, line in _logical_lines(lock.decode("utf-8", "replace")):
        try:
            requirement = Requirement(line)
        except InvalidRequirement as error:
            raise EnvironmentMismatchError(
                f"{LOCK_NAME} line {number}: {line[:80]!r} is not a requirement ({error}); "
                "regenerate the lock with `make lock`"
            ) from None
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        key = canonicalize_name(requirement.name)
        if key in NOT_LOCKED:
            continue
        specifiers = list(requirement.specifier)
        exact = len(specifiers) == 1 and specifiers[0].operator in ("==", "===")
        pinned = specifiers[0].version if exact and "*" not in specifiers[0].version else None
        found.append(LockedRequirement(requirement.name, key, str(requirement.specifier), pinned))
    return tuple(found)


def locked_requirements(
    lock: bytes, marker_environment: Mapping[str, str] | None = None
) -> tuple[LockedRequirement, ...]:
    """The requirements of the lock text ``lock`` that apply to this interpreter.

    Parameters
    ----------
    lock : bytes
        The bytes of a requirements file.
    marker_environment : mapping, optional
        Values overriding this interpreter's for environment markers (``python_version``
        and the like; :meth:`packaging.markers.Marker.evaluate`); a test's other Python.

    Returns
    -------
    tuple of LockedRequirement
        In the lock's order; a requirement whose marker is false here, and the book's own
        packages (:data:`NOT_LOCKED`), are left out.

    Raises
    ------
    EnvironmentMismatchError
        If a line is not a requirement; the message names its number.
    """
    environment = (
        json.dumps(dict(marker_environment), sort_keys=True) if marker_environment else None
    )
    return _parsed(bytes(lock), environment)


def _header(text: str) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from a core-metadata header (it ends at the first blank line)."""
    name = version = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
        if name and version:
            break
    return name, version


def _first_lines(path: Path) -> str:
    """The header of the metadata file at ``path``: its lines up to the first blank one."""
    kept = []
    with path.open(encoding="utf-8", errors="replace") as stream:
        for line in stream:
            if not line.strip():
                break
            kept.append(line)
    return "".join(kept)


def _name_and_version(distribution) -> tuple[str | None, str | None]:
    """A distribution's name and version, from its metadata file's header.

    A distribution in a folder (``*.dist-info``, ``*.egg-info``: every one of an
    environment that uv or pip made) has its header read up to the first blank line, not its
    whole metadata parsed as email (numpy's runs to 60 kB): 3 ms instead of 30 ms for the
    120 distributions of the lock. Anything else goes through the public API.
    """
    folder = getattr(distribution, "_path", None)  # importlib.metadata.PathDistribution
    if isinstance(folder, Path):
        for name in ("METADATA", "PKG-INFO"):
            try:
                return _header(_first_lines(folder / name))
            except OSError:  # absent (egg-info names it PKG-INFO), or a folder of that name
                continue
    text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO") or ""
    return _header(text)


@functools.cache
def installed_versions() -> Mapping[str, str]:
    """Canonical name to version of every distribution installed on ``sys.path``.

    The first distribution of a name on ``sys.path`` wins, as ``importlib.metadata.version``
    and an import would find it. Scanned once per process (the cache).
    """
    found: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        name, version = _name_and_version(distribution)
        if name and version:
            found.setdefault(canonicalize_name(name), version)
    return found


def compare(requirements: Sequence[LockedRequirement], installed: Mapping[str, str]) -> list[str]:
    """One phrase per locked requirement that ``installed`` (canonical name to version) does
    not satisfy, in the lock's order: "numpy 2.3.5 installed, 2.4.6 locked", "numpy not
    installed, 2.4.6 locked" (a specifier other than a pin is shown as written)."""
    found = []
    for requirement in requirements:
        wanted = requirement.pinned or requirement.specifier or "any version"
        version = installed.get(requirement.key)
        if version is None:
            found.append(f"{requirement.name} not installed, {wanted} locked")
        elif requirement.specifier and not requirement.allows(version):
            found.append(f"{requirement.name} {version} installed, {wanted} locked")
    return found


@functools.cache
def _requires_python(text: str) -> str | None:
    try:
        project = tomllib.loads(text).get("project") or {}
    except tomllib.TOMLDecodeError:
        return None
    requires = project.get("requires-python")
    return requires if isinstance(requires, str) else None


def python_difference(root: str | Path | None = None, version: str | None = None) -> str | None:
    """The phrase saying the running Python is outside a package's ``requires-python``, or None.

    Parameters
    ----------
    root : path, optional
        The book (default :data:`claimbook.paths.REPO_ROOT`); its :data:`PROJECT_FILES` that
        exist are read.
    version : str, optional
        The Python version to judge (default :func:`platform.python_version`).
    """
    root = Path(root) if root is not None else paths.REPO_ROOT
    version = version or platform.python_version()
    for name in PROJECT_FILES:
        try:
            requires = _requires_python((root / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if requires is None:
            continue
        try:
            allowed = SpecifierSet(requires).contains(Version(version), prereleases=True)
        except (InvalidSpecifier, InvalidVersion):
            allowed = False
        if not allowed:
            return f"Python {version} running, {requires} required by {name}"
    return None


def _lock_bytes(root: Path) -> bytes | None:
    try:
        return (root / LOCK_NAME).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def differences(
    root: str | Path | None = None, installed: Mapping[str, str] | None = None
) -> list[str]:
    """Every way the running environment differs from the book's lock and packages.

    Parameters
    ----------
    root : path, optional
        The book (default :data:`claimbook.paths.REPO_ROOT`). A root without a lock (a
        fixture book) has no distributions to compare; its Python is still judged.
    installed : mapping, optional
        Canonical name to installed version (default :func:`installed_versions`).

    Returns
    -------
    list of str
        The Python's phrase first (:func:`python_difference`), then one per locked
        distribution (:func:`compare`); empty when the environment is the lock's.

    Raises
    ------
    EnvironmentMismatchError
        If the lock holds a line that is not a requirement.
    OSError
        If the lock exists but cannot be read.
    """
    root = Path(root) if root is not None else paths.REPO_ROOT
    found = []
    python = python_difference(root)
    if python is not None:
        found.append(python)
    lock = _lock_bytes(root)
    if lock is not None:
        versions = installed_versions() if installed is None else installed
        found.extend(compare(locked_requirements(lock), versions))
    return found


def mismatch_message(found: Sequence[str]) -> str:
    """The one line that refuses a build in an environment with the differences ``found``."""
    listed = "; ".join(found[:_SHOWN])
    if len(found) > _SHOWN:
        listed += f"; and {len(found) - _SHOWN} more"
    return (
        f"the environment differs from {LOCK_NAME}: {listed}; run `touch {LOCK_NAME} && make` "
        f"to reinstall the lock, or build anyway with {ALLOW_OPTION} "
        "(make ALLOW_ENV_MISMATCH=1; every page then names the differences)"
    )


def check_environment(root: str | Path | None = None, allow: bool = False) -> list[str]:
    """Refuse an environment that differs from the book's lock, unless ``allow``.

    Returns
    -------
    list of str
        The differences (:func:`differences`): empty, or allowed.

    Raises
    ------
    EnvironmentMismatchError
        If there is a difference and ``allow`` is false: one line naming each package (the
        first five, then a count), the remedy and the option that builds anyway.
    """
    found = differences(root)
    if found and not allow:
        raise EnvironmentMismatchError(mismatch_message(found))
    return found


def installed_digest(root: str | Path | None = None) -> str:
    """What the installed distributions add to a key beyond the lock's bytes (JSON text).

    Empty when every locked distribution applying here is installed at exactly its pin (the
    lock's bytes then say it all, and keys made before this rule stay valid); otherwise the
    canonical name and installed version (or null) of every locked distribution not at its
    pin, and of every one locked by a range, sorted. Empty for a root without a lock.
    """
    root = Path(root) if root is not None else paths.REPO_ROOT
    lock = _lock_bytes(root)
    if lock is None:
        return ""
    try:
        requirements = locked_requirements(lock)
    except EnvironmentMismatchError:  # the lock's bytes stand for it; the build refuses it
        return ""
    installed = installed_versions()
    off = {
        requirement.key: installed.get(requirement.key)
        for requirement in requirements
        if requirement.pinned is None or installed.get(requirement.key) != requirement.pinned
    }
    return json.dumps(off, sort_keys=True, separators=(",", ":")) if off else ""
