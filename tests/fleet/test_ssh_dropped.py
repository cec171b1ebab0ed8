"""A device that ends the SSH connection mid-run is named as having done so.

paramiko gives the command it ended during an exit status of -1 ("none came"): a failed
command; for the next one its words are "Unable to open channel." or "SSH session not
active" (the server said goodbye with an SSH disconnect message, so paramiko saves no
error): true, but they hide that the device hung up.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncssh
import pytest

from flatfab.transport.ssh import SshOptions, SshSession, TransportError
from tests.doubles.fleet.server import Keys


@contextmanager
def hanging_up(keys: Keys) -> Iterator[int]:
    """An SSH server on 127.0.0.1 that answers `echo`, and ends the connection on `bye`."""
    loop = asyncio.new_event_loop()
    client_key = asyncssh.read_private_key(keys.client_key).convert_to_public()

    class Server(asyncssh.SSHServer):
        def begin_auth(self, username: str) -> bool:
            return True

        def public_key_auth_supported(self) -> bool:
            return True

        def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
            return key.public_data == client_key.public_data

    async def handle(process: asyncssh.SSHServerProcess[str]) -> None:
        await process.stdin.read()
        if process.command == "bye":
            process.channel.get_connection().disconnect(
                asyncssh.DISC_BY_APPLICATION, "going away")
            return
        process.stdout.write("hello\n")
        process.exit(0)

    async def start() -> asyncssh.SSHAcceptor:
        return await asyncssh.create_server(
            Server, "127.0.0.1", 0, server_host_keys=[str(keys.host_key)],
            process_factory=handle)

    acceptor = loop.run_until_complete(start())
    port = acceptor.sockets[0].getsockname()[1]
    keys.write_known_hosts(port)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(acceptor.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def test_a_connection_the_device_ended_is_named(tmp_path: Path) -> None:
    keys = Keys.make(tmp_path)
    with hanging_up(keys) as port:
        session = SshSession(SshOptions(
            host="127.0.0.1", port=port, username="leaf1", key_file=str(keys.client_key),
            known_hosts=str(keys.known_hosts), sudo=False))
        session.open()
        try:
            assert session.run("echo").stdout == "hello\n"
            during = session.run("bye")  # the device hangs up while answering
            time.sleep(0.5)  # its reader thread sees the connection end
            with pytest.raises(TransportError) as after:
                session.run("echo")
        finally:
            session.close()
    assert not during.ok  # paramiko's -1: no exit status came
    assert str(after.value).startswith("127.0.0.1: echo: the device closed the SSH connection (")
