"""flatfab's NAPALM drivers under NAPALM's own getter tests (napalm.base.test.getters).

The way NAPALM's community drivers are tested: NAPALM's `BaseTestGetters` runs every getter
with a mocked device, checks each result against NAPALM's models (`napalm.base.models`,
`helpers.test_model`) and compares it with `expected_result.json` of the test case. The mocked
device is a `BaseTestDouble` that stands in for the driver's SSH session and answers each
command from a file named after it (NAPALM's `sanitize_text(command)` + `.txt`) under
tests/fixtures/napalm/<driver>/mocked_data/<test>/<case>/; tests/fixtures/napalm/README.md
says where those files come from (`capture.py`, on the embedded lab).

Getters a driver does not implement are not collected (NAPALM's tests would skip them); an
implemented getter without a test case fails ("No test case for ... found").

NAPALM's `test_method_signatures` also fails any public method NAPALM's base does not have.
flatfab's drivers have a few on purpose (reads and actions flatfab uses that are not NAPALM
getters, listed in EXTENSIONS): the test runs NAPALM's own check on a subclass that hides
exactly those, and a second test keeps the list exact and outside NAPALM's names.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from napalm.base import NetworkDriver
from napalm.base.test import conftest as napalm_conftest
from napalm.base.test.double import BaseTestDouble
from napalm.base.test.getters import BaseTestGetters

from tasks.platforms.frr.driver import FrrDriver
from tasks.platforms.linux_host.driver import LinuxHostDriver
from tasks.platforms.shell_driver import MARK, ShellDriver
from tasks.transport.ssh import CommandResult, LoggedCommand

MOCKED = Path(__file__).resolve().parents[1] / "fixtures" / "napalm"
LLDP_SOCKET = "/run/flatfab/ffn/nodes/leaf1/lldpd.socket"  # leaf1's, where it was captured
MARKER_RE = re.compile(rf"^echo; echo '({re.escape(MARK)} [^']*)'$")

# public methods that are flatfab's, not NAPALM's (none of them is a NAPALM getter)
EXTENSIONS: dict[type[ShellDriver[Any]], frozenset[str]] = {
    FrrDriver: frozenset({"get_interface_links", "get_route_table", "get_lossless",
                          "compare_texts", "wait_pending_revert"}),
    LinuxHostDriver: frozenset({"read_host_state", "read_connectx", "get_lossless", "probe",
                                "send_roce", "compare_texts", "wait_pending_revert"}),
}


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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """NAPALM's own test-case discovery, in each driver's mocked_data tree."""
    cls = metafunc.cls
    if cls is not None and hasattr(cls, "mocked"):
        napalm_conftest.pytest_generate_tests(metafunc, str(MOCKED / cls.mocked / "x"))


def _getter_of(test: str) -> str | None:
    """The NetworkDriver method a NAPALM test exercises (test_get_config_filtered ->
    get_config), by the longest method name the test is named after."""
    names = [m for m in dir(NetworkDriver) if test == f"test_{m}" or test.startswith(f"test_{m}_")]
    return max(names, key=len) if names else None


class _Conformance(BaseTestGetters):  # type: ignore[misc]
    driver: ClassVar[type[ShellDriver[Any]]]
    patched_driver: ClassVar[type[ShellDriver[Any]]]
    mocked: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """NAPALM's tests of getters the driver does not implement are not collected (they
        would only skip): what runs is every test of every getter it has."""
        super().__init_subclass__(**kwargs)
        for test in dir(BaseTestGetters):
            getter = _getter_of(test)
            if getter is not None and getattr(cls.driver, getter) is getattr(NetworkDriver, getter):
                setattr(cls, test, None)

    @pytest.fixture(autouse=True)
    def _device(self, request: pytest.FixtureRequest) -> None:
        napalm_conftest.set_device_parameters(request)

    def test_method_signatures(self) -> None:
        """NAPALM's own check, on the driver with flatfab's extensions hidden."""
        hidden = type(f"Napalm{self.driver.__name__}", (self.driver,),
                      dict.fromkeys(EXTENSIONS[self.driver]))
        BaseTestGetters.test_method_signatures(_Signatures(hidden))

    def test_extensions_are_exactly_the_non_napalm_methods(self) -> None:
        instance = self.driver("test", "admin", "pwd")
        public = {name for name, value in inspect.getmembers(instance)
                  if not name.startswith("_") and inspect.ismethod(value)}
        assert public - set(dir(NetworkDriver)) == EXTENSIONS[self.driver]
        assert not {n for n in EXTENSIONS[self.driver] if hasattr(NetworkDriver, n)}


class _Signatures:
    def __init__(self, driver: type[ShellDriver[Any]]) -> None:
        self.driver = driver


class TestFrrGetters(_Conformance):
    driver = FrrDriver
    patched_driver = PatchedFrrDriver
    mocked = "frr"


class TestLinuxHostGetters(_Conformance):
    driver = LinuxHostDriver
    patched_driver = PatchedLinuxHostDriver
    mocked = "linux_host"
