"""The one reader of chapter sources: MyST notebooks read with jupytext, prose with myst's parser.

Every part of the book that needs to know what a chapter says -- the build (which claims a
chapter verifies, its pin), re-pinning, figure artifacts, the source checks in the tests --
asks this module, which reads the chapter as structure, never with a regular expression over
the file:

- code cells come from :func:`jupytext.read`, and what they call is read from their Python
  syntax tree (:mod:`ast`), so ``verify_claim("...")`` written in prose, or inside a string,
  is never mistaken for a call;
- prose (markdown cells) is tokenized by the same markdown-it parser MyST uses, so roles and
  directives are found as the book renders them: a ```` ```{figure} ```` example inside a
  code fence is an example, not a figure.

Examples
--------
>>> chapter = read_chapter(paths.CHAPTERS_DIR / "normalization-invariance.md")
>>> "c15-invariance-001" in chapter.verified_claims
True
>>> chapter.pin == chapter_pin(chapter.path)
True
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from claimbook import cache, paths
from claimbook.errors import ChapterSourceError, InvalidChapterStemError, InvalidClaimIdError
from claimbook.text import one_line

# Chapters read, by path and bytes (see read_chapter).
_CHAPTERS = cache.ContentCache("chapter sources")


# The targets and headings of a markdown text, by its text (see prose_blocks): a render cuts
# a chapter's executed notebook into its pages, parsing the markdown cells it cuts.
_PROSE_BLOCKS = cache.ContentCache("prose blocks")

__all__ = [
    "CHAPTER_HEADER",
    "Chapter",
    "Directive",
    "Page",
    "Role",
    "chapter_number",
    "chapter_pages",
    "chapter_pin",
    "chapter_sources",
    "markdown_tokens",
    "prose_blocks",
    "read_chapter",
    "rewrite_pin",
    "split_directive",
]

PARAMETERS_TAG = "parameters"
# The front matter every chapter source starts with: a MyST notebook for jupytext, Python 3.
CHAPTER_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
PIN_NAME = "pin"
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


@dataclass(frozen=True)
class Chapter:
    """One chapter source, read once.

    Attributes
    ----------
    path : pathlib.Path
        ``chapters/<stem>.md``.
    notebook : nbformat.NotebookNode
        The notebook jupytext reads from the source (no outputs).
    """

    path: Path
    notebook: object = field(repr=False)

    @property
    def stem(self) -> str:
        return self.path.stem

    def code_cells(self) -> list[tuple[int, str, tuple[str, ...]]]:
        """``(cell index, source, tags)`` of every code cell, in order."""
        return [
            (index, cell.source, tuple(cell.metadata.get("tags", ())))
            for index, cell in enumerate(self.notebook.cells)
            if cell.cell_type == "code"
        ]

    def code_cell_number(self, index: int) -> int:
        """The number a reader gives the cell at notebook ``index``: its 1-based position
        among the chapter's code cells, as they appear in the source (markdown cells do not
        count, an empty code cell does). Every message naming a code cell uses it, the
        source check's and the execution's (:func:`claimbook.pipeline.execute.code_cell_number`).
        """
        return sum(1 for cell in self.notebook.cells[: index + 1] if cell.cell_type == "code")

    def markdown_cells(self) -> list[tuple[int, str]]:
        """``(cell index, source)`` of every markdown cell, in order."""
        return [
            (index, cell.source)
            for index, cell in enumerate(self.notebook.cells)
            if cell.cell_type == "markdown"
        ]

    def code_trees(self) -> Iterator[tuple[int, ast.Module]]:
        """The syntax tree of each code cell; IPython magics and shell lines are skipped.

        Raises
        ------
        ChapterSourceError
            If a code cell is not valid Python (naming the chapter and cell).
        """
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
        found = []
        for index, tree in self.code_trees():
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    callee = node.func
                    name = callee.id if isinstance(callee, ast.Name) else None
                    if isinstance(callee, ast.Attribute):
                        name = callee.attr
                    if name == function_name:
                        found.append((index, node))
        return found

    def literal_first_arguments(self, function_name: str) -> list[str]:
        """The string literals passed first to ``function_name``, in order, without repeats.

        Raises
        ------
        ChapterSourceError
            If a call passes its first argument as anything but a string literal: the build
            must know, without running the chapter, which ids it uses.
        """
        values: list[str] = []
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
            if argument.value not in values:
                values.append(argument.value)
        return values

    @property
    def verified_claims(self) -> list[str]:
        """Ids of the claims the chapter verifies (``verify_claim("<id>", ...)`` in code).

        Raises
        ------
        ChapterSourceError
            If an id is not of the registry's id grammar
            (:func:`claimbook.paths.check_claim_id`): the build names files by these ids, so
            ``verify_claim("../../package")`` stops the build here, before any path is built
            from it.
        """
        ids = self.literal_first_arguments("verify_claim")
        for claim_id in ids:
            try:
                paths.check_claim_id(claim_id)
            except InvalidClaimIdError as error:
                cell = next(
                    index
                    for index, call in self.calls("verify_claim")
                    if any(
                        isinstance(node, ast.Constant) and node.value == claim_id
                        for node in [*call.args[:1], *(k.value for k in call.keywords)]
                    )
                )
                raise ChapterSourceError(
                    f"{paths.shown(self.path)}: code cell {self.code_cell_number(cell)}: "
                    f"verify_claim: {error}"
                ) from None
        return ids

    @property
    def pin(self) -> str | None:
        """The literal ``pin = "..."`` of the ``parameters`` cell, or None without one."""
        found = self._pin_assignment()
        return None if found is None else found[1]

    def _pin_assignment(self) -> tuple[int, str, str] | None:
        """(cell index, pin value, the exact source line) of the parameters cell's pin."""
        for index, source, tags in self.code_cells():
            if PARAMETERS_TAG not in tags:
                continue
            for node in ast.parse(source).body:
                if (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id == PIN_NAME
                    and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)
                ):
                    line = source.splitlines()[node.lineno - 1]
                    return index, node.value.value, line
        return None

    def roles(self) -> list[Role]:
        """Every role in the prose, including directive bodies such as captions."""
        return [item for item in self._prose_items() if isinstance(item, Role)]

    def directives(self) -> list[Directive]:
        """Every directive in the prose (fenced with backticks or colons)."""
        return [item for item in self._prose_items() if isinstance(item, Directive)]

    def prose_text(self) -> list[tuple[int, str]]:
        """``(cell index, text)`` of each markdown cell: the words a reader sees.

        Text is kept, including the bodies of prose directives (captions, admonitions,
        dropdowns); inline code, roles, math, code blocks and directive options are dropped.
        """
        return [(index, _prose_text(source)) for index, source in self.markdown_cells()]

    def _prose_items(self) -> list[Role | Directive]:
        items: list[Role | Directive] = []
        for index, source in self.markdown_cells():
            items.extend(_parse_prose(source, index))
        return items


def markdown_tokens(source: str) -> list:
    """The markdown-it tokens of ``source``, parsed as the book renders MyST prose."""
    return _markdown_parser().parse(source)


@functools.cache
def _markdown_parser():
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


def _parse_prose(source: str, cell: int) -> list[Role | Directive]:
    items: list[Role | Directive] = []
    for token in _markdown_parser().parse(source):
        if token.type in ("fence", "colon_fence"):
            directive = split_directive(token)
            if directive is None:
                continue  # a code block: anything inside is an example
            name, argument, options, body = directive
            items.append(Directive(name, argument, options, cell))
            if name not in _LITERAL_DIRECTIVES:
                items.extend(_parse_prose(body, cell))
        for child in token.children or ():
            if child.type == "myst_role":
                items.append(Role(child.meta["name"], child.content, cell))
    return items


def _prose_text(source: str) -> str:
    """The plain text of ``source`` (see :meth:`Chapter.prose_text`).

    Examples
    --------
    >>> _prose_text("The `harness` and {claim}`x-001` aside, **words** stay.")
    'The   and   aside,  words  stay.'
    """
    parts = []
    for token in _markdown_parser().parse(source):
        if token.type in ("fence", "colon_fence"):
            directive = split_directive(token)
            if directive is not None and directive[0] not in _LITERAL_DIRECTIVES:
                parts.append(_prose_text(directive[3]))
            continue
        parts.extend(child.content for child in token.children or () if child.type == "text")
    return " ".join(parts)


def prose_blocks(source: str) -> list[tuple[str, int, str]]:
    """The top-level targets and headings of markdown ``source``: ``(kind, line, content)``.

    ``kind`` is ``"target"`` for a MyST target line ``(label)=`` (content: the label) or
    ``"heading"`` for an ATX or setext heading (content: empty); ``line`` counts from 0.
    Lines inside code blocks and directives are not blocks of the prose.

    Examples
    --------
    >>> prose_blocks("(sec-a)=\\n## A\\n\\n```\\n## code\\n```\\n")
    [('target', 0, 'sec-a'), ('heading', 1, '')]
    """
    # The pages of a chapter and their headings ask about the same cells in one render.
    found = _PROSE_BLOCKS.get(cache.digest(source), lambda: _prose_blocks(source))
    return [(kind, line, content) for kind, line, content in found]


def _prose_blocks(source: str) -> list[list]:  # lists, which JSON gives back as they were
    found = []
    for token in _markdown_parser().parse(source):
        if token.level != 0 or token.map is None:
            continue
        if token.type == "myst_target":
            found.append(["target", token.map[0], token.content])
        elif token.type == "heading_open":
            found.append(["heading", token.map[0], ""])
    return found


@dataclass(frozen=True)
class Page:
    """A later page of a chapter: ``chapters/<file>``, from the section labelled ``starts``."""

    file: str
    starts: str


def chapter_pages(path: str | Path) -> list[Page]:
    """The later pages a chapter source declares in its front matter (``pages:``), in order.

    Only the front matter is read (no jupytext), so the site's extension may ask on every
    render. A chapter without ``pages:`` is one page (an empty list).

    Raises
    ------
    ChapterSourceError
        If ``pages`` is not a list of ``{file, starts}`` entries, a file is not a chapter
        name (:func:`claimbook.paths.check_chapter_stem`) or repeats one, or a start is not
        a label (the id grammar of claims and sections: lower-case words and digits joined
        by hyphens).

    Examples
    --------
    >>> [page.file for page in chapter_pages(paths.CHAPTERS_DIR / "normalization-invariance.md")]
    ['normalization-invariance-scale', 'normalization-invariance-exercises']
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    header = ""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        header = text[4:end] if end >= 0 else ""
    try:
        declared = (yaml.safe_load(header) or {}).get("pages", [])
    except (yaml.YAMLError, AttributeError) as error:
        raise ChapterSourceError(
            f"{paths.shown(path)}: front matter unreadable: {error}"
        ) from None
    if not isinstance(declared, list):
        raise ChapterSourceError(f"{paths.shown(path)}: front matter `pages` must be a list")
    pages: list[Page] = []
    for entry in declared:
        if not (isinstance(entry, dict) and set(entry) == {"file", "starts"}):
            raise ChapterSourceError(
                f"{paths.shown(path)}: each entry of `pages` is "
                f"{{file: <name>, starts: <label>}}, got {one_line(repr(entry), 80)}"
            )
        try:
            file = paths.check_chapter_stem(entry["file"])
        except InvalidChapterStemError as error:
            raise ChapterSourceError(f"{paths.shown(path)}: `pages`: {error}") from None
        starts = entry["starts"]
        if not (isinstance(starts, str) and _SECTION_LABEL.fullmatch(starts)):
            raise ChapterSourceError(
                f"{paths.shown(path)}: `pages`: starts {one_line(repr(starts), 80)} is not a "
                "section label: a label is letters, digits, '-', '_', '.' and ':', starting "
                "with a letter or digit, as in the line `(sec-bn-residual)=` above a heading"
            )
        if file == path.stem or file in [page.file for page in pages]:
            raise ChapterSourceError(f"{paths.shown(path)}: `pages` names {file!r} twice")
        pages.append(Page(file, starts))
    return pages


def read_chapter(path: str | Path) -> Chapter:
    """Read ``path`` (a MyST notebook) with jupytext.

    A build asks for the same chapter several times (its plan, its kernel's environment,
    its glue check, the claims it verifies), so the chapter read is kept for the build under
    the digest of the file's path and bytes (:mod:`claimbook.cache`): an edited file is read
    again. The chapter is shared: a caller that changes its notebook copies it first (as
    ``nbformat.from_dict`` does).

    Raises
    ------
    ChapterSourceError
        If the file does not exist or jupytext cannot read it.
    """
    path = Path(path)
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError:
        data = None
    if data is None:
        raise ChapterSourceError(f"chapter source {path} does not exist")
    return _CHAPTERS.get(cache.digest(str(path), data), lambda: _parse_chapter(path, data))


def _parse_chapter(path: Path, data: bytes) -> Chapter:
    import io

    import jupytext  # late: planning an unchanged book never reads a chapter

    try:
        # As jupytext.read(path) reads a file: text with universal newlines, the format
        # from the file's extension.
        with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8") as stream:
            notebook = jupytext.read(stream, fmt={"extension": path.suffix})
    except Exception as exc:  # jupytext raises several kinds for malformed sources
        raise ChapterSourceError(f"{path}: jupytext cannot read it ({exc})") from exc
    # nbformat gives every new cell a random id; numbered ids make the executed notebook the
    # same bytes on every run of the same source.
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index}"
    return Chapter(path=path, notebook=notebook)


def chapter_pin(path: str | Path) -> str | None:
    """The chapter's pin literal (see :attr:`Chapter.pin`)."""
    return read_chapter(path).pin


# A pin is a version: release numbers, then optionally a pre/post/local part (PEP 440 style).
# A MyST target label, ``(label)=`` above a heading, as a later page's ``starts`` names it.
_SECTION_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:[.+-]?[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?")


def rewrite_pin(path: str | Path, new_pin: str) -> bool:
    """Set the chapter's ``pin = "..."`` literal to ``new_pin``; True if the file changed.

    Only the one line the parameters cell's syntax tree names is rewritten, in the file's
    own bytes (line endings and formatting kept), atomically.

    Raises
    ------
    ChapterSourceError
        If ``new_pin`` is not a version string (digits and dots, optionally a local part
        such as ``+f5d27de``), if the chapter has no pin, or if the pin line is not found
        exactly once in the file.

    Examples
    --------
    >>> try:
    ...     rewrite_pin("chapters/any.md", "0.2.0; import os")
    ... except ChapterSourceError as error:
    ...     print(str(error).split(", got ")[1])
    '0.2.0; import os'
    """
    from claimbook.atomic import write_bytes_atomically

    if not isinstance(new_pin, str) or not _VERSION.fullmatch(new_pin):
        raise ChapterSourceError(
            "rewrite_pin: parameter new_pin must be a version string such as '0.2.0', "
            f"got {str(new_pin)[:80]!r}"
        )
    path = Path(path)
    found = read_chapter(path)._pin_assignment()
    if found is None:
        raise ChapterSourceError(f'{path}: no `pin = "..."` in a cell tagged parameters')
    _index, old_pin, line = found
    if old_pin == new_pin:
        return False
    lines = path.read_bytes().decode("utf-8").splitlines(keepends=True)
    matches = [i for i, text in enumerate(lines) if text.rstrip("\r\n") == line]
    if len(matches) != 1:
        raise ChapterSourceError(
            f"{path}: the pin line {line.strip()!r} occurs {len(matches)} times as a whole "
            "line; expected exactly once"
        )
    lines[matches[0]] = lines[matches[0]].replace(f'"{old_pin}"', f'"{new_pin}"', 1)
    write_bytes_atomically(path, "".join(lines).encode("utf-8"))
    return True


def chapter_sources(root: str | Path | None = None) -> list[Path]:
    """Chapter sources (``chapters/<name>.md``) in the order of ``_toc.yml``.

    Raises
    ------
    InvalidChapterStemError
        If a chapter's name cannot name the build's files
        (:func:`claimbook.paths.check_chapter_stem`).
    ChapterSourceError
        If a chapter's source is a symbolic link (the message names it).
    """
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
    """The number the book gives chapter ``stem``: its position after ``trainable_first_chapter``.

    Raises
    ------
    ChapterSourceError
        If the chapter is not in ``_toc.yml``.
    """
    root = Path(root) if root is not None else paths.REPO_ROOT
    stems = [source.stem for source in chapter_sources(root)]
    if stem not in stems:
        raise ChapterSourceError(f"chapter {stem!r} is not in _toc.yml (chapters: {stems})")
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    first = int(config["sphinx"]["config"]["trainable_first_chapter"])
    return first + stems.index(stem)
