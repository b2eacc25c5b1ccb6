"""Claim keys: the registry entry, the first-party modules reached from the computation and
:data:`CLAIM_RUNNER`, and the environment; an artifact is stale when its key is not
:func:`current_claim_key`.
"""

import hashlib
import json
import platform
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from claimbook import dependencies, environment, paths

CLAIM_RUNNER = "claimbook.claims.registry"  # runs a claim's computation


def environment_digest(root: str | Path | None = None) -> str:
    """SHA-256 of the lock (``requirements.txt``), the installed versions differing from it
    and the Python version; without a lock (a fixture root), numpy's version instead."""
    root = Path(root if root is not None else paths.REPO_ROOT)
    lock = root / "requirements.txt"
    digest = hashlib.sha256()
    if lock.is_file():
        digest.update(b"lock\0" + lock.read_bytes())
        installed = environment.installed_digest(root)
        if installed:
            digest.update(b"\0installed\0" + installed.encode())
    else:
        digest.update(b"numpy\0" + np.__version__.encode())
    digest.update(b"\0python\0" + platform.python_version().encode())
    return digest.hexdigest()


def claim_modules(claim) -> list[str]:
    """The first-party modules ``claim``'s computation reaches."""
    return dependencies.modules_reached([claim.compute.rpartition(".")[0], CLAIM_RUNNER])


def _key(claim, modules: list[str]) -> dict:
    parts = {
        "registry_digest": claim.registry_digest,
        "environment_digest": environment_digest(),
        "modules": dict(sorted(dependencies.module_digests(modules).items())),
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return {"digest": hashlib.sha256(text.encode()).hexdigest(), **parts}


def claim_key(claim) -> dict:
    """The key of ``claim`` as its code and registry entry are now."""
    return _key(claim, claim_modules(claim))


def current_claim_key(claim, artifact: Mapping) -> dict:
    """The key of the modules the artifact's key names, from today's files (nothing parsed);
    for a key naming none, :func:`claim_key`."""
    stored = artifact.get("key")
    names = stored.get("modules") if isinstance(stored, Mapping) else None
    if not isinstance(names, Mapping) or not names:
        return claim_key(claim)
    return _key(claim, [name for name in names if isinstance(name, str)])
