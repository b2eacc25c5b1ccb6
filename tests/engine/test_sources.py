"""The one reader of chapter sources: structure, not regular expressions."""

from pathlib import Path

import pytest

from claimbook import paths
from claimbook.claims.cli import rewrite_pin
from claimbook.errors import ChapterSourceError
from claimbook.sources import (
    CHAPTER_HEADER,
    chapter_number,
    chapter_sources,
    read_chapter,
)


def write_chapter(directory: Path, body: str, name: str = "page.md") -> Path:
    path = directory / name
    path.write_text(CHAPTER_HEADER + body, encoding="utf-8")
    return path


def test_the_book_chapters_are_read_in_toc_order():
    stems = [source.stem for source in chapter_sources()]
    assert stems == ["normalization-invariance", "batch-normalization"]
    assert chapter_number("normalization-invariance") == 15
    assert chapter_number("batch-normalization") == 16
    with pytest.raises(ChapterSourceError, match=r"not in _toc\.yml"):
        chapter_number("no-such-chapter")


def test_every_book_chapter_names_its_claims_and_pin():
    for source in chapter_sources():
        chapter = read_chapter(source)
        assert chapter.verified_claims, source
        assert chapter.pin, source
        assert all((paths.CLAIMS_DIR / f"{c}.yaml").is_file() for c in chapter.verified_claims)


def test_prose_that_looks_like_a_call_is_never_read_as_one(tmp_path):
    body = """
Call `verify_claim("<id>", ...)`, or `verify_claim("$(touch${IFS}injected)")` in prose.

```{code-cell} ipython3
text = 'verify_claim("in-a-string")'
claim = verify_claim("c15-invariance-001", expected_harness=pin)
again = trainable_harness.verify_claim("c15-invariance-001", pin)
```
"""
    chapter = read_chapter(write_chapter(tmp_path, body))
    assert chapter.verified_claims == ["c15-invariance-001"]
    assert not (tmp_path / "injected").exists()


def test_a_computed_claim_id_is_refused(tmp_path):
    body = """
```{code-cell} ipython3
name = "c15-invariance-001"
verify_claim(name, expected_harness=pin)
```
"""
    with pytest.raises(ChapterSourceError, match="not a string literal"):
        _ = read_chapter(write_chapter(tmp_path, body)).verified_claims


@pytest.mark.parametrize(
    "claim_id", ["../../package", "/etc/passwd", "c15-Invariance-001", "", "a" * 101, "x\x1by"]
)
def test_a_claim_id_outside_the_id_grammar_is_refused_naming_chapter_and_cell(tmp_path, claim_id):
    body = f"""
```{{code-cell}} ipython3
pin = "0.0.0"
```

```{{code-cell}} ipython3
verify_claim("c15-invariance-001", expected_harness=pin)
verify_claim({claim_id!r}, expected_harness=pin)
```
"""
    chapter = read_chapter(write_chapter(tmp_path, body))
    with pytest.raises(ChapterSourceError) as caught:
        _ = chapter.verified_claims
    message = str(caught.value)
    assert message.startswith(f"{chapter.path}: code cell 2: verify_claim: ")
    assert "is not a claim id: an id is lower-case words and digits joined by hyphens" in message
    assert "\x1b" not in message and "\n" not in message


def test_a_chapter_name_that_cannot_name_files_is_refused(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n- file: chapters/ok\n- file: chapters/-x\n"
    )
    with pytest.raises(ChapterSourceError, match=r"^_toc\.yml: entry 'chapters/-x': '-x' is not"):
        chapter_sources(tmp_path)


def test_figure_examples_inside_code_fences_are_not_figures(tmp_path):
    body = """
````md
```{figure} x.png
:name: fig-example
```
````

```{glue:figure} fig-real
:name: fig-real

A caption with {figure-artifact}`fig-real` and {claim}`c15-invariance-001`.
```

```python
{claim}`in-code`
```
"""
    chapter = read_chapter(write_chapter(tmp_path, body))
    figures = [d for d in chapter.directives() if d.name in ("figure", "glue:figure")]
    assert [d.options.get("name") for d in figures] == ["fig-real"]
    roles = [(role.name, role.content) for role in chapter.roles()]
    assert roles == [("figure-artifact", "fig-real"), ("claim", "c15-invariance-001")]


def test_rewrite_pin_changes_only_the_parameters_line(tmp_path):
    body = """
```{code-cell} ipython3
:tags: [parameters]

pin = "0.1.0"
```

Prose quoting pin = "0.1.0" stays as written.
"""
    path = write_chapter(tmp_path, body)
    before = path.read_bytes()
    assert rewrite_pin(path, "0.2.0") is True
    after = path.read_bytes()
    assert read_chapter(path).pin == "0.2.0"
    assert b'Prose quoting pin = "0.1.0" stays' in after
    assert len(after) == len(before)
    assert rewrite_pin(path, "0.2.0") is False


def test_rewrite_pin_refuses_an_ambiguous_line(tmp_path):
    body = """
```{code-cell} ipython3
:tags: [parameters]

pin = "0.1.0"
```

```{code-cell} ipython3
pin = "0.1.0"
```
"""
    path = write_chapter(tmp_path, body)
    with pytest.raises(ChapterSourceError, match="occurs 2 times"):
        rewrite_pin(path, "0.2.0")
    with pytest.raises(ChapterSourceError, match="no `pin"):
        rewrite_pin(write_chapter(tmp_path, "\nprose only\n", "other.md"), "0.2.0")


def test_a_missing_or_broken_source_is_named(tmp_path):
    with pytest.raises(ChapterSourceError, match="does not exist"):
        read_chapter(tmp_path / "missing.md")
    body = """
```{code-cell} ipython3
def broken(:
```
"""
    with pytest.raises(ChapterSourceError, match="not valid Python"):
        _ = read_chapter(write_chapter(tmp_path, body)).verified_claims


@pytest.mark.parametrize("new_pin", ['0.2.0"\nimport os', "0.2.0 ", "", "latest", 2, None])
def test_rewrite_pin_accepts_only_a_version_and_writes_nothing_else(tmp_path, new_pin):
    path = write_chapter(
        tmp_path, '\n```{code-cell} ipython3\n:tags: [parameters]\n\npin = "0.1.0"\n```\n'
    )
    before = path.read_bytes()
    with pytest.raises(ChapterSourceError, match="parameter new_pin must be a version"):
        rewrite_pin(path, new_pin)
    assert path.read_bytes() == before


def test_prose_blocks_are_the_top_level_targets_and_headings():
    from claimbook import sources

    text = "(sec-a)=\n## A\n\nText.\n\n```\n## code\n```\n\nB\n-\n"
    assert sources.prose_blocks(text) == [
        ("target", 0, "sec-a"),
        ("heading", 1, ""),
        ("heading", 9, ""),
    ]


def test_a_chapter_that_is_a_symbolic_link_is_refused_naming_it(tmp_path, monkeypatch):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n- file: chapters/a\n"
    )
    (tmp_path / "elsewhere.md").write_text("# A\n")
    (tmp_path / "chapters" / "a.md").symlink_to(tmp_path / "elsewhere.md")
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    with pytest.raises(ChapterSourceError, match=r"^chapters/a\.md is a symbolic link; "):
        chapter_sources(tmp_path)


def test_a_syntax_error_is_named_by_the_code_cell_count_a_reader_makes(tmp_path):
    """Markdown cells do not count, an empty code cell does: the third code cell is 3, as the
    execution's messages number it (claimbook.pipeline.execute.code_cell_name)."""
    body = """
Prose.

```{code-cell} ipython3
x = 1
```

More prose.

```{code-cell} ipython3
```

And more.

```{code-cell} ipython3
x = (
```
"""
    chapter = read_chapter(write_chapter(tmp_path, body))
    with pytest.raises(ChapterSourceError, match=r": code cell 3 is not valid Python"):
        _ = chapter.verified_claims
