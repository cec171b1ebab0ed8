"""The AI back-end checks on the rail example: rail alignment, plane independence, ECMP
through the super-spines, per-tier non-blocking capacity and per-NIC host routing. Each
fault is written into a copy of the plan (or of observed state) and named by check,
device and port."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.intent.loader import load_intent
from flatfab.model.state import (
    DEFAULT_VRF,
    Endpoint,
    FabricState,
    NextHop,
    PolicyRule,
    Probe,
    Role,
    Route,
    Source,
)
from flatfab.plan.planner import plan
from flatfab.plan.probes import plan_probes
from flatfab.workflows.commands.rollout import restrict
from tests.support.paths import ROOT

RAIL = plan(load_intent(ROOT / "intents" / "rail"))
LAB = plan(load_intent(ROOT / "intents" / "lab"))
CHECKS = ("rail.alignment", "plane.independence", "ecmp.pod_paths", "ecmp.leaf_paths", "ecmp.width",
          "host.routing", "fabric.nonblocking")


def _observed(mutate: Callable[[FabricState], None] | None = None) -> FabricState:
    state = RAIL.model_copy(deep=True, update={"source": Source.OBSERVED})
    _full_ribs(state)
    if mutate is not None:
        mutate(state)
    return state


def _full_ribs(state: FabricState) -> None:
    """Every switch's RIB as a healthy 5-stage fabric has it: each prefix of a leaf via
    every uplink that leads there (the plan's cabling), down to the leaf that owns it."""
    plan_ = RAIL
    owner = {p: leaf.name for leaf in plan_.devices.values() if leaf.role.value == "leaf"
             for bgp in leaf.bgp.values() for p in bgp.networks}
    for name, device in state.devices.items():
        planned = plan_.devices[name]
        if planned.role.value == "host":
            continue
        tables: dict[str, dict[str, Route]] = {}
        for vrf in planned.bgp:
            table = tables.setdefault(vrf, {})
            for prefix, leaf in owner.items():
                if leaf == name or vrf not in plan_.devices[leaf].bgp:
                    continue
                hops = _towards(planned.name, leaf, vrf)
                if hops:
                    table[prefix] = Route(protocol="bgp", nexthops=[
                        NextHop(interface=port) for port in hops])
        device.routes = tables


def _towards(device: str, leaf: str, vrf: str) -> list[str]:
    """The ports of `device` in `vrf` on shortest paths to `leaf` (plan's graph)."""
    devices = RAIL.devices
    target = devices[leaf]
    me = devices[device]
    ports = [i for i in me.interfaces.values() if i.vrf == vrf and i.peer is not None
             and i.kind.value == "fabric"]
    if me.plane is not None and target.plane != me.plane:
        return []
    direct = [i.name for i in ports if i.peer is not None and i.peer.device == leaf]
    if direct:
        return direct
    if me.role.value == "superspine":
        return [i.name for i in ports if i.peer is not None
                and devices[i.peer.device].pod == target.pod]
    if me.role.value == "spine":
        return [i.name for i in ports if i.peer is not None
                and devices[i.peer.device].role.value == "superspine"]
    return [i.name for i in ports]


def _findings(state: FabricState, stage: Stage = Stage.LIVE,
              planned: FabricState = RAIL) -> list[tuple[str, str, str, str]]:
    found = run_checks(CheckContext(state=state, plan=planned, stage=stage))
    return sorted((f.check, f.device or "", f.port or "", f.message) for f in found
                  if f.check in CHECKS)


def test_the_rail_plan_and_a_healthy_rail_fabric_pass() -> None:
    assert _findings(RAIL, Stage.STATIC) == []
    assert _findings(_observed()) == []


def test_two_nics_swapped_between_rails_are_both_named() -> None:
    def swap(state: FabricState) -> None:
        state.devices["su1-leaf1"].interfaces["swp1"].peer = Endpoint(device="su1-s1",
                                                                      port="eth2")
        state.devices["su1-leaf2"].interfaces["swp1"].peer = Endpoint(device="su1-s1",
                                                                      port="eth1")

    found = [f for f in _findings(_observed(swap)) if f[0] == "rail.alignment"]
    assert [(d, p) for _, d, p, _ in found] == [("su1-leaf1", "swp1"), ("su1-leaf2", "swp1")]
    assert "su1-s1 eth1 (rail 1) belongs on su1-leaf1:swp1 (rail 1), where LLDP sees " \
           "su1-s1:eth2 (rail 2)" in found[0][3]


def test_a_nic_planned_on_another_rail_is_named_before_any_push() -> None:
    wrong = RAIL.model_copy(deep=True)
    wrong.devices["su2-s2"].interfaces["eth1"].peer = Endpoint(device="su2-leaf2",
                                                               port="swp2")
    found = [f for f in _findings(wrong, Stage.STATIC, planned=wrong)
             if f[0] == "rail.alignment"]
    assert [(d, p) for _, d, p, _ in found] == [("su2-s2", "eth1")]
    assert "planned on su2-leaf2:swp2 (rail 2, SU 2)" in found[0][3]


def test_a_leaf_cabled_into_the_other_plane_is_named_by_lldp_session_and_route() -> None:
    def cross(state: FabricState) -> None:
        leaf = state.devices["su1-leaf1"]
        leaf.interfaces["swp51"].peer = Endpoint(device="p2-pod1-spine1", port="swp1")
        peer = next(iter(p for p in leaf.bgp[DEFAULT_VRF].peers.values()))
        peer.peer_device = "p2-pod1-spine1"
        leaf.routes = {DEFAULT_VRF: {"10.0.0.23/32": Route(
            protocol="bgp", nexthops=[NextHop(interface="swp51")])}}

    found = [f for f in _findings(_observed(cross)) if f[0] == "plane.independence"]
    messages = " | ".join(m for *_, m in found)
    assert "su1-leaf1:swp51 (plane 1) is cabled to p2-pod1-spine1:swp1 (plane 2)" in messages
    assert "BGP session with p2-pod1-spine1 (plane 2)" in messages
    assert "routes 1 prefixes of another plane via swp51: 10.0.0.23/32 (su1-leaf3)" in messages
    assert {d for _, d, _, _ in found} == {"su1-leaf1"}
    # every finding names its port, the route leak the port it leaves through
    assert {port for _, _, port, _ in found} == {"swp51"}


def test_a_link_planned_across_planes_is_refused_statically() -> None:
    wrong = RAIL.model_copy(deep=True)
    link = next(x for x in wrong.links if x.a.device == "su1-leaf1" and x.parent is None)
    link.b = Endpoint(device="p2-pod1-spine1", port="swp1")
    found = [f for f in _findings(wrong, Stage.STATIC, planned=wrong)
             if f[0] == "plane.independence"]
    assert found and "joins plane 1 and plane 2" in found[0][3]


def test_a_pod_spine_that_lost_its_super_spine_sessions_is_named() -> None:
    def cut(state: FabricState) -> None:
        routes = state.devices["p1-pod1-spine1"].routes
        assert routes is not None
        for table in routes.values():
            for route in table.values():
                route.nexthops = [h for h in route.nexthops if h.interface not in
                                  ("swp33", "swp34")]

    found = [f for f in _findings(_observed(cut)) if f[0] == "ecmp.pod_paths"]
    assert {(d, p) for _, d, p, _ in found} == {("p1-pod1-spine1", "swp33,swp34")}
    assert "no path via p1-ss1, p1-ss2" in found[0][3]
    # the leaves of pod 1 lose nothing they can see: their pod spine still answers
    assert not [f for f in _findings(_observed(cut)) if f[0] == "ecmp.leaf_paths"]


def test_a_leaf_without_its_path_to_another_pod_is_named() -> None:
    def cut(state: FabricState) -> None:
        routes = state.devices["su2-leaf2"].routes
        assert routes is not None
        routes[DEFAULT_VRF].pop("10.0.0.22/32")

    found = [f for f in _findings(_observed(cut)) if f[0] == "ecmp.leaf_paths"]
    assert [d for _, d, _, _ in found] == ["su2-leaf2"]
    assert "10.0.0.22/32 (su1-leaf2)" in found[0][3]


def test_an_oversubscribed_pod_spine_is_named() -> None:
    def slow(state: FabricState) -> None:
        spine = state.devices["p2-pod2-spine1"]
        for name in ("swp33", "swp34"):
            spine.interfaces[name].speed_mbps = 100_000

    found = [f for f in _findings(_observed(slow)) if f[0] == "fabric.nonblocking"]
    assert [d for _, d, _, _ in found] == ["p2-pod2-spine1"]
    assert "800000 Mb/s towards leaves, 200000 Mb/s of uplinks (4.00:1)" in found[0][3]


@pytest.mark.parametrize(("fault", "phrase"), [
    ("no rule", "su1-s1 eth2: no rule routes traffic from 10.100.2.11"),
    ("wrong table", "su1-s1 eth2: traffic from 10.100.2.11 (table 102) leaves by dev eth1"),
    ("arp flux", "su1-s1 eth2: arp_ignore is 0, planned 1"),
])
def test_a_nic_whose_traffic_would_leave_through_another_is_named(fault: str,
                                                                   phrase: str) -> None:
    def break_host(state: FabricState) -> None:
        host = state.devices["su1-s1"]
        if fault == "no rule":
            host.rules = [r for r in host.rules if r.table != 102]
        elif fault == "wrong table":
            for route in host.static_routes:
                if route.table == 102 and route.prefix == "0.0.0.0/0":
                    route.interface = "eth1"
        else:
            host.sysctls["net.ipv4.conf.eth2.arp_ignore"] = "0"

    found = [f for f in _findings(_observed(break_host)) if f[0] == "host.routing"]
    assert [(d, p) for _, d, p, _ in found] == [("su1-s1", "eth2")], found
    assert phrase in found[0][3]


def test_rules_are_judged_by_source_address() -> None:
    def moved(state: FabricState) -> None:
        host = state.devices["su1-s1"]
        host.rules = [PolicyRule(priority=r.priority, source="10.100.9.9", table=r.table)
                      if r.table == 101 else r for r in host.rules]

    found = [f for f in _findings(_observed(moved)) if f[0] == "host.routing"]
    assert [(d, p) for _, d, p, _ in found] == [("su1-s1", "eth1")]


def test_every_nic_probes_its_own_plane_and_is_kept_out_of_the_other() -> None:
    probes = plan_probes(RAIL)
    devices = RAIL.devices
    mine = probes["su1-s1"]
    assert {p.nic for p in mine} == {"eth1", "eth2", "eth3", "eth4"}
    for probe in mine:
        nic = devices["su1-s1"].interfaces[probe.nic or ""]
        assert probe.source == nic.addresses[0].split("/")[0]
        assert nic.peer is not None
        here = devices[nic.peer.device].plane
        target = devices[probe.target]
        planes = {devices[i.peer.device].plane for i in target.interfaces.values()
                  if i.addresses[0].split("/")[0] == probe.address and i.peer is not None}
        assert probe.expect_reply == (planes == {here}), probe
    # cross-rail inside a plane (rail 1 to rail 2) and GPU to storage are both probed
    assert any(p.nic == "eth1" and p.address.startswith("10.100.2.") for p in mine)
    assert any(p.target == "store1" for ps in probes.values() for p in ps)
    assert all(p.source is None for p in plan_probes(LAB)["leaf1-h1"])


def _with_probes(mutate: Callable[[Probe], Probe]) -> FabricState:
    def fill(state: FabricState) -> None:
        for name, planned in plan_probes(RAIL).items():
            state.devices[name].probes = [mutate(p.model_copy(update={
                "replied": p.expect_reply, "left_by": p.nic})) for p in planned]
    return _observed(fill)


def test_probes_that_cross_planes_or_leave_by_another_nic_are_named() -> None:
    assert _findings(_with_probes(lambda p: p)) == []

    def leak(probe: Probe) -> Probe:
        return probe.model_copy(update={"replied": True}) if probe.nic == "eth3" else probe

    found = [f for f in _findings(_with_probes(leak)) if f[0] == "plane.independence"]
    assert found and all((d, p) == ("", "") or p == "eth3" for _, d, p, _ in found)
    assert "(plane 2) reached" in found[0][3] and "in another plane" in found[0][3]

    def astray(probe: Probe) -> Probe:
        return probe.model_copy(update={"left_by": "eth1"}) if probe.nic == "eth4" else probe

    found = [f for f in _findings(_with_probes(astray)) if f[0] == "host.routing"]
    assert {(d, p) for _, d, p, _ in found} >= {("su1-s1", "eth4")}
    assert "left by eth1" in found[0][3]


def test_mid_rollout_a_leaf_expects_paths_only_through_super_spines_at_intent() -> None:
    """Bring-up order: with only p1-ss1 at intent, plane 1 leaves expect their paths to the
    other pod through it, and plane 2 leaves expect none yet."""
    ready = set(RAIL.devices) - {"p1-ss2", "p2-ss1", "p2-ss2"}
    expected = restrict(RAIL, ready)

    def only_p1_ss1(state: FabricState) -> None:
        for name in ("p1-ss2", "p2-ss1", "p2-ss2"):
            state.devices.pop(name)
        owner = {p: leaf for leaf in RAIL.of_role(Role.LEAF) for bgp in leaf.bgp.values()
                 for p in bgp.networks}
        for device in state.devices.values():
            for table in (device.routes or {}).values():
                for prefix, route in list(table.items()):
                    # plane 2 has no super-spine yet: nothing crosses between its pods
                    if device.plane == 2 and owner[prefix].pod != device.pod:
                        table.pop(prefix)
                    else:
                        route.nexthops = [h for h in route.nexthops
                                          if not _crosses(device.name, h.interface)]

    state = _observed(only_p1_ss1)
    found = run_checks(CheckContext(state=state, plan=expected, stage=Stage.LIVE),
                       only=["ecmp.leaf_paths", "ecmp.pod_paths"])
    assert found == [], [f.message for f in found]
    # and the same state judged against the full plan names what is still missing
    late = run_checks(CheckContext(state=state, plan=RAIL, stage=Stage.LIVE),
                      only=["ecmp.leaf_paths"])
    assert {f.device for f in late} == {f"su{s}-leaf{k}" for s in (1, 2) for k in (3, 4)}


def _crosses(device: str, port: str | None) -> bool:
    """Whether `port` of `device` leads into plane 2's super-spines or p1-ss2 (not ready)."""
    iface = RAIL.devices[device].interfaces.get(port or "")
    return iface is not None and iface.peer is not None and iface.peer.device in (
        "p1-ss2", "p2-ss1", "p2-ss2")


def test_a_narrower_tier_member_is_named() -> None:
    def down(state: FabricState) -> None:
        state.devices["p2-pod1-spine1"].interfaces["swp34"].up = False

    found = [f for f in _findings(_observed(down)) if f[0] == "ecmp.width"]
    assert [(d, p, m) for _, d, p, m in found] == [
        ("p2-pod1-spine1", "swp34", "p2-pod1-spine1 has 1 uplinks (swp34 down or missing), the "
                                    "other spines of plane 2 have 2: its ECMP is narrower")]
