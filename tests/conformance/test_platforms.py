"""flatfab's own platforms run the importable conformance suite (flatfab.testing.conformance)
exactly as a platform package of its own runs it: one class per platform, naming it, with
what its connection plugin is told of the run's timeouts and its recorded devices
(`collect_cases()` of tests/doubles/<platform>.py)."""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

from flatfab.platforms import registry
from flatfab.platforms.registry import PLATFORMS
from flatfab.testing.conformance import CollectCase, PlatformConformance, SwitchConformance


class _Builtin(PlatformConformance):
    def collect_cases(self) -> list[CollectCase]:
        cases: list[CollectCase] = importlib.import_module(
            f"tests.doubles.{self.platform}").collect_cases()
        return cases


class _BuiltinSwitch(_Builtin, SwitchConformance):
    pass


# What each platform's plugin is told, the inventory setting no timeout of its own
# (TIMEOUTS: connect 4 s, command 45 s): flatfab's SSH drivers (frr, linux_host) connect
# within optional_args.timeout and wait `timeout` per command; NAPALM eos, junos and srlinux
# bound each request with `timeout` (junos probes NETCONF's port within auto_probe; srlinux's
# is httpx's (connect, read, write, pool)); netmiko its connect, banner and login; scrapli its
# socket, transport and operations.
class TestFrr(_BuiltinSwitch):
    platform = "frr"
    expected_timeouts: ClassVar[dict[str, Any]] = {
        "timeout": 45.0, "optional_args.timeout": 4.0}


class TestLinuxHost(_Builtin):
    platform = "linux_host"
    expected_timeouts: ClassVar[dict[str, Any]] = {
        "timeout": 45.0, "optional_args.timeout": 4.0}


class TestEos(_BuiltinSwitch):
    platform = "eos"
    expected_timeouts: ClassVar[dict[str, Any]] = {"timeout": 45.0}


class TestSonic(_BuiltinSwitch):
    platform = "sonic"
    expected_timeouts: ClassVar[dict[str, Any]] = {
        "conn_timeout": 4.0, "banner_timeout": 4.0, "auth_timeout": 4.0}


class TestNxos(_BuiltinSwitch):
    platform = "nxos"
    expected_timeouts: ClassVar[dict[str, Any]] = {
        "timeout_socket": 4.0, "timeout_transport": 45.0, "timeout_ops": 45.0}


class TestSrlinux(_BuiltinSwitch):
    platform = "srlinux"
    expected_timeouts: ClassVar[dict[str, Any]] = {"timeout": (4.0, 45.0, 45.0, 4.0)}


class TestJunos(_BuiltinSwitch):
    platform = "junos"
    expected_timeouts: ClassVar[dict[str, Any]] = {
        "timeout": 45.0, "optional_args.auto_probe": 4.0}


class TestNvue(_BuiltinSwitch):
    platform = "nvue"
    expected_timeouts: ClassVar[dict[str, Any]] = {
        "conn_timeout": 4.0, "banner_timeout": 4.0, "auth_timeout": 4.0}


def test_every_platform_of_flatfab_s_own_runs_the_suite() -> None:
    """A new platform of flatfab's own (an entry point of the flatfab distribution) is
    refused until it has its class here."""
    classes = [c for c in globals().values() if isinstance(c, type)
               and issubclass(c, _Builtin) and c not in (_Builtin, _BuiltinSwitch)]
    own = [name for name, plugin in registry.discover(registry.installed()).items()
           if plugin.distribution.split()[0] == "flatfab"]
    assert sorted(c.platform for c in classes) == sorted(own)
    assert set(own) <= set(PLATFORMS)
