"""A one-device SSH server on 127.0.0.1 for transport tests: asyncssh logs in the fleet's
client key (tests/doubles/fleet/server.py `Keys`) and hands each command to the test's own
handler, so each test says only how its device answers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import asyncssh

from tests.doubles.fleet.server import Keys

Handler = Callable[[asyncssh.SSHServerProcess[str]], Awaitable[None]]


@contextmanager
def ssh_device(keys: Keys, handle: Handler) -> Iterator[int]:
    """The server's port (its host key written to the keys' known_hosts), until the end of
    the block."""
    loop = asyncio.new_event_loop()
    client_key = asyncssh.read_private_key(keys.client_key).convert_to_public()

    class Server(asyncssh.SSHServer):
        def begin_auth(self, username: str) -> bool:
            return True

        def public_key_auth_supported(self) -> bool:
            return True

        def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
            return key.public_data == client_key.public_data

    async def start() -> asyncssh.SSHAcceptor:
        return await asyncssh.create_server(
            Server, "127.0.0.1", 0, server_host_keys=[str(keys.host_key)],
            process_factory=handle)

    acceptor = loop.run_until_complete(start())
    port = int(acceptor.sockets[0].getsockname()[1])
    keys.write_known_hosts(port)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(acceptor.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
