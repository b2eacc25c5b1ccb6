"""Which harness functions run: a one-line note at the top of each, compiled in at import.

The book keys a chapter and a claim on the harness functions they actually run (see
:mod:`claimbook.claims.keys`). Tracing every Python call with ``sys.settrace`` would
tell, but it slows a chapter by 70% (every call in numpy and matplotlib pays for it).
Instead, when :mod:`trainable_harness` is imported, :func:`install` puts an import hook in
front of ``sys.meta_path`` for the package's own modules: each module is compiled from its
source with one statement added at the top of every function body (after the docstring)::

    if __trainable_recording__: __trainable_ran__("<module>", "<qualname>")

``__trainable_recording__`` is the list of active recorders' sets (empty, hence false, when
nothing records; each module imports it under that name, a line also compiled in), so an
unrecorded call costs one global lookup and a truth test, and a recorded one a set
insertion. The statement sits on the line of the body's first statement,
so line numbers in tracebacks are unchanged. Qualified names are computed from the syntax
tree exactly as Python forms ``__qualname__`` (``Class.method``, ``outer.<locals>.inner``);
lambdas and comprehensions are parts of the function that holds them.

Compiled modules are cached beside the ordinary bytecode under their own tag
(``*.trainable-calls-3.pyc``), keyed by the SHA-256 of the source bytes: an edit is never
served the old code, whatever its modification time or size (a same-size edit with the old
mtime restored compiles afresh), and an unchanged source costs one hash and one read. The
file name compiled into a cached module is replaced, as Python's own loader does, by where
the source is now, so a copied checkout never names the original's files.

Examples
--------
>>> import trainable_harness
>>> from trainable_harness.normalization import centered_normalize
>>> seen = set()
>>> RECORDING.append(seen)
>>> _ = centered_normalize([1.0, 2.0, 4.0])
>>> RECORDING.remove(seen)
>>> ("trainable_harness.normalization", "centered_normalize") in seen
True
"""

from __future__ import annotations

import _imp
import ast
import collections
import functools
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import sys

from claimbook.instruments import PACKAGE

__all__ = ["RECORDING", "cached_with_calls", "install", "instrument", "ran"]

# Left as it is: the mark of claim computations, which the engine's bookkeeping calls.
UNRECORDED = frozenset({f"{PACKAGE}.claimable"})
CACHE_TAG = "trainable-calls-3"  # bump when the inserted statement or the cache key changes
RECORDING: list[set] = []  # the sets of the active recorders, innermost last


def ran(module: str, qualname: str) -> None:
    """Note that ``module.qualname`` ran, in every active recorder's set."""
    entry = (module, qualname)
    for seen in RECORDING:
        seen.add(entry)


def cached_with_calls(maxsize: int = 256, *, shared: bool = False):
    """A least-recently-used cache that also remembers which harness functions a value needed.

    A cached value hides the work that made it: a claim whose computation is served from a
    cache filled earlier (say, by a figure) would record none of the functions its result
    depends on, and its key would differ from a fresh computation's. This cache records the
    functions that run while a value is computed and notes them again, into every active
    recorder, each time the value is served. Arguments must be hashable.

    With ``shared``, in a build the values the claim processes compute are kept for the
    chapter kernels, which read them instead of computing them again
    (:mod:`claimbook.shared_values`; a claim never reads one).

    Examples
    --------
    >>> @cached_with_calls(maxsize=4)
    ... def twice(x):
    ...     return 2 * x
    >>> twice(3), twice(3)
    (6, 6)
    """
    if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"maxsize must be a positive integer, got {maxsize!r}")

    def decorate(function):
        store: collections.OrderedDict = collections.OrderedDict()

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            if key in store:
                store.move_to_end(key)
                value, needed = store[key]
                for entry in needed:
                    ran(*entry)
                return value
            role = shared_key = None
            if shared:
                from claimbook import shared_values  # late: only a shared value needs it

                role = shared_values.role()
                if role is not None:
                    shared_key = shared_values.value_key(function, args, kwargs)
            kept = shared_values.read_value(shared_key) if role == "read" else None
            if kept is not None:
                value, needed = kept
                for entry in needed:
                    ran(*entry)
            else:
                value, needed = _computed(function, args, kwargs)
                if role == "write":
                    shared_values.write_value(shared_key, value, needed)
            store[key] = (value, needed)
            if len(store) > maxsize:
                store.popitem(last=False)
            return value

        wrapper.cache_clear = store.clear
        return wrapper

    return decorate


def _computed(function, args: tuple, kwargs: dict):
    """``function(*args, **kwargs)`` and the harness functions that ran while computing it."""
    seen: set = set()
    RECORDING.append(seen)
    try:
        value = function(*args, **kwargs)
    finally:
        for index in range(len(RECORDING) - 1, -1, -1):
            if RECORDING[index] is seen:
                del RECORDING[index]
                break
    return value, frozenset(seen)


class _Insert(ast.NodeTransformer):
    """Add the note to every function body, with its qualified name."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.scope: list[str] = []

    def _function(self, node):
        qualname = ".".join([*self.scope, node.name])
        self.scope.extend([node.name, "<locals>"])
        self.generic_visit(node)
        del self.scope[-2:]
        first = node.body[0]
        note = ast.parse(
            f"if __trainable_recording__: __trainable_ran__({self.module!r}, {qualname!r})"
        ).body[0]
        for part in ast.walk(note):
            part.lineno = part.end_lineno = first.lineno
            part.col_offset = part.end_col_offset = 0
        docstring = (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        )
        node.body.insert(1 if docstring else 0, note)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()
        return node


def instrument(source: str | bytes, module: str, filename: str = "<source>"):
    """Compile ``source`` as module ``module`` with the note in every function.

    The module also imports the two names the note uses, right after its docstring and
    ``__future__`` imports, so it works however it is executed (``python -m`` too).
    """
    tree = _Insert(module).visit(ast.parse(source, filename))
    position = 0
    for statement in tree.body:
        is_docstring = (
            position == 0
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        )
        is_future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
        if not (is_docstring or is_future):
            break
        position += 1
    names = ast.parse(
        f"from {__name__} import RECORDING as __trainable_recording__, ran as __trainable_ran__"
    ).body[0]
    line = tree.body[position].lineno if position < len(tree.body) else 1
    for part in ast.walk(names):
        part.lineno = part.end_lineno = line
        part.col_offset = part.end_col_offset = 0
    tree.body.insert(position, names)
    return compile(tree, filename, "exec", dont_inherit=True)


class _Loader(importlib.machinery.SourceFileLoader):
    """A source loader that compiles with the notes, and caches under its own tag."""

    def get_code(self, fullname):
        source_path = self.get_filename(fullname)
        cache = importlib.util.cache_from_source(source_path).replace(
            f".{sys.implementation.cache_tag}.", f".{sys.implementation.cache_tag}.{CACHE_TAG}."
        )
        source = self.get_data(source_path)
        # Our own header: the interpreter's magic, the tag, and the digest of the source.
        header = importlib.util.MAGIC_NUMBER + CACHE_TAG.encode() + hashlib.sha256(source).digest()
        try:
            with open(cache, "rb") as stream:
                data = stream.read()
            if data[: len(header)] == header:
                code = marshal.loads(data[len(header) :])
                # The file names baked in at compile time are where the source was then; a
                # copied checkout (cp -a) would name the original's files in tracebacks and
                # to inspect.getsource. Python's own loader renames them the same way.
                _imp._fix_co_filename(code, source_path)
                return code
        except (OSError, ValueError, EOFError):
            pass
        code = instrument(source, fullname, source_path)
        try:
            os.makedirs(os.path.dirname(cache), exist_ok=True)
            temporary = f"{cache}.{os.getpid()}.tmp"
            with open(temporary, "wb") as stream:
                stream.write(header + marshal.dumps(code))
            os.replace(temporary, cache)
        except OSError:
            pass  # a read-only tree: compile again next time
        return code


class _Finder(importlib.abc.MetaPathFinder):
    """Hand the package's own source modules (but :data:`UNRECORDED`) to :class:`_Loader`."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith(PACKAGE + ".") or fullname in UNRECORDED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return spec
        spec.loader = _Loader(fullname, spec.origin)
        return spec


def install() -> None:
    """Put the import hook first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
