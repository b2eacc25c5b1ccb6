"""Tests of claimbook.pipeline.checkout: one build at a time, the holder named, never a stale lock.

A second holder is tried both from this process (``flock`` locks belong to an open file
description, so a second ``open`` conflicts even here) and from another process; the
driver's refusal of a second build as a whole is tested in ``test_driver.py``.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from claimbook.errors import BookError, BuildLockError
from claimbook.pipeline.checkout import TAKEOVER, build_lock

HOLD = textwrap.dedent(
    """
    import sys
    from claimbook.pipeline.checkout import build_lock

    with build_lock(sys.argv[1]):
        print("held", flush=True)
        sys.stdin.read()  # until the test closes the pipe (or kills this process)
    """
)


@pytest.fixture
def lock(tmp_path: Path) -> Path:
    return tmp_path / "_build" / ".build.lock"


@pytest.fixture
def other_holder(lock):
    """Another process that holds the lock until the test ends (or kills it)."""
    # Leaving the with block closes both pipes, which ends the holder, and waits for it.
    with subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout.readline() == "held\n"
        yield process


def free(path: Path) -> bool:
    """Whether an exclusive lock on ``path`` can be taken right now (then let go)."""
    handle = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True
    finally:
        os.close(handle)


def test_the_holder_is_named_in_the_lock_file_while_it_holds_it(lock):
    with build_lock(lock):
        record = lock.read_text()
        assert record.startswith(f"pid {os.getpid()}, `")
        assert " since " in record
        assert not free(lock)
    assert lock.read_text() == ""  # released and cleared
    assert free(lock)


def test_a_second_holder_in_the_same_process_is_refused_with_the_holders_name(lock):
    with build_lock(lock):
        held = lock.read_text()
        with pytest.raises(BuildLockError, match=f"pid {os.getpid()}"), build_lock(lock):
            pytest.fail("a second holder entered the block")
        assert lock.read_text() == held  # the refused attempt left the record alone
        assert not free(lock)
    assert free(lock)


def test_a_holder_in_another_process_is_named(lock, other_holder):
    with pytest.raises(BuildLockError) as refused, build_lock(lock):
        pytest.fail("entered a lock another process holds")
    message = str(refused.value)
    assert f"pid {other_holder.pid}" in message
    assert str(lock) in message and "wait for it to finish" in message
    assert isinstance(refused.value, BookError)


def test_a_lock_held_without_a_record_says_the_holder_is_unknown(lock):
    lock.parent.mkdir(parents=True)
    handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        with pytest.raises(BuildLockError, match="holder unknown"), build_lock(lock):
            pass
    finally:
        os.close(handle)


def test_the_lock_is_released_when_the_block_raises(lock):
    with pytest.raises(RuntimeError, match="the build failed"), build_lock(lock):
        raise RuntimeError("the build failed")
    assert free(lock)
    assert lock.read_text() == ""
    with build_lock(lock):  # and can be taken again
        assert lock.read_text().startswith(f"pid {os.getpid()}")


def test_the_lock_is_released_when_the_holder_is_killed(lock, other_holder):
    assert not free(lock)
    other_holder.kill()
    other_holder.wait(timeout=30)
    # The kernel dropped the lock with the process; its record is stale text, not a lock.
    assert f"pid {other_holder.pid}" in lock.read_text()
    said = []
    with build_lock(lock, say=said.append):
        assert lock.read_text().startswith(f"pid {os.getpid()}")
    assert len(said) == 1
    assert said[0].startswith(f"make: {TAKEOVER} (pid {other_holder.pid}, ")


HOLD_AND_FORK = textwrap.dedent(
    """
    import os, sys, time
    from claimbook.pipeline.checkout import build_lock

    with build_lock(sys.argv[1]):
        if os.fork() == 0:  # a chapter worker that outlives the driver
            # fork() has returned here, so the at-fork handler has run: report only now,
            # or the test could kill the holder while this child still held its copy.
            print(os.getpid(), flush=True)
            time.sleep(120)
            os._exit(0)
        sys.stdin.read()
    """
)


def test_a_child_forked_by_the_holder_does_not_keep_the_lock_after_the_holder_is_killed(lock):
    with subprocess.Popen(
        [sys.executable, "-c", HOLD_AND_FORK, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        child = int(holder.stdout.readline())
        try:
            assert not free(lock)
            holder.kill()
            holder.wait(timeout=30)
            os.kill(child, 0)  # the child still runs ...
            assert free(lock)  # ... and does not hold the lock
        finally:
            os.kill(child, signal.SIGKILL)


def test_taking_the_lock_creates_its_directory(tmp_path):
    lock = tmp_path / "a" / "b" / ".build.lock"
    with build_lock(lock):
        assert lock.is_file()
