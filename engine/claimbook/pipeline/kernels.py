"""Start, ready and stop the kernel a chapter executes on.

A chapter's worker launches its kernel first (:func:`start_kernel`), so the kernel boots
while the worker reads the chapter; papermill then connects to it with :class:`ReadyClient`
and runs the notebook; the worker stops it (:func:`stop_kernel`) once the last cell replied.

Two waits of jupyter_client's are replaced here, because a build starts one kernel a chapter
and both lie on every chapter's path (a generated chapter executes in about a second):

- Readiness. ``KernelClient.wait_for_ready`` ends by reading IOPub until 0.2 s pass with no
  message, so every kernel costs 0.2 s of nothing. :class:`ReadyClient` ends instead when
  the kernel reports itself idle after answering the ``kernel_info`` request: a kernel
  publishes ``busy`` then ``idle`` on IOPub around each request, in order, so once that idle
  arrives IOPub is connected and what the kernel said at start-up came before it. nbclient
  keeps only the messages whose parent is the request it sent, so nothing left unread can
  reach a cell's outputs.
- Stopping. ``shutdown_kernel(now=True)`` kills the process and then polls every 0.1 s until
  it has gone. :func:`stop_kernel` kills it and reaps it at once (a killed process ends
  without running any code), then lets jupyter_client clean up.
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

__all__ = [
    "ReadyClient",
    "kill_kernel",
    "remove_own_sockets",
    "remove_sockets",
    "start_kernel",
    "start_ready_kernel",
    "stop_kernel",
]

# The socket folders start_kernel made and nobody removed yet, each with the process that
# made it (a forked child copies this table, and a folder is its maker's to remove).
_SOCKET_FOLDERS: dict[str, int] = {}

# How long IOPub may stay silent after the kernel_info reply before the request is sent
# again (jupyter_client's own value): a silence that long means IOPub was not connected yet
# when the kernel published its status, so those messages were lost.
_IOPUB_SILENCE = 0.2


class ReadyClient(AsyncKernelClient):
    """A kernel client whose :meth:`wait_for_ready` ends as soon as the kernel is ready."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Return once the kernel has answered ``kernel_info`` and reported itself idle.

        Raises ``RuntimeError`` if the kernel dies first or ``timeout`` seconds pass.
        """
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
    """Launch a chapter's kernel in ``chapters/`` (as Binder runs it); return its manager.

    The manager's clients are :class:`ReadyClient`. The kernel inherits this process's
    environment, so set a chapter's variables before calling.
    """
    # Unix sockets in a folder of the kernel's own, not TCP ports: a port is chosen by binding
    # and releasing it, so two kernels starting at once can pick the same one and one dies with
    # "Address already in use" (papermill#511; it failed a benchmark run). The folder is new
    # and private, so no other kernel can take its socket names.
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


def start_ready_kernel(timeout: float = 60.0) -> tuple[AsyncKernelManager, float]:
    """Launch a kernel (:func:`start_kernel`) and wait until it is ready to run code.

    Returns the manager and the seconds the boot took. A client connects, waits
    (:meth:`ReadyClient.wait_for_ready`) and disconnects; the one that then runs the chapter
    finds the kernel ready at once.

    Raises
    ------
    RuntimeError
        If the kernel dies or is not ready within ``timeout`` seconds (it is stopped).
    """
    started = time.perf_counter()
    manager = start_kernel()
    client = manager.client()
    try:
        client.start_channels()
        asyncio.run(client.wait_for_ready(timeout=timeout))
    except BaseException:
        stop_kernel(manager)
        raise
    finally:
        client.stop_channels()
    return manager, time.perf_counter() - started


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
    """Kill and reap the kernel, every process it started, and remove its socket folder.

    The kernel runs in a session and process group of its own (jupyter_client launches it
    with ``start_new_session``); the whole group is killed, and with it any process a cell
    started and left running there. A process that left the group (a cell's own
    ``start_new_session``, a daemon that forked twice) is found as the kernel's descendant,
    or, once orphaned, as a child of this process (a chapter worker is a child subreaper:
    :func:`claimbook.pipeline.workers.start_worker`) that inherited the kernel's
    ``JPY_PARENT_PID``. Runs no event loop; jupyter_client's shutdown, if run after it,
    finds the kernel gone.
    """
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
    """The kernel's process and its descendants, and this process's children that a kernel
    of this process started (orphans reparented here), with their descendants."""
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
    """Remove every socket folder this process's :func:`start_kernel` made and left.

    For a worker ended by a signal (:func:`claimbook.pipeline.workers.end_worker`), whose kernels'
    managers are wherever the interrupted code held them. A folder made by the process this
    one was forked from stays: it is that process's.
    """
    for folder, maker in list(_SOCKET_FOLDERS.items()):
        if maker == os.getpid():
            _remove_folder(folder)


def _remove_folder(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    _SOCKET_FOLDERS.pop(folder, None)
