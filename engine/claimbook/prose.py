"""MyST prose read with MyST's own markdown-it parser (a directive in a code fence is text)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import yaml

# Directives whose body is code or math, not prose: roles inside them are text.
_LITERAL_DIRECTIVES = frozenset(
    {"code-block", "code", "code-cell", "sourcecode", "math", "raw", "literalinclude"}
)
_OPTION = re.compile(r":([^:]*):(.*)")  # a directive's ``:key: value`` line, stripped


@dataclass(frozen=True)
class Role:
    """A role ``{name}`content``` in markdown cell ``cell``."""

    name: str
    content: str
    cell: int


@dataclass(frozen=True)
class Directive:
    """A directive in markdown cell ``cell``."""

    name: str
    argument: str
    options: dict
    cell: int


def markdown_tokens(source: str) -> list:
    """The markdown-it tokens of ``source``, parsed as the book renders it."""
    return _markdown_parser().parse(source)


@functools.cache
def _markdown_parser():
    # Late: planning an unchanged book parses no prose.
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
        while body_start < len(lines) and (found := _OPTION.fullmatch(lines[body_start].strip())):
            options[found[1].strip()] = found[2].strip()
            body_start += 1
    return name.strip(), argument.strip(), options, "\n".join(lines[body_start:])


def parse_prose(source: str, cell: int) -> list[Role | Directive]:
    """The roles and directives of ``source`` (markdown cell ``cell``), prose bodies included."""
    items: list[Role | Directive] = []
    for token in markdown_tokens(source):
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
    for token in markdown_tokens(source):
        if token.type in ("fence", "colon_fence"):
            directive = split_directive(token)
            if directive is not None and directive[0] not in _LITERAL_DIRECTIVES:
                parts.append(prose_text(directive[3]))
            continue
        parts.extend(child.content for child in token.children or () if child.type == "text")
    return " ".join(parts)


def prose_blocks(source: str) -> list[tuple[str, int, str]]:
    """``(kind, line from 0, label)`` of each top-level target and heading of ``source``.

    >>> prose_blocks("(sec-a)=\\n## A\\n\\n```\\n## code\\n```\\n")
    [('target', 0, 'sec-a'), ('heading', 1, '')]
    """
    found = []
    for token in markdown_tokens(source):
        if token.level != 0 or token.map is None:
            continue
        if token.type == "myst_target":
            found.append(("target", token.map[0], token.content))
        elif token.type == "heading_open":
            found.append(("heading", token.map[0], ""))
    return found
