"""The one reader of chapter sources: MyST notebooks read with jupytext, as structure.

Every part of the book that needs to know what a chapter says (the build, re-pinning,
figure artifacts, the source checks in the tests) asks this module. Code cells come from
:func:`jupytext.read`, and what they call is read from their Python syntax tree, so
``verify_claim("...")`` in prose or inside a string is never mistaken for a call; prose is
read as MyST reads it (:mod:`claimbook.prose`).

Examples
--------
>>> chapter = read_chapter(paths.CHAPTERS_DIR / "normalization-invariance.md")
>>> "c15-invariance-001" in chapter.verified_claims
True
"""

from __future__ import annotations

import ast
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from claimbook import cache, paths
from claimbook.errors import ChapterSourceError, InvalidChapterStemError, InvalidClaimIdError
from claimbook.prose import Directive, Role, parse_prose, prose_text
from claimbook.text import one_line

__all__ = [
    "CHAPTER_HEADER",
    "Chapter",
    "Page",
    "chapter_number",
    "chapter_pages",
    "chapter_sources",
    "read_chapter",
]

_CHAPTERS = cache.ContentCache("chapter sources")  # by path and bytes (see read_chapter)
PARAMETERS_TAG = "parameters"
# The front matter every chapter source starts with: a MyST notebook for jupytext, and the
# kernel named as ipykernel installs it (JupyterLab rewrites another name, marking it changed).
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
PIN_NAME = "pin"


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
        source check's and the execution's (:func:`claimbook.pipeline.cells.code_cell_number`).
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
        found = self.pin_assignment()
        return None if found is None else found[1]

    def pin_assignment(self) -> tuple[int, str, str] | None:
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
        return [(index, prose_text(source)) for index, source in self.markdown_cells()]

    def _prose_items(self) -> list[Role | Directive]:
        items: list[Role | Directive] = []
        for index, source in self.markdown_cells():
            items.extend(parse_prose(source, index))
        return items


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


# A MyST target label, ``(label)=`` above a heading, as a later page's ``starts`` names it.
_SECTION_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")


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
