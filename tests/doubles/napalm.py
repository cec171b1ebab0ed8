"""NAPALM's mocked-device convention for flatfab's shell drivers (napalm.base.test.double).

`ShellDouble` is a `BaseTestDouble` standing in for the driver's SSH session: it answers each
command from a file named after it (NAPALM's `sanitize_text(command)` + `.txt`) under
tests/fixtures/napalm/<driver>/mocked_data/<test>/<case>/; tests/fixtures/napalm/README.md
says where those files come from (`capture.py`, on the embedded lab, which names its files
with `mocked_name` and answers batch scripts with `run_script`). The patched drivers are
what NAPALM's getter tests instantiate.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from napalm.base.test.double import BaseTestDouble

from flatfab.platforms.frr.driver import FrrDriver
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from flatfab.platforms.shell_driver import MARK
from flatfab.transport.ssh import CommandResult, LoggedCommand
from tests.support.paths import FIXTURES

MOCKED = FIXTURES / "napalm"
LLDP_SOCKET = "/run/flatfab/ffn/nodes/leaf1/lldpd.socket"  # leaf1's, where it was captured
MARKER_RE = re.compile(rf"^echo; echo '({re.escape(MARK)} [^']*)'$")


def run_script(script: str, answer: Callable[[str], str]) -> str:
    """What `sh -s` prints for one of the drivers' batch scripts, each command's stdout from
    `answer`: a marker `echo` prints its marker line, a bare `echo` a newline."""
    out = []
    for line in script.splitlines():
        marker = MARKER_RE.match(line)
        if marker:
            out.append("\n" + marker.group(1) + "\n")
        elif line == "echo":
            out.append("\n")
        elif line.strip():
            out.append(answer(line))
    return "".join(out)


def mocked_name(command: str) -> str:
    """The file a command's output is kept in (NAPALM's convention for doubles)."""
    return str(BaseTestDouble.sanitize_text(command)) + ".txt"


class ShellDouble(BaseTestDouble):  # type: ignore[misc]
    """Stands in for the driver's SshSession: every command's output from the current test
    case's directory. Mutating commands fail: getters never change a device."""

    root: Path = MOCKED

    def __init__(self, driver: str) -> None:
        super().__init__()
        self.driver = driver
        self.log: list[LoggedCommand] = []
        self.is_alive = False

    def find_file(self, filename: str) -> str:
        path = (self.root / self.driver / "mocked_data" / self.current_test
                / self.current_test_case / filename)
        if not path.exists():
            raise OSError(f"Couldn't find file with mocked data: {path}")
        return str(path)

    def open(self) -> None:
        self.is_alive = True

    def close(self) -> None:
        self.is_alive = False

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        assert not mutating, f"a getter ran a mutating command: {command}"
        if command == "sh -s" and stdin is not None:
            out = run_script(stdin, self._answer)
        else:
            out = self._answer(command)
        self.log.append(LoggedCommand(command, mutating, 0, 0.0))
        return CommandResult(command, out, "", 0)

    def _answer(self, command: str) -> str:
        return str(self.read_txt_file(self.find_file(mocked_name(command))))


class PatchedFrrDriver(FrrDriver):
    def __init__(self, hostname: str, username: str, password: str | None, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout,
                         {**(optional_args or {}), "lldp_socket": LLDP_SOCKET})
        self.patched_attrs = ["session"]
        self.session = ShellDouble("frr")


class PatchedLinuxHostDriver(LinuxHostDriver):
    def __init__(self, hostname: str, username: str, password: str | None, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.patched_attrs = ["session"]
        self.session = ShellDouble("linux_host")
