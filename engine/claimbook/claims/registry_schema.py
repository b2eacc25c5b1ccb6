"""Reading and refusing a registry file: :func:`validated` refuses in one line naming the
file and the field: the bytes and YAML, each text and number, ``claim_schema.json``, then the
rules across fields (docs/claims.md).
"""

import contextlib
import json
import math
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from claimbook.errors import RegistryError
from claimbook.paths import shown
from claimbook.text import UNSAFE, escape_unsafe, one_line

# jsonschema imports rfc3987-syntax, if installed, for the "iri" format: a second of CPU
# building parsers in every process that reads a registry, which checks no format.
sys.modules.setdefault("rfc3987_syntax", None)
import jsonschema  # noqa: E402

EXCERPT = 80  # characters of an offending value a message may quote
MAX_FILE_BYTES = 64 * 1024
MAX_DEPTH = 20  # nested mappings and sequences
MAX_TEXT = 2000  # characters of one key or text value
MAX_PROBLEMS = 6
_CHAPTER_PREFIX = re.compile(r"c(\d+)-")
_ONLY_STATISTICAL = "is only for a statistical claim (seed policy derived-set), whose"
_STATISTICAL_ONLY = {  # an expectation's key a deterministic claim may not hold: why
    "wide_because": f"{_ONLY_STATISTICAL} tolerance is measured in standard errors",
    "interval_method": f"{_ONLY_STATISTICAL} fields have intervals over seeds",
    **dict.fromkeys(
        ("ci_within", "mean", "fraction"), "needs a statistical claim (seed policy derived-set)"
    ),
}
_VALIDATOR = jsonschema.Draft202012Validator(
    json.loads(resources.files("claimbook.claims").joinpath("claim_schema.json").read_text())
)


def excerpt(value: Any, limit: int = EXCERPT) -> str:
    """``repr(value)`` cut to ``limit`` characters, with an ellipsis and the full length."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}... ({len(text)} characters)"


def refusal(path: Path, problem: str) -> RegistryError:
    """The error refusing registry file ``path``: ``<path>: <problem>`` on one line."""
    return RegistryError(one_line(f"{shown(path)}: {problem}"))


def field_name(path) -> str:
    """A field path as text; keys holding dots (nested result fields) go in brackets."""
    rendered = ""
    for part in path:
        if isinstance(part, int):
            rendered += f"[{part}]"
        elif len(str(part)) > 60:
            rendered += f"[{str(part)[:57]}...]"
        elif "." in str(part) or not str(part):
            rendered += f"[{part}]"
        else:
            rendered += f".{part}" if rendered else str(part)
    return rendered or "(top level)"


class _Strict:
    """Refuses repeated keys, anchors/aliases and deep nesting; mixed into a loader."""

    _depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        collection = isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent)
        problem = None
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            problem = "anchors and aliases (&name, *name) are not allowed in a registry file"
        elif collection and self._depth >= MAX_DEPTH:
            problem = f"nested deeper than {MAX_DEPTH} levels; a registry file needs a handful"
        if problem is not None:
            raise yaml.composer.ComposerError(None, None, problem, event.start_mark)
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
    """The pure-Python loader: it words the message of a refusal."""


_LOADER = _StrictSafeLoader
if yaml.__with_libyaml__:

    class _FastStrictLoader(_Strict, yaml.composer.Composer, yaml.CSafeLoader):
        """The same checks on libyaml's events (about 15 times faster): Python's composer."""

        def __init__(self, stream):
            yaml.CSafeLoader.__init__(self, stream)
            yaml.composer.Composer.__init__(self)

    _LOADER = _FastStrictLoader


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
    """The document in registry file ``path`` (bytes ``raw``), read strictly."""
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
    # A text libyaml refuses is read again by the reference loader, for its message.
    try:
        with contextlib.suppress(yaml.YAMLError):
            return yaml.load(text, Loader=_LOADER)
        return yaml.load(text, Loader=_StrictSafeLoader)
    except yaml.YAMLError as exc:
        raise refusal(path, _yaml_problem(exc, text)) from None


def _walk(value, path=()):
    """Every (field path, leaf or key) of a parsed document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), key
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))
    else:
        yield path, value


def _unusable_value(value) -> str | None:
    """Why a leaf or key is refused anywhere in a file, or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a finite number; values and tolerances must be finite"
    if not isinstance(value, str):
        return None
    if len(value) > MAX_TEXT:
        return f"text of {len(value)} characters; a text field holds at most {MAX_TEXT}"
    found = UNSAFE.search(value)
    if found is None:
        return None
    code, kind = ord(found.group()), "control character"
    if code > 0x9F:
        kind = (
            "line or paragraph separator" if code in (0x2028, 0x2029) else "bidirectional control"
        )
    return (
        f"{kind} {escape_unsafe(found.group())} at character {found.start() + 1}; a text "
        "field is one line of printable text"
    )


def _innermost(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """A failed ``oneOf``'s errors along its branch with the fewest failed constants, then
    errors, so that a missing ``reason`` is named rather than "matches no schema"."""
    if error.validator not in ("oneOf", "anyOf") or not error.context:
        return [error]
    branches: dict[int, list] = {}
    for sub_error in error.context:
        branches.setdefault(sub_error.relative_schema_path[0], []).append(sub_error)

    def score(index: int) -> tuple[int, int, int]:
        branch = branches[index]
        return (sum(e.validator == "const" for e in branch), len(branch), index)

    chosen = branches[min(branches, key=score)]
    return [inner for sub_error in chosen for inner in _innermost(sub_error)]


def _schema_problem(error: jsonschema.ValidationError) -> str:
    field = field_name(error.absolute_path)
    message, instance = error.message, error.instance
    if not isinstance(instance, dict | list):
        # jsonschema quotes the whole value; quote a short excerpt instead.
        message = message.replace(repr(instance), excerpt(instance))
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        # Name the unexpected field itself, not its parent.
        allowed = error.schema.get("properties", {})
        unexpected = sorted(str(key) for key in instance if key not in allowed)
        field = ", ".join(field_name([*error.absolute_path, key]) for key in unexpected[:5])
        message = "not allowed here (no such field in claim_schema.json)"
    elif isinstance(instance, dict | list) and len(message) > 2 * EXCERPT:
        message = f"{excerpt(instance)} fails {error.validator} {excerpt(error.validator_value)}"
    if error.validator == "pattern":
        expected = error.schema.get("description")
        message = f"{excerpt(instance)} has the wrong form; expected: {expected}"
    if error.validator == "type" and isinstance(instance, str):
        with contextlib.suppress(ValueError):
            float(instance)
            # PyYAML follows YAML 1.1, where 5e-4 (no dot) is a string: write 5.0e-4.
            message += (
                " (YAML reads a number without a decimal point, like 5e-4, as text; write 5.0e-4)"
            )
    return f"field {field}: {message}"


def _vacuity(bound: dict) -> str | None:
    """Why a ``{value, abs_tol | rel_tol}`` bound cannot tell its value from zero, or None."""
    value = bound.get("value")
    if value is None:
        return None
    if "abs_tol" in bound and value != 0 and bound["abs_tol"] >= abs(value):
        return f"abs_tol {bound['abs_tol']!r} is at least |value| = {abs(value)!r}"
    if "rel_tol" in bound and bound["rel_tol"] >= 1:
        return f"rel_tol {bound['rel_tol']!r} is at least 1"
    return None


def _inconsistency(data: dict, path: Path) -> str | None:
    """What a JSON schema cannot state, across fields; None if nothing."""
    if data["id"] != path.stem:
        return (
            f"field id is {excerpt(data['id'])} but the file is named {excerpt(path.name)}; "
            "the id must equal the file stem"
        )
    prefix = _CHAPTER_PREFIX.match(data["id"])
    if prefix and int(prefix.group(1)) != data["chapter"]:
        return (
            f"field chapter is {data['chapter']} but the id {data['id']!r} names chapter "
            f"{int(prefix.group(1))}"
        )
    statistical = data["seed"]["policy"] == "derived-set"
    if statistical and "statistics" not in data:
        return (
            "field statistics is required with seed policy derived-set, e.g. statistics: "
            "{level: 0.95, method: t}"
        )
    if not statistical and "statistics" in data:
        return "field statistics is only for seed policy derived-set (a statistical claim)"
    for field, expectation in data["expect"].items():
        for bounds_name in ("interval", "ci_within"):
            bounds = expectation.get(bounds_name)
            if bounds is not None and bounds[0] > bounds[1]:
                return (
                    f"field expect[{field}].{bounds_name} is {bounds}; write it as [lower, "
                    "upper] with lower <= upper"
                )
        key = next((k for k in _STATISTICAL_ONLY if k in expectation), None)
        if key is not None and not statistical:
            return f"field expect[{field}].{key} {_STATISTICAL_ONLY[key]}"
    for field, expectation in data["expect"].items():
        bound = expectation.get("mean", expectation)
        vacuous = _vacuity(bound) if isinstance(bound, dict) else None
        name = field_name(["expect", field])
        if vacuous is not None and "vacuous_ok" not in expectation:
            return (
                f"field {name}: {vacuous}, so a result of 0 passes and the check says nothing; "
                "tighten the tolerance, or state why it is meant with vacuous_ok: <reason>"
            )
        if vacuous is None and "vacuous_ok" in expectation:
            return (
                f"field {name}.vacuous_ok: the tolerance is narrower than the value, so there "
                "is nothing to excuse; remove vacuous_ok"
            )
    return None


def validated(raw: bytes, path: Path) -> dict:
    """The data of registry file ``path`` (bytes ``raw``), ``compute`` unchecked; else
    :class:`RegistryError`."""
    data = parse_registry_yaml(raw, path)
    for field, value in _walk(data):
        problem = _unusable_value(value)
        if problem is not None:
            raise refusal(path, f"field {field_name(field)}: {problem}")
    errors = [inner for error in _VALIDATOR.iter_errors(data) for inner in _innermost(error)]
    if errors:
        errors.sort(key=lambda error: list(map(str, error.absolute_path)))
        problems = [_schema_problem(error) for error in errors]
        if len(problems) > MAX_PROBLEMS:
            problems = [*problems[:MAX_PROBLEMS], f"... and {len(problems) - MAX_PROBLEMS} more"]
        raise refusal(path, "; ".join(problems))
    problem = _inconsistency(data, path)
    if problem is not None:
        raise refusal(path, problem)
    return data
