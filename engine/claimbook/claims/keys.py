"""Claim keys: what a claim's artifact depends on.

A claim's result is a function of three things, and its *key* is a digest of exactly them:

1. **Its registry entry**: the bytes of ``claims/<id>.yaml`` (``registry_digest``).
2. **The code that computes it**: every module of the book's own packages reached by imports
   from the module of its ``compute:`` function and from the engine module that runs it
   (:data:`CLAIM_RUNNER`), each digested whole (:mod:`claimbook.dependencies` states the
   rule).
3. **The environment**: the bytes of ``requirements.txt``, the installed version of every
   locked distribution that is not at its pin, and the Python version
   (:func:`environment_digest`).

:func:`claim_key` combines them into ``{"digest", "registry_digest", "environment_digest",
"modules"}``; the artifact stores it, and an artifact is *stale* exactly when
:func:`current_claim_key` (the same modules, digested from today's files) differs. The set
of modules reached is a function of the bytes of the modules reached, so it can only change
when one of their digests does: the stored names are enough to decide, and nothing is parsed
for a claim whose code did not change.

Examples
--------
>>> from claimbook.claims.registry import load_claim
>>> claim = load_claim("c15-invariance-001")
>>> key = claim_key(claim)
>>> "trainable_harness.witnesses.chapter15.invariance" in key["modules"]
True
>>> current_claim_key(claim, {"key": key}) == key
True
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from claimbook import dependencies, environment, paths

__all__ = [
    "CLAIM_RUNNER",
    "claim_key",
    "claim_modules",
    "current_claim_key",
    "environment_digest",
]

# The engine module that runs a claim's computation in the claim's process.
CLAIM_RUNNER = "claimbook.claims.computations"


def environment_digest(root: str | Path | None = None) -> str:
    """SHA-256 of the lock (``requirements.txt``), the installed versions and the Python version.

    The installed versions enter as :func:`claimbook.environment.installed_digest` states
    them: nothing when every locked distribution is installed at its pin (the lock's bytes
    say it all), else each one that is not, with its installed version; so an artifact
    computed under numpy 2.3.5 is stale under a numpy 2.4.6 lock, and the other way round.
    The scan of the installed distributions and the lock's parse are cached per process;
    the lock's bytes are read on every call. Without a lock file (a fixture root), the numpy
    version stands for it.

    Examples
    --------
    >>> len(environment_digest())
    64
    """
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
    """The first-party modules ``claim``'s computation reaches (see the module doc)."""
    module = claim.compute.rpartition(".")[0]
    return dependencies.modules_reached([module, CLAIM_RUNNER])


def _key(registry_digest: str, modules: Mapping[str, str]) -> dict:
    parts = {
        "registry_digest": registry_digest,
        "environment_digest": environment_digest(),
        "modules": dict(sorted(modules.items())),
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return {"digest": hashlib.sha256(text.encode()).hexdigest(), **parts}


def claim_key(claim) -> dict:
    """The key of ``claim`` as its code and registry entry are now."""
    return _key(claim.registry_digest, dependencies.module_digests(claim_modules(claim)))


def current_claim_key(claim, artifact: Mapping) -> dict:
    """The key of the modules the artifact's key names, digested from today's files.

    An artifact whose key names no modules (written by another engine) gets the key of the
    claim as it is now, which its stored key cannot equal.
    """
    stored = artifact.get("key")
    names = stored.get("modules") if isinstance(stored, Mapping) else None
    if not isinstance(names, Mapping) or not names:
        return claim_key(claim)
    modules = [name for name in names if isinstance(name, str)]
    return _key(claim.registry_digest, dependencies.module_digests(modules))
