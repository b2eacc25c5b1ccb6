"""The running environment compared with the lock (``requirements.txt``, read as pip reads
it, ``-r`` not followed) and the ``requires-python`` of :data:`PROJECT_FILES`, and start-up
code no installed distribution lists.

>>> compare(locked_requirements(b"numpy==2.4.6\\nold==1.0; python_version < '3'\\n"), {})
['numpy not installed, 2.4.6 locked']
"""

import csv
import functools
import importlib.metadata
import io
import itertools
import json
import platform
import re
import site
import tomllib
from collections.abc import Mapping, Sequence
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
STARTUP_NAMES = ("sitecustomize.py", "usercustomize.py")
_SHOWN = 5  # differences named in the one-line failure; the rest are counted
_LOGICAL_LINE = re.compile(r"(?:.*\\\n)*.*")  # a line and the lines it continues into
_END = re.compile(r"(^|\s)#.*|\s--[A-Za-z].*", re.DOTALL)  # a comment or an option


def _allows(specifier: str, version: str) -> bool:
    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def _pin(requirement: Requirement) -> str | None:
    specifiers = list(requirement.specifier)
    exact = len(specifiers) == 1 and specifiers[0].operator in ("==", "===")
    return specifiers[0].version if exact and "*" not in specifiers[0].version else None


@functools.cache
def locked_requirements(lock: bytes) -> tuple[Requirement, ...]:
    """The requirements of the lock's bytes that apply here, in order;
    EnvironmentMismatchError naming a line that is no requirement."""
    text = "\n".join(lock.decode("utf-8", "replace").splitlines())
    found = []
    for match in _LOGICAL_LINE.finditer(text):
        line = _END.sub("", match[0].replace("\\\n", " ")).strip()
        if not line or line.startswith("-"):
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement as error:
            number = text.count("\n", 0, match.start()) + 1
            raise EnvironmentMismatchError(
                f"{LOCK_NAME} line {number}: {line[:80]!r} is not a requirement ({error}); "
                "regenerate the lock with `make lock`"
            ) from None
        applies = requirement.marker is None or requirement.marker.evaluate()
        if applies and canonicalize_name(requirement.name) not in NOT_LOCKED:
            found.append(requirement)
    return tuple(found)


@functools.cache
def installed_versions() -> Mapping[str, str]:
    """Canonical name -> version of each distribution on ``sys.path`` (the first of a name)."""
    found: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        try:  # the header read as text: parsing the metadata as email takes 8 times as long
            text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO")
        except UnicodeDecodeError:
            continue
        header = itertools.takewhile(str.strip, (text or "").splitlines())
        fields = dict(line.split(":", 1) for line in header if ":" in line)
        name, version = fields.get("Name", "").strip(), fields.get("Version", "").strip()
        if name and version:
            found.setdefault(canonicalize_name(name), version)
    return found


def compare(requirements: Sequence[Requirement], installed: Mapping[str, str]) -> list[str]:
    """One phrase per locked requirement that ``installed`` (canonical name to version) does
    not satisfy, in the lock's order."""
    found = []
    for requirement in requirements:
        pinned, specifier = _pin(requirement), str(requirement.specifier)
        wanted = pinned or specifier or "any version"
        version = installed.get(canonicalize_name(requirement.name))
        if version is None:
            found.append(f"{requirement.name} not installed, {wanted} locked")
        elif specifier and version != pinned and not _allows(specifier, version):
            found.append(f"{requirement.name} {version} installed, {wanted} locked")
    return found


def _python_differences(root: Path) -> list[str]:
    """How the Python running is outside a ``requires-python`` of :data:`PROJECT_FILES`."""
    version = platform.python_version()
    for name in PROJECT_FILES:
        try:
            project = tomllib.loads((root / name).read_text(encoding="utf-8")).get("project")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        requires = (project or {}).get("requires-python")
        if isinstance(requires, str) and not _allows(requires, version):
            return [f"Python {version} running, {requires} required by {name}"]
    return []


def _lock_bytes(root: Path) -> bytes | None:
    try:
        return (root / LOCK_NAME).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def differences(root: str | Path | None = None) -> list[str]:
    """Every way the running environment differs from the book at ``root`` (Python first);
    raises as :func:`locked_requirements`, OSError for an unreadable lock."""
    root = Path(root) if root is not None else paths.REPO_ROOT
    found = _python_differences(root)
    lock = _lock_bytes(root)
    if lock is not None:
        found.extend(compare(locked_requirements(lock), installed_versions()))
    return found


def check_environment(root: str | Path | None = None, allow: bool = False) -> list[str]:
    """The :func:`differences`; EnvironmentMismatchError if there are any and not ``allow``."""
    found = differences(root)
    if found and not allow:
        listed = "; ".join(found[:_SHOWN])
        if len(found) > _SHOWN:
            listed += f"; and {len(found) - _SHOWN} more"
        raise EnvironmentMismatchError(
            f"the environment differs from {LOCK_NAME}: {listed}; run `touch {LOCK_NAME} && "
            f"make` to reinstall the lock, or build anyway with {ALLOW_OPTION} "
            "(make ALLOW_ENV_MISMATCH=1; every page then names the differences)"
        )
    return found


def installed_digest(root: str | Path | None = None) -> str:
    """What the installed distributions add to a key beyond the lock's bytes: "" when each is
    at its pin, else JSON of the version (or null) of each off its pin or locked by a range."""
    lock = _lock_bytes(Path(root) if root is not None else paths.REPO_ROOT)
    try:
        requirements = locked_requirements(lock) if lock is not None else ()
    except EnvironmentMismatchError:  # the lock's bytes stand for it; the build refuses it
        return ""
    installed = installed_versions()
    off = {}
    for requirement in requirements:
        key, pin = canonicalize_name(requirement.name), _pin(requirement)
        if pin is None or installed.get(key) != pin:
            off[key] = installed.get(key)
    return json.dumps(off, sort_keys=True, separators=(",", ":")) if off else ""


def _recorded_startup_files(folder: Path) -> set[Path]:
    """The start-up files the ``RECORD`` of each distribution in ``folder`` lists. Read as
    text first: most list none, and importlib.metadata's ``files`` is slow."""
    listed = set()
    for record in folder.glob("*.dist-info/RECORD"):
        try:
            text = record.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if ".pth" not in text and "customize.py" not in text:
            continue
        for row in csv.reader(io.StringIO(text)):
            if row and (row[0].endswith(".pth") or Path(row[0]).name in STARTUP_NAMES):
                listed.add((folder / row[0]).resolve())
    return listed


def foreign_startup_files(folders: list[Path] | None = None) -> list[Path]:
    """Start-up files in ``folders`` (site-packages) that no distribution there lists, sorted."""
    if folders is None:
        folders = [Path(folder) for folder in site.getsitepackages()]
    foreign = []
    for folder in filter(Path.is_dir, folders):
        listed = _recorded_startup_files(folder)
        present = [*folder.glob("*.pth"), *(folder / name for name in STARTUP_NAMES)]
        foreign.extend(path for path in present if path.is_file() and path.resolve() not in listed)
    return sorted(foreign)
