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


def claim_key(claim, modules: list[str] | None = None) -> dict:
    """The key of ``claim`` as its registry entry and ``modules`` (default
    :func:`claim_modules`) are now."""
    modules = claim_modules(claim) if modules is None else modules
    parts = {
        "registry_digest": claim.registry_digest,
        "environment_digest": environment_digest(),
        "modules": dict(sorted(dependencies.module_digests(modules).items())),
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return {"digest": hashlib.sha256(text.encode()).hexdigest(), **parts}


def current_claim_key(claim, artifact: Mapping) -> dict:
    """The key of the modules the artifact's key names (JSON keys: names), from today's files
    (nothing parsed); for a key naming none, :func:`claim_key`."""
    names = artifact["key"].get("modules")
    return claim_key(claim, list(names) if isinstance(names, Mapping) and names else None)
