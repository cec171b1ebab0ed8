"""A device that ends the SSH connection mid-run is named as having done so.

paramiko gives the command it ended during an exit status of -1 ("none came"): a failed
command; for the next one its words are "Unable to open channel." or "SSH session not
active" (the server said goodbye with an SSH disconnect message, so paramiko saves no
error): true, but they hide that the device hung up.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from pathlib import Path

import asyncssh
import pytest

from flatfab.transport.ssh import SshOptions, SshSession, TransportError
from tests.doubles.fleet.server import Keys
from tests.doubles.ssh_device import ssh_device


async def _echo_or_hang_up(process: asyncssh.SSHServerProcess[str]) -> None:
    """Answers `echo`, and ends the connection on `bye`."""
    await process.stdin.read()
    if process.command == "bye":
        process.channel.get_connection().disconnect(asyncssh.DISC_BY_APPLICATION,
                                                    "going away")
        return
    process.stdout.write("hello\n")
    process.exit(0)


def hanging_up(keys: Keys) -> AbstractContextManager[int]:
    """An SSH server on 127.0.0.1 that answers `echo`, and ends the connection on `bye`."""
    return ssh_device(keys, _echo_or_hang_up)


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
