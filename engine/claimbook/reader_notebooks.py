"""Reader notebooks: a chapter's executed notebook as its pages read, without MyST, for
JupyterLab and Binder; ``hide-``/``remove-`` tags become collapse flags."""

import argparse
import base64
import copy
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from myst_nb.core.variables import format_plain_text
from pybtex.database import BibliographyData, parse_file
from pybtex.plugin import find_plugin

from claimbook import claims as registry
from claimbook import figures, sources
from claimbook.atomic import write_text_atomically
from claimbook.claims import Judgement
from claimbook.errors import ClaimError
from claimbook.extensions import bibliography_style  # registers the author_year style
from claimbook.extensions import claim_pages_model as model
from claimbook.numbers import format_value

RECORD_PREFIX = "application/papermill.record/"
_CODE = {"code", "code-block", "sourcecode"}
_SOURCE, _OUTPUTS = "source_hidden", "outputs_hidden"  # JupyterLab's flags of a cell
_HIDDEN = {"cell": {_SOURCE, _OUTPUTS}, "input": {_SOURCE}, "output": {_OUTPUTS}}
_HIDE = {f"{verb}-{part}": _HIDDEN[part] for verb in ("hide", "remove") for part in _HIDDEN}
_METADATA = ("kernelspec", "language_info")  # kept; jupytext's pairing and the pages are not
_REFERENCE = re.compile(r"(?s)(?P<text>.*?)\s*<(?P<label>[^<>]+)>")


@dataclass
class Numbers:
    """What a reference to each label of the book reads ("Figure 15.1", "(15.2)", ...)."""

    text: dict[str, str] = field(default_factory=dict)  # label -> numbered text
    number: dict[str, str] = field(default_factory=dict)  # label -> number alone
    title: dict[str, str] = field(default_factory=dict)  # label -> heading or caption title
    headings: dict[str, list[str]] = field(default_factory=dict)  # chapter -> heading numbers
    figures: dict[str, int] = field(default_factory=dict)  # chapter -> figures it shows


def book_numbers(root: Path | None = None) -> Numbers:
    """The numbers of every label of the book's chapters, as the site numbers them.

    >>> book_numbers().text["sec-two-maps"], book_numbers().text["eq-centered-map"]
    ('Section 15.1', '(15.1)')
    """
    numbers = Numbers()
    for source in sources.chapter_sources(root):
        chapter = str(sources.chapter_number(source.stem, root))
        counts: Counter = Counter()
        sections: list[int] = []
        headings = numbers.headings.setdefault(source.stem, [])
        for _index, text in sources.read_chapter(source).markdown_cells():
            label = None
            tokens = sources.markdown_tokens(text)
            for position, token in enumerate(tokens):
                if token.type == "myst_target" and token.level == 0:
                    label = token.content
                elif token.type == "heading_open" and token.level == 0:
                    depth = int(token.tag[1]) - 1  # 0 for the chapter's title
                    sections = (sections + [0] * depth)[:depth]
                    if depth:
                        sections[-1] += 1
                    number = ".".join([chapter, *map(str, sections)])
                    headings.append(number)
                    if label is not None:
                        numbers.number[label] = number
                        numbers.text[label] = f"Section {number}"
                        numbers.title[label] = tokens[position + 1].content
                    label = None
                elif token.map is not None and token.type != "myst_target":
                    label = None
            _number_items(text, chapter, counts, numbers)
        numbers.figures[source.stem] = counts["Figure"]
    return numbers


def _number_items(text: str, chapter: str, counts: Counter, numbers: Numbers) -> None:
    """Number the equations, figures and proof blocks (not proofs) of ``text``."""
    for token, directive in sources.prose_tokens(text):
        name, argument, options, _body = directive or ("", "", {}, "")
        if token.type == "math_block_label":
            kind, label = "eq", token.info
        elif name in figures.FIGURE_DIRECTIVES:
            kind, label = "Figure", options.get("name") or options.get("label")
        elif name.startswith("prf:") and name != "prf:proof":
            kind, label = name[4:].capitalize(), options.get("name") or options.get("label")
        else:
            continue
        counts[kind] += 1
        number = f"{chapter}.{counts[kind]}"
        if label:
            numbers.number[label] = number
            numbers.text[label] = f"({number})" if kind == "eq" else f"{kind} {number}"
            if kind != "eq":
                numbers.title[label] = argument


@dataclass
class _Chapter:
    numbers: Numbers
    glued: dict[str, str]
    bibliography: object
    cited: list[str] = field(default_factory=list)
    judged: dict = field(default_factory=dict)  # claim id -> judgement, judged once

    def judge(self, claim_id: str):  # an unknown id is failed, as on the site
        if claim_id not in self.judged:
            try:
                self.judged[claim_id] = registry.judge(claim_id)
            except ClaimError as error:
                self.judged[claim_id] = Judgement("failed", None, str(error))
        return self.judged[claim_id]


def _glued(notebook) -> dict[str, str]:
    found = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", ()):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is not None:
                data = output.get("data", {})
                found[name] = data.get(RECORD_PREFIX + "text/plain", data.get("text/plain", ""))
    return found


def _claim_value(text: str, chapter: _Chapter) -> str:
    claim_id, name, spec = model.parse_claim_value(text)
    state, artifact, _reason = chapter.judge(claim_id)
    if artifact is None:
        return f"? ({model.STATE_WORDS[state]})"
    try:
        shown = format_value(model.field_value(artifact.get("result") or {}, name), spec)
    except (KeyError, ValueError):  # a field it lacks, a spec that does not apply: the site warns
        return f"? ({model.STATE_WORDS['failed']})"
    return shown if state == "verified" else f"{shown} ({model.STATE_WORDS[state]})"


def _citation(name: str, content: str, chapter: _Chapter) -> str:
    shown = []
    for key in (key.strip() for key in content.split(",")):
        chapter.cited.append(key)
        entry = chapter.bibliography.entries.get(key) or chapter.bibliography.entries.get(
            key.split("-", 1)[-1]
        )
        if entry is None:
            shown.append(key)
            continue
        author, year = bibliography_style.author_part(entry), entry.fields.get("year", "n.d.")
        shown.append(f"{author} [{year}]" if name == "cite:t" else f"{author}, {year}")
    return ", ".join(shown) if name == "cite:t" else f"[{'; '.join(shown)}]"


def _role(name: str, content: str, chapter: _Chapter) -> str:
    numbers = chapter.numbers
    match = _REFERENCE.fullmatch(content.strip())
    text, label = (match["text"], match["label"]) if match else ("", content.strip())
    if name == "claim-value":
        return _claim_value(content, chapter)
    if name == "claim":
        return f"`{label}` {model.STATE_WORDS[chapter.judge(label).state]}"
    if name in ("glue:text", "glue"):
        key, _, spec = content.rpartition(":") if ":" in content else (content, "", "")
        return format_plain_text(chapter.glued[key], spec) if key in chapter.glued else "?"
    if name.startswith("cite"):
        return _citation(name, content, chapter)
    if name in ("numref", "eq", "prf:ref"):
        if text and "%s" in text:
            return text.replace("%s", numbers.number.get(label, label))
        return text or numbers.text.get(label, label)
    if name == "ref":
        return text or numbers.title.get(label, label)
    if name == "book-chapter":
        return f"Chapter {content.strip()}"
    if name.startswith("bdg"):  # a chip; two spaces: at a line's end, a line break
        return f"**{text or content}**  "
    if name == "math":
        return f"${content}$"
    if name in ("figure-artifact", "claim-state"):
        return ""
    return text or content


def _directive(name, argument, options, body, chapter: _Chapter) -> str:
    inner = _markdown(body, chapter).strip("\n")
    if name in _CODE:
        return f"```{argument}\n{body}\n```"
    if name == "math":
        tag = chapter.numbers.number.get(options.get("label", ""))
        return f"$$\n{body.strip()}" + (f" \\tag{{{tag}}}" if tag else "") + "\n$$"
    if name in figures.FIGURE_DIRECTIVES:
        label = options.get("name", "")
        number = chapter.numbers.text.get(label, "Figure")
        return f"**{number}.** {' '.join(inner.split())}"
    if name == "claim-line":
        return _claim_line(argument, chapter)
    if name == "bibliography":
        return _references(chapter, options.get("keyprefix", ""))
    if name == "dropdown":
        return f"<details>\n<summary>{argument or 'Details'}</summary>\n\n{inner}\n\n</details>"
    if name.startswith("prf:"):
        kind = name[4:].capitalize()
        label = options.get("label", "")
        number = chapter.numbers.text.get(label, kind)
        title = f"{number} ({argument})." if argument else f"{number}."
        return _quote(f"**{title}** {inner}" if name != "prf:proof" else f"*Proof.* {inner} ∎")
    return _quote(f"**{argument or name.capitalize()}**\n\n{inner}")  # an admonition


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _claim_line(claim_id: str, chapter: _Chapter) -> str:
    claim, state = registry.load_claim(claim_id), chapter.judge(claim_id).state
    parts = [f"**Claim** `{claim_id}` {model.STATE_WORDS[state]}"]
    parts += [f"{key}: {value}" for key, value in claim.shown_contract.items()]
    line = " · ".join(parts)
    if state == "refuted" and (account := model.account_line(claim.refutes)):
        line += f"\n\n**Account refuted:** {account}"
    return line


def _references(chapter: _Chapter, prefix: str) -> str:
    keys = {key.removeprefix(prefix) for key in chapter.cited}
    entries = [entry for key, entry in chapter.bibliography.entries.items() if key in keys]
    style = find_plugin("pybtex.style.formatting", "author_year")()
    shown = style.format_entries(entries)
    return "\n".join(f"- [{item.label}] {item.text.render_as('markdown')}" for item in shown)


def _markdown(source: str, chapter: _Chapter, headings: list[str] | None = None) -> str:
    """``source`` (MyST) as plain markdown; top-level headings numbered from ``headings``."""
    lines = source.split("\n")
    replaced: list[tuple[int, int, str]] = []
    for token in sources.markdown_tokens(source):
        if token.map is None:
            continue
        start, end = token.map
        parts = sources.split_directive(token)  # None for a code block: it stays as it is
        if token.type == "inline":
            _replace_roles(lines, start, end, token.children or (), chapter)
        elif token.type == "heading_open" and token.level == 0 and headings:
            number = headings.pop(0)
            lines[start] = re.sub(r"^(#+\s+)", rf"\g<1>{number}. ", lines[start])
        elif parts is not None:
            replaced.append((start, end, _directive(*parts, chapter)))
        elif token.type == "math_block_label":
            tag = chapter.numbers.number.get(token.info, "")
            replaced.append((start, end, f"$$\n{token.content.strip()} \\tag{{{tag}}}\n$$"))
        elif token.type in ("myst_target", "myst_line_comment"):
            replaced.append((start, end, None))
    for start, end, text in reversed(replaced):
        indent = re.match(r"\s*", lines[start]).group(0)
        new = [] if text is None else [f"{indent}{line}".rstrip() for line in text.split("\n")]
        lines[start:end] = new
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def _replace_roles(lines: list[str], start: int, end: int, children, chapter) -> None:
    text, cursor = "\n".join(lines[start:end]), 0
    for child in children:
        if child.type != "myst_role":
            continue
        name = child.meta["name"]
        pattern = re.compile(rf"\{{{re.escape(name)}\}}(`+){re.escape(child.content)}\1")
        found = pattern.search(text, cursor)
        if found is None:
            continue
        shown = _role(name, child.content, chapter)
        text = text[: found.start()] + shown + text[found.end() :]
        cursor = found.start() + len(shown)
    lines[start:end] = text.split("\n")


def _outputs(outputs: list) -> list:
    """``outputs`` with each figure as ``image/png`` at the site's size, glued values dropped."""
    shown = []
    for output in outputs:
        data = output.get("data", {})
        if png := data.get("image/png") or data.get(RECORD_PREFIX + "image/png"):
            css = figures.display_width(base64.b64decode(png.replace("\n", "")[:44]))
            size = {"image/png": {"width": css}}
            shown.append(nbformat.v4.new_output("display_data", {"image/png": png}, metadata=size))
        elif "scrapbook" not in output.get("metadata", {}):
            shown.append(output)
    return shown


def reader_notebook(source: Path, executed, numbers: Numbers):
    """The reader notebook of ``<root>/chapters/<stem>.md`` from its executed notebook."""
    bibliography = Path(source).parent.parent / "references.bib"  # a book may cite nothing
    entries = parse_file(bibliography) if bibliography.is_file() else BibliographyData()
    chapter = _Chapter(numbers, _glued(executed), entries)
    headings = list(numbers.headings.get(Path(source).stem, ()))
    kept = {key: executed.metadata[key] for key in _METADATA if key in executed.metadata}
    notebook = nbformat.v4.new_notebook(metadata=kept)
    for cell in executed.cells:
        tags = list(cell.get("metadata", {}).get("tags", ()))
        if cell.cell_type == "markdown":
            text = _markdown(cell.source, chapter, headings)
            if text.strip():
                notebook.cells.append(nbformat.v4.new_markdown_cell(text, id=cell.get("id")))
            continue
        new = copy.deepcopy(cell)
        new.outputs = _outputs(cell.get("outputs", []))
        new.metadata = {"tags": tags} if tags else {}
        hidden = set().union(*(_HIDE.get(tag, ()) for tag in tags))
        if hidden:  # only what is hidden: JupyterLab drops a false flag (opening it modified)
            new.metadata["jupyter"] = dict.fromkeys(sorted(hidden), True)
            if _OUTPUTS in hidden:
                new.metadata["collapsed"] = True  # classic Jupyter's flag
        notebook.cells.append(new)
    return notebook


def write_reader_notebooks(executed_dir: Path, out_dir: Path, root: Path | None = None):
    numbers = book_numbers(root)
    written = []
    for source in sources.chapter_sources(root):
        executed = nbformat.read(Path(executed_dir) / f"{source.stem}.ipynb", as_version=4)
        target = Path(out_dir) / f"{source.stem}.ipynb"
        text = nbformat.writes(reader_notebook(source, executed, numbers)) + "\n"
        write_text_atomically(target, text)
        written.append(target)
    return written


if __name__ == "__main__":  # Binder's postBuild
    parser = argparse.ArgumentParser(prog="python -m claimbook.reader_notebooks")
    parser.add_argument("executed", type=Path, help="folder of the executed <chapter>.ipynb")
    parser.add_argument("out", type=Path, help="folder to write the reader notebooks to")
    options = parser.parse_args()
    for path in write_reader_notebooks(options.executed, options.out):
        print(f"reader notebook: {path}")
