"""EOS collect of routes learned over EVPN/VXLAN and of every LLDP neighbour of a port
(tests/fixtures/eos/variants/evpn, lldp_neighbours; each file's `_provenance` names its
shape), through NAPALM's real EOSDriver on the eAPI double, and the checks that read them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.model.state import DeviceState, Endpoint, FabricState, NextHop
from flatfab.platforms.eos import PLATFORM
from flatfab.platforms.eos.collect import via
from flatfab.workflows.sharding.shard_codec import as_data, from_data, pack, unpack
from flatfab.workflows.sharding.shard_run import ShardOutput
from tests.support.eos import FIXTURES, eos_collect, eos_double, eos_fabric
from tests.support.paths import ROOT

VARIANTS = ROOT / "tests" / "fixtures" / "eos" / "variants"
ROUTES = "show_ip_route_vrf_all.json"


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return eos_fabric("lab")


@pytest.fixture(scope="module")
def planned(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


def shows(tmp_path: Path, variant: str) -> Path:
    folder = tmp_path / "shows"
    shutil.copytree(FIXTURES, folder)
    for path in (VARIANTS / variant).glob("*.json"):
        shutil.copy(path, folder / path.name)
    return folder


def collect(planned: DeviceState, folder: Path) -> DeviceState:
    return eos_collect(eos_double(PLATFORM.render(planned), folder), planned)


def edit(folder: Path, name: str, change: Any) -> None:
    data = json.loads((folder / name).read_text(encoding="utf-8"))
    change(data)
    (folder / name).write_text(json.dumps(data), encoding="utf-8")


def findings(lab: FabricState, seen: DeviceState, check: str) -> list[Finding]:
    state = lab.model_copy(update={"devices": {**lab.devices, seen.name: seen}})
    return [f for f in run_checks(CheckContext(state=state, plan=lab, stage=Stage.LIVE))
            if f.check == check and f.device == seen.name]


# ---- EVPN/VXLAN vias -----------------------------------------------------------------------


def test_evpn_vias_are_overlay_next_hops(planned: DeviceState, tmp_path: Path) -> None:
    seen = collect(planned, shows(tmp_path, "evpn"))
    assert seen.errors == [] and seen.not_modelled == {}
    assert seen.routes is not None
    route = seen.routes["blue"]["10.100.2.0/24"]
    assert route.protocol == "bgp"
    assert route.nexthops == [NextHop(vtep="10.0.0.18", vni=10100)]
    assert route.nexthops[0].overlay and route.nexthops[0].address is None
    host = seen.routes["blue"]["10.100.2.7/32"].nexthops
    assert host == [NextHop(interface="Vxlan1", vtep="10.0.0.18", vni=10100)]
    assert seen.routes["red"]["10.200.4.0/24"].nexthops == [NextHop(vtep="10.0.0.20",
                                                                    vni=10200)]
    underlay = seen.routes["default"]["10.0.0.18/32"].nexthops
    assert [(h.interface, h.overlay) for h in underlay] == [("Ethernet51", False),
                                                            ("Ethernet52", False)]
    # an underlay next hop keeps its serialized shape: no vtep, no vni keys
    assert underlay[0].model_dump() == {"interface": "Ethernet51",
                                        "address": "fe80::5200:ff:fe00:1"}


def test_overlay_routes_take_every_uplink_of_the_vteps_route(lab: FabricState,
                                                             planned: DeviceState,
                                                             tmp_path: Path) -> None:
    """The tenant routes ride the underlay routes to the VTEPs, which use both spines: no
    path is missing, and the VXLAN interface (VRF default) carrying tenant VRFs is no leak."""
    seen = collect(planned, shows(tmp_path, "evpn"))
    assert seen.interfaces["Vxlan1"].vrf == "default"
    assert findings(lab, seen, "ecmp.leaf_paths") == []
    assert findings(lab, seen, "tenant.leak") == []


def test_an_overlay_route_is_short_of_the_uplinks_its_vtep_misses(
        lab: FabricState, planned: DeviceState, tmp_path: Path) -> None:
    folder = shows(tmp_path, "evpn")

    def one_uplink(data: dict[str, Any]) -> None:  # leaf3's VTEP only via spine1
        route = data["vrfs"]["default"]["routes"]["10.0.0.19/32"]
        route["vias"] = route["vias"][:1]

    edit(folder, ROUTES, one_uplink)
    found = findings(lab, collect(planned, folder), "ecmp.leaf_paths")
    assert sorted((f.vrf, f.port, f.actual) for f in found) == [
        ("blue", "Ethernet52.100", "1 paths"), ("default", "Ethernet52", "1 paths"),
        ("red", "Ethernet52.200", "1 paths")]
    assert all("(leaf3)" in f.message and "spine2" in f.message for f in found)


def test_a_vtep_without_an_underlay_route_is_no_path(lab: FabricState, planned: DeviceState,
                                                     tmp_path: Path) -> None:
    folder = shows(tmp_path, "evpn")
    edit(folder, ROUTES, lambda d: d["vrfs"]["default"]["routes"].pop("10.0.0.20/32"))
    found = findings(lab, collect(planned, folder), "ecmp.leaf_paths")
    assert sorted((f.vrf, f.actual) for f in found) == [
        ("blue", "0 paths"), ("default", "0 paths"), ("red", "0 paths")]


@pytest.mark.parametrize(("entry", "hop"), [
    ({"nexthopAddr": "10.1.0.1", "interface": "Vlan100"}, ("Vlan100", "10.1.0.1")),
    ({"nexthopAddr": "", "interface": "Loopback0"}, ("Loopback0", None)),
    ({"nexthopAddr": "", "vtepAddr": "10.0.0.18", "vni": 10100, "routerMac": "x"},
     (None, None, "10.0.0.18", 10100)),
    ({"vtepAddr": "10.0.0.18", "vni": "10100", "localInterface": "Vxlan1"},
     ("Vxlan1", None, "10.0.0.18", 10100)),
    ({"nexthopAddr": "10.0.0.18", "interface": "Vxlan1"}, ("Vxlan1", None, "10.0.0.18", None)),
    ({"nexthopAddr": "", "routerMac": "50:00:00:0b:00:12"}, None),
    ({}, None),
    ("Ethernet1", None),
])
def test_via_kinds(entry: Any, hop: tuple[Any, ...] | None) -> None:
    assert via(entry) == hop


def test_a_via_of_no_known_kind_is_named_not_read_as_a_next_hop(planned: DeviceState,
                                                                tmp_path: Path) -> None:
    folder = shows(tmp_path, "evpn")

    def odd(data: dict[str, Any]) -> None:
        data["vrfs"]["blue"]["routes"]["10.100.3.0/24"]["vias"] = [
            {"nexthopAddr": "", "tunnelEndpoint": {"type": "unknown"}}]

    edit(folder, ROUTES, odd)
    seen = collect(planned, folder)
    assert seen.routes is not None and seen.routes["blue"]["10.100.3.0/24"].nexthops == []
    assert seen.not_modelled == {"VRF blue route vias": (
        "vias with no interface, next-hop address or VTEP (keys: nexthopAddr, "
        "tunnelEndpoint) on 10.100.3.0/24: left out of the next hops")}


# ---- LLDP --------------------------------------------------------------------------------


def test_every_neighbour_of_a_port_with_its_ttl(lab: FabricState, planned: DeviceState,
                                                tmp_path: Path) -> None:
    seen = collect(planned, shows(tmp_path, "lldp_neighbours"))
    port = seen.interfaces["Ethernet51"]
    # the summary states no age: the switch's order, the first as the peer
    assert port.lldp_neighbours == [
        Endpoint(device="spine1", port="Ethernet1", expires_s=120),
        Endpoint(device="spine3", port="Ethernet7", expires_s=90)]
    assert port.peer == port.lldp_neighbours[0]
    assert seen.interfaces["Ethernet52"].lldp_neighbours == []  # one neighbour
    assert seen.interfaces["Ethernet52"].peer == Endpoint(device="spine2", port="Ethernet1",
                                                          expires_s=120)
    # the planned neighbour beside another entry: not judged until the other
    # expires (the run incomplete), never passed and never miscabled
    settling = findings(lab, seen, "cabling.lldp")
    assert settling and all(f.severity.value == "not-judged"
                            and "verify again then" in f.message for f in settling)


def test_a_mac_port_id_names_no_port_and_is_named(planned: DeviceState,
                                                  tmp_path: Path) -> None:
    """The summary names no subtype and no description: an id shaped like a MAC (a Linux
    host's lldpd by default) names no port, so the port is not judged, and says why."""
    seen = collect(planned, shows(tmp_path, "lldp_neighbours"))
    assert seen.interfaces["Ethernet1"].peer is None
    why = seen.not_modelled["Ethernet1 LLDP entry leaf1-h1"]
    assert "'5254.001a.0011' is a MAC address" in why and "no port description" in why


def test_overlay_next_hops_and_neighbours_survive_a_shard_s_wire_format(
        planned: DeviceState, tmp_path: Path) -> None:
    """A distributed run sends collected devices through the shard codec: the VTEP, the VNI
    and every neighbour come back as collected."""
    seen = collect(planned, shows(tmp_path, "evpn"))
    seen.interfaces["Ethernet51"].lldp_neighbours = [
        Endpoint(device="spine1", port="Ethernet1", expires_s=120),
        Endpoint(device="spine3", port="Ethernet7", age_s=30, expires_s=90)]
    output = ShardOutput(shard="s", devices={"leaf1": seen})
    back = from_data(unpack(pack(as_data(output)))).devices["leaf1"]
    assert back == seen
    assert back.routes is not None
    assert back.routes["blue"]["10.100.2.0/24"].nexthops[0].vni == 10100


def test_an_entry_naming_no_far_port_is_named_not_dropped(planned: DeviceState,
                                                          tmp_path: Path) -> None:
    folder = shows(tmp_path, "lldp_neighbours")

    def no_port(data: dict[str, Any]) -> None:
        for entry in data["lldpNeighbors"]:
            if entry["port"] == "Ethernet2":
                entry["neighborPort"] = ""

    edit(folder, "show_lldp_neighbors.json", no_port)
    seen = collect(planned, folder)
    assert seen.interfaces["Ethernet2"].peer is None
    assert seen.not_modelled["Ethernet2 LLDP entry leaf1-h2"] == "the neighbour sent no port id"


def test_a_port_state_not_stated_is_unknown_never_down(lab: FabricState, planned: DeviceState,
                                                       tmp_path: Path) -> None:
    """`lineProtocolStatus` missing or `unknown` is no state read (None); any other word
    than up is down."""
    folder = shows(tmp_path, "lldp_neighbours")

    def states(data: dict[str, Any]) -> None:
        ports = data["interfaces"]
        ports["Ethernet51"].pop("lineProtocolStatus", None)
        ports["Ethernet52"]["lineProtocolStatus"] = "unknown"
        ports["Ethernet51.100"]["lineProtocolStatus"] = "lowerLayerDown"

    edit(folder, "show_interfaces.json", states)
    seen = collect(planned, folder)
    assert [seen.interfaces[p].up for p in ("Ethernet51", "Ethernet52", "Ethernet51.100")] == [
        None, None, False]
    down = {f.port for f in findings(lab, seen, "interface.up")}
    assert "Ethernet51.100" in down and not down & {"Ethernet51", "Ethernet52"}
