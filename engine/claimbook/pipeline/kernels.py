"""Start, ready and stop the kernel a chapter executes on, without jupyter_client's waits
(0.2 s of IOPub silence after ``kernel_info``; polling for a killed kernel)."""

import asyncio
import contextlib
import math
import os
import shutil
import sys
import tempfile
import time
from queue import Empty

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

from claimbook import paths
from claimbook.pipeline.sandbox import sandbox_prefix
from claimbook.pipeline.workers import kill_group, socket_prefix


class ReadyClient(AsyncKernelClient):
    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Return once the kernel has answered ``kernel_info`` and reported itself idle;
        ``RuntimeError`` if it dies first or ``timeout`` seconds pass."""
        deadline = time.monotonic() + (math.inf if timeout is None else timeout)
        while True:
            self.kernel_info()
            with contextlib.suppress(Empty):
                reply = await self.shell_channel.get_msg(timeout=1)
                request = reply["parent_header"].get("msg_id")
                if reply["msg_type"] == "kernel_info_reply" and await self._idle_after(request):
                    self._handle_kernel_info_reply(reply)
                    return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    async def _idle_after(self, request: str | None) -> bool:
        """Read IOPub up to the ``idle`` status for ``request``; False after 0.2 s of silence
        (IOPub was not connected yet: the request is sent again)."""
        while True:
            try:
                message = await self.iopub_channel.get_msg(timeout=0.2)
            except Empty:
                return False
            if (
                message["msg_type"] == "status"
                and message["content"].get("execution_state") == "idle"
                and message["parent_header"].get("msg_id") == request
            ):
                return True


def start_kernel() -> AsyncKernelManager:
    """Launch a kernel in ``chapters/``, sandboxed where it can be; return its manager."""
    # Unix sockets in a private folder, not TCP ports: two kernels starting at once can pick
    # the same free port (papermill#511).
    sockets = tempfile.mkdtemp(prefix=socket_prefix())
    manager = AsyncKernelManager(
        kernel_name="python3",
        transport="ipc",
        ip=os.path.join(sockets, "kernel"),
        client_class=f"{ReadyClient.__module__}.{ReadyClient.__qualname__}",
        # In the kernel's own folder: a sandboxed kernel sees that one, not the rest of /tmp.
        connection_file=os.path.join(sockets, "kernel.json"),
    )
    prefix = sandbox_prefix(sockets)
    if prefix is not None:
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
        shutil.rmtree(sockets, ignore_errors=True)
        raise
    return manager


def stop_kernel(manager: AsyncKernelManager) -> None:
    """Kill the kernel's process group at once, reap it, and remove its socket folder."""
    kill_group(manager.provisioner.process)  # reaped now: the shutdown finds it gone at once
    with contextlib.suppress(Exception):  # a kernel that already died has nothing left to stop
        asyncio.run(manager.shutdown_kernel(now=True))
    shutil.rmtree(os.path.dirname(manager.ip), ignore_errors=True)
