"""Reading and refusing a registry file: the rules a ``claims/<id>.yaml`` must meet.

:func:`validated` refuses, in this order, with one line naming the file and the field:
what :mod:`~claimbook.claims.registry_yaml` cannot read strictly; a key or text over
:data:`MAX_TEXT` characters or with an unsafe character (:data:`claimbook.text.UNSAFE`), a
non-finite number; what breaks ``claim_schema.json``; then what a schema cannot state (the
id and the file name, the chapter and the id's ``c<N>-`` prefix, statistics and the seed
set, a reversed interval, a statistical field on a deterministic claim, and a vacuous
tolerance without ``vacuous_ok`` or the reverse: docs/claims.md).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from claimbook.claims.registry_yaml import EXCERPT, excerpt, parse_registry_yaml, refusal
from claimbook.text import UNSAFE, escape_unsafe

# jsonschema imports rfc3987-syntax when it is installed (JupyterLab's jupyter-events asks for
# it) to check the "iri" format, and that builds some forty Earley parsers: a second of
# CPU in every process that reads a registry. The registry schema checks no format.
sys.modules.setdefault("rfc3987_syntax", None)
import jsonschema  # noqa: E402

MAX_TEXT = 2000  # characters of one key or text value
MAX_PROBLEMS = 6
_CHAPTER_PREFIX = re.compile(r"c(\d+)-")
_STATISTICAL_KINDS = ("ci_within", "mean", "fraction")
_STATISTICAL_ONLY = {
    "wide_because": "tolerance is measured in standard errors",
    "interval_method": "fields have intervals over seeds",
}
_SCHEMA = json.loads(resources.files("claimbook.claims").joinpath("claim_schema.json").read_text())


@functools.cache  # made on the first file validated
def _validator():
    return jsonschema.Draft202012Validator(_SCHEMA)


def field_name(path) -> str:
    """Render a field path; keys holding dots (nested result fields) go in brackets."""
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


def _walk(value, path=()):
    """Every (field path, leaf or key) of a parsed registry document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), key
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))
    else:
        yield path, value


def _character_kind(character: str) -> str:
    code = ord(character)
    if code in (0x2028, 0x2029):
        return "line or paragraph separator"
    if code > 0x9F:
        return "bidirectional control"
    return "control character"


def _refuse_unusable_values(data: Any, path: Path) -> None:
    """Non-finite numbers, over-long text and unsafe characters, anywhere in the file."""
    for field, value in _walk(data):
        if isinstance(value, float) and not math.isfinite(value):
            raise refusal(
                path,
                f"field {field_name(field)}: {value!r} is not a finite number; "
                "values and tolerances must be finite",
            )
        if not isinstance(value, str):
            continue
        if len(value) > MAX_TEXT:
            raise refusal(
                path,
                f"field {field_name(field)}: text of {len(value)} characters; a text field "
                f"holds at most {MAX_TEXT}",
            )
        found = UNSAFE.search(value)
        if found is not None:
            character = found.group()
            raise refusal(
                path,
                f"field {field_name(field)}: {_character_kind(character)} "
                f"{escape_unsafe(character)} at character {found.start() + 1}; a text field "
                "is one line of printable text",
            )


def _innermost(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """Descend into a failed ``oneOf`` along the branch with the fewest failed constants,
    then errors: a missing ``reason`` is reported as such, not as "matches no schema"."""
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
    message = error.message
    instance = error.instance
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
        message = (
            f"{excerpt(instance)} has the wrong form; expected: {error.schema.get('description')}"
        )
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


def _check_tolerances(data: dict, path: Path) -> None:
    for field, expectation in data["expect"].items():
        bound = expectation.get("mean", expectation)
        vacuous = _vacuity(bound) if isinstance(bound, dict) else None
        name = field_name(["expect", field])
        if vacuous is not None and "vacuous_ok" not in expectation:
            raise refusal(
                path,
                f"field {name}: {vacuous}, so a result of 0 passes and the check says "
                "nothing; tighten the tolerance, or state why it is meant with "
                "vacuous_ok: <reason>",
            )
        if vacuous is None and "vacuous_ok" in expectation:
            raise refusal(
                path,
                f"field {name}.vacuous_ok: the tolerance is narrower than the value, so there "
                "is nothing to excuse; remove vacuous_ok",
            )


def _check_consistency(data: dict, path: Path) -> None:
    """Checks across fields that a JSON schema cannot state."""
    if data["id"] != path.stem:
        raise refusal(
            path,
            f"field id is {excerpt(data['id'])} but the file is named "
            f"{excerpt(path.name)}; the id must equal the file stem",
        )
    prefix = _CHAPTER_PREFIX.match(data["id"])
    if prefix and int(prefix.group(1)) != data["chapter"]:
        raise refusal(
            path,
            f"field chapter is {data['chapter']} but the id {data['id']!r} "
            f"names chapter {int(prefix.group(1))}",
        )
    statistical = data["seed"]["policy"] == "derived-set"
    if statistical and "statistics" not in data:
        raise refusal(
            path,
            "field statistics is required with seed policy derived-set, e.g. "
            "statistics: {level: 0.95, method: t}",
        )
    if not statistical and "statistics" in data:
        raise refusal(
            path, "field statistics is only for seed policy derived-set (a statistical claim)"
        )
    for field, expectation in data["expect"].items():
        for bounds_name in ("interval", "ci_within"):
            bounds = expectation.get(bounds_name)
            if bounds is not None and bounds[0] > bounds[1]:
                raise refusal(
                    path,
                    f"field expect[{field}].{bounds_name} is {bounds}; "
                    "write it as [lower, upper] with lower <= upper",
                )
        if statistical:
            continue
        for key, why in _STATISTICAL_ONLY.items():
            if key in expectation:
                raise refusal(
                    path,
                    f"field expect[{field}].{key} is only for a statistical claim (seed "
                    f"policy derived-set), whose {why}",
                )
        kind = next((k for k in _STATISTICAL_KINDS if k in expectation), None)
        if kind is not None:
            raise refusal(
                path,
                f"field expect[{field}].{kind} needs a statistical claim "
                "(seed policy derived-set)",
            )
    _check_tolerances(data, path)


def validated(raw: bytes, path: Path) -> dict:
    """The data of registry file ``path`` (bytes ``raw``); :class:`RegistryError` unless
    usable (all but ``compute``, which the registry checks on every load)."""
    data = parse_registry_yaml(raw, path)
    _refuse_unusable_values(data, path)
    errors = [inner for error in _validator().iter_errors(data) for inner in _innermost(error)]
    if errors:
        errors.sort(key=lambda error: list(map(str, error.absolute_path)))
        problems = [_schema_problem(error) for error in errors]
        if len(problems) > MAX_PROBLEMS:
            problems = [*problems[:MAX_PROBLEMS], f"... and {len(problems) - MAX_PROBLEMS} more"]
        raise refusal(path, "; ".join(problems))
    _check_consistency(data, path)
    return data
