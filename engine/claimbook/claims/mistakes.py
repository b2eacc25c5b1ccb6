"""The record of the mistakes each claim must catch (``python -m checks mutate`` writes it):
what the build and the claim pages read of it.

A claim's ``catches`` names ``<module>.<function>`` of ``<registry>/mistakes/<module>.py``.
The record is ``{"version": 2, "claims": {id: entry}}``, each entry under :func:`mutation_key`.
"""

import hashlib
import json
from pathlib import Path

from claimbook import dependencies, paths
from claimbook.claims.keys import claim_key

MISTAKES = "mistakes"  # the folder of the mistakes, beside the registry's YAML files
VERSION = 2
SUBJECT_FIELDS_NEEDED = 2  # subject fields a mistake must turn red to be caught enough


def mistakes_dir(registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/mistakes``: by default ``claims/mistakes/`` of the repository."""
    return Path(registry_dir if registry_dir is not None else paths.CLAIMS_DIR) / MISTAKES


def committed_record_path(registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/mistakes/record.json`` (default ``claims/mistakes/record.json``)."""
    return mistakes_dir(registry_dir) / "record.json"


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
