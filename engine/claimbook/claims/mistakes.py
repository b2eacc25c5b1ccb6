"""The mistakes each claim must catch: their files, and the record of what they did.

A claim's ``catches`` names ``<module>.<function>`` of ``<registry>/mistakes/<module>.py``.
The record is ``{"version": 2, "claims": {id: entry}}``, each entry under :func:`mutation_key`.
"""

import hashlib
import importlib
import json
import math
import sys
import types
from collections.abc import Mapping
from pathlib import Path

from claimbook import dependencies, paths
from claimbook.atomic import write_text_atomically
from claimbook.claims.keys import claim_key
from claimbook.errors import RegistryError

MISTAKES = "mistakes"  # the folder of the mistakes, beside the registry's YAML files
MISTAKES_PACKAGE = "claim_mistakes"  # the files' package, so one may import another
VERSION = 2
SUBJECT_FIELDS_NEEDED = 2  # subject fields a mistake must turn red to be caught enough


def mistakes_dir(registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/mistakes``: by default ``claims/mistakes/`` of the repository."""
    return Path(registry_dir if registry_dir is not None else paths.CLAIMS_DIR) / MISTAKES


def committed_record_path(registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/mistakes/record.json`` (default ``claims/mistakes/record.json``)."""
    return mistakes_dir(registry_dir) / "record.json"


def load_mistakes(module: str, registry_dir: str | Path | None = None):
    """The mistake file ``<registry_dir>/mistakes/<module>.py`` as ``claim_mistakes.<module>``
    (imported once per folder); :class:`RegistryError` if it is absent or raises."""
    folder = mistakes_dir(registry_dir).resolve()
    package = sys.modules.get(MISTAKES_PACKAGE)
    if package is None or list(getattr(package, "__path__", [])) != [str(folder)]:
        for name in [n for n in sys.modules if n.split(".")[0] == MISTAKES_PACKAGE]:
            del sys.modules[name]  # the mistakes of another registry
        package = sys.modules[MISTAKES_PACKAGE] = types.ModuleType(MISTAKES_PACKAGE)
        package.__path__ = [str(folder)]
    path, name = folder / f"{module}.py", f"{MISTAKES_PACKAGE}.{module}"
    if name not in sys.modules and not path.is_file():
        raise RegistryError(f"the mistakes file {paths.shown(path)} does not exist")
    try:
        return importlib.import_module(name)
    except Exception as error:
        raise RegistryError(
            f"the mistakes file {paths.shown(path)} cannot be loaded "
            f"({type(error).__name__}: {error})"
        ) from error


def resolve_perturbation(name: str, claim=None):
    """The function ``<module>.<function>`` of the mistakes beside ``claim``'s registry file
    (default ``claims/``); :class:`RegistryError` naming what is missing."""
    where = f"{paths.shown(claim.path)}: field catches: " if claim is not None else ""
    registry_dir = Path(claim.path).parent if claim is not None else None
    module_name, _, function_name = name.rpartition(".")
    try:
        module = load_mistakes(module_name, registry_dir)
    except RegistryError as error:
        raise RegistryError(f"{where}perturbation {name!r}: {error}") from None
    function = getattr(module, function_name, None)
    if callable(function):
        return function
    names = getattr(module, "__all__", dir(module))
    known = sorted(n for n in names if callable(getattr(module, n, None)))
    path = paths.shown(mistakes_dir(registry_dir) / f"{module_name}.py")
    raise RegistryError(
        f"{where}perturbation {name!r}: the mistakes file {path} has no function "
        f"{function_name!r}" + (f"; it has {', '.join(known)}" if known else "")
    )


def mistakes_digest(registry_dir: str | Path | None = None) -> str:
    """SHA-256 of the mistake files (names and bytes) and the first-party modules they reach."""
    digest = hashlib.sha256()
    imported: set[str] = set()
    folder = mistakes_dir(registry_dir)
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        data = path.read_bytes()
        digest.update(f"{MISTAKES}/{path.name}".encode() + b"\0" + data + b"\0")
        try:
            imported |= dependencies.imports_in_code(data.decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError):  # loading it fails and says so; bytes count
            continue
    reached = dependencies.module_digests(dependencies.modules_reached(sorted(imported)))
    digest.update(json.dumps(reached, sort_keys=True).encode())
    return digest.hexdigest()


def mutation_key(claim, digests: dict | None = None) -> str:
    """SHA-256 of the claim's key and the mistakes' digest (``digests``: a per-folder cache)."""
    folder = Path(claim.path).parent
    digests = {} if digests is None else digests
    if folder not in digests:
        digests[folder] = mistakes_digest(folder)
    text = f"{claim_key(claim)['digest']}\0{digests[folder]}"
    return hashlib.sha256(text.encode()).hexdigest()


def field_role(expectation: Mapping) -> str:
    """``"pinned"`` (a non-zero ``value`` or ``mean.value``) or ``"subject"``."""
    bound = expectation.get("mean") if isinstance(expectation.get("mean"), Mapping) else None
    value = (bound or expectation).get("value")
    if isinstance(value, int | float) and not isinstance(value, bool) and value != 0:
        return "pinned"
    return "subject"


def red_field(field: str, comparison: Mapping, expectation: Mapping | None) -> dict:
    """One field a mistake turned red: name, role (``"unregistered"`` without an
    expectation), expected, tolerance and got (a statistical field's mean and CI)."""
    got = comparison.get("got")
    if isinstance(got, Mapping):
        got = {k: got[k] for k in ("mean", "ci") if k in got} or None
    elif isinstance(got, float) and not math.isfinite(got):
        got = repr(got)
    elif isinstance(got, list):
        got = None
    return {
        "field": field,
        "role": field_role(expectation) if expectation is not None else "unregistered",
        "expected": comparison.get("expected"),
        "tolerance": comparison.get("tolerance"),
        "got": got,
    }


def read_record(path: str | Path) -> dict:
    """The claims of the record at ``path``, or {} (absent, unreadable, another version)."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or document.get("version") != VERSION:
        return {}
    claims = document.get("claims")
    return claims if isinstance(claims, dict) else {}


def write_record(path: str | Path, entries: Mapping[str, Mapping]) -> None:
    """Write ``entries`` into the record at ``path`` (keeping its others), atomically."""
    merged = {**read_record(path), **entries}
    document = {"version": VERSION, "claims": dict(sorted(merged.items()))}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(Path(path), json.dumps(document, indent=2, sort_keys=True) + "\n")


def current_entry(claim, key: str, record: str | Path) -> dict | None:
    """``claim``'s entry in ``record`` if it has the key ``key`` (today's), else None."""
    entry = read_record(record).get(claim.id)
    return entry if isinstance(entry, dict) and entry.get("key") == key else None


def mutation_states(claim, record: str | Path | None = None, digests: dict | None = None):
    """Each of ``claim``'s ``catches`` with its ``state``: ``"caught"``, ``"not caught"`` or
    ``"not yet run"`` (no result under today's key in ``record``, default the committed one)
    and, with a result, what the record says of it."""
    record = record if record is not None else committed_record_path(Path(claim.path).parent)
    entry = current_entry(claim, mutation_key(claim, digests), record) if claim.catches else None
    recorded = {
        c.get("perturbation"): c for c in (entry or {}).get("catches", []) if isinstance(c, dict)
    }
    states = []
    for catch in claim.catches or []:
        seen = recorded.get(catch["perturbation"])
        if seen is None:
            states.append({**catch, "state": "not yet run"})
            continue
        red = [r for r in seen.get("red", []) if isinstance(r, dict)]
        subject = sum(1 for r in red if r.get("role") == "subject")
        caught = bool(seen.get("caught"))
        states.append(
            {
                **catch,
                "state": "caught" if caught else "not caught",
                "red": red,
                "subject_red": subject,
                "enough": caught and subject >= SUBJECT_FIELDS_NEEDED,
                "error": seen.get("error"),
                "key": entry.get("key"),
                "when": entry.get("when"),
                "record": paths.shown(Path(record)),
            }
        )
    return states
