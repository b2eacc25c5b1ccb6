"""A chapter's kernel with the book read-only: bubblewrap, where the machine has it
(docs/threat-model.md); elsewhere kernels run unsandboxed and the build says so.

>>> prefix = sandbox_prefix()
>>> prefix is None or prefix[0].endswith("bwrap")
True
"""

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from claimbook import dependencies, paths

OFF_VARIABLE = "TRAINABLE_KERNEL_SANDBOX"


@functools.cache
def _bwrap_works(bwrap: str) -> bool:
    """Whether ``bwrap`` can make a read-only namespace here (one trial per process)."""
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--", "/bin/true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def book_folders() -> list[Path]:
    """The folders this process imports the book's packages from (``sys.path`` entries)."""
    packages = [dependencies.package_folder(top) for top in dependencies.FIRST_PARTY]
    return list(dict.fromkeys(package.parent for package in packages if package is not None))


def sandbox_prefix(sockets: str | Path | None = None) -> list[str] | None:
    """The command prefix that runs a kernel with all read-only but ``sockets``, a ``/tmp`` of
    its own, the figures and matplotlib's and IPython's caches; None where bwrap fails or
    ``TRAINABLE_KERNEL_SANDBOX=off``."""
    if os.environ.get(OFF_VARIABLE) == "off":
        return None
    bwrap = shutil.which("bwrap")
    if bwrap is None or not _bwrap_works(bwrap):
        return None
    command = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # What of the book, the interpreter's environment and sys.path lives under /tmp, which
    # the kernel's own /tmp would hide, bound back read-only.
    read = [paths.REPO_ROOT, Path(sys.prefix), *map(Path, sys.path), *book_folders()]
    for folder in dict.fromkeys(str(folder.resolve()) for folder in read):
        if Path(folder).is_dir() and Path(folder).is_relative_to("/tmp"):
            command += ["--ro-bind", folder, folder]
    # The folders a kernel writes in (made here: a bind needs them to exist).
    home = Path.home()
    writable = [
        paths.REPO_ROOT / "artifacts" / "figures",
        home / ".cache" / "matplotlib",
        home / ".config" / "matplotlib",
        home / ".ipython",
    ]
    for folder in writable:
        folder.mkdir(parents=True, exist_ok=True)
    for folder in [*writable, *([Path(sockets)] if sockets is not None else [])]:
        command += ["--bind", str(folder), str(folder)]
    # No --die-with-parent: Linux ties it to the starting thread; the worker ends the kernel.
    return [*command, "--"]


def notice() -> str | None:
    """One line for the build when kernels run without the sandbox; None when they have it."""
    if sandbox_prefix() is not None:
        return None
    if os.environ.get(OFF_VARIABLE) == "off":
        return f"build: chapter kernels run without their read-only sandbox ({OFF_VARIABLE}=off)"
    return (
        "build: chapter kernels run without a read-only sandbox here (bubblewrap's bwrap is "
        "missing or cannot make a namespace); see docs/threat-model.md"
    )
