"""``repin``: verify every claim first, report changed results, and only then re-pin."""

import contextlib
import io

from claimtools import TOY_ID, edit_artifact, make_chapters, verify_toy

from claimbook.claims import verify_claim
from claimbook.claims.cli import repin
from claimbook.sources import CHAPTER_HEADER, read_chapter
from trainable_harness import __version__


def repinned(chapters, registry, artifacts) -> tuple[int, list[str]]:
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        status = repin(chapters, registry_dir=registry, artifacts_dir=artifacts)
    return status, said.getvalue().splitlines()


def test_repin_verifies_reports_changes_then_rewrites_pins(toy, registry, artifacts, tmp_path):
    chapters = make_chapters(tmp_path)
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a["result"].update(ratio=0.25))  # an older result
    status, lines = repinned(chapters, registry, artifacts)
    assert status == 0
    assert lines == [
        f"{TOY_ID}: verified; result changed: ratio: 0.25 -> 0.5",
        f"{chapters / '15-pinned.md'}: pin 0.1.0+f5d27deff4da -> {__version__}",
        f"{chapters / '17-current.md'}: already pinned",
    ]
    pinned = (chapters / "15-pinned.md").read_text()
    assert f'pin = "{__version__}"  # a note' in pinned
    assert 'Prose quoting pin = "0.0.1" stays.' in pinned
    assert (chapters / "16-unpinned.md").read_text() == CHAPTER_HEADER + "# no claims here\n"
    # after re-pinning, the chapter's pin verifies
    pin = read_chapter(chapters / "15-pinned.md").pin
    assert verify_claim(TOY_ID, pin, registry_dir=registry, artifacts_dir=artifacts)


def test_repin_rewrites_nothing_when_a_claim_fails(toy, registry, artifacts, tmp_path):
    chapters = make_chapters(tmp_path)
    before = (chapters / "15-pinned.md").read_bytes()
    toy.result = {**toy.result, "count": 4}
    status, lines = repinned(chapters, registry, artifacts)
    assert status == 1 and len(lines) == 2
    assert lines[0].startswith(f"{TOY_ID}: failed: ") and "count: expected 3, got 4" in lines[0]
    assert "no chapter was re-pinned" in lines[1]
    assert (chapters / "15-pinned.md").read_bytes() == before


def test_repin_counts_a_refuted_claim_as_holding(fixture_registry, artifacts, tmp_path):
    chapters = make_chapters(tmp_path)
    (fixture_registry.directory / "t01-noise-001.yaml").unlink()  # keep the test quick
    status, lines = repinned(chapters, fixture_registry.directory, artifacts)
    assert status == 0
    assert lines[0] == "t01-shift-001: refuted (no previous artifact to compare)"
    assert f"pin 0.1.0+f5d27deff4da -> {__version__}" in lines[1]
