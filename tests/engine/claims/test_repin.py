"""``repin``: verify every claim first, report changed results, and only then re-pin."""

from claimtools import TOY_ID, edit_artifact, make_chapters, verify_toy

from claimbook.claims import verify_claim
from claimbook.claims.repin import repin
from claimbook.sources import CHAPTER_HEADER, read_chapter
from trainable_harness import __version__


def test_repin_verifies_reports_changes_then_rewrites_pins(toy, registry, artifacts, tmp_path):
    chapters = make_chapters(tmp_path)
    verify_toy(registry, artifacts)
    edit_artifact(artifacts, lambda a: a["result"].update(ratio=0.25))  # an older result
    report = repin(chapters, registry_dir=registry, artifacts_dir=artifacts)
    assert report.all_verified and any(update.changed for update in report.pin_updates)
    (toy_report,) = report.claims
    assert toy_report.status == "verified" and toy_report.had_artifact
    assert toy_report.changes == ("ratio: 0.25 -> 0.5",)
    pinned = (chapters / "15-pinned.md").read_text()
    assert f'pin = "{__version__}"  # a note' in pinned
    assert 'Prose quoting pin = "0.0.1" stays.' in pinned
    assert (chapters / "16-unpinned.md").read_text() == CHAPTER_HEADER + "# no claims here\n"
    assert [update.path.name for update in report.pin_updates] == ["15-pinned.md", "17-current.md"]
    assert [update.changed for update in report.pin_updates] == [True, False]
    # after re-pinning, the chapter's pin verifies
    pin = read_chapter(chapters / "15-pinned.md").pin
    assert verify_claim(TOY_ID, pin, registry_dir=registry, artifacts_dir=artifacts)


def test_repin_rewrites_nothing_when_a_claim_fails(toy, registry, artifacts, tmp_path):
    chapters = make_chapters(tmp_path)
    before = (chapters / "15-pinned.md").read_bytes()
    toy.result = {**toy.result, "count": 4}
    report = repin(chapters, registry_dir=registry, artifacts_dir=artifacts)
    assert not report.all_verified and not any(update.changed for update in report.pin_updates)
    assert report.pin_updates == ()
    (toy_report,) = report.claims
    assert toy_report.status == "failed" and "count: expected 3, got 4" in toy_report.message
    assert (chapters / "15-pinned.md").read_bytes() == before


def test_repin_counts_a_refuted_claim_as_holding(fixture_registry, artifacts, tmp_path):
    chapters = make_chapters(tmp_path)
    (fixture_registry.directory / "t01-noise-001.yaml").unlink()  # keep the test quick
    report = repin(chapters, registry_dir=fixture_registry.directory, artifacts_dir=artifacts)
    assert [c.status for c in report.claims] == ["refuted"]
    assert report.all_verified and any(update.changed for update in report.pin_updates)
