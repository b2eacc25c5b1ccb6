"""``claimbook.pipeline.file_digests``: regular files hashed, nothing else opened."""

from __future__ import annotations

import hashlib
import os

import pytest

from claimbook.pipeline import file_digests


def test_a_file_is_hashed_by_its_bytes(tmp_path):
    path = tmp_path / "page.html"
    data = os.urandom(3 * (1 << 20) + 17)  # more than one read's worth
    path.write_bytes(data)
    assert file_digests.sha256(path) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("kind", ["missing", "directory", "link", "fifo"])
def test_anything_but_a_regular_file_has_no_digest(tmp_path, kind):
    path = tmp_path / "entry"
    target = tmp_path / "target"
    target.write_text("x")
    if kind == "directory":
        path.mkdir()
    elif kind == "link":
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)  # opened without waiting for a writer
    assert file_digests.sha256(path) is None
