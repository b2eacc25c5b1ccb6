"""The one reader of chapter sources: MyST notebooks read with jupytext, their code cells'
syntax trees, and their prose with MyST's own markdown-it parser (a directive in a code fence
is text)."""

import ast
import functools
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from claimbook import cache, paths
from claimbook.errors import ChapterSourceError, InvalidChapterStemError, InvalidClaimIdError
from claimbook.text import one_line

_CHAPTERS = cache.ContentCache("chapter sources")
# Every chapter's front matter; the kernel named as ipykernel does (JupyterLab rewrites others).
CHAPTER_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---
"""
# A MyST target label, ``(label)=``, as a later page's ``starts`` names it.
_SECTION_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")
# Directives whose body is code or math, not prose: roles inside them are text.
_LITERAL_DIRECTIVES = frozenset(
    {"code-block", "code", "code-cell", "sourcecode", "math", "raw", "literalinclude"}
)
_OPTION = re.compile(r":([^:]*):(.*)")  # a directive's ``:key: value`` line, stripped


@dataclass(frozen=True)
class Role:  # ``{name}`content``` in markdown cell ``cell``
    name: str
    content: str
    cell: int


@dataclass(frozen=True)
class Directive:  # in markdown cell ``cell``
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
    """A ``{name} argument`` fence -> (name, argument, options, body); None for any other
    token, a code block included."""
    info = token.info.strip()
    if token.type not in ("fence", "colon_fence") or not info.startswith("{") or "}" not in info:
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


def prose_tokens(source: str) -> Iterator[tuple]:
    """``(token, directive)`` of each token of ``source`` and, after a directive that is not
    literal, of its body; ``directive`` is :func:`split_directive` of the token."""
    for token in markdown_tokens(source):
        directive = split_directive(token)
        yield token, directive
        if directive is not None and directive[0] not in _LITERAL_DIRECTIVES:
            yield from prose_tokens(directive[3])


def parse_prose(source: str, cell: int) -> list[Role | Directive]:
    """The roles and directives of ``source`` (markdown cell ``cell``), prose bodies included."""
    items: list[Role | Directive] = []
    for token, directive in prose_tokens(source):
        if directive is not None:
            items.append(Directive(*directive[:3], cell))
        for child in token.children or ():
            if child.type == "myst_role":
                items.append(Role(child.meta["name"], child.content, cell))
    return items


def prose_text(source: str) -> str:
    """The words a reader sees of ``source``: text outside code, roles and markup.

    >>> prose_text("The `harness` and {claim}`x-001` aside, **words** stay.")
    'The   and   aside,  words  stay.'
    """
    tokens = (token for token, _directive in prose_tokens(source))
    return " ".join(c.content for t in tokens for c in t.children or () if c.type == "text")


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


@dataclass(frozen=True)
class Chapter:  # a chapter source at ``path`` and the ``notebook`` jupytext reads from it
    path: Path
    notebook: object = field(repr=False)

    @property
    def stem(self) -> str:
        return self.path.stem

    def _cells(self, kind: str) -> list[tuple[int, dict]]:
        return [(index, c) for index, c in enumerate(self.notebook.cells) if c.cell_type == kind]

    def code_cells(self) -> list[tuple[int, str, tuple[str, ...]]]:
        """``(cell index, source, tags)`` of every code cell, in order."""
        return [(i, c.source, tuple(c.metadata.get("tags", ()))) for i, c in self._cells("code")]

    def code_cell_number(self, index: int) -> int:
        return sum(1 for cell in self.notebook.cells[: index + 1] if cell.cell_type == "code")

    def markdown_cells(self) -> list[tuple[int, str]]:
        """``(cell index, source)`` of every markdown cell, in order."""
        return [(index, cell.source) for index, cell in self._cells("markdown")]

    def code_trees(self) -> Iterator[tuple[int, ast.Module]]:
        """Each code cell's syntax tree (magics skipped); ChapterSourceError for bad Python."""
        for index, source, _tags in self.code_cells():
            python = "\n".join(
                "" if line.lstrip().startswith(("%", "!")) else line
                for line in source.splitlines()
            )
            try:
                yield index, ast.parse(python)
            except SyntaxError as exc:
                raise ChapterSourceError(
                    f"{self.path}: code cell {self.code_cell_number(index)} is not valid "
                    f"Python ({exc.msg}, line {exc.lineno})"
                ) from exc

    def calls(self, function_name: str) -> list[tuple[int, ast.Call]]:
        """Calls of ``function_name`` (as a bare name or an attribute) in the code cells."""
        return [
            (index, node)
            for index, tree in self.code_trees()
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and function_name in (getattr(node.func, "id", None), getattr(node.func, "attr", None))
        ]

    def literal_first_arguments(self, function_name: str) -> dict[str, int]:
        """Each string literal passed first to ``function_name`` -> its first cell's index;
        ChapterSourceError for a first argument that is not a string literal."""
        values: dict[str, int] = {}
        for index, call in self.calls(function_name):
            argument = call.args[0] if call.args else None
            if argument is None:
                argument = next((k.value for k in call.keywords if k.arg == "claim_id"), None)
            if not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
                raise ChapterSourceError(
                    f"{self.path}: code cell {self.code_cell_number(index)} calls "
                    f"{function_name} with a first argument that is not a string literal; "
                    "write the id out"
                )
            values.setdefault(argument.value, index)
        return values

    @property
    def verified_claims(self) -> list[str]:
        """Ids the code passes to ``verify_claim``; ChapterSourceError for a malformed one."""
        ids = self.literal_first_arguments("verify_claim")
        for claim_id, cell in ids.items():
            try:
                paths.check_claim_id(claim_id)
            except InvalidClaimIdError as error:
                raise ChapterSourceError(
                    f"{paths.shown(self.path)}: code cell {self.code_cell_number(cell)}: "
                    f"verify_claim: {error}"
                ) from None
        return list(ids)

    @property
    def pin(self) -> str | None:
        """The literal ``pin = "..."`` of the ``parameters`` cell, or None."""
        return (self.pin_assignment() or (None, None))[1]

    def pin_assignment(self) -> tuple[int, str, str] | None:
        """(cell index, pin value, its source line) of the parameters cell's pin, or None."""
        for index, source, tags in self.code_cells():
            for node in ast.parse(source).body if "parameters" in tags else ():
                target = node.targets if isinstance(node, ast.Assign) else None
                value = getattr(node, "value", None)
                if (
                    target is not None
                    and [getattr(name, "id", None) for name in target] == ["pin"]
                    and isinstance(value, ast.Constant)
                    and isinstance(value.value, str)
                ):
                    return index, value.value, source.splitlines()[node.lineno - 1]
        return None

    def roles(self) -> list[Role]:
        return [item for item in self._prose_items if isinstance(item, Role)]

    def directives(self) -> list[Directive]:
        return [item for item in self._prose_items if isinstance(item, Directive)]

    def prose_text(self) -> list[tuple[int, str]]:
        """``(cell index, words a reader sees)`` of each markdown cell."""
        return [(index, prose_text(source)) for index, source in self.markdown_cells()]

    @functools.cached_property
    def _prose_items(self) -> list[Role | Directive]:
        return [item for index, text in self.markdown_cells() for item in parse_prose(text, index)]


@dataclass(frozen=True)
class Page:  # a later page of a chapter: ``chapters/<file>``, from section ``starts``
    file: str
    starts: str


def chapter_pages(path: str | Path) -> list[Page]:
    """The later pages a chapter's front matter declares (``pages:``), in order;
    ChapterSourceError for a malformed declaration."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    end = text.find("\n---\n", 3) if text.startswith("---\n") else -1
    where = paths.shown(path)
    try:
        declared = (yaml.safe_load(text[4:end] if end >= 0 else "") or {}).get("pages", [])
    except (yaml.YAMLError, AttributeError) as error:
        raise ChapterSourceError(f"{where}: front matter unreadable: {error}") from None
    if not isinstance(declared, list):
        raise ChapterSourceError(f"{where}: front matter `pages` must be a list")
    pages: list[Page] = []
    for entry in declared:
        if not (isinstance(entry, dict) and set(entry) == {"file", "starts"}):
            raise ChapterSourceError(
                f"{where}: each entry of `pages` is {{file: <name>, starts: <label>}}, got "
                f"{one_line(repr(entry), 80)}"
            )
        try:
            file = paths.check_chapter_stem(entry["file"])
        except InvalidChapterStemError as error:
            raise ChapterSourceError(f"{where}: `pages`: {error}") from None
        starts = entry["starts"]
        if not (isinstance(starts, str) and _SECTION_LABEL.fullmatch(starts)):
            raise ChapterSourceError(
                f"{where}: `pages`: starts {one_line(repr(starts), 80)} is not a section "
                "label: a label is letters, digits, '-', '_', '.' and ':', starting with a "
                "letter or digit, as in the line `(sec-bn-residual)=` above a heading"
            )
        if file == path.stem or file in [page.file for page in pages]:
            raise ChapterSourceError(f"{where}: `pages` names {file!r} twice")
        pages.append(Page(file, starts))
    return pages


def read_chapter(path: str | Path) -> Chapter:
    """The chapter at ``path``, cached by path and bytes and shared (copy it to change it);
    ChapterSourceError if it is absent or unreadable."""
    path = Path(path)
    data = cache.file_bytes(path) if path.is_file() else None
    if data is None:
        raise ChapterSourceError(f"chapter source {path} does not exist")
    return _CHAPTERS.get(cache.digest(str(path), data), lambda: _parse_chapter(path, data))


def _parse_chapter(path: Path, data: bytes) -> Chapter:
    import jupytext  # late: planning an unchanged book never reads a chapter

    try:  # as jupytext.read(path) reads a file: universal newlines, format by extension
        with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8") as stream:
            notebook = jupytext.read(stream, fmt={"extension": path.suffix})
    except Exception as exc:  # jupytext raises several kinds for malformed sources
        raise ChapterSourceError(f"{path}: jupytext cannot read it ({exc})") from exc
    # Numbered, not random, ids: the executed notebook is the same bytes on every run.
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index}"
    return Chapter(path=path, notebook=notebook)


def chapter_sources(root: str | Path | None = None) -> list[Path]:
    """Chapter sources (``chapters/<name>.md``) in the order of ``_toc.yml``;
    InvalidChapterStemError for a bad name, ChapterSourceError for a link."""
    root = Path(root) if root is not None else paths.REPO_ROOT
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8")) or {}
    entries = list(toc.get("chapters") or [])
    for part in toc.get("parts") or []:
        entries.extend(part.get("chapters") or [])
    sources = []
    for entry in entries:
        source = root / f"{entry['file']}.md"
        if source.parent.resolve() == (root / "chapters").resolve():
            try:
                paths.check_chapter_stem(source.stem)
            except InvalidChapterStemError as error:
                raise InvalidChapterStemError(
                    f"_toc.yml: entry {entry['file']!r}: {error}"
                ) from None
            if source.is_symlink():
                raise ChapterSourceError(
                    f"{paths.shown(source)} is a symbolic link; a chapter must be a regular "
                    "file of chapters/ (what a link points to can change without the book "
                    "seeing it): replace the link with the file"
                )
            sources.append(source)
    return sources


def chapter_number(stem: str, root: str | Path | None = None) -> int:
    """Chapter ``stem``'s number from ``trainable_first_chapter``; ChapterSourceError if it
    is not in ``_toc.yml``."""
    root = Path(root) if root is not None else paths.REPO_ROOT
    stems = [source.stem for source in chapter_sources(root)]
    if stem not in stems:
        raise ChapterSourceError(f"chapter {stem!r} is not in _toc.yml (chapters: {stems})")
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    first = int(config["sphinx"]["config"]["trainable_first_chapter"])
    return first + stems.index(stem)
