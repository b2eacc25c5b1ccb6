"""The running environment compared with the lock (``requirements.txt``).

Each requirement of the lock whose marker holds here must be installed (canonical names, as
:mod:`importlib.metadata` finds them on ``sys.path``) at a version its specifier allows; the
book's own packages (:data:`NOT_LOCKED`) are not locked. The lock is read as pip reads it
(comments, options and ``--hash`` dropped, continuations joined, ``-r`` not followed). The
running Python must satisfy the ``requires-python`` of :data:`PROJECT_FILES`.

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

    name: str  # as the lock spells it
    key: str  # canonical, as distributions are compared
    specifier: str  # "==2.4.6"; empty for none (a URL requirement)
    pinned: str | None  # the version of an exact pin, else None

    def allows(self, version: str) -> bool:
        """Whether ``version`` satisfies the specifier (pre-releases included)."""
        return version == self.pinned or _allows(self.specifier, version)


def _allows(specifier: str, version: str) -> bool:
    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement of a requirements file, as pip reads it."""
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
def _parsed(lock: bytes, markers: tuple[tuple[str, str], ...]) -> tuple[LockedRequirement, ...]:
    environment = dict(markers) or None
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
    """The requirements of the lock's bytes that apply here, in order (:data:`NOT_LOCKED` left
    out); ``marker_environment`` overrides marker values (``Marker.evaluate``).

    Raises EnvironmentMismatchError, naming the line, for a line that is not a requirement.
    """
    return _parsed(bytes(lock), tuple(sorted((marker_environment or {}).items())))


def _header(lines) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from core-metadata ``lines`` (its header ends at a blank line)."""
    name = version = None
    for line in lines:
        if not line.strip():
            break
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
        if name and version:
            break
    return name, version


def _name_and_version(distribution) -> tuple[str | None, str | None]:
    """A distribution's name and version, from its metadata file's header.

    A folder's file is read up to the header's end, not parsed whole as email: 5 ms instead
    of 70 ms for the lock's distributions, once per process.
    """
    folder = getattr(distribution, "_path", None)  # importlib.metadata.PathDistribution
    if isinstance(folder, Path):
        for name in ("METADATA", "PKG-INFO"):
            try:
                with (folder / name).open(encoding="utf-8", errors="replace") as stream:
                    return _header(stream)
            except OSError:  # absent (egg-info names it PKG-INFO), or a folder of that name
                continue
    text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO") or ""
    return _header(text.splitlines())


@functools.cache
def installed_versions() -> Mapping[str, str]:
    """Canonical name to version of every distribution on ``sys.path`` (the first of a name
    wins, as an import finds it), scanned once per process."""
    found: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        name, version = _name_and_version(distribution)
        if name and version:
            found.setdefault(canonicalize_name(name), version)
    return found


def compare(requirements: Sequence[LockedRequirement], installed: Mapping[str, str]) -> list[str]:
    """One phrase per locked requirement that ``installed`` (canonical name to version) does
    not satisfy, in the lock's order."""
    found = []
    for requirement in requirements:
        wanted = requirement.pinned or requirement.specifier or "any version"
        version = installed.get(requirement.key)
        if version is None:
            found.append(f"{requirement.name} not installed, {wanted} locked")
        elif requirement.specifier and not requirement.allows(version):
            found.append(f"{requirement.name} {version} installed, {wanted} locked")
    return found


def python_difference(root: str | Path | None = None, version: str | None = None) -> str | None:
    """The phrase saying Python ``version`` (default: the running one) is outside the
    ``requires-python`` of one of the book's :data:`PROJECT_FILES` at ``root``, or None."""
    root = Path(root) if root is not None else paths.REPO_ROOT
    version = version or platform.python_version()
    for name in PROJECT_FILES:
        try:
            project = tomllib.loads((root / name).read_text(encoding="utf-8")).get("project")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        requires = (project or {}).get("requires-python")
        if isinstance(requires, str) and not _allows(requires, version):
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
    """Every way the running environment differs from the lock and packages of the book at
    ``root``: the Python's phrase first, then :func:`compare`'s (none without a lock).

    Raises EnvironmentMismatchError for a lock line that is not a requirement, OSError for a
    lock that cannot be read.
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
    """The :func:`differences`, allowed; EnvironmentMismatchError in one line
    (:func:`mismatch_message`) if there are any and not ``allow``."""
    found = differences(root)
    if found and not allow:
        raise EnvironmentMismatchError(mismatch_message(found))
    return found


def installed_digest(root: str | Path | None = None) -> str:
    """What the installed distributions add to a key beyond the lock's bytes (JSON text).

    Empty when each locked distribution is installed at its pin, or there is no lock;
    otherwise the installed version (or null) of each one off its pin or locked by a range.
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
