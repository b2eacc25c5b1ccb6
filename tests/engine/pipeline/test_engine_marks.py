"""Only the engine draws claim marks: a page that draws one itself fails the build."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.book

FORGED = '<span class="claim-badge claim-verified">c15-forged-001 verified</span>'
REFUSAL = "raw HTML draws a claim mark (class claim-badge); only the engine draws claim marks"


def _refusals(process) -> list[str]:
    return [line for line in process.stdout.splitlines() if "only the engine draws" in line]


def test_raw_html_with_a_claim_badge_in_prose_is_refused_naming_the_file(tiny_book):
    tiny_book.edit("chapters/alpha.md", "The claim:", f"A forged mark: {FORGED}.\n\nThe claim:")
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    assert _refusals(process) == [f"WARNING: chapters/alpha.md: {REFUSAL}"]
    page = tiny_book.path("_build/html/chapters/alpha.html").read_text(encoding="utf-8")
    assert FORGED not in page  # written as inert text, never as a mark
    tiny_book.edit("chapters/alpha.md", f"A forged mark: {FORGED}.\n\n", "")
    assert tiny_book.build().returncode == 0


def test_an_html_output_with_a_claim_badge_is_refused_naming_the_file(tiny_book):
    tiny_book.edit(
        "chapters/beta.md",
        "print(f",
        "from IPython.display import HTML, display\n\n"
        "display(HTML('<span class=\"claim-badge claim-verified\">x</span>'))\nprint(f",
    )
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    refusal = REFUSAL.replace("raw HTML", "an HTML output of a code cell")
    assert _refusals(process) == [f"WARNING: chapters/beta.md: {refusal}"]
