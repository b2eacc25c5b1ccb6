"""Chapter prose talks to the reader, not to the build.

The words the build uses for itself ("harness", "registered", "registry", "witness",
"glue") mean nothing to a reader of a chapter. Every markdown cell is read through the
book's one reader of chapter sources (:meth:`claimbook.sources.Chapter.prose_text`: the
text a reader sees, without inline code, roles or code), and none of them may appear.
Names in code (``trainable_harness.mlp``) are code, not prose, and are not checked.
"""

import re

import pytest

from claimbook import paths
from claimbook.sources import read_chapter

CHAPTERS = sorted(paths.CHAPTERS_DIR.glob("*.md"))
BUILD_WORDS = re.compile(r"\b(harness\w*|regist(?:er|ers|ered|ry)|witness\w*|glue\w*)\b", re.I)


def build_words(text):
    """Every build word in ``text``, with a little of its context."""
    return [
        text[max(0, m.start() - 30) : m.end() + 30].replace("\n", " ")
        for m in BUILD_WORDS.finditer(text)
    ]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_chapter_prose_has_no_build_words(path):
    found = [
        (cell, context)
        for cell, text in read_chapter(path).prose_text()
        for context in build_words(text)
    ]
    assert found == [], f"{path.name}: build words in the prose (cell, context): {found}"


def test_build_words_are_found_as_words():
    text = "Verify the registered claim; the harness's witness glued it; a registration."
    assert [m.group(0) for m in BUILD_WORDS.finditer(text)] == [
        "registered",
        "harness",
        "witness",
        "glued",
    ]
