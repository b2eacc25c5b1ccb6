"""MyST prose read with MyST's own markdown-it parser: roles, directives, plain text, targets
and headings (a directive inside a code fence is text)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import yaml

# Directives whose body is code or math, not prose: roles inside them are text.
_LITERAL_DIRECTIVES = frozenset(
    {"code-block", "code", "code-cell", "sourcecode", "math", "raw", "literalinclude"}
)


@dataclass(frozen=True)
class Role:
    """A MyST role in a chapter's prose: ``{name}`content```, with its markdown cell index."""

    name: str
    content: str
    cell: int


@dataclass(frozen=True)
class Directive:
    """A MyST directive in prose: its name, argument, ``:key: value`` options and cell."""

    name: str
    argument: str
    options: dict
    cell: int


def markdown_tokens(source: str) -> list:
    """The markdown-it tokens of ``source``, parsed as the book renders MyST prose."""
    return _markdown_parser().parse(source)


@functools.cache
def _markdown_parser():
    # Imported on first use: planning an unchanged book parses no prose.
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(
        enable_extensions={"amsmath", "colon_fence", "dollarmath", "substitution"}
    )
    return create_md_parser(config, RendererHTML)


def split_directive(token) -> tuple[str, str, dict, str] | None:
    """``{name} argument`` fence -> (name, argument, options, body), or None for code."""
    info = token.info.strip()
    if not (info.startswith("{") and "}" in info):
        return None
    name, _, argument = info[1:].partition("}")
    lines = token.content.splitlines()
    options: dict = {}
    body_start = 0
    if lines and lines[0].strip() == "---":  # YAML option block
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            options = yaml.safe_load("\n".join(lines[1:end])) or {}
            body_start = end + 1
    else:
        for body_start, line in enumerate(lines):  # noqa: B007 - the index is the result
            stripped = line.strip()
            if not (stripped.startswith(":") and stripped.count(":") >= 2):
                break
            key, _, value = stripped[1:].partition(":")
            options[key.strip()] = value.strip()
        else:
            body_start = len(lines)
    return name.strip(), argument.strip(), options, "\n".join(lines[body_start:])


def parse_prose(source: str, cell: int) -> list[Role | Directive]:
    """The roles and directives of ``source`` (markdown cell ``cell``), prose bodies included."""
    items: list[Role | Directive] = []
    for token in _markdown_parser().parse(source):
        if token.type in ("fence", "colon_fence"):
            directive = split_directive(token)
            if directive is None:
                continue  # a code block: anything inside is an example
            name, argument, options, body = directive
            items.append(Directive(name, argument, options, cell))
            if name not in _LITERAL_DIRECTIVES:
                items.extend(parse_prose(body, cell))
        for child in token.children or ():
            if child.type == "myst_role":
                items.append(Role(child.meta["name"], child.content, cell))
    return items


def prose_text(source: str) -> str:
    """The words a reader sees of ``source``: text outside code, roles and markup.

    >>> prose_text("The `harness` and {claim}`x-001` aside, **words** stay.")
    'The   and   aside,  words  stay.'
    """
    parts = []
    for token in _markdown_parser().parse(source):
        if token.type in ("fence", "colon_fence"):
            directive = split_directive(token)
            if directive is not None and directive[0] not in _LITERAL_DIRECTIVES:
                parts.append(prose_text(directive[3]))
            continue
        parts.extend(child.content for child in token.children or () if child.type == "text")
    return " ".join(parts)


def prose_blocks(source: str) -> list[tuple[str, int, str]]:
    """``(kind, line from 0, label)`` of each top-level target ``(label)=`` (``"target"``) and
    heading (``"heading"``, label empty) of markdown ``source``.

    >>> prose_blocks("(sec-a)=\\n## A\\n\\n```\\n## code\\n```\\n")
    [('target', 0, 'sec-a'), ('heading', 1, '')]
    """
    found = []
    for token in _markdown_parser().parse(source):
        if token.level != 0 or token.map is None:
            continue
        if token.type == "myst_target":
            found.append(("target", token.map[0], token.content))
        elif token.type == "heading_open":
            found.append(("heading", token.map[0], ""))
    return found
