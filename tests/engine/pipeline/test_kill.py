"""Killing the build driver at each phase, then running the build again at once.

Whatever phase the driver dies in, nothing it started may outlive it (the chapter workers
and their kernels end with it), the lock is free for the next build, and that build brings
the book up to date and passes: no stale lock, no half-written site taken for a whole one.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

# Each test builds the tiny fixture book (kernels and Sphinx): the book tier.
pytestmark = pytest.mark.book

# The driver's own progress lines that mark each phase (see claimbook.pipeline.driver).
PHASES = {
    "claims": "claim c15-invariance-001: computing (",
    "execution": ": executing (",
    "render": "site: rendering",
}


def _processes_under(root: str) -> list[int]:
    """Pids of live processes whose command line or working directory names ``root``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as stream:
                command = stream.read().replace(b"\0", b" ").decode(errors="replace")
            directory = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/stat") as stream:
                state = stream.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (root in command or directory.startswith(root)):
            found.append(int(entry))
    return found


def _describe(pids: list[int]) -> str:
    """Each pid's parent, state and command line, for a failure message."""
    lines = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as stream:
                command = stream.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as stream:
                fields = stream.read().rsplit(")", 1)[1].split()
        except OSError:
            lines.append(f"{pid}: gone")
            continue
        lines.append(f"{pid} (parent {fields[1]}, state {fields[0]}): {command}")
    return "processes still running:\n" + "\n".join(lines)


def _kill_at(tiny_book, marker: str, temporary: str) -> None:
    """Start a build that must execute, and SIGKILL the driver once it prints ``marker``.

    One chapter executes: its worker and kernel are what must not outlive the driver. With
    a core to spare, the driver makes the Sphinx application (and ``_build/html.new``) ready
    meanwhile, so a kill at ``site: rendering`` lands inside the render, the new site half
    written. (A prose edit alone would render without executing, but its kill lands before
    ``html.new`` exists.) The chapter's claim is computed again too (its artifact is gone),
    in a process of the build's own that must end with the driver as well. The build's
    temporary files (its kernels' socket folders) go to ``temporary``.
    """
    tiny_book.edit("chapters/alpha.md", "print(f", "print('edited')\nprint(f")
    tiny_book.path("artifacts/claims/c15-invariance-001.json").unlink()
    driver = subprocess.Popen(
        [sys.executable, "-m", "claimbook", "build"],
        cwd=tiny_book.root,
        env={**tiny_book.environment(), "TMPDIR": temporary},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = []
    for line in driver.stdout:
        seen.append(line)
        if marker in line:
            break
    else:
        driver.wait()
        pytest.fail(f"the build ended before {marker!r}:\n{''.join(seen)}")
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    driver.stdout.close()


SLOW = "    import time\n\n    time.sleep(120)  # a claim still computing when the driver dies\n"
WITNESS = "harness/trainable_harness/witnesses/chapter15/invariance.py"
WITNESS_BODY = '    """Claim ``c15-invariance-001``: invariances'


@pytest.mark.parametrize("phase", PHASES)
def test_a_build_killed_in_any_phase_leaves_nothing_running_and_the_next_build_passes(
    tiny_book, phase
):
    if phase == "claims":  # the claim's process is still at work when the driver dies
        source = tiny_book.path(WITNESS)
        original = source.read_text(encoding="utf-8")
        head, tail = original.split(WITNESS_BODY, 1)
        docstring, rest = tail.split('"""\n', 1)
        source.write_text(f'{head}{WITNESS_BODY}{docstring}"""\n{SLOW}{rest}', encoding="utf-8")
    # Short, for the sockets' paths (at most 107 bytes): not under pytest's tmp_path.
    temporary = tempfile.mkdtemp(prefix="kill-")
    try:
        _kill_at(tiny_book, PHASES[phase], temporary)
        _nothing_left(str(tiny_book.root), temporary)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    if phase == "claims":  # only now: the claim's process may still be importing it
        source.write_text(original, encoding="utf-8")
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout + process.stderr
    assert "another build holds" not in process.stderr
    assert tiny_book.build("--question").returncode == 0


def _nothing_left(root: str, temporary: str) -> None:
    """No process of the killed build runs after 10 s, and its kernels' sockets are gone."""
    deadline = time.monotonic() + 10
    while _processes_under(root) and time.monotonic() < deadline:
        time.sleep(0.2)  # SIGTERM reaches the workers, which then stop their kernels
    left = _processes_under(root)
    assert left == [], _describe(left)
    assert list(Path(temporary).glob("trainable-kernel-*")) == []
