"""Every platform reads its own recorded outputs back as planned: one shared test over each
platform's `collect_cases()` (tests/doubles/<platform>.py), as NAPALM's shared getter tests
run every driver over its own mocked data. Platform suites test the variants in depth; this
one holds every platform to the same minimum, through its read-only guard."""

from __future__ import annotations

import importlib

import pytest

from flatfab.model.state import DeviceState, IfKind
from flatfab.platforms.base import ReadOnlyGuard
from flatfab.platforms.registry import PLATFORMS
from tests.doubles import CollectCase

PORT_KINDS = (IfKind.FABRIC, IfKind.HOST_PORT, IfKind.NIC)


def _cases(name: str) -> list[CollectCase]:
    module = importlib.import_module(f"tests.doubles.{name}")
    cases: list[CollectCase] = module.collect_cases()
    return cases


def _params() -> list[tuple[str, int]]:
    found = []
    for name in sorted(PLATFORMS):
        try:
            count = len(_cases(name))
        except (ImportError, AttributeError):
            count = 0  # test_every_platform_has_collect_cases names it
        found += [(name, i) for i in range(count)]
    return found


def test_every_platform_has_collect_cases() -> None:
    missing = []
    for name in sorted(PLATFORMS):
        try:
            if not _cases(name):
                missing.append(f"{name}: collect_cases() is empty")
        except (ImportError, AttributeError) as exc:
            missing.append(f"{name}: tests/doubles/{name}.py collect_cases(): {exc}")
    assert not missing, "\n".join(missing)


def _ports(device: DeviceState) -> dict[str, object]:
    return {n: i for n, i in device.interfaces.items() if i.kind in PORT_KINDS}


@pytest.mark.parametrize(("name", "index"), _params(), ids=str)
def test_collect_reads_recorded_outputs_back_as_planned(name: str, index: int) -> None:
    platform = PLATFORMS[name]
    case = _cases(name)[index]
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
        if want.qos is not None and got.qos is not None:
            for field in ("trust", "pfc"):
                if field not in got.qos.unknown:
                    assert getattr(got.qos, field) == getattr(want.qos, field), (
                        f"{where}: {port} {field}")
        elif want.qos is not None:
            pytest.fail(f"{where}: {port} has planned lossless settings, none read")
        if want.nic is not None and got.nic is not None:
            for field in ("trust", "pfc"):
                if field not in got.nic.unknown:
                    assert getattr(got.nic, field) == getattr(want.nic, field), (
                        f"{where}: {port} {field}")
        elif want.nic is not None:
            pytest.fail(f"{where}: {port} has planned NIC lossless settings, none read")
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
    # a transport-guarded platform's case opens its driver read-only: the transport itself
    # refuses a change, so one would have failed the collect above
