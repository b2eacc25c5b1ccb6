"""A registry file's YAML, read strictly: no anchors, aliases, repeated keys, deep nesting.

Every refusal is one line naming the file and the place.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import yaml

from claimbook.errors import RegistryError
from claimbook.paths import shown
from claimbook.text import escape_unsafe, one_line

EXCERPT = 80  # characters of an offending value a message may quote
MAX_FILE_BYTES = 64 * 1024
MAX_DEPTH = 20  # nested mappings and sequences


def excerpt(value: Any, limit: int = EXCERPT) -> str:
    """``repr(value)`` cut to ``limit`` characters, with an ellipsis and the full length."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 3]}... ({len(text)} characters)"


def refusal(path: Path, problem: str) -> RegistryError:
    """The error refusing registry file ``path``: ``<path>: <problem>`` on one line."""
    return RegistryError(one_line(f"{shown(path)}: {problem}"))


class _Strict:
    """Refuses repeated keys, anchors/aliases and deep nesting; mixed into a loader."""

    _depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(
                None,
                None,
                "anchors and aliases (&name, *name) are not allowed in a registry file",
                event.start_mark,
            )
        collection = isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent)
        if collection and self._depth >= MAX_DEPTH:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"nested deeper than {MAX_DEPTH} levels; a registry file needs a handful",
                event.start_mark,
            )
        self._depth += collection
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= collection

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {excerpt(key)}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _StrictSafeLoader(_Strict, yaml.SafeLoader):
    """The pure-Python reference: it decides a refusal and words its message."""


if yaml.__with_libyaml__:
    from yaml.cyaml import CParser

    class _FastStrictLoader(
        _Strict,
        yaml.composer.Composer,
        CParser,
        yaml.constructor.SafeConstructor,
        yaml.resolver.Resolver,
    ):
        """The same checks on libyaml's scanner and parser (about 15 times faster)."""

        def __init__(self, stream):
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)


def _at(mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _yaml_problem(error: yaml.YAMLError, text: str) -> str:
    """One line for a PyYAML error: where, what, and what it was parsing."""
    if isinstance(error, yaml.reader.ReaderError):
        before = text[: error.position]
        line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
        character = escape_unsafe(chr(error.character)) if error.character else "?"
        return f"line {line}, column {column}: character {character} is not allowed in YAML"
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        problem = f"{_at(error.problem_mark)}: {error.problem}"
        if error.context:
            started = error.context_mark
            where = f" that starts at {_at(started)}" if started is not None else ""
            problem += f" ({error.context}{where})"
        return problem
    return f"not valid YAML: {error}"


def parse_registry_yaml(raw: bytes, path: Path) -> Any:
    """The document registry file ``path`` holds (bytes ``raw``), read strictly.

    Raises
    ------
    RegistryError
        A file over :data:`MAX_FILE_BYTES`, not UTF-8, not YAML, or with anchors, aliases,
        repeated keys or nesting deeper than :data:`MAX_DEPTH`; one line naming where.
    """
    if len(raw) > MAX_FILE_BYTES:
        raise refusal(
            path,
            f"larger than {MAX_FILE_BYTES} bytes, the most a registry file may hold (one "
            "claim is about 1 000)",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refusal(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    # A text libyaml refuses is read again by the reference loader, whose message is reported.
    try:
        if yaml.__with_libyaml__:
            with contextlib.suppress(yaml.YAMLError):
                return yaml.load(text, Loader=_FastStrictLoader)
        return yaml.load(text, Loader=_StrictSafeLoader)
    except yaml.YAMLError as exc:
        raise refusal(path, _yaml_problem(exc, text)) from None
    except (RecursionError, MemoryError) as exc:  # kept out by MAX_DEPTH; never a traceback
        raise refusal(path, f"too deeply nested to read ({type(exc).__name__})") from None
