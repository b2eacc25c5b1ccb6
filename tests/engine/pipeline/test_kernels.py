"""``claimbook.pipeline.kernels``: a chapter's kernel started, found ready and stopped."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from queue import Empty

import pytest

from claimbook.pipeline import kernels


class _Channel:
    """An IOPub channel that hands out the given messages, then stays silent."""

    def __init__(self, messages: list[dict]) -> None:
        self.messages = list(messages)
        self.read = 0

    async def get_msg(self, timeout: float) -> dict:
        if not self.messages:
            raise Empty
        self.read += 1
        return self.messages.pop(0)


def _status(state: str, parent: str) -> dict:
    return {
        "msg_type": "status",
        "content": {"execution_state": state},
        "parent_header": {"msg_id": parent},
    }


class _Client(kernels.ReadyClient):
    channel: _Channel

    @property
    def iopub_channel(self):
        return self.channel


def _idle_after(messages: list[dict], request: str) -> tuple[bool, int]:
    client = _Client()
    client.channel = _Channel(messages)
    return asyncio.run(client._idle_after(request)), client.channel.read


def test_ready_once_the_kernel_is_idle_after_the_request_not_after_a_silence():
    messages = [
        _status("starting", ""),
        _status("busy", "info-1"),
        _status("idle", "info-1"),  # an earlier request's idle is not the one awaited
        _status("busy", "info-2"),
        _status("idle", "info-2"),
        _status("busy", "later"),  # left unread: nbclient reads only its own request's
    ]
    assert _idle_after(messages, "info-2") == (True, 5)


def test_silence_before_the_idle_means_iopub_was_not_connected_and_the_request_is_resent():
    assert _idle_after([_status("busy", "info-1")], "info-1") == (False, 1)
    assert _idle_after([], "info-1") == (False, 0)


def _runs_code(manager, ready_within: float) -> None:
    """A client of ``manager``'s kernel finds it ready within the time given and runs code."""
    client = manager.client()
    client.start_channels()
    try:
        asyncio.run(client.wait_for_ready(timeout=ready_within))
        reply = asyncio.run(client.execute_interactive("print(6 * 7)", timeout=60))
        assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()


@pytest.mark.book  # starts kernels
def test_kernels_started_at_once_talk_over_private_sockets_removed_when_they_stop():
    with ThreadPoolExecutor(2) as pool:
        managers = list(pool.map(lambda _: kernels.start_kernel(), range(2)))
    folders = [os.path.dirname(manager.ip) for manager in managers]
    processes = [manager.provisioner.process for manager in managers]
    try:
        assert [manager.transport for manager in managers] == ["ipc", "ipc"]
        assert folders[0] != folders[1]  # no names to share, so none to race for
        for manager, folder in zip(managers, folders, strict=True):
            assert os.stat(folder).st_mode & 0o077 == 0  # the creator's alone
            assert isinstance(manager.client(), kernels.ReadyClient)
            _runs_code(manager, ready_within=60)
            sockets = [f"kernel-{port}" for port in range(1, 6)]
            assert sorted(os.listdir(folder)) == sorted(["kernel.json", *sockets])
    finally:
        for manager in managers:
            kernels.stop_kernel(manager)
    assert not any(os.path.exists(folder) for folder in folders)
    assert all(process.poll() is not None for process in processes)  # ended and reaped


@pytest.mark.book  # starts a kernel
def test_waiting_on_a_kernel_that_died_says_so():
    manager = kernels.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        manager.provisioner.process.kill()
        manager.provisioner.process.wait()
        with pytest.raises(RuntimeError, match="died"):
            asyncio.run(client.wait_for_ready(timeout=30))
    finally:
        client.stop_channels()
        kernels.stop_kernel(manager)
