"""The mistake files beside a registry: loading them, naming their functions, digesting them.

A claim's ``catches`` names ``<module>.<function>`` of ``<registry>/mistakes/<module>.py``,
a function that replaces one harness function with a mistaken version. The files are
loaded by path, never installed. :func:`mistakes_digest` covers their bytes and the
first-party modules their code reaches (:mod:`claimbook.dependencies`'s rule).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import sys
from pathlib import Path

from claimbook import dependencies, paths
from claimbook.errors import RegistryError

__all__ = [
    "MISTAKES",
    "MISTAKES_PACKAGE",
    "load_mistakes",
    "mistake_files",
    "mistakes_digest",
    "mistakes_dir",
    "resolve_perturbation",
]

MISTAKES = "mistakes"  # the folder of the mistakes, beside the registry's YAML files
# The package the files are loaded in, so that one may import another by that name.
MISTAKES_PACKAGE = "claim_mistakes"


def mistakes_dir(registry_dir: str | Path | None = None) -> Path:
    """``<registry_dir>/mistakes``: by default ``claims/mistakes/`` of the repository."""
    return Path(registry_dir if registry_dir is not None else paths.CLAIMS_DIR) / MISTAKES


def mistake_files(registry_dir: str | Path | None = None) -> list[Path]:
    """The mistake files (``*.py``) of the registry, sorted; none without the folder."""
    folder = mistakes_dir(registry_dir)
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


def _fresh_package(folder: Path):
    for name in [n for n in sys.modules if n.split(".")[0] == MISTAKES_PACKAGE]:
        del sys.modules[name]  # the mistakes of another registry
    package = importlib.util.module_from_spec(
        importlib.machinery.ModuleSpec(MISTAKES_PACKAGE, None, is_package=True)
    )
    package.__path__ = [str(folder)]
    sys.modules[MISTAKES_PACKAGE] = package
    return package


def load_mistakes(module: str, registry_dir: str | Path | None = None):
    """The mistake file ``<registry_dir>/mistakes/<module>.py``, loaded by its path once per
    process and folder as ``claim_mistakes.<module>``; :class:`RegistryError` if it does not
    exist or raises when loaded."""
    folder = mistakes_dir(registry_dir).resolve()
    path = folder / f"{module}.py"
    package = sys.modules.get(MISTAKES_PACKAGE)
    if package is None or list(getattr(package, "__path__", [])) != [str(folder)]:
        _fresh_package(folder)
    name = f"{MISTAKES_PACKAGE}.{module}"
    if name in sys.modules:
        return sys.modules[name]
    if not path.is_file():
        raise RegistryError(f"the mistakes file {paths.shown(path)} does not exist")
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except Exception as error:
        del sys.modules[name]
        raise RegistryError(
            f"the mistakes file {paths.shown(path)} cannot be loaded "
            f"({type(error).__name__}: {error})"
        ) from error
    return loaded


def resolve_perturbation(name: str, claim=None, registry_dir: str | Path | None = None):
    """The function ``<module>.<function>`` of the mistakes beside ``claim``'s registry file
    (else ``registry_dir``); :class:`RegistryError` naming the perturbation, file and
    function if it cannot be found."""
    where = f"{paths.shown(claim.path)}: field catches: " if claim is not None else ""
    module_name, _, function_name = name.rpartition(".")
    if claim is not None:
        registry_dir = Path(claim.path).parent
    path = mistakes_dir(registry_dir) / f"{module_name}.py"
    try:
        module = load_mistakes(module_name, registry_dir)
    except RegistryError as error:
        raise RegistryError(f"{where}perturbation {name!r}: {error}") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        known = sorted(
            n
            for n in getattr(module, "__all__", dir(module))
            if callable(getattr(module, n, None))
        )
        raise RegistryError(
            f"{where}perturbation {name!r}: the mistakes file {paths.shown(path)} has no "
            f"function {function_name!r}" + (f"; it has {', '.join(known)}" if known else "")
        )
    return function


def mistakes_digest(registry_dir: str | Path | None = None) -> str:
    """SHA-256 of the mistake files (names and bytes) and the first-party modules they reach."""
    digest = hashlib.sha256()
    imported: set[str] = set()
    for path in mistake_files(registry_dir):
        data = path.read_bytes()
        digest.update(f"{MISTAKES}/{path.name}".encode() + b"\0" + data + b"\0")
        try:
            imported |= dependencies.imports_in_code(data.decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError):  # loading it fails and says so; bytes count
            continue
    reached = dependencies.module_digests(dependencies.modules_reached(sorted(imported)))
    digest.update(json.dumps(reached, sort_keys=True).encode())
    return digest.hexdigest()
