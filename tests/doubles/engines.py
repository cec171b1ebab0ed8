"""Linux hosts running `flatfab accept`'s engines, as doubles of their SSH sessions.

EngineShell stands in for a LinuxHostDriver's session: it answers the scripts of
flatfab.platforms.linux_host.acceptance (start a server in the background, stop and reap it,
run a client under timeout, find a NIC's RoCE v2 GID) as a host would print them, and keeps
what ran. The client's report is iperf3's documented -J output
(tests/fixtures/acceptance/iperf3/tcp_single_stream.json) with the received figure set to
what `figure(host, server address)` says, so a test decides which pairs are slow.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from flatfab.platforms.linux_host.acceptance import MARK
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from flatfab.transport.ssh import CommandResult, LoggedCommand
from tests.support.paths import FIXTURES

IPERF3_REPORT = FIXTURES / "acceptance" / "iperf3" / "tcp_single_stream.json"
HANDLE = "/tmp/flatfab-accept.AbC123"


def iperf3_report(gbps: float) -> str:
    """The documented single-stream report, received figure `gbps`."""
    report = json.loads(IPERF3_REPORT.read_text(encoding="utf-8"))
    bits = gbps * 1e9
    report["end"]["sum_received"]["bits_per_second"] = bits
    for stream in report["end"]["streams"]:
        stream["receiver"]["bits_per_second"] = bits
    return json.dumps(report)


@dataclass
class EngineShell:
    """A host's session: `figure(host, server address)` is the client's Gb/s (None: the
    client times out); `listens` False: the server never listens; `gid`: the RDMA device
    and GID index its NIC has (None: none)."""

    host: str
    figure: Callable[[str, str], float | None] = lambda host, server: 10.0
    listens: bool = True
    gid: tuple[str, int] | None = None
    log: list[LoggedCommand] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)  # the engines' argv, as run

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        assert not mutating, "an engine never changes the host"
        self.log.append(LoggedCommand(command, mutating, 0, 0.0))
        out, status = self._answer(command)
        return CommandResult(command, out, "", status)

    def _answer(self, command: str) -> tuple[str, int]:
        if command.startswith("d=$(mktemp -d /tmp/flatfab-accept."):
            quoted = re.search(r"\"\$d\" ('[^']*')", command)
            assert quoted is not None, command
            self.ran.append(shlex.split(quoted.group(1))[0])
            listening = f"{MARK} listening\n" if self.listens else ""
            return f"{MARK} handle {HANDLE}\n{listening}", 0
        if command.startswith(f"d={HANDLE};"):
            return f"{MARK} rc 0\n{MARK} err\n{MARK} out\n{{}}\n", 0
        if command.startswith("for g in /sys/class/infiniband/"):
            return ("" if self.gid is None else f"{MARK} gid {self.gid[0]} {self.gid[1]}\n"), 0
        if command.startswith("timeout -k "):
            argv = shlex.split(command)[4:]  # after `timeout -k N SECONDS`
            self.ran.append(shlex.join(argv))
            server = argv[argv.index("-c") + 1]
            gbps = self.figure(self.host, server)
            return ("", 124) if gbps is None else (iperf3_report(gbps), 0)
        raise AssertionError(f"{self.host}: no answer for {command!r}")


def engine_host(name: str, **kwargs: object) -> tuple[LinuxHostDriver, EngineShell]:
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None,
                             optional_args={"read_only": True})
    shell = EngineShell(name, **kwargs)  # type: ignore[arg-type]
    driver.session = shell
    return driver, shell
