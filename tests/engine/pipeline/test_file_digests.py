"""``claimbook.pipeline.file_digests``: the SHA-256 of files read, by the version read."""

from __future__ import annotations

import hashlib
import os

import pytest

from claimbook.pipeline import file_digests


def test_a_file_is_hashed_by_its_bytes_and_remembered_by_its_version(tmp_path):
    path = tmp_path / "page.html"
    data = os.urandom(3 * (1 << 20) + 17)  # more than one read's worth
    path.write_bytes(data)
    size, digest, steady = file_digests.sha256(path)
    assert (size, digest, steady) == (len(data), hashlib.sha256(data).digest(), True)
    assert file_digests.known(os.stat(path)) == digest


def test_a_written_file_is_another_version_even_with_its_old_time(tmp_path):
    import time

    path = tmp_path / "page.html"
    path.write_text("verified")
    file_digests.sha256(path)
    before = os.stat(path)
    time.sleep(0.05)  # past a tick of the file system's clock, which times the change
    path.write_text("refuted!")  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert file_digests.known(os.stat(path)) is None
    assert file_digests.sha256(path)[1] == hashlib.sha256(b"refuted!").digest()


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
