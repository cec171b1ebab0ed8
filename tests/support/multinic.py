"""A multi-NIC server for real, in network namespaces of this machine (root only): the
linux_host driver's whole command path runs there (`NetnsSession` runs each command with
`ip netns exec` instead of over SSH), its data NICs veths into a leaf namespace."""

from __future__ import annotations

import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from flatfab.model.state import DeviceState, IfKind
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from flatfab.transport.ssh import CommandResult, LoggedCommand


@dataclass
class NetnsSession:
    """Stands in for SshSession: runs each command as root in a network namespace here."""

    netns: str
    log: list[LoggedCommand] = field(default_factory=list)
    is_alive: bool = False

    def open(self) -> None:
        self.is_alive = True

    def close(self) -> None:
        self.is_alive = False

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        started = time.monotonic()
        done = subprocess.run(["ip", "netns", "exec", self.netns, "sh", "-c", command],
                              input=stdin or "", capture_output=True, text=True,
                              timeout=timeout, check=False)
        self.log.append(LoggedCommand(command, mutating, done.returncode,
                                      time.monotonic() - started))
        return CommandResult(command, done.stdout, done.stderr, done.returncode)


@dataclass
class Server:
    """A server namespace with data NICs `nics` (veths into `leaf`) and management eth0."""

    netns: str
    leaf: str
    state_dir: Path

    def sh(self, command: str) -> str:
        return subprocess.run(["ip", "netns", "exec", self.netns, "sh", "-c", command],
                              capture_output=True, text=True, check=True, timeout=30).stdout

    def driver(self) -> LinuxHostDriver:
        driver = LinuxHostDriver("su1-s1", "root", None,
                                 optional_args={"state_dir": str(self.state_dir)})
        driver.session = NetnsSession(self.netns)  # type: ignore[assignment]
        return driver


def make_server(tmp: Path, nics: tuple[str, ...], mgmt: str = "172.31.250.17/24",
                ) -> tuple[Server, list[str]]:
    """Namespaces for a server and its leaves (the caller deletes the returned names)."""
    tag = uuid.uuid4().hex[:6]
    server = Server(f"ffmn-s-{tag}", f"ffmn-l-{tag}", tmp / "state")
    names = [server.netns, server.leaf]
    for netns in names:
        subprocess.run(["ip", "netns", "add", netns], check=True)
    for index, nic in enumerate(("eth0", *nics)):
        subprocess.run(["ip", "link", "add", nic, "netns", server.netns, "type", "veth",
                        "peer", "name", f"sw{index}", "netns", server.leaf], check=True)
        subprocess.run(["ip", "-n", server.leaf, "link", "set", f"sw{index}", "mtu", "9000",
                        "up"], check=True)
    server.sh(f"ip link set lo up && ip link set eth0 up && ip addr add {mgmt} dev eth0")
    return server, names


def data_nics(device: DeviceState) -> tuple[str, ...]:
    return tuple(sorted(n for n, i in device.interfaces.items() if i.kind is IfKind.NIC))
