"""A chapter's kernel with the book read-only: bubblewrap, where the machine has it.

A chapter's cells run with the author's rights, so without a sandbox a cell can write into the
science, the engine, the registry or ``.venv``. Where ``bwrap`` (Debian's ``bubblewrap``) is
installed and user namespaces allow it, each kernel runs in a mount namespace in which the
whole file system is read-only except what a kernel writes:

- the kernel's own folder (its sockets and connection file), and a ``/tmp`` of its own
  (empty, discarded with it; what of the book or of the interpreter lives under ``/tmp`` is
  bound back in, read-only);
- ``artifacts/figures/``, where a chapter saves its figures, and ``_build/notebooks/``, where
  the build's last cell notes that the chapter ran to its end;
- matplotlib's and IPython's caches in the home folder.

Nothing else changes: the kernel sees every file where it is, the network as it is, and the
same processes (no PID namespace: ipykernel ends itself when its parent looks gone). Where
``bwrap`` is missing or cannot make a namespace, kernels run as before and the build says so in
one line (:func:`notice`).

Examples
--------
>>> prefix = sandbox_prefix()
>>> prefix is None or prefix[0].endswith("bwrap")
True
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from claimbook import dependencies, paths

__all__ = ["OFF_VARIABLE", "notice", "sandbox_prefix", "writable_folders"]

OFF_VARIABLE = "TRAINABLE_KERNEL_SANDBOX"


def writable_folders() -> list[Path]:
    """The folders a kernel writes in (created here, as a bind needs them to exist)."""
    home = Path.home()
    folders = [
        paths.REPO_ROOT / "artifacts" / "figures",
        paths.BUILD_DIR / "notebooks",
        home / ".cache" / "matplotlib",
        home / ".config" / "matplotlib",
        home / ".ipython",
    ]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    return folders


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


def _under_tmp() -> list[str]:
    """Folders the kernel reads that live under /tmp (hidden by its own /tmp otherwise): the
    book, the interpreter's environment, every folder on ``sys.path``, and the folders the
    book's packages are imported from (an editable install finds them without ``sys.path``)."""
    packages = [dependencies.package_folder(top) for top in dependencies.FIRST_PARTY]
    found = []
    for folder in [
        paths.REPO_ROOT,
        Path(sys.prefix),
        *map(Path, sys.path),
        *(package.parent for package in packages if package is not None),
    ]:
        folder = folder.resolve() if str(folder) else folder
        if folder.is_dir() and folder.is_relative_to("/tmp") and str(folder) not in found:
            found.append(str(folder))
    return found


def sandbox_prefix(sockets: str | Path | None = None) -> list[str] | None:
    """The command that runs a kernel with the book read-only (``sockets``: the kernel's
    socket folder, writable), or None where the sandbox is unavailable or turned off
    (``TRAINABLE_KERNEL_SANDBOX=off`` in the build's environment; the build then says so)."""
    if os.environ.get(OFF_VARIABLE) == "off":
        return None
    bwrap = shutil.which("bwrap")
    if bwrap is None or not _bwrap_works(bwrap):
        return None
    command = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for folder in _under_tmp():
        command += ["--ro-bind", folder, folder]
    writable = [*writable_folders(), *([Path(sockets)] if sockets is not None else [])]
    for folder in writable:
        command += ["--bind", str(folder), str(folder)]
    # No --die-with-parent: Linux ties it to the thread that started bwrap, and a kernel
    # started from a thread that ends would die with it; the worker ends its kernel's group.
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
