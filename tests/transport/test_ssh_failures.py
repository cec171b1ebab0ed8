"""flatfab's SSH transport names each way a session fails in one short, true line: a refused
port, a port that accepts and never speaks SSH (within the connect timeout), a login the
device refuses, a host key known_hosts lacks or contradicts, a missing known_hosts file, and
a command that never answers (within its timeout). Real sockets on 127.0.0.1; an asyncssh
server stands in for the device."""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractContextManager
from pathlib import Path

import asyncssh
import pytest

from flatfab.transport.ssh import SshOptions, SshSession, TransportError
from tests.doubles.fleet.server import KEY_TYPE, Keys
from tests.doubles.ssh_device import ssh_device
from tests.support.sockets import closed_port, silent_listener

USER = "leaf1"


async def _echo_or_hang(process: asyncssh.SSHServerProcess[str]) -> None:
    """`echo` answers, any other command never does (the client's timeout must end it)."""
    await process.stdin.read()
    if process.command == "echo":
        process.stdout.write("hello\n")
        process.exit(0)
        return
    await asyncio.Event().wait()


def ssh_server(keys: Keys) -> AbstractContextManager[int]:
    return ssh_device(keys, _echo_or_hang)


def _session(keys: Keys, port: int, *, timeout: float = 5.0,
             known_hosts: Path | None = None, key: Path | None = None) -> SshSession:
    return SshSession(SshOptions(host="127.0.0.1", port=port, username=USER,
                                 key_file=str(key or keys.client_key),
                                 known_hosts=str(known_hosts or keys.known_hosts),
                                 timeout=timeout, sudo=False))


def _why_not_open(session: SshSession) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(TransportError) as info:
        session.open()
    return str(info.value), time.monotonic() - started


@pytest.fixture
def keys(tmp_path: Path) -> Keys:
    return Keys.make(tmp_path / "keys")


def test_a_refused_port_is_named(keys: Keys) -> None:
    port = closed_port()
    keys.write_known_hosts(port)
    why, _ = _why_not_open(_session(keys, port))
    assert why == f"connection refused by 127.0.0.1:{port}"


def test_a_port_that_never_speaks_ssh_times_out_within_the_connect_timeout(
        keys: Keys) -> None:
    with silent_listener() as port:
        keys.write_known_hosts(port)
        why, took = _why_not_open(_session(keys, port, timeout=1.0))
    assert why == f"timed out after 1 s waiting for SSH from 127.0.0.1:{port}"
    assert took < 5.0  # about the timeout: paramiko's own would wait far longer


def test_a_refused_login_is_named_with_the_user(keys: Keys, tmp_path: Path) -> None:
    other = tmp_path / "other_key"
    asyncssh.generate_private_key(KEY_TYPE).write_private_key(other)
    with ssh_server(keys) as port:
        why, _ = _why_not_open(_session(keys, port, key=other))
    assert why == f"authentication failed for {USER} on 127.0.0.1:{port}"


def test_a_host_key_known_hosts_lacks_names_the_file(keys: Keys, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with ssh_server(keys) as port:
        why, _ = _why_not_open(_session(keys, port, known_hosts=empty))
    assert why == f"host key of 127.0.0.1 not in {empty}"


def test_a_host_key_that_does_not_match_is_refused(keys: Keys, tmp_path: Path) -> None:
    impostor = Keys.make(tmp_path / "impostor")  # another host key for the same address
    with ssh_server(keys) as port:
        impostor.write_known_hosts(port)
        why, _ = _why_not_open(_session(keys, port, known_hosts=impostor.known_hosts))
    assert why == f"host key of 127.0.0.1 does not match {impostor.known_hosts}"


def test_a_missing_known_hosts_file_is_named(keys: Keys, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "known_hosts"
    why, _ = _why_not_open(_session(keys, closed_port(), known_hosts=missing))
    assert why == f"known_hosts file {missing} not found"


def test_a_command_that_never_answers_times_out_and_names_the_command(keys: Keys) -> None:
    with ssh_server(keys) as port:
        session = _session(keys, port)
        session.open()
        try:
            assert session.run("echo").stdout == "hello\n"
            started = time.monotonic()
            with pytest.raises(TransportError) as info:
                session.run("vtysh -c 'show bgp vrf all summary json'", timeout=1.0)
            took = time.monotonic() - started
        finally:
            session.close()
    assert str(info.value) == ("no answer within 1 s to "
                               "`vtysh -c 'show bgp vrf all summary json'`")
    assert 0.9 < took < 5.0
