"""The check catalog on synthetic observed state: each fault found by name, none when clean."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flatfab.checks import CATALOG, CheckContext, Finding, Stage, run_checks
from flatfab.checks.base import Scope, Severity
from flatfab.model.state import DEFAULT_VRF, FabricState
from tests.support.checks import PLAN, healthy


def live(state: FabricState) -> list[Finding]:
    return run_checks(CheckContext(state=state, plan=PLAN, stage=Stage.LIVE))


def test_clean_plan_and_clean_fabric_have_no_findings() -> None:
    assert run_checks(CheckContext(state=PLAN, plan=PLAN, stage=Stage.STATIC)) == []
    assert live(healthy()) == []


def test_catalog_entries_are_declared_completely() -> None:
    assert len(CATALOG) >= 12
    for check_id, item in CATALOG.items():
        assert check_id == item.id and "." in check_id
        assert item.title and isinstance(item.scope, Scope) and isinstance(item.severity, Severity)
        assert item.stages


def _set_mtu(state: FabricState) -> None:
    state.devices["leaf3"].interfaces["swp52"].mtu = 1500


def _session_down(state: FabricState) -> None:
    state.devices["leaf2"].bgp["blue"].peers["swp51.100"].state = "Active"


def _session_missing(state: FabricState) -> None:
    del state.devices["spine2"].bgp["red"].peers["swp4.200"]


def _wrong_asn(state: FabricState) -> None:
    state.devices["leaf1"].bgp[DEFAULT_VRF].peers["swp52"].remote_asn = 65001


def _path_missing(state: FabricState) -> None:
    routes = state.devices["leaf4"].routes
    assert routes is not None
    route = routes["red"]["10.200.1.0/24"]
    route.nexthops = [h for h in route.nexthops if h.interface != "swp51.200"]


def _unreachable(state: FabricState) -> None:
    state.devices["spine1"].reachable = False
    state.devices["spine1"].errors = ["172.31.255.11:22: Connection refused"]


def _isolation(state: FabricState) -> None:
    probe = next(p for p in state.devices["leaf2-h2"].probes if not p.expect_reply)
    probe.replied = True


def _jumbo(state: FabricState) -> None:
    probe = next(p for p in state.devices["leaf1-h1"].probes if p.dont_fragment)
    probe.replied, probe.detail = False, "Frag needed and DF set (mtu = 1500)"


def _unreachable_peer(state: FabricState) -> None:
    probe = next(p for p in state.devices["leaf3-h1"].probes
                 if p.expect_reply and not p.dont_fragment)
    probe.replied, probe.detail = False, "100% packet loss"


def _miscabled(state: FabricState) -> None:
    from flatfab.model.state import Endpoint  # noqa: PLC0415

    state.devices["leaf1"].interfaces["swp51"].peer = Endpoint(device="spine2", port="swp1")


def _interface_down(state: FabricState) -> None:
    state.devices["spine2"].interfaces["swp3"].up = False


def _interface_missing(state: FabricState) -> None:
    del state.devices["leaf4"].interfaces["br200"]


def _duplicate_router_id(state: FabricState) -> None:
    state.devices["leaf2"].router_id = state.devices["leaf1"].router_id


def _renumbered_asn(state: FabricState) -> None:
    state.devices["spine1"].bgp["default"].asn = 65099


def _nic_moved(state: FabricState) -> None:
    state.devices["leaf2-h1"].interfaces["eth1"].addresses = ["10.100.2.99/24"]


FAULTS: list[tuple[str, Callable[[FabricState], None], set[tuple[str, str, str | None]]]] = [
    ("mtu", _set_mtu, {("interface.mtu", "leaf3", "swp52"),
                       ("link.mtu_match", "leaf3", "swp52"),
                       ("mtu.roce_chain", "leaf3", "swp52")}),
    ("session down", _session_down, {("bgp.session", "leaf2", "swp51.100")}),
    ("session missing", _session_missing, {("bgp.session", "spine2", "swp4.200")}),
    ("wrong asn", _wrong_asn, {("bgp.remote_asn", "leaf1", "swp52")}),
    ("ecmp", _path_missing, {("ecmp.leaf_paths", "leaf4", "swp51.200")}),
    ("unreachable", _unreachable, {("device.reachable", "spine1", None)}),
    ("isolation", _isolation, {("tenant.isolation", "leaf2-h2", "eth1")}),
    ("jumbo", _jumbo, {("tenant.mtu", "leaf1-h1", "eth1")}),
    ("reachability", _unreachable_peer, {("tenant.reachability", "leaf3-h1", "eth1")}),
    ("cabling", _miscabled, {("cabling.lldp", "leaf1", "swp51")}),
    ("down", _interface_down, {("interface.up", "spine2", "swp3")}),
    ("missing", _interface_missing, {("interface.present", "leaf4", "br200")}),
    ("router id", _duplicate_router_id, {("bgp.router_id_unique", "leaf2", None)}),
    # the cause beside its symptoms: an own ASN changed, a NIC moved to another address
    ("own asn", _renumbered_asn, {("bgp.local_asn", "spine1", None)}),
    ("nic address", _nic_moved, {("host.address", "leaf2-h1", "eth1")}),
]


def test_a_renumbered_switch_and_a_moved_nic_are_named_with_both_values() -> None:
    state = healthy()
    _renumbered_asn(state)
    _nic_moved(state)
    found = {f.check: f.message for f in live(state)}
    assert found["bgp.local_asn"] == "spine1 runs BGP as AS 65099 (VRF default), planned AS 65000"
    planned = healthy().devices["leaf2-h1"].interfaces["eth1"].addresses
    assert found["host.address"] == (f"leaf2-h1:eth1 holds 10.100.2.99/24, planned "
                                     f"{', '.join(planned)}")


@pytest.mark.parametrize(("fault", "expected"), [(f, e) for _, f, e in FAULTS],
                         ids=[name for name, _, _ in FAULTS])
def test_each_fault_is_found_by_name(fault: Callable[[FabricState], None],
                                     expected: set[tuple[str, str, str | None]]) -> None:
    state = healthy()
    fault(state)
    found = {(f.check, f.device or "", f.port) for f in live(state)}
    assert found == expected


def test_unreachable_device_is_not_reported_twice() -> None:
    """Its sessions show on the peers' side; its own checks are skipped, not failed."""
    state = healthy()
    _unreachable(state)
    findings = live(state)
    assert [f.check for f in findings if f.device == "spine1"] == ["device.reachable"]


def test_findings_come_in_a_stable_order() -> None:
    state = healthy()
    for _, fault, _ in FAULTS:
        fault(state)
    first = live(state)
    assert first == live(state)
    assert [f.severity.rank for f in first] == sorted(f.severity.rank for f in first)


def _cable_moved_back(state: FabricState) -> None:
    """leaf1's uplink to spine1 was moved to spine1's swp2 and back: its LLDP still holds the
    old entry beside the planned one, which lldpd lists as the younger."""
    from flatfab.model.state import Endpoint  # noqa: PLC0415

    port = state.devices["leaf1"].interfaces["swp51"]
    port.lldp_neighbours = [Endpoint(device="spine1", port="swp2", hold_s=20),
                            Endpoint(device="spine1", port="swp1", hold_s=20)]
    port.peer = port.lldp_neighbours[0]


def test_a_cable_moved_back_is_not_judged_until_the_old_entry_expires() -> None:
    from flatfab.checks.base import unread_settings  # noqa: PLC0415

    state = healthy()
    _cable_moved_back(state)
    found = [f for f in live(state) if f.check == "cabling.lldp"]
    assert [(f.severity, f.device, f.port) for f in found] == [
        (Severity.NOT_JUDGED, "leaf1", "swp51")]
    assert found[0].message == (
        "leaf1:swp51 is not judged: LLDP holds spine1:swp2 beside the planned spine1:swp1 (a "
        "moved cable's old entry), which expires within its hold time of 20 s: verify again "
        "then")
    assert unread_settings(found) == found  # the run is incomplete, never passed


def test_a_port_holding_two_neighbours_none_planned_is_miscabled() -> None:
    from flatfab.model.state import Endpoint  # noqa: PLC0415

    state = healthy()
    port = state.devices["leaf1"].interfaces["swp51"]
    port.lldp_neighbours = [Endpoint(device="spine2", port="swp1", expires_s=7),
                            Endpoint(device="spine2", port="swp2", expires_s=3)]
    port.peer = port.lldp_neighbours[0]
    [found] = [f for f in live(state) if f.check == "cabling.lldp"]
    assert (found.severity, found.port) == (Severity.ERROR, "swp51")
