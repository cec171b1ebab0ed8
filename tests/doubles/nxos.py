"""A stateful double of an NX-OS switch that stands in for scrapli's NXOSDriver.

It answers `send_command` / `send_configs` the way the switch's commit mechanism behaves
(Cisco N9K System Management guide, "Performing Configuration Replace"; "Rollback"):
a running config, files on bootflash (written by `copy running-config` and by tclsh),
`configure replace <file> [commit-timeout <s>]` that applies the whole file and, with a
timer, restores the previous config when `configure replace commit` does not come in time
(the clock is the test's: `advance()` lets the timer run out), `rollback running-config
file`, and a log of every command. Show commands with `| json` answer from recorded
outputs (tests/fixtures/nxos/, derived from Cisco's documentation).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flatfab.model.state import DeviceState
from flatfab.platforms.nxos import PLATFORM
from tests.doubles import CollectCase
from tests.support.nxos import nxos_fabric

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nxos"
FACTORY = """version 10.3(4a) Bios:version 05.47
username admin password 5 $5$flatfab$notarealhash role network-admin
feature nxapi
ssh key rsa 2048
class-map type qos match-any OPERATOR-MGMT
  match dscp 16
vrf context management
  ip route 0.0.0.0/0 192.0.2.1
interface mgmt0
  vrf member management
  ip address 192.0.2.10/24
boot nxos bootflash:/nxos64-cs.10.3.4a.M.bin
"""
INVALID = "% Invalid command at '^' marker."


@dataclass
class Reply:
    """Shaped like scrapli's Response: what the driver reads of it."""

    channel_input: str
    result: str
    failed: bool = False


class MultiReply(list[Reply]):
    @property
    def failed(self) -> bool:
        return any(r.failed for r in self)


def _body(config: str) -> str:
    """A config as NX-OS keeps it: no comments, no blank lines."""
    return "".join(f"{line.rstrip()}\n" for line in config.splitlines()
                   if line.strip() and not line.lstrip().startswith("!"))


class NxosDouble:
    """The switch, as scrapli's connection to it."""

    def __init__(self, running: str = FACTORY, recorded: dict[str, str] | None = None,
                 *, refuse: tuple[str, ...] = ()) -> None:
        self.auth_strict_key = True
        self.running = _body(running)
        self.startup = self.running
        self.files: dict[str, str] = {}
        self.recorded = dict(recorded or {})
        self.refuse = refuse  # lines configure replace fails on (a bad patch)
        self.now = 0.0
        self.pending: tuple[str, float] | None = None  # (config before, deadline)
        self.status = "Last operation : None\n"
        self.log: list[str] = []
        self._tcl: tuple[str, list[str]] | None = None

    # ---- time -----------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self._expire()

    def _expire(self) -> None:
        if self.pending is not None and self.now >= self.pending[1]:
            self.running = self.pending[0]
            self.pending = None
            self.status = ("Last operation : Config-replace\nDetails:\n  Rollback Status: "
                           "Success\n  Operation Status: Commit timer expired, rolled back\n")

    # ---- exec mode --------------------------------------------------------------------------

    def send_command(self, command: str, **_: Any) -> Reply:
        self._expire()
        self.log.append(command)
        return Reply(command, *self._exec(command))

    def _exec(self, command: str) -> tuple[str, bool]:
        if command == "show running-config":
            return "!Command: show running-config\n!Time: Wed Nov 25 13:00:00 2026\n\n" \
                + self.running, False
        if command == "show startup-config":
            return self.startup, False
        if command == "show config-replace status":
            if self.pending is not None:
                return ("Last operation : Config-replace\nDetails:\n  Operation Status: "
                        "Waiting for commit\n"), False
            return self.status, False
        if command in self.recorded:
            return self.recorded[command], False
        if m := re.fullmatch(r"copy running-config (\S+)", command):
            if m[1] == "startup-config":
                self.startup = self.running
            else:
                self.files[m[1]] = self.running
            return "Copy complete.", False
        if m := re.fullmatch(r"dir (\S+)", command):
            if m[1] in self.files:
                return f"      {len(self.files[m[1]])}    Nov 25 13:00:00 2026  " \
                       f"{m[1].split(':', 1)[1]}\n", False
            return "No such file or directory", False
        if m := re.fullmatch(r"configure replace (\S+)(?: commit-timeout (\d+))?", command):
            if m[1] == "commit":
                if self.pending is None:
                    return "No configure replace is waiting for commit", True
                self.pending = None
                self.status = "Last operation : Config-replace\nDetails:\n  Operation " \
                              "Status: Success\n"
                return "Configure replace committed", False
            return self._replace(m[1], int(m[2]) if m[2] else None)
        if m := re.fullmatch(r"rollback running-config file (\S+)", command):
            if m[1] not in self.files:
                return "Rollback failed: no such file", False
            self.running = _body(self.files[m[1]])
            self.pending = None  # the rollback ends the replace that waited for its commit
            self.status = "Last operation : Rollback\nDetails:\n  Operation Status: Success\n"
            return "Rollback completed successfully.", False
        return INVALID, True

    def _replace(self, path: str, timeout: int | None) -> tuple[str, bool]:
        if self.pending is not None:
            return "Configure replace failed: a commit is pending", False
        if path not in self.files:
            return f"Configure replace failed: {path} not found", False
        content = _body(self.files[path])
        bad = [line for line in content.splitlines() if line.strip() in self.refuse]
        if bad:
            # NX-OS restores the previous running config when the patch fails
            return f"Configure replace failed: `{bad[0].strip()}` rejected, rolled back", False
        if timeout is not None:
            if not 30 <= timeout <= 3600:
                return "% Invalid parameter detected", True
            self.pending = (self.running, self.now + timeout)
        self.running = content
        return "Configure replace completed successfully.", False

    # ---- config mode and tclsh ---------------------------------------------------------------

    def send_configs(self, configs: list[str], *, privilege_level: str = "",
                     **_: Any) -> MultiReply:
        self._expire()
        replies = MultiReply()
        for line in configs:
            self.log.append(f"{privilege_level or 'configuration'}: {line}")
            replies.append(Reply(line, *self._config(line, privilege_level == "tclsh")))
        return replies

    def _config(self, line: str, tcl: bool) -> tuple[str, bool]:
        if tcl:
            if m := re.fullmatch(r'set fl \[open "/bootflash/(\S+)" w\+\]', line):
                self._tcl = (f"bootflash:{m[1]}", [])
            elif (m := re.fullmatch(r"puts -nonewline \$fl \{(.*)\n\}", line, re.S)) \
                    and self._tcl is not None:
                self._tcl[1].append(m[1] + "\n")
            elif line == "close $fl" and self._tcl is not None:
                self.files[self._tcl[0]] = "".join(self._tcl[1])
                self._tcl = None
            else:
                return "invalid command name", True
            return "", False
        self.running += line + "\n"  # a merge: lines land in the running config as given
        return "", False


# ---- recorded outputs for collect ---------------------------------------------------------

def recorded(case: str) -> tuple[str, dict[str, str]]:
    """(running config, command -> output) of a recorded case in tests/fixtures/nxos."""
    folder = FIXTURES / case
    outputs = {}
    for file in sorted(folder.glob("*.json")):
        command = file.stem.replace("_", " ").replace(" slash ", "/") + " | json"
        outputs[command] = file.read_text(encoding="utf-8")
    return (folder / "running-config.txt").read_text(encoding="utf-8"), outputs


def planned_leaf1() -> DeviceState:
    return nxos_fabric("lab").devices["leaf1"]


def collect_cases() -> list[CollectCase]:
    running, outputs = recorded("lab-leaf1")
    double = NxosDouble(running, outputs)
    driver = PLATFORM.adapt(double, read_only=True)
    return [CollectCase(
        name="nxos-lab-leaf1", driver=driver, planned=planned_leaf1(),
        commands=lambda: list(double.log),
        source="derived from Cisco's Nexus 9000 documentation (tests/fixtures/nxos/README.md)"
               "; never captured from a switch")]


def dump(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True) + "\n"
