"""Killing the build driver at each phase, then running the build again at once.

Whatever phase the driver dies in, nothing it started may outlive it (the chapter workers
and their kernels end with it), the lock is free for the next build, and that build brings
the book up to date and passes: no stale lock, no half-written site taken for a whole one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

# Each test builds the tiny fixture book (kernels and Sphinx): the book tier.
pytestmark = pytest.mark.book

# The driver's own progress lines that mark each phase (see claimbook.build.driver).
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


def _kill_at(tiny_book, marker: str) -> None:
    """Start a build that must execute, and SIGKILL the driver once it prints ``marker``.

    One chapter executes: its worker and kernel are what must not outlive the driver. With
    a core to spare, the driver makes the Sphinx application (and ``_build/html.new``) ready
    meanwhile, so a kill at ``site: rendering`` lands inside the render, the new site half
    written. (A prose edit alone would render without executing, but its kill lands before
    ``html.new`` exists.) The chapter's claim is computed again too (its artifact is gone),
    in a process of the build's own that must end with the driver as well.
    """
    tiny_book.edit("chapters/alpha.md", "print(f", "print('edited')\nprint(f")
    tiny_book.path("artifacts/claims/c15-invariance-001.json").unlink()
    driver = subprocess.Popen(
        [sys.executable, "-m", "claimbook", "build"],
        cwd=tiny_book.root,
        env=tiny_book.environment(),
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
    _kill_at(tiny_book, PHASES[phase])
    root = str(tiny_book.root)
    deadline = time.monotonic() + 10
    while _processes_under(root) and time.monotonic() < deadline:
        time.sleep(0.2)  # SIGTERM reaches the workers, which then stop their kernels
    assert _processes_under(root) == []
    if phase == "claims":  # only now: the claim's process may still be importing it
        source.write_text(original, encoding="utf-8")
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout + process.stderr
    assert "another build holds" not in process.stderr
    assert tiny_book.build("--question").returncode == 0
