"""Time limits and stops: each expiry or interrupt ends what it started and says so in one line.

The limits are the tiny fixture book's ``_config.yml`` settings (:mod:`claimbook.pipeline.limits`),
set short here; a chapter cell or a claim computation that never ends stands for a hung one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from claimbook.errors import BuildError
from claimbook.pipeline.limits import Limits, read_limits

# Each test builds the tiny fixture book (kernels and Sphinx): the book tier.
pytestmark = pytest.mark.book

BETA_CELL = "from claimbook.chapter import verify_claim\n"
WITNESS = "harness/trainable_harness/witnesses/chapter15/invariance.py"
WITNESS_BODY = '    """Claim ``c15-invariance-001``: invariances'


def _limits(book, cell=60, claim=60, build=120) -> None:
    with book.path("_config.yml").open("a", encoding="utf-8") as config:
        config.write(
            f"trainable_cell_timeout: {cell}\ntrainable_claim_timeout: {claim}\n"
            f"trainable_build_timeout: {build}\n"
        )


def _beta_runs(book, code: str) -> None:
    """Beta's second code cell runs ``code`` first, before its import of the engine (which
    can take longer than a short cell limit on a loaded machine)."""
    book.edit("chapters/beta.md", BETA_CELL, code + "\n" + BETA_CELL)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _output(process) -> list[str]:
    return (process.stdout + process.stderr).splitlines()


def test_the_limits_are_read_from_the_config_with_defaults(tmp_path):
    assert read_limits(tmp_path) == Limits(300.0, 600.0, 1800.0)
    (tmp_path / "_config.yml").write_text("trainable_claim_timeout: 0\n")
    with pytest.raises(BuildError, match="trainable_claim_timeout must be a positive number"):
        read_limits(tmp_path)


def test_a_cell_out_of_time_fails_its_chapter_in_one_line_and_what_it_started_ends(tiny_book):
    _limits(tiny_book, cell=3)
    pids = tiny_book.path("artifacts/figures/pids")  # a folder a sandboxed kernel writes in
    pids.parent.mkdir(parents=True, exist_ok=True)  # made by the sandbox, where there is one
    _beta_runs(
        tiny_book,
        "import os, subprocess, time\n"
        "child = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "if os.fork() == 0:  # a daemon: forked twice, in a session of its own\n"
        "    os.setsid()\n"
        "    daemon = os.fork()\n"
        "    if daemon == 0:\n"
        "        os.execvp('sleep', ['sleep', '301'])\n"
        f"    open({str(pids)!r}, 'w').write(f'{{child.pid}} {{daemon}}')\n"
        "    os._exit(0)\n"
        "time.sleep(60)\n",
    )
    started = time.monotonic()
    process = tiny_book.build()
    assert process.returncode == 1
    lines = [line for line in _output(process) if "ran out of time" in line]
    assert len(lines) == 1, _output(process)
    assert lines[0].startswith("chapters/beta.md: FAILED after ")
    assert lines[0].endswith(": code cell 2 ran out of time (3 s, trainable_cell_timeout)")
    assert "Timeout waiting" not in process.stdout + process.stderr
    assert time.monotonic() - started < 40
    child, daemon = map(int, pids.read_text().split())
    assert not _alive(child) and not _alive(daemon)


def test_a_stopped_kernel_fails_its_chapter_at_the_cell_limit(tiny_book):
    _limits(tiny_book, cell=3)
    _beta_runs(tiny_book, "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n")
    process = tiny_book.build()
    assert process.returncode == 1
    assert next(line for line in _output(process) if "beta.md: FAILED" in line).endswith(
        ": code cell 2 ran out of time (3 s, trainable_cell_timeout)"
    )


def _slow_claim(book) -> None:
    source = book.path(WITNESS)
    head, tail = source.read_text(encoding="utf-8").split(WITNESS_BODY, 1)
    docstring, rest = tail.split('"""\n', 1)
    never = "    import time\n\n    time.sleep(300)  # never returns, as far as the build knows\n"
    source.write_text(f'{head}{WITNESS_BODY}{docstring}"""\n{never}{rest}', encoding="utf-8")


def test_a_claim_out_of_time_is_killed_and_fails_the_build_in_one_line(tiny_book):
    _limits(tiny_book, claim=3)
    _slow_claim(tiny_book)
    started = time.monotonic()
    process = tiny_book.build()
    assert process.returncode == 1
    assert process.stderr.splitlines() == [
        "make: claim c15-invariance-001 ran out of time (3 s, trainable_claim_timeout)"
    ]
    assert time.monotonic() - started < 40
    # No earlier artifact stands for the computation that never ended.
    assert not tiny_book.path("artifacts/claims/c15-invariance-001.json").exists()
    assert not [
        p
        for p in psutil.process_iter(["cmdline"])
        if "compute" in (p.info["cmdline"] or [])
        and str(tiny_book.root) in " ".join(p.info["cmdline"] or [])
    ]


def _start(book, **limits) -> subprocess.Popen:
    """A build in a session of its own (as a terminal's foreground job), once beta executes."""
    _limits(book, **limits)
    _beta_runs(book, "import time\ntime.sleep(60)\n")
    driver = subprocess.Popen(
        [sys.executable, "-m", "claimbook", "build"],
        cwd=book.root,
        env=book.environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    for line in driver.stdout:
        if "chapters/beta.md: executing" in line:
            return driver
    driver.wait()
    pytest.fail("the build ended before beta executed: " + driver.stderr.read())


def _ends_alone(driver) -> tuple[str, list[psutil.Process]]:
    """Wait for the driver; its standard error, and every process it started still alive."""
    descendants = psutil.Process(driver.pid).children(recursive=True)
    _, err = driver.communicate(timeout=60)
    time.sleep(0.5)
    return err, [p for p in descendants if _alive(p.pid)]


def test_the_build_limit_ends_everything_in_one_line(tiny_book):
    driver = _start(tiny_book, build=8)
    err, left = _ends_alone(driver)
    assert driver.returncode == 1
    assert err.splitlines() == ["build: ran out of time (8 s, trainable_build_timeout)"]
    assert left == []


def test_ctrl_c_ends_the_build_in_one_line_and_leaves_nothing_running(tiny_book):
    driver = _start(tiny_book)
    time.sleep(1)
    os.killpg(driver.pid, signal.SIGINT)  # as a terminal sends it, to the whole group
    err, left = _ends_alone(driver)
    assert driver.returncode == 130
    assert err.splitlines() == ["build: interrupted"]
    assert left == []


def test_an_execution_error_names_the_cell_as_a_reader_counts_it(tiny_book):
    """An empty code cell counts (nbclient does not execute it, so no execution count)."""
    tiny_book.edit(
        "chapters/beta.md",
        "```{code-cell} ipython3\n" + BETA_CELL,
        "```{code-cell} ipython3\n```\n\n```{code-cell} ipython3\n"
        + BETA_CELL
        + "raise RuntimeError('third')\n",
    )
    process = tiny_book.build()
    assert process.returncode == 1
    assert "chapters/beta.md: FAILED" in process.stdout
    assert ": code cell 3 raised RuntimeError: third" in process.stdout


def test_a_linked_artifacts_folder_is_refused_in_one_line(tiny_book, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    tiny_book.path("artifacts").rename(elsewhere)
    tiny_book.path("artifacts").symlink_to(elsewhere)
    tiny_book.edit("chapters/alpha.md", "# Alpha", "# Alpha again")
    process = tiny_book.build()
    assert process.returncode == 2
    assert process.stderr.splitlines() == [
        f"make: artifacts/ is a link to {elsewhere}: the build writes only into the book's "
        "own folders; replace the link with a folder (nothing was changed)"
    ]
    assert process.stdout == ""


def test_a_failing_claim_is_said_once(tiny_book):
    tiny_book.edit("claims/c15-invariance-001.yaml", "value: 2.055", "value: 2.5")
    process = tiny_book.build()
    assert process.returncode == 1
    said = [line for line in _output(process) if "expected 2.5, got 2.05" in line]
    assert len(said) == 1, _output(process)


def test_another_thread_ends_the_build_in_one_line_at_once():
    """A file the build cannot write (a full disk) in one of its threads ends the build as
    Ctrl-C would, even while the main thread waits, and says why (limits.stop_build)."""
    import subprocess
    import sys

    script = (
        "import threading, time\n"
        "from claimbook.pipeline import limits\n"
        "started = time.monotonic()\n"
        "try:\n"
        "    with limits.stops(60):\n"
        "        threading.Timer(0.2, limits.stop_build, ['disk full']).start()\n"
        "        threading.Event().wait(30)\n"
        "except KeyboardInterrupt:\n"
        "    print(limits.stopped_line(), round(time.monotonic() - started))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "('build: disk full', 1) 0"
