"""Time limits of the build (``trainable_{cell,claim,build}_timeout`` in ``_config.yml``, in
seconds), and how a build stops in one line.

>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as root:
...     _ = (Path(root) / "_config.yml").write_text("trainable_cell_timeout: 3\\n")
...     read_limits(root)
Limits(cell=3.0, claim=600.0, build=1800.0)
"""

import contextlib
import signal
import threading
from pathlib import Path
from typing import NamedTuple

import yaml

from claimbook import paths
from claimbook.errors import BuildError

_STOPPED_BECAUSE: list[str] = []  # why another thread stopped the build (stop_build)


class Limits(NamedTuple):
    cell: float = 300.0
    claim: float = 600.0
    build: float = 1800.0


class BuildTimeout(KeyboardInterrupt):
    """The build ran out of time: a stop from outside, as Ctrl-C is, so the same cleanup runs."""


def read_limits(root: str | Path | None = None) -> Limits:
    """The limits ``<root>/_config.yml`` (default the book's) sets, or their defaults;
    BuildError if it cannot be parsed or a limit is not a positive number of seconds."""
    path = Path(root if root is not None else paths.REPO_ROOT) / "_config.yml"
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        config = {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as error:
        raise BuildError(f"{paths.shown(path)} cannot be read: {error}") from None
    config = config if isinstance(config, dict) else {}
    values = {}
    for field, default in Limits._field_defaults.items():
        name = f"trainable_{field}_timeout"
        value = config.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e7:
            raise BuildError(
                f"{paths.shown(path)}: {name} must be a positive number of seconds, got {value!r}"
            )
        values[field] = float(value)
    return Limits(**values)


@contextlib.contextmanager
def stops(build_seconds: float):
    """Within the block, raise BuildTimeout after ``build_seconds`` and KeyboardInterrupt on
    SIGINT, in the main thread; a second signal is ignored, so that the cleanup runs."""

    def stop(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        raise BuildTimeout(build_seconds) if signum == signal.SIGALRM else KeyboardInterrupt

    previous_int = signal.signal(signal.SIGINT, stop)
    previous_alarm = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, build_seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_alarm)
        signal.signal(signal.SIGINT, previous_int)


def stop_build(reason: str) -> None:
    """End the build from another of its threads as Ctrl-C would, saying ``reason``."""
    if not _STOPPED_BECAUSE:
        _STOPPED_BECAUSE.append(reason)
        # A signal, not _thread.interrupt_main: the main thread may be blocked waiting.
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def stopped_line(error: BaseException) -> tuple[str, int]:
    """The one line and exit status of a build :func:`stops` ended with ``error``."""
    if _STOPPED_BECAUSE:
        return f"build: {_STOPPED_BECAUSE[0]}", 1
    if isinstance(error, BuildTimeout):
        return f"build: ran out of time ({error.args[0]:g} s, trainable_build_timeout)", 1
    return "build: interrupted", 130
