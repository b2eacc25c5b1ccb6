"""The running environment compared with the lock (``requirements.txt``).

Each requirement of the lock whose marker holds here must be installed at a version its
specifier allows (the book's own :data:`NOT_LOCKED` aside); the lock is read as pip reads it
(comments and options dropped, continuations joined, ``-r`` not followed). The running Python
must satisfy the ``requires-python`` of :data:`PROJECT_FILES`.

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
import itertools
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
NOT_LOCKED = frozenset({"trainable-harness", "claimbook"})
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


def _allows(specifier: str, version: str) -> bool:
    """Whether ``version`` satisfies ``specifier`` (pre-releases included)."""
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
    """The requirements of the lock's bytes that apply here (``marker_environment`` overrides
    marker values), in order; EnvironmentMismatchError naming a line that is no requirement."""
    return _parsed(bytes(lock), tuple(sorted((marker_environment or {}).items())))


def _header(lines) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from core-metadata ``lines`` (its header ends at a blank line)."""
    header = itertools.takewhile(str.strip, lines)
    fields = dict(line.split(":", 1) for line in header if ":" in line)
    return fields.get("Name", "").strip() or None, fields.get("Version", "").strip() or None


@functools.cache
def installed_versions() -> Mapping[str, str]:
    """Canonical name to version of every distribution on ``sys.path`` (the first of a name
    wins, as an import finds it), once per process."""
    found: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        try:  # the header read as text: parsing the metadata as email takes 8 times as long
            text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO")
        except UnicodeDecodeError:
            continue
        name, version = _header((text or "").splitlines())
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
        elif requirement.specifier and not (
            version == requirement.pinned or _allows(requirement.specifier, version)
        ):
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
    """Every way the running environment differs from the book at ``root``: the Python's
    phrase first, then :func:`compare`'s (none without a lock); raises as
    :func:`locked_requirements`, OSError for an unreadable lock."""
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
    """What the installed distributions add to a key beyond the lock's bytes: "" when each is
    at its pin (or there is no lock), else JSON of the version (or null) of each one off its
    pin or locked by a range."""
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
