"""tenant.leak: any path from one tenant's routing table into another's on a switch (a link
end in the wrong VRF, a route to another tenant's subnet, a route out of another VRF's
interface) is a critical finding naming the switch."""

from __future__ import annotations

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.model.state import FabricState, NextHop, Route
from tests.support.checks import PLAN as LAB


def _leaks(state: FabricState, stage: Stage = Stage.STATIC) -> list[tuple[str, str]]:
    found = run_checks(CheckContext(state=state, plan=LAB, stage=stage))
    return sorted((f.device or "", f.message) for f in found if f.check == "tenant.leak")


def test_the_plan_has_no_leak() -> None:
    assert _leaks(LAB) == []


def test_a_sub_link_moved_into_another_vrf_is_named() -> None:
    state = LAB.model_copy(deep=True)
    state.devices["leaf1"].interfaces["swp51.100"].vrf = "red"
    [(device, message)] = _leaks(state)
    assert device == "leaf1"
    assert message.startswith("leaf1:swp51.100 is in VRF red, but its link ")
    assert message.endswith("belongs to blue: the two routing tables are joined")


def _observed(routes: dict[str, dict[str, Route]]) -> FabricState:
    state = LAB.model_copy(deep=True)
    state.devices["leaf2"].routes = routes
    return state


def test_a_route_to_another_tenants_subnet_is_named() -> None:
    blue_leaf1 = LAB.tenants["blue"].subnets["leaf1"]
    state = _observed({"red": {blue_leaf1: Route(protocol="static")}})
    assert _leaks(state, Stage.LIVE) == [
        ("leaf2", f"leaf2 VRF red has a static route to {blue_leaf1} of tenant blue")]


def test_a_route_out_of_another_vrfs_interface_is_named() -> None:
    state = _observed({"red": {"10.99.0.0/24": Route(
        protocol="bgp",
        nexthops=[NextHop(interface="swp51.100")])}})
    assert _leaks(state, Stage.LIVE) == [
        ("leaf2", "leaf2 VRF red routes 10.99.0.0/24 out of swp51.100, which is in VRF blue")]


def test_a_host_route_inside_another_tenants_subnet_is_named() -> None:
    blue_leaf3 = LAB.tenants["blue"].subnets["leaf3"]
    host = blue_leaf3.rsplit(".", 1)[0] + ".11/32"
    state = _observed({"red": {host: Route(protocol="kernel")}})
    assert _leaks(state, Stage.LIVE) == [
        ("leaf2", f"leaf2 VRF red has a kernel route to {host}, inside {blue_leaf3} of "
                  "tenant blue")]


def test_a_default_route_in_a_tenant_vrf_is_not_a_leak_by_itself() -> None:
    # a VRF's default route toward its own uplinks (a firewall, an exit) contains every
    # tenant's space; it is judged by where it leads, not by what it covers
    state = _observed({"red": {"0.0.0.0/0": Route(
        protocol="bgp", nexthops=[NextHop(interface="swp51.200")])}})
    assert _leaks(state, Stage.LIVE) == []
