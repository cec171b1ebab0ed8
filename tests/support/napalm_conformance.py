"""flatfab's NAPALM drivers under NAPALM's own getter tests (napalm.base.test.getters).

The way NAPALM's community drivers are tested: NAPALM's `BaseTestGetters` runs every getter
with a mocked device (tests/doubles/napalm.py), checks each result against NAPALM's models
(`napalm.base.models`, `helpers.test_model`) and compares it with `expected_result.json` of
the test case. A platform's test module subclasses `Conformance` with its driver, patched
driver and mocked-data folder, and takes `pytest_generate_tests` (NAPALM's test-case
discovery) as its own hook.

Getters a driver does not implement are not collected (NAPALM's tests would skip them); an
implemented getter without a test case fails ("No test case for ... found").

NAPALM's `test_method_signatures` also fails any public method NAPALM's base does not have.
flatfab's drivers have a few on purpose (reads and actions flatfab uses that are not NAPALM
getters, listed in EXTENSIONS): the test runs NAPALM's own check on a subclass that hides
exactly those, and a second test keeps the list exact and outside NAPALM's names.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import pytest
from napalm.base import NetworkDriver
from napalm.base.test import conftest as napalm_conftest
from napalm.base.test.getters import BaseTestGetters

from flatfab.platforms.frr.driver import FrrDriver
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from flatfab.platforms.shell_driver import ShellDriver
from tests.doubles.napalm import MOCKED

# public methods that are flatfab's, not NAPALM's (none of them is a NAPALM getter)
EXTENSIONS: dict[type[ShellDriver[Any]], frozenset[str]] = {
    FrrDriver: frozenset({"get_interface_links", "get_route_table", "get_lossless",
                          "compare_texts", "wait_pending_revert", "cached_reads",
                          "read_ahead", "route_tables", "lldp_entries", "get_physical",
                          "get_hashing"}),
    LinuxHostDriver: frozenset({"read_host_state", "read_connectx", "get_lossless", "probe",
                                "send_roce", "read_nic_counters", "compare_texts",
                                "wait_pending_revert", "cached_reads", "get_physical",
                                "read_rdma"}),
}


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


class Conformance(BaseTestGetters):  # type: ignore[misc]
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
