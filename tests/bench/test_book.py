"""The benchmark's bookkeeping (``bench.book``), on a generated book, no build.

The benchmark itself times builds and is not a test (``make bench``); what is tested here
is what it edits between rounds: each edit must change exactly what its timing claims to
measure (prose only; one code cell; one function no chapter ran), in the copy it is given.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "books"))

from generate_scale_book import generate

from bench import book as bench
from claimbook.sources import read_chapter


@pytest.fixture
def book(tmp_path):
    return generate(tmp_path / "book", chapters=2)


def _cells(path):
    chapter = read_chapter(path)
    return [code for _, code, _ in chapter.code_cells()], chapter.markdown_cells()


def test_a_prose_edit_changes_the_first_chapters_prose_and_no_code(book):
    first = book / "chapters" / "chapter-01.md"
    code, prose = _cells(first)
    assert bench._edit_prose(book) == "chapter-01.md"
    code_after, prose_after = _cells(first)
    assert code_after == code and prose_after != prose


def test_a_code_edit_adds_one_code_cell_to_the_last_chapter(book):
    last = book / "chapters" / "chapter-02.md"
    code, _ = _cells(last)
    assert bench._edit_code(book) == "chapter-02.md"
    code_after, _ = _cells(last)
    assert code_after[: len(code)] == code and len(code_after) == len(code) + 1


def test_the_unused_module_is_one_nothing_reached_and_its_edit_changes_only_it(book):
    used = {"trainable_harness", "trainable_harness.normalization"}
    module = bench._unused_module(book, used)
    assert module not in used and module.startswith("trainable_harness.")
    path = bench._module_path(book, module)
    others = {name: bench._module_path(book, name).read_bytes() for name in used}
    before = path.read_bytes()
    bench._edit_module(book, module)
    assert path.read_bytes() != before
    assert {name: bench._module_path(book, name).read_bytes() for name in used} == others


def test_no_unused_module_when_every_module_is_reached(book):
    package = book / "harness" / "trainable_harness"
    every = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(book / "harness").with_suffix("").parts
        every.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert bench._unused_module(book, every) is None


def test_generate_refuses_an_empty_book(tmp_path):
    with pytest.raises(ValueError, match="chapters must be at least 1"):
        generate(tmp_path / "none", chapters=0)


def test_generated_chapters_mix_the_four_kinds(tmp_path):
    from generate_scale_book import KINDS

    book = generate(tmp_path / "eight", chapters=8)
    claims = sorted(path.stem for path in (book / "claims").glob("*.yaml"))
    # Every chapter has its invariance claim; the statistical ones (third of each four) a
    # claim over seeds too.
    assert claims == sorted(
        [f"c{15 + k}-scale-001" for k in range(8)] + ["c17-spread-001", "c21-spread-001"]
    )
    texts = [(book / "chapters" / f"chapter-{k + 1:02d}.md").read_text() for k in range(8)]
    for index, text in enumerate(texts):
        kind = KINDS[index % 4]
        assert ("glue_figure(fig, " in text) is (kind == "figure")
        assert ("streaming_moments(values)" in text) is (kind == "moments")
        assert ("-spread-001" in text) is (kind == "statistical")


def test_exactly_the_first_two_chapters_run_the_shared_function(tmp_path):
    from generate_scale_book import SHARED_BY_TWO

    book = generate(tmp_path / "five", chapters=5)
    name = SHARED_BY_TWO[1]
    calling = [
        path.stem
        for path in sorted((book / "chapters").glob("*.md"))
        if any(name in code for code in _cells(path)[0])
    ]
    assert calling == ["chapter-01", "chapter-02"]
    runs = {"chapter-01": {SHARED_BY_TWO, ("m", "f")}, "chapter-02": {SHARED_BY_TWO}}
    runs["chapter-03"] = {("m", "f")}
    assert bench._shared_by_two(runs) == (("m", "f"), ["chapter-01", "chapter-03"])
    runs["chapter-04"] = {("m", "f")}
    assert bench._shared_by_two(runs) == (SHARED_BY_TWO, ["chapter-01", "chapter-02"])


def test_a_generated_statistical_claim_keeps_its_template_seeds_and_tolerances(tmp_path):
    import yaml

    from claimbook import paths

    book = generate(tmp_path / "three", chapters=3)
    copy = yaml.safe_load((book / "claims" / "c17-spread-001.yaml").read_text())
    template = yaml.safe_load((paths.CLAIMS_DIR / "c15-estimator-shift-001.yaml").read_text())
    assert copy["seed"] == template["seed"] and copy["expect"] == template["expect"]
    assert copy["chapter"] == 17 and "catches" not in copy


def test_reexecuted_chapters_are_those_whose_record_changed(tmp_path):
    from claimbook.pipeline.keys import record_path

    build = tmp_path / "_build"
    for stem in ("a", "b", "c"):
        record_path(stem, build).parent.mkdir(parents=True, exist_ok=True)
        record_path(stem, build).write_text(f'{{"seconds": 1, "stem": "{stem}"}}')
    before = bench._records(tmp_path, ["a", "b", "c"])
    record_path("b", build).write_text('{"seconds": 2, "stem": "b"}')
    assert bench._reexecuted(tmp_path, ["a", "b", "c"], before) == ["b"]
