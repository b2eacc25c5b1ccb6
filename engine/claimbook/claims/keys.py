"""Claim keys: what a claim's artifact depends on, recorded when it runs.

A claim's result is a function of three things, and its *key* is a digest of exactly them:

1. **Its registry entry** -- the bytes of ``claims/<id>.yaml`` (``registry_digest``).
2. **The bodies of the harness functions actually run** while its computation executed.
   :class:`HarnessCallRecorder` records them: every function of the harness package notes
   itself when it runs (a statement :mod:`claimbook.calls` compiles into it at
   import), as a ``(module, qualname)`` pair, e.g.
   ``("trainable_harness.moments.welford", "stable_online_moments")``, into the set of each active
   recorder; no trace function is involved. :func:`function_digests` then reads each
   function's source *statically* (with :mod:`ast`, nothing imported) from the module file
   and hashes it together with the source of the module-level assignments its body reads
   (so editing ``RANK_TOLERANCE = 1e-10`` counts as editing the functions that use it). A
   function that no longer exists digests to ``"missing"``. Comprehensions, lambdas and
   module bodies are not recorded separately: their source is part of the function (or
   module assignment) that holds them.
3. **The locked environment** -- the bytes of ``requirements.txt`` and the Python version
   (:func:`environment_digest`).

:func:`claim_key` combines them into ``{"digest", "registry_digest", "environment_digest",
"functions"}``; the artifact stores it, and an artifact is *stale* exactly when
:func:`current_claim_key` -- the same functions, digested from today's sources -- differs.
Editing a harness function that a claim never runs therefore leaves it current; editing one
it runs makes it stale.

Examples
--------
>>> from trainable_harness.moments import stable_online_moments
>>> with HarnessCallRecorder() as recorder:
...     _ = stable_online_moments([1.0, 2.0, 3.0])
>>> ("trainable_harness.moments.welford", "stable_online_moments") in recorder.functions
True
>>> digests = function_digests([("trainable_harness.moments.welford", "stable_online_moments")])
>>> len(digests["trainable_harness.moments.welford:stable_online_moments"])
64
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import platform
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from claimbook import cache, instruments, paths
from claimbook import calls as _calls

__all__ = [
    "HarnessCallRecorder",
    "claim_key",
    "current_claim_key",
    "environment_digest",
    "function_digests",
    "parse_package",
]

PACKAGE_NAME = instruments.PACKAGE
MISSING = "missing"

# --- recording the harness functions that run --------------------------------------------------


class HarnessCallRecorder:
    """Record the harness functions called between :meth:`start` and :meth:`stop`.

    Every harness function notes itself when it runs (:mod:`claimbook.calls`
    compiles that note into each function at import), into the set of each active
    recorder. Recorders nest: one started inside another records into both, and stopping
    the inner one leaves the outer recording. No trace function is involved, so recording
    costs a chapter almost nothing and leaves debuggers and coverage tools alone.

    Examples
    --------
    >>> from trainable_harness.normalization import centered_normalize
    >>> recorder = HarnessCallRecorder()
    >>> recorder.start()
    >>> _ = centered_normalize([1.0, 2.0, 4.0])
    >>> ("trainable_harness.normalization", "centered_normalize") in recorder.stop()
    True
    """

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()
        self._running = False
        self.functions: tuple[tuple[str, str], ...] = ()

    def start(self) -> None:
        if self._running:
            raise RuntimeError("this HarnessCallRecorder is already recording")
        _calls.RECORDING.append(self._seen)
        self._running = True

    def stop(self) -> tuple[tuple[str, str], ...]:
        """Stop recording and return the recorded ``(module, qualname)`` pairs, sorted."""
        if not self._running:
            raise RuntimeError("this HarnessCallRecorder is not recording")
        for index in range(len(_calls.RECORDING) - 1, -1, -1):
            if _calls.RECORDING[index] is self._seen:
                del _calls.RECORDING[index]
                break
        self._running = False
        self.functions = tuple(sorted(self._seen))
        return self.functions

    def __enter__(self) -> HarnessCallRecorder:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()


# --- digesting function sources statically ------------------------------------------------------

# Parsed modules by their bytes (the digests of their functions are kept with each).
_MODULES = cache.ContentCache("harness modules")
# The digest of every definition of a module, by its bytes, kept between builds: a build
# needs the digests of the functions its claims and chapters ran, and parsing the package to
# find them is most of what keying costs (about 0.15 s for a hundred modules).
_DIGEST_TABLES = cache.StoredCache("harness function digests", lambda: engine_digest())


class _ParsedModule:
    """A module's source, syntax tree and module-level assignments by name."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)  # split once: segments are slices
        self.tree = ast.parse(source)
        self.assignments: dict[str, list[str]] = {}
        self.digests: dict[str, str] = {}
        for node in self.tree.body:
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            else:
                continue
            text = "".join(self.lines[node.lineno - 1 : node.end_lineno])
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        self.assignments.setdefault(name.id, []).append(text)

    def find(self, qualname: str) -> ast.AST | None:
        """The def/class node of ``qualname`` (``A.f``, ``outer.<locals>.inner``), or None."""
        scope: list[ast.stmt] = self.tree.body
        node = None
        parts = qualname.split(".")
        index = 0
        while index < len(parts):
            part = parts[index]
            if part == "<locals>":
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    return None
                index += 1
                continue
            candidates = [
                child for child in _definitions(scope) if getattr(child, "name", None) == part
            ]
            if not candidates:
                return None
            node = candidates[-1]  # a later definition wins, as at run time
            scope = node.body
            index += 1
        return node

    def segment(self, node: ast.AST) -> str:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return "".join(self.lines[first - 1 : node.end_lineno])


def _definitions(scope: list[ast.stmt]):
    """Definitions of a scope, including those under if/try (e.g. optional fast paths)."""
    for node in scope:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node
        elif isinstance(node, ast.If | ast.Try):
            handlers = [handler.body for handler in getattr(node, "handlers", [])]
            for block in (node.body, node.orelse, *handlers):
                yield from _definitions(block)


def _parsed(path: Path) -> _ParsedModule | None:
    """The parsed module at ``path``, cached by the digest of its bytes (never by mtime)."""
    data = cache.file_bytes(path)
    if data is None:
        return None
    return _parsed_bytes(data)


def _parsed_bytes(data: bytes) -> _ParsedModule | None:
    return _MODULES.get(cache.digest(data), lambda: _parse(data))


def _qualnames(scope: list[ast.stmt], prefix: str = "") -> Iterator[str]:
    """The qualified name of every definition in ``scope``, as ``__qualname__`` spells it."""
    for node in _definitions(scope):
        name = prefix + node.name
        yield name
        local = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        yield from _qualnames(node.body, name + (".<locals>." if local else "."))


def _digest_table(data: bytes) -> dict[str, str]:
    """``qualname -> digest`` (:func:`_digest_of`) for every definition of the module ``data``;
    empty for a module that does not parse."""
    parsed = _parsed_bytes(data)
    if parsed is None:
        return {}
    return {
        name: _function_digest(parsed, name) for name in sorted(set(_qualnames(parsed.tree.body)))
    }


def _module_digests(path: Path) -> tuple[bytes, dict[str, str]] | None:
    """The bytes of the module at ``path`` and its digest table, or None when it is absent."""
    data = cache.file_bytes(path)
    if data is None:
        return None
    return data, _DIGEST_TABLES.get(cache.digest(data), lambda: _digest_table(data))


def _parse(data: bytes) -> _ParsedModule | None:
    try:
        return _ParsedModule(data.decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None


def parse_package(package_dir: str | Path | None = None) -> int:
    """Find the digest table of every module of the package (parsing those not stored).

    Digests read their module's table on first use; a build calls this while it waits for its
    chapters, so judging the claims afterwards does not. Returns the number of modules.
    """
    package_dir = Path(package_dir) if package_dir is not None else instruments.package_dir()
    modules = [path for path in sorted(package_dir.rglob("*.py")) if _module_digests(path)]
    return len(modules)


def _module_path(module: str, package_dir: Path) -> Path | None:
    parts = module.split(".")
    if parts[0] != PACKAGE_NAME:
        return None
    base = package_dir.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _function_digest(parsed: _ParsedModule | None, qualname: str) -> str:
    if parsed is None:
        return MISSING
    if qualname not in parsed.digests:  # cached with the parsed module, so per file version
        parsed.digests[qualname] = _digest_of(parsed, qualname)
    return parsed.digests[qualname]


def _digest_of(parsed: _ParsedModule, qualname: str) -> str:
    node = parsed.find(qualname)
    if node is None:
        return MISSING
    loaded = sorted(
        {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    )
    digest = hashlib.sha256(parsed.segment(node).encode("utf-8"))
    for name in loaded:
        for text in parsed.assignments.get(name, ()):
            digest.update(b"\0" + name.encode() + b"\0" + text.encode("utf-8"))
    return digest.hexdigest()


def function_digests(
    functions: Iterable[tuple[str, str]], package_dir: str | Path | None = None
) -> dict[str, str]:
    """SHA-256 of each function's source (plus the module constants it reads), by name.

    Parameters
    ----------
    functions : iterable of (module, qualname)
        As recorded by :class:`HarnessCallRecorder`.
    package_dir : path, optional
        The directory of the ``trainable_harness`` package whose files are read (default:
        :func:`claimbook.instruments.package_dir`).

    Returns
    -------
    dict
        ``"module:qualname"`` -> 64 hex digits, or ``"missing"`` when the module or the
        function no longer exists.
    """
    package_dir = Path(package_dir) if package_dir is not None else instruments.package_dir()
    modules: dict[str, tuple[bytes, dict[str, str]] | None] = {}  # each read once per call
    digests = {}
    for module, qualname in sorted(set(map(tuple, functions))):
        if module not in modules:
            path = _module_path(module, package_dir)
            modules[module] = _module_digests(path) if path is not None else None
        found = modules[module]
        if found is None:
            digest = MISSING
        elif qualname in found[1]:
            digest = found[1][qualname]
        else:  # a name no definition spells so (found, if at all, by parsing)
            digest = _function_digest(_parsed_bytes(found[0]), qualname)
        digests[f"{module}:{qualname}"] = digest
    return digests


# --- environment and keys ---------------------------------------------------------------------


@functools.cache
def engine_digest() -> str:
    """SHA-256 of the engine's own code: every ``*.py`` and ``*.json`` file of :mod:`claimbook`.

    The engine judges, keys and renders every result, so a change to any of its files is a
    change to every key (of each claim, each chapter and the site). Computed once per
    process from the files' bytes (about 50 files; a few milliseconds).
    """
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(package).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def environment_digest(root: str | Path | None = None) -> str:
    """SHA-256 of the lock (``requirements.txt``), the Python version and the engine's code.

    Without a lock file (a fixture root), the Python and numpy versions stand for it. The
    engine's own code (:func:`engine_digest`) is part of it, so every key that includes the
    environment -- each claim's, each chapter's and the site's -- changes with the engine.

    Examples
    --------
    >>> len(environment_digest())
    64
    """
    lock = Path(root if root is not None else paths.REPO_ROOT) / "requirements.txt"
    digest = hashlib.sha256()
    if lock.is_file():
        digest.update(b"lock\0" + lock.read_bytes())
    else:
        digest.update(b"numpy\0" + np.__version__.encode())
    digest.update(b"\0python\0" + platform.python_version().encode())
    digest.update(b"\0engine\0" + engine_digest().encode())
    return digest.hexdigest()


def _key(registry_digest: str, functions: Mapping[str, str]) -> dict:
    parts = {
        "registry_digest": registry_digest,
        "environment_digest": environment_digest(),
        "functions": dict(sorted(functions.items())),
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return {"digest": hashlib.sha256(text.encode()).hexdigest(), **parts}


def claim_key(claim, functions: Iterable[tuple[str, str]]) -> dict:
    """The key of ``claim`` computed by running ``functions``: ``digest`` covers the rest."""
    return _key(claim.registry_digest, function_digests(functions))


def current_claim_key(claim, artifact: Mapping) -> dict:
    """The key the artifact's recorded functions have today (same functions, current sources)."""
    stored = artifact.get("key")
    names = stored.get("functions", {}) if isinstance(stored, Mapping) else {}
    functions = [tuple(name.split(":", 1)) for name in names if isinstance(name, str)]
    return claim_key(claim, [f for f in functions if len(f) == 2])
