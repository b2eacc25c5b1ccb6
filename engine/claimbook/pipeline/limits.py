"""Time limits of the build (``trainable_{cell,claim,build}_timeout`` in ``_config.yml``, in
seconds), and how a build stops in one line."""

import contextlib
import signal
import threading
from pathlib import Path
from typing import NamedTuple

import yaml

from claimbook import paths
from claimbook.errors import BuildError

_STOPPED_BECAUSE: list[str] = []  # why the build was stopped, unless by Ctrl-C


class Limits(NamedTuple):
    cell: float = 300.0
    claim: float = 600.0
    build: float = 1800.0


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
    """Within the block, raise KeyboardInterrupt in the main thread on SIGINT, and after
    ``build_seconds`` (the same cleanup as Ctrl-C); a second signal is ignored."""

    def stop(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        if signum == signal.SIGALRM:
            _STOPPED_BECAUSE.append(
                f"ran out of time ({build_seconds:g} s, trainable_build_timeout)"
            )
        raise KeyboardInterrupt

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


def stopped_line() -> tuple[str, int]:
    """The one line and exit status of a build :func:`stops` or :func:`stop_build` ended."""
    if _STOPPED_BECAUSE:
        return f"build: {_STOPPED_BECAUSE[0]}", 1
    return "build: interrupted", 130
