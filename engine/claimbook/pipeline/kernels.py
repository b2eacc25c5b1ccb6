"""Start, ready and stop the kernel a chapter executes on.

The worker launches its kernel first (:func:`start_kernel`), so it boots while the chapter is
read; papermill connects with :class:`ReadyClient`; :func:`stop_kernel` stops it once the last
cell replied. Two of jupyter_client's waits are replaced, each on every chapter's path:
``wait_for_ready`` ends with 0.2 s of IOPub silence, where :class:`ReadyClient` ends at the
kernel's ``idle`` after its ``kernel_info`` reply (nbclient keeps only messages whose parent
is its own request); ``shutdown_kernel(now=True)`` polls every 0.1 s for the killed process,
where :func:`stop_kernel` kills and reaps it first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
from queue import Empty

import psutil
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

from claimbook import paths
from claimbook.pipeline.sandbox import sandbox_prefix

# The socket folders start_kernel made and nobody removed yet, each with the process that
# made it (a forked child copies this table, and a folder is its maker's to remove).
_SOCKET_FOLDERS: dict[str, int] = {}

# IOPub silence after the kernel_info reply that means it was not connected yet, and the
# request is sent again (jupyter_client's value).
_IOPUB_SILENCE = 0.2


class ReadyClient(AsyncKernelClient):
    """A kernel client whose :meth:`wait_for_ready` ends as soon as the kernel is ready."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Return once the kernel has answered ``kernel_info`` and reported itself idle;
        ``RuntimeError`` if it dies first or ``timeout`` seconds pass."""
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                if await self._idle_after(reply["parent_header"].get("msg_id")):
                    self._handle_kernel_info_reply(reply)
                    return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    async def _idle_after(self, request: str | None) -> bool:
        """Read IOPub up to the kernel's ``idle`` status for ``request``; False if silent."""
        while True:
            try:
                message = await self.iopub_channel.get_msg(timeout=_IOPUB_SILENCE)
            except Empty:
                return False
            if (
                message["msg_type"] == "status"
                and message["content"].get("execution_state") == "idle"
                and message["parent_header"].get("msg_id") == request
            ):
                return True


def start_kernel() -> AsyncKernelManager:
    """Launch a kernel in ``chapters/`` with this process's environment; return its manager
    (whose clients are :class:`ReadyClient`)."""
    # Unix sockets in a private folder, not TCP ports: two kernels starting at once can pick
    # the same free port (papermill#511).
    sockets = tempfile.mkdtemp(prefix="trainable-kernel-")
    _SOCKET_FOLDERS[sockets] = os.getpid()
    manager = AsyncKernelManager(
        kernel_name="python3",
        transport="ipc",
        ip=os.path.join(sockets, "kernel"),
        client_class=f"{ReadyClient.__module__}.{ReadyClient.__qualname__}",
        # In the kernel's own folder: a sandboxed kernel sees that one, not the rest of /tmp.
        connection_file=os.path.join(sockets, "kernel.json"),
    )
    prefix = sandbox_prefix(sockets)
    if prefix is not None:  # the book read-only for the chapter's cells (.sandbox)
        launcher = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        manager.kernel_spec.argv = [*prefix, *launcher]
    try:
        asyncio.run(
            manager.start_kernel(
                cwd=str(paths.CHAPTERS_DIR),
                # The kernel's own log is noise here; a failing cell is reported by papermill.
                extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
            )
        )
    except BaseException:
        _remove_folder(sockets)
        raise
    return manager


def stop_kernel(manager: AsyncKernelManager) -> None:
    """Stop the kernel at once: every output has arrived, and cells wrote their files."""
    kill_kernel(manager)  # reaped now, so the shutdown below finds it gone without polling
    try:
        asyncio.run(manager.shutdown_kernel(now=True))
    except Exception:  # a kernel that already died has nothing left to stop
        pass
    finally:  # its socket folder (see start_kernel); the shutdown removed the sockets
        remove_sockets(manager)


def kill_kernel(manager: AsyncKernelManager) -> None:
    """Kill and reap the kernel, its process group, every process it started (descendants,
    and orphans reparented to this subreaper with the kernel's ``JPY_PARENT_PID``), and
    remove its socket folder. Runs no event loop."""
    process = getattr(manager.provisioner, "process", None)
    group = getattr(manager.provisioner, "pgid", None)
    doomed = _kernel_processes(process)
    if group:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
    for found in doomed:
        with contextlib.suppress(Exception):
            found.kill()
    with contextlib.suppress(OSError):
        if process is not None and process.poll() is None:
            process.kill()
        if process is not None:
            process.wait()
    psutil.wait_procs([p for p in doomed if process is None or p.pid != process.pid], timeout=1)
    remove_sockets(manager)


def _kernel_processes(process) -> list:
    """The kernel's process and descendants, and this process's children a kernel of this
    process started, with theirs."""
    found: dict[int, psutil.Process] = {}

    def add(root: psutil.Process) -> None:
        with contextlib.suppress(psutil.Error):
            for member in (root, *root.children(recursive=True)):
                found.setdefault(member.pid, member)

    if process is not None and process.poll() is None:
        with contextlib.suppress(psutil.Error):
            add(psutil.Process(process.pid))
    me = str(os.getpid())
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children():
            with contextlib.suppress(psutil.Error):
                if child.environ().get("JPY_PARENT_PID") == me:
                    add(child)
    return list(found.values())


def remove_sockets(manager: AsyncKernelManager) -> None:
    """Remove the folder :func:`start_kernel` made for the kernel's sockets, if it is there."""
    _remove_folder(os.path.dirname(manager.ip))


def remove_own_sockets() -> None:
    """Remove every socket folder this process (not its parent) made and left: for a worker
    ended by a signal (:func:`.workers.end_worker`)."""
    for folder, maker in list(_SOCKET_FOLDERS.items()):
        if maker == os.getpid():
            _remove_folder(folder)


def _remove_folder(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    _SOCKET_FOLDERS.pop(folder, None)
