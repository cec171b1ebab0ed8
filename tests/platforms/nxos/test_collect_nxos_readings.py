"""NX-OS collect of every LLDP neighbour of a port (the far port by its port-id subtype, the
time each entry has left) and of routes learned over EVPN/VXLAN, from
tests/fixtures/nxos/variants/ (README there) laid over the lab-leaf1 recorded outputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.model.state import DeviceState, Endpoint, FabricState, NextHop
from flatfab.platforms.nxos import PLATFORM
from flatfab.platforms.nxos.collect import path
from tests.doubles.nxos import FIXTURES, NxosDouble, recorded
from tests.support.nxos import nxos_fabric


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return nxos_fabric("lab")


@pytest.fixture(scope="module")
def leaf1(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


def collect(leaf1: DeviceState, variant: str,
            change: Callable[[dict[str, Any]], None] | None = None) -> DeviceState:
    running, outputs = recorded("lab-leaf1")
    for file in sorted((FIXTURES / "variants" / variant).glob("*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        if change is not None:
            change(data)
        outputs[file.stem.replace("_", " ") + " | json"] = json.dumps(data)
    driver = PLATFORM.adapt(NxosDouble(running, outputs), read_only=True)
    return PLATFORM.collect(PLATFORM.read_only(driver), leaf1, [])


def findings(lab: FabricState, seen: DeviceState, check: str) -> list[Finding]:
    state = lab.model_copy(update={"devices": {**lab.devices, seen.name: seen}})
    return [f for f in run_checks(CheckContext(state=state, plan=lab, stage=Stage.LIVE))
            if f.check == check and f.device == seen.name]


# ---- LLDP --------------------------------------------------------------------------------


def test_every_neighbour_of_a_port_the_one_heard_last_first(lab: FabricState,
                                                            leaf1: DeviceState) -> None:
    seen = collect(leaf1, "lldp")
    assert seen.errors == []
    uplink = seen.interfaces["Ethernet1/51"]
    # the stale entry (14 s left) is listed first by the switch; the live one has 104 s left
    assert uplink.lldp_neighbours == [
        Endpoint(device="spine1", port="Ethernet1/1", expires_s=104),
        Endpoint(device="spine3", port="Ethernet1/7", expires_s=14)]
    assert uplink.peer == uplink.lldp_neighbours[0]
    # the planned neighbour beside another entry: not judged until the other
    # expires (the run incomplete), never passed and never miscabled
    settling = findings(lab, seen, "cabling.lldp")
    assert settling and all(f.severity.value == "not-judged"
                            and "verify again then" in f.message for f in settling)


def test_the_far_port_by_its_subtype_in_either_spelling(leaf1: DeviceState) -> None:
    seen = collect(leaf1, "lldp")
    ends = {n: seen.interfaces[n].peer for n in ("Ethernet1/1", "Ethernet1/2", "Ethernet1/52")}
    assert ends == {
        # "Mac Address": the description names the port
        "Ethernet1/1": Endpoint(device="leaf1-h1", port="eth1", expires_s=111),
        # subtype 3 (a MAC), as 7.x prints the number
        "Ethernet1/2": Endpoint(device="leaf1-h2", port="eth1", expires_s=95),
        # subtype 5 (interface name) in its short form; `hold_time` as the time
        "Ethernet1/52": Endpoint(device="spine2", port="Ethernet1/1", expires_s=120)}


def test_a_row_naming_no_far_port_is_named_not_dropped(leaf1: DeviceState) -> None:
    def no_port(data: dict[str, Any]) -> None:
        for row in data["TABLE_nbor_detail"]["ROW_nbor_detail"]:
            if row["l_port_id"] == "Eth1/2":
                row.pop("port_id")
                row.pop("port_desc")

    seen = collect(leaf1, "lldp", no_port)
    assert seen.interfaces["Ethernet1/2"].peer is None
    assert seen.not_modelled == {
        "Ethernet1/2 LLDP entry leaf1-h2": "the neighbour sent no port id"}


# ---- EVPN/VXLAN routes -------------------------------------------------------------------


def test_vxlan_paths_are_overlay_next_hops(lab: FabricState, leaf1: DeviceState) -> None:
    seen = collect(leaf1, "evpn")
    assert seen.errors == [] and seen.routes is not None
    assert seen.routes["blue"]["10.100.2.0/24"].nexthops == [NextHop(vtep="10.0.0.18",
                                                                    vni=10100)]
    assert seen.routes["red"]["10.200.4.0/24"].nexthops == [NextHop(vtep="10.0.0.20",
                                                                   vni=10200)]
    assert seen.routes["blue"]["10.100.2.0/24"].protocol == "bgp"
    under = seen.routes["default"]["10.0.0.19/32"].nexthops
    assert [(h.interface, h.overlay) for h in under] == [("Ethernet1/51", False),
                                                         ("Ethernet1/52", False)]
    assert findings(lab, seen, "ecmp.leaf_paths") == []
    assert findings(lab, seen, "tenant.leak") == []


@pytest.mark.parametrize(("row", "hop"), [
    ({"ipnexthop": "10.0.0.18", "segid": "10100", "encap": "vxlan"},
     (None, None, "10.0.0.18", 10100)),
    ({"ipnexthop": "10.0.0.18%default", "segid": "10100", "tunnelid": "0xa000012",
      "encap": "VXLAN"}, (None, None, "10.0.0.18", 10100)),
    ({"ipnexthop": "10.0.0.18", "encap": "vxlan"}, (None, None, "10.0.0.18", None)),
    ({"ipnexthop": "fe80::1", "ifname": "Eth1/51"}, ("Ethernet1/51", "fe80::1")),
    ({"ipnexthop": "10.100.1.0", "ifname": ""}, (None, "10.100.1.0")),
])
def test_path_kinds(row: dict[str, Any], hop: tuple[Any, ...]) -> None:
    assert path(row) == hop
