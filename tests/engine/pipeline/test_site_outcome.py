"""The record of a published site: what a walk finds, what differs, what is ever copied."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from claimbook.pipeline import site_outcome


@pytest.fixture
def site(tmp_path) -> Path:
    site = tmp_path / "html"
    (site / "chapters").mkdir(parents=True)
    (site / "index.html").write_text("<p>7.000 verified</p>")
    (site / "chapters" / "alpha.html").write_text("<p>alpha</p>")
    return site


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_scan_records_the_sha256_of_each_regular_file(site):
    assert site_outcome.scan(site) == (
        {
            "chapters/alpha.html": _sha256("<p>alpha</p>"),
            "index.html": _sha256("<p>7.000 verified</p>"),
        },
        [],
    )
    assert site_outcome.differences(site, site_outcome.scan(site).files) is None


def test_an_edit_of_the_same_size_with_the_old_time_is_a_difference(site):
    record = site_outcome.scan(site).files
    page = site / "index.html"
    before = page.stat()
    page.write_text("<p>7.777 verified</p>")
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert site_outcome.differences(site, record) == "edited index.html"


def test_missing_and_added_files_are_differences(site):
    record = site_outcome.scan(site).files
    (site / "chapters" / "alpha.html").unlink()
    (site / "planted.html").write_text("not published")
    assert site_outcome.differences(site, record) == (
        "missing chapters/alpha.html; not published by the build: planted.html"
    )


def test_links_and_fifos_are_never_followed_or_read(site, tmp_path):
    record = site_outcome.scan(site).files
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the site")
    os.symlink(secret, site / "planted.html")
    os.symlink(tmp_path, site / "chapters" / "linked")
    os.mkfifo(site / "pipe")  # opening it for reading would block
    found = site_outcome.scan(site)
    assert found.files == record
    assert found.others == ["chapters/linked", "pipe", "planted.html"]
    assert site_outcome.differences(site, record) == (
        "not a regular file: chapters/linked, pipe, planted.html"
    )


def test_a_missing_site_differs(tmp_path):
    assert site_outcome.differences(tmp_path / "nowhere", {}) == "missing"


def test_copy_verified_copies_a_site_that_matches_its_record_times_kept(site, tmp_path):
    record = site_outcome.scan(site).files
    (site / "OUTDATED.txt").write_text("a build is under way")
    target = tmp_path / "copy"
    assert site_outcome.copy_verified(site, target, record, skip={"OUTDATED.txt"})
    assert site_outcome.scan(target).files == record
    assert not (target / "OUTDATED.txt").exists()
    page, copied = site / "index.html", target / "index.html"
    assert copied.stat().st_mtime_ns == page.stat().st_mtime_ns


@pytest.mark.parametrize(
    "tamper",
    [
        lambda site, outside: (site / "index.html").write_text("<p>7.777 verified</p>"),
        lambda site, outside: (site / "extra.html").write_text("planted"),
        lambda site, outside: (site / "chapters" / "alpha.html").unlink(),
        lambda site, outside: os.symlink(outside, site / "linked"),
        lambda site, outside: os.symlink(outside / "secret", site / "chapters" / "link.html"),
        lambda site, outside: os.mkfifo(site / "pipe"),
    ],
    ids=["edited", "extra", "missing", "linked-folder", "linked-file", "fifo"],
)
def test_copy_verified_copies_nothing_from_a_site_that_differs(site, tmp_path, tamper):
    record = site_outcome.scan(site).files
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("not for the site")
    tamper(site, outside)
    target = tmp_path / "copy"
    assert not site_outcome.copy_verified(site, target, record)
    assert not target.exists()
