"""flatfab's platform contract as a pytest suite a platform package runs on itself, the way
NAPALM's community drivers run NAPALM's shared getter tests (`BaseTestGetters`).

A platform package's test module subclasses `SwitchConformance` (a switch platform) or
`PlatformConformance` (a host platform) and names its platform (its entry point's name in
the group `flatfab.platforms`):

    from flatfab.testing.conformance import CollectCase, SwitchConformance, example_plan

    class TestAcme(SwitchConformance):
        platform = "acme"
        # what its connection plugin is told of the run's timeouts (TIMEOUTS), the
        # inventory setting none: dotted keys into the plugin's extras
        expected_timeouts = {"timeout": 45.0, "optional_args.timeout": 4.0}

        def collect_cases(self) -> list[CollectCase]:
            # a double of the device answering from recorded outputs, and its plan
            ...

pytest then checks what every platform must satisfy alike: the entry point loads a Platform
of that name whose data file lies in its own package and validates; the capabilities it
declares are the methods it implements; its facts are consistent (sections, naming for
switches, a registered Nornir connection plugin); its names are ones it accepts; the example
fabrics render deterministically and split into its sections without losing a line (a switch
platform's: every role, too); the read-only guard refuses every change; its inventory
options say why and keep host keys checked; it reads its recorded outputs back as planned,
through the read-only guard, sending reads only; its plugin gets the run's timeouts, and an
inventory's own win; its lab connection is spelt for its plugin. flatfab's own eight
platforms run this same suite (tests/conformance/test_platforms.py).

Needs pytest (`pip install 'flatfab[testing]'`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import pytest
from nornir.core.plugins.connections import ConnectionPluginRegister

from flatfab import bundled
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, IfKind, Role
from flatfab.plan.planner import plan
from flatfab.platforms import registry
from flatfab.platforms.base import (
    CommitConfirm,
    Platform,
    PlatformFacts,
    ReadOnlyDriver,
    ReadOnlyError,
    ReadOnlyGuard,
    Timeouts,
)
from flatfab.platforms.registry import PLATFORMS
from flatfab.testing.cases import CollectCase
from flatfab.yamlio import load_yaml

__all__ = ["STRICT_HOST_KEYS", "TIMEOUTS", "CollectCase", "PlatformConformance",
           "bundled_devices", "example_plan"]

# the run's timeouts the suite hands every platform's connection_extras
TIMEOUTS = Timeouts(connect=4.0, command=45.0)
# the option of each connection plugin that keeps host keys checked: a real inventory
# (`flatfab init`) sets it, never leaves it to the plugin's default
STRICT_HOST_KEYS = {"netmiko": "extras.ssh_strict", "scrapli": "extras.auth_strict_key"}
PORT_KINDS = (IfKind.FABRIC, IfKind.HOST_PORT, IfKind.NIC)
MUTATING = ("load_replace_candidate", "load_merge_candidate", "commit_config",
            "confirm_commit", "rollback")
RENDERED_PER_PLATFORM = 6  # example devices the render test takes


@cache
def bundled_devices() -> dict[str, list[DeviceState]]:
    """Platform -> its devices in flatfab's bundled example fabrics, as planned."""
    by_platform: dict[str, list[DeviceState]] = {}
    examples = bundled.folder("examples")
    for name in bundled.examples():
        state = plan(load_intent(examples / name, known_platforms=PLATFORMS))
        for device in state.devices.values():
            by_platform.setdefault(device.platform, []).append(device)
    return by_platform


@cache
def example_plan(platform: str, example: str = bundled.DEFAULT_EXAMPLE) -> FabricState:
    """A bundled example fabric planned with every switch on `platform`, as `flatfab init
    --example EXAMPLE --platform PLATFORM` makes it (its lossless profile fitted to the
    platform). A switch platform no bundled example runs renders and collects this."""
    from flatfab.scaffold import choices  # noqa: PLC0415 - only for platforms of their own
    from flatfab.scaffold.init import build, command_line  # noqa: PLC0415

    choice = choices.parse([platform], PLATFORMS)
    return build(example, example, choice, command_line(example, example, None, [platform])).plan


def _at(extras: Mapping[str, Any], key: str) -> Any:
    found: Any = extras
    for part in key.split("."):
        found = found[part]
    return found


class _Recorder:
    """A device driver that records every call it gets."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if name == "cli":
                return dict.fromkeys(args[0], "")
            return {"running": "", "startup": "", "candidate": ""}
        return call


class PlatformConformance:
    """The contract every platform satisfies; subclass it as `Test<Name>` and set
    `platform` (and `expected_timeouts`; override `collect_cases`, and `example_devices`
    where the bundled examples are not the platform's, e.g. a host platform)."""

    platform: ClassVar[str] = ""
    # dotted key into the plugin's extras -> what it must be given TIMEOUTS, the inventory
    # setting no timeout of its own (each one set to 99 by the inventory stays 99)
    expected_timeouts: ClassVar[Mapping[str, Any]] = {}

    # ---- what a platform package gives the suite ---------------------------------------

    def subject(self) -> Platform:
        assert self.platform, f"{type(self).__name__}: set `platform` to the entry point's name"
        return PLATFORMS[self.platform]

    def example_devices(self) -> list[DeviceState]:
        """Devices of the platform to render: its devices in flatfab's bundled examples,
        else (a switch platform of its own) the default example with every switch on it."""
        found = bundled_devices().get(self.platform, [])
        if found or self.subject().facts.role != "switch":
            return found
        return [d for d in example_plan(self.platform).devices.values()
                if d.platform == self.platform]

    def collect_cases(self) -> list[CollectCase]:
        """Devices answering from recorded outputs, each with the plan it reads back as."""
        return []

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """One collect test per recorded case (pytest calls this for the class)."""
        if "collect_case" in metafunc.fixturenames:
            names = [case.name for case in self.collect_cases()]
            metafunc.parametrize("collect_case", range(len(names)), ids=names)

    # ---- the data file and the entry point ---------------------------------------------

    def test_runs_the_suite_of_its_role(self) -> None:
        """A switch platform runs the switch checks too: its class is a SwitchConformance."""
        role = self.subject().facts.role
        assert (role == "switch") == isinstance(self, SwitchConformance), (
            f"{self.platform} is a {role} platform: subclass "
            f"{'SwitchConformance' if role == 'switch' else 'PlatformConformance'}")

    def test_is_registered_under_its_name(self) -> None:
        plugins = registry.discover(registry.installed())
        assert self.platform in plugins, (
            f"no entry point {self.platform!r} in the group {registry.GROUP}")
        assert registry.load(plugins[self.platform]) is self.subject()

    def test_data_file_lies_in_its_package_and_validates(self) -> None:
        platform = self.subject()
        module = importlib.import_module(type(platform).__module__)
        package = Path(str(module.__file__)).resolve().parent
        facts_file = platform.facts_file.resolve()
        assert facts_file.is_relative_to(package), (
            f"{facts_file} is outside the platform's package {package}")
        assert PlatformFacts.model_validate(load_yaml(facts_file)) == platform.facts

    def test_declared_capabilities_are_the_methods_it_implements(self) -> None:
        platform = self.subject()
        caps = platform.facts.capabilities
        for flag, method in (("traffic_source", "send_test_traffic"),
                             ("class_counters", "class_counters"),
                             ("nic_counters", "nic_counters")):
            implemented = getattr(type(platform), method) is not getattr(Platform, method)
            assert implemented == getattr(caps, flag), f"capabilities.{flag} vs {method}"

    def test_facts_are_consistent(self) -> None:
        platform = self.subject()
        facts = platform.facts
        assert facts.sections and len(set(facts.sections)) == len(facts.sections)
        assert (facts.naming is not None) == (facts.role == "switch")
        ConnectionPluginRegister.auto_register()  # what InitNornir does
        assert facts.connection.plugin in ConnectionPluginRegister.available, (
            f"{facts.connection.plugin!r} is not a registered Nornir connection plugin")
        assert platform.commit_confirm == (facts.capabilities.commit_confirm
                                           is not CommitConfirm.NONE)

    # ---- render ------------------------------------------------------------------------

    def test_has_example_devices_to_render(self) -> None:
        """A platform with no planned device in an example has nothing rendered here."""
        assert self.example_devices(), f"no example fabric plans a {self.platform} device"

    def test_render_is_deterministic_and_splits_into_its_sections(self) -> None:
        platform = self.subject()
        for device in self.example_devices()[:RENDERED_PER_PLATFORM]:
            text = platform.render(device)
            assert text == platform.render(device.model_copy(deep=True))
            sections = platform.sections(text)
            assert set(sections) <= set(platform.facts.sections), (device.name, set(sections))
            kept = sorted(line for lines in sections.values() for line in lines)
            body = sorted(line for line in text.splitlines()
                          if line.strip() and not line.startswith("!! "))
            assert kept == body, f"{device.name}: the section split lost or added lines"

    # ---- read-only and the inventory ---------------------------------------------------

    def test_the_read_only_guard_refuses_every_change(self) -> None:
        platform = self.subject()
        inner = _Recorder()
        guarded = platform.read_only(inner)
        if platform.facts.capabilities.read_only is ReadOnlyGuard.TRANSPORT:
            assert guarded is inner  # opened read-only: the SSH transport refuses changes
            return
        assert isinstance(guarded, ReadOnlyDriver)
        for method in MUTATING:
            with pytest.raises(ReadOnlyError):
                getattr(guarded, method)()
        with pytest.raises(ReadOnlyError):
            guarded.cli(["configure terminal"])
        guarded.get_config(retrieve="running")
        assert inner.calls == ["get_config"]

    def test_inventory_options_say_why_and_keep_host_keys_checked(self) -> None:
        platform = self.subject()
        options = platform.inventory_options()
        keys = [o.key for o in options]
        assert len(keys) == len(set(keys)), keys
        assert all(o.why and o.key.split(".")[0] in {"extras", "port", "hostname",
                                                       "username", "platform"}
                   for o in options)
        strict = STRICT_HOST_KEYS.get(platform.facts.connection.plugin)
        if strict is not None:
            assert any(o.key == strict and o.value is True and o.active for o in options)

    # ---- collect -----------------------------------------------------------------------

    def test_has_collect_cases(self) -> None:
        cases = self.collect_cases()
        assert cases, f"{type(self).__name__}.collect_cases() gives no recorded device"
        assert len({c.name for c in cases}) == len(cases), "two cases share a name"

    def test_collect_reads_recorded_outputs_back_as_planned(self, collect_case: int) -> None:
        platform = self.subject()
        name = self.platform
        case = self.collect_cases()[collect_case]
        assert case.source.strip(), f"{case.name}: say where the recorded outputs come from"
        planned = case.planned
        seen = platform.collect(platform.read_only(case.driver), planned, [])
        where = f"{name} {case.name}"
        assert seen.errors == [], f"{where}: {seen.errors}"
        assert (seen.name, seen.role, seen.platform) == (planned.name, planned.role, name)
        if platform.facts.role == "switch":
            assert (seen.asn, seen.router_id) == (planned.asn, planned.router_id), where
        for port, want in planned.interfaces.items():
            if want.kind not in PORT_KINDS:
                continue
            got = seen.interfaces.get(port)
            assert got is not None, f"{where}: planned port {port} not read"
            if want.mtu is not None:
                assert got.mtu == want.mtu, f"{where}: {port} MTU {got.mtu}, planned {want.mtu}"
            # the switch port's lossless settings, then the NIC's: what was read must agree
            for side, what in (("qos", "lossless"), ("nic", "NIC lossless")):
                planned_side, read_side = getattr(want, side), getattr(got, side)
                if planned_side is None:
                    continue
                if read_side is None:
                    pytest.fail(f"{where}: {port} has planned {what} settings, none read")
                for field in ("trust", "pfc"):
                    if field not in read_side.unknown:
                        assert getattr(read_side, field) == getattr(planned_side, field), (
                            f"{where}: {port} {field}")
        if planned.lb is not None:  # the ECMP hashing the plan sets reads back as planned
            assert seen.lb == planned.lb, f"{where}: ECMP hashing {seen.lb}, planned {planned.lb}"
        for vrf, instance in planned.bgp.items():
            found = seen.bgp.get(vrf)
            assert found is not None, f"{where}: BGP in VRF {vrf} not read"
            for key, peer in instance.peers.items():
                got_peer = found.peers.get(key)
                assert got_peer is not None, f"{where}: BGP peer {key} (VRF {vrf}) not read"
                assert got_peer.state == "Established", f"{where}: {key} is {got_peer.state}"
                assert got_peer.remote_asn == peer.remote_asn, f"{where}: {key} remote AS"
        sent = case.commands()
        assert sent, f"{where}: the double logged no command"
        if platform.facts.capabilities.read_only is ReadOnlyGuard.DRIVER:
            refused = [c for c in sent if not platform.show_command(c)]
            assert not refused, f"{where}: collect sent non-read commands {refused}"
        # a transport-guarded platform's case opens its driver read-only: the transport
        # itself refuses a change, so one would have failed the collect above

    # ---- the connection ----------------------------------------------------------------

    def test_the_plugin_gets_the_run_s_timeouts(self) -> None:
        expected = dict(self.expected_timeouts)
        assert expected, (f"{type(self).__name__}.expected_timeouts: say what the plugin is "
                          "told of the run's connect and command timeouts")
        given = self.subject().connection_extras({}, read_only=True, timeouts=TIMEOUTS)
        assert {key: _at(given, key) for key in expected} == expected

    def test_an_inventory_s_own_timeouts_win(self) -> None:
        """A timeout the inventory sets for a plugin is kept (every expected key, set to
        99)."""
        own: dict[str, Any] = {}
        for key in self.expected_timeouts:
            parent = own
            *path, last = key.split(".")
            for part in path:
                parent = parent.setdefault(part, {})
            parent[last] = 99
        given = self.subject().connection_extras(own, read_only=False, timeouts=TIMEOUTS)
        assert {key: _at(given, key) for key in self.expected_timeouts} == dict.fromkeys(
            self.expected_timeouts, 99)

    def test_spells_its_lab_connection_for_its_own_plugin(self, tmp_path: Path) -> None:
        """A lab inventory reaches every node with key auth and verified host keys,
        whatever the plugin."""
        platform = self.subject()
        options = platform.lab_connection(key_file=tmp_path / "id",
                                          known_hosts=tmp_path / "kh")
        assert list(options) == [platform.facts.connection.plugin]
        text = repr(options)
        assert str(tmp_path / "id") in text and str(tmp_path / "kh") in text


class SwitchConformance(PlatformConformance):
    """The contract of a switch platform: every platform's, and its port names and roles."""

    def test_switch_names_are_names_the_platform_accepts(self) -> None:
        names = self.subject().names
        for number in range(1, 129):
            port = names.physical(number)
            assert names.is_port(port), port
            assert names.problem(port) is None
            for vlan in (1, 100, 4094):
                assert names.problem(names.subinterface(port, vlan)) is None
        assert names.problem(names.loopback) is None
        assert names.problem(names.gateway(None)) is None
        assert names.tenant_of(names.vrf("blue")) == "blue"

    def test_switch_platforms_render_every_role(self) -> None:
        roles = {d.role for d in self.example_devices()}
        assert roles & {Role.SPINE, Role.LEAF}
