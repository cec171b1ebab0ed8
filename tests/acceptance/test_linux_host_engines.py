"""The linux_host side of `flatfab accept`: its scripts run for real in this machine's
shell (the driver's SSH shell replaced by a local one): a server started in the background
listens, serves one iperf3 test and is reaped with its output; one that never ends is killed
with everything it started; one that never listens is named with what it said. Nothing is
left behind under /tmp."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from flatfab.acceptance.engines.base import PairSpec, Side
from flatfab.acceptance.engines.iperf3 import Iperf3Engine, parse
from flatfab.platforms.base import NotSupportedError
from flatfab.platforms.linux_host import PLATFORM
from flatfab.platforms.linux_host import acceptance as host
from flatfab.transport.ssh import CommandResult
from tests.support.sockets import closed_port


class LocalShell:
    """A host's shell, here: what the driver's _run runs over SSH, run by sh."""

    hostname = "localhost"

    def __init__(self) -> None:
        self.commands: list[str] = []

    def _run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
             check: bool = True, timeout: float | None = None) -> CommandResult:
        assert not mutating and not check  # a test engine changes nothing, fails softly
        self.commands.append(command)
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                              timeout=timeout, check=False)
        return CommandResult(command, done.stdout, done.stderr, done.returncode)


def _left(handle: str | None) -> bool:
    return handle is not None and Path(handle).exists()


def test_the_platform_declares_and_implements_the_engines() -> None:
    assert PLATFORM.facts.capabilities.acceptance_engines


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_a_background_iperf3_server_serves_one_test_and_is_reaped() -> None:
    shell = LocalShell()
    port = closed_port()
    spec = PairSpec(server=Side(address="127.0.0.1"), client=Side(address="127.0.0.1"),
                    port=port, duration_s=1)
    engine = Iperf3Engine()
    server = host.run_engine(shell, engine.server_argv(spec), 15, background=True,  # type: ignore[arg-type]
                             listens_on=port)
    assert server.handle is not None and _left(server.handle)
    client = host.run_engine(shell, engine.client_argv(spec), 15)  # type: ignore[arg-type]
    assert client.exit_status == 0 and parse(client.output).gbps > 0
    stopped = host.stop_engine(shell, server.handle, 5)  # type: ignore[arg-type]
    assert stopped.exit_status == 0 and parse(stopped.output).gbps > 0  # -s -1: it ended
    assert not _left(server.handle)


def test_a_server_that_never_ends_is_killed_with_all_it_started() -> None:
    shell = LocalShell()
    marker = "sleep 31.4159"
    started = host.run_engine(shell, ["sh", "-c", marker], 60, background=True)  # type: ignore[arg-type]
    stopped = host.stop_engine(shell, str(started.handle), 0.3)  # type: ignore[arg-type]
    assert stopped.exit_status is None  # killed: never read as a success
    alive = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True,
                           check=False)
    assert alive.stdout == "" and not _left(started.handle)


def test_a_server_that_never_listens_is_named_with_what_it_said() -> None:
    shell = LocalShell()
    with pytest.raises(RuntimeError, match=r"never listened on TCP port \d+: address in use"):
        host.run_engine(shell, ["sh", "-c", "echo 'address in use' >&2; exit 1"], 10,  # type: ignore[arg-type]
                        background=True, listens_on=closed_port())
    assert shell.commands[-1].startswith("d=/tmp/flatfab-accept.")  # stopped and removed


def test_a_client_past_its_timeout_has_no_exit_status() -> None:
    done = host.run_engine(LocalShell(), ["sleep", "5"], 1)  # type: ignore[arg-type]
    assert done.exit_status is None


def test_a_nic_without_a_roce_gid_says_so() -> None:
    with pytest.raises(NotSupportedError, match=r"eth9 has no RDMA device with a RoCE v2 GID "
                                                r"of 192\.0\.2\.1"):
        host.rdma_side(LocalShell(), "eth9", "192.0.2.1")  # type: ignore[arg-type]


def test_the_gid_script_looks_for_the_ipv4_mapped_gid_of_the_address() -> None:
    script = host.rdma_script("eth1", "10.100.1.11")
    assert "= 0000:0000:0000:0000:0000:ffff:0a64:010b ]" in script
    assert '"RoCE v2"' in script and "ndevs" in script
