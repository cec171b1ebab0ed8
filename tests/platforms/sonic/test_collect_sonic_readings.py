"""SONiC collect of what its outputs say in more than one way: every LLDP neighbour of a port
and the far port whatever its id (tests/fixtures/sonic/readings/lldp_table_*), routes learned
over EVPN/VXLAN in a VRF with an L3VNI (readings/routes_*, variants/running_202305_evpn_l3vni),
and CONFIG_DB object references in the bracketed form of releases before 202012
(variants/running_201911_references_everywhere), read and compared in drift as the objects
they name. Each file's `source` names its shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.model.state import DeviceState, Endpoint, FabricState, NextHop
from flatfab.platforms import configdb
from flatfab.platforms.readback import NO_SYSTEM_NAME
from flatfab.platforms.sonic import PLATFORM, changes
from flatfab.platforms.sonic.collect import (
    INTERFACES,
    LLDP,
    ROUTES,
    RUNNING,
    l3vni_vlans,
    lldp_peers,
)
from tests.doubles.sonic import FIXTURES, SonicDouble
from tests.support.sonic import fabric, sonic_double, sonic_driver

READINGS = FIXTURES / "readings"
VARIANTS = FIXTURES / "variants"
# CONFIG_DB fields that name an object, and the table they name it in
REFERENCES = {"scheduler": "SCHEDULER", "wred_profile": "WRED_PROFILE",
              "profile": "BUFFER_PROFILE", "pool": "BUFFER_POOL",
              "dscp_to_tc_map": "DSCP_TO_TC_MAP", "dot1p_to_tc_map": "DOT1P_TO_TC_MAP",
              "tc_to_queue_map": "TC_TO_QUEUE_MAP", "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
              "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
              "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"}


def load(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / name).read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> FabricState:
    return fabric("lab", tmp_path_factory.mktemp("sonic-readings"))


@pytest.fixture(scope="module")
def leaf1(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


def collect(leaf1: DeviceState, double: SonicDouble) -> DeviceState:
    return PLATFORM.collect(PLATFORM.read_only(sonic_driver(double, read_only=True)), leaf1, [])


def with_tables(double: SonicDouble, tables: dict[str, dict[str, Any]]) -> None:
    """The double prints its CONFIG_DB with `tables` laid over it, row by row."""
    printed: dict[str, Any] = json.loads(json.dumps(double.config_db))
    for table, rows in tables.items():
        for key, fields in rows.items():
            printed.setdefault(table, {}).setdefault(key, {}).update(fields)
    double.broken[RUNNING] = json.dumps(printed, indent=4)


def findings(lab: FabricState, seen: DeviceState, check: str) -> list[Finding]:
    state = lab.model_copy(update={"devices": {**lab.devices, seen.name: seen}})
    return [f for f in run_checks(CheckContext(state=state, plan=lab, stage=Stage.LIVE))
            if f.check == check and f.device == seen.name]


def test_every_reading_says_where_it_comes_from() -> None:
    files = sorted(READINGS.glob("*.json"))
    assert len(files) >= 2
    for path in files:
        data = load(READINGS, path.name)
        assert "derived from documentation" in data["source"], path
        assert data["release"] and data["command"] and data["output"], path


# ---- LLDP ----------------------------------------------------------------------------------


def test_every_neighbour_of_a_port_and_the_far_port_whatever_its_id(
        lab: FabricState, leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    double.broken[LLDP] = load(READINGS, "lldp_table_202305_neighbours.json")["output"]
    seen = collect(leaf1, double)
    assert seen.errors == []
    uplink = seen.interfaces["Ethernet400"]
    # the table states no age or TTL: the switch's order, the first as the peer
    assert uplink.lldp_neighbours == [Endpoint(device="spine1", port="Ethernet0"),
                                      Endpoint(device="spine3", port="Ethernet56")]
    assert uplink.peer == uplink.lldp_neighbours[0]
    ends = {n: (i.peer.device, i.peer.port) for n, i in seen.interfaces.items()
            if n in ("Ethernet0", "Ethernet8", "Ethernet408") and i.peer is not None}
    assert ends == {"Ethernet0": ("host1", "enp1s0f0"),  # a MAC id: the description names it
                    "Ethernet408": ("spine2", "Ethernet0")}
    # a MAC id and no description name no port: named, never judged as a cabling error
    assert "is a MAC address" in seen.not_modelled["Ethernet8 LLDP entry row"]
    # the planned neighbour beside another entry: not judged until the other
    # expires (the run incomplete), never passed and never miscabled
    settling = findings(lab, seen, "cabling.lldp")
    assert settling and all(f.severity.value == "not-judged"
                            and "verify again then" in f.message for f in settling)


def test_rows_off_the_columns_are_read_by_whitespace() -> None:
    text = ("LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n"
            "-----------  --------------  --------------  ------------  -----------------\n"
            "Ethernet400  spine1-with-a-long-name  Ethernet0  BR  Ethernet0\n")
    assert lldp_peers(text, PLATFORM.names) == {
        "Ethernet400": [Endpoint(device="spine1-with-a-long-name", port="Ethernet0")]}


def test_a_row_naming_no_neighbour_is_named_not_dropped(leaf1: DeviceState) -> None:
    text = load(READINGS, "lldp_table_202305_neighbours.json")["output"]
    blank = text.replace("host2  ", "       ", 1)  # the neighbour sent no system name
    unnamed: dict[str, str] = {}
    assert "Ethernet8" not in lldp_peers(blank, PLATFORM.names, unnamed)
    assert unnamed == {"Ethernet8": NO_SYSTEM_NAME}
    double = sonic_double(leaf1, pushed=True)
    double.broken[LLDP] = blank
    seen = collect(leaf1, double)
    assert seen.interfaces["Ethernet8"].peer is None
    assert seen.not_modelled == {"Ethernet8 LLDP entry row": NO_SYSTEM_NAME}


# ---- EVPN/VXLAN routes in a VRF with an L3VNI ------------------------------------------


def test_routes_on_the_l3vni_vlan_are_overlay_next_hops(lab: FabricState,
                                                        leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    with_tables(double, load(VARIANTS, "running_202305_evpn_l3vni.json")["output"])
    double.broken[ROUTES] = json.dumps(
        load(READINGS, "routes_frr85_evpn_l3vni.json")["output"])
    seen = collect(leaf1, double)
    assert seen.errors == []
    assert seen.routes is not None
    assert seen.routes["blue"]["10.100.3.0/24"].nexthops == [
        NextHop(interface="Vlan3100", vtep="10.0.0.19", vni=10100)]
    assert seen.routes["blue"]["10.100.1.0/24"].nexthops == [NextHop(interface="Vlan100")]
    red = seen.routes["red"]["10.200.2.0/24"].nexthops  # VRF-lite: no L3VNI
    assert [(h.interface, h.overlay) for h in red] == [("Ethernet400.200", False),
                                                      ("Ethernet408.200", False)]
    assert findings(lab, seen, "ecmp.leaf_paths") == []
    assert findings(lab, seen, "tenant.leak") == []


def test_an_l3vni_needs_its_vlan_map() -> None:
    db: configdb.ConfigDb = {"VRF": {"Vrf_blue": {"vni": "10100"}, "Vrf_red": {}}}
    assert l3vni_vlans(db) == {}
    db["VXLAN_TUNNEL_MAP"] = {"vtep|map_10100_Vlan3100": {"vlan": "Vlan3100", "vni": "10100"},
                              "vtep|map_20_Vlan20": {"vlan": "Vlan20", "vni": "20"}}
    assert l3vni_vlans(db) == {"Vrf_blue": ("Vlan3100", 10100)}


# ---- CONFIG_DB references before 202012 ------------------------------------------------


def test_references_in_every_field_read_as_the_plain_names() -> None:
    db, _ = configdb.normalize(load(VARIANTS, "running_201911_references_everywhere.json")
                               ["output"])
    qos, ports = configdb.from_config_db(db, virtual=False)
    plain_qos, plain_ports = configdb.from_config_db(configdb.plain_references(db),
                                                     virtual=False)
    assert (qos, ports) == (plain_qos, plain_ports)
    port = ports["Ethernet0"]
    assert port.maps.tc_to_pg[3] == 3 and port.maps.pfc_to_pg[4] == 4
    assert port.pgs == {0: "ingress_lossy", 3: "lossless_100000_5m", 4: "lossless_100000_5m"}
    assert {q: (v.weight, v.profile) for q, v in port.queues.items()} == {
        0: (14, "egress_lossy"), 3: (15, "egress_lossless"), 4: (15, "egress_lossless")}
    assert qos is not None and qos.profiles["lossless_100000_5m"].pool == "ingress_lossless"
    listed = configdb.plain_references(db)["BUFFER_PORT_INGRESS_PROFILE_LIST"]["Ethernet0"]
    assert listed["profile_list"] == "ingress_lossy_profile,pg_lossless_100000_5m_profile"


@pytest.mark.parametrize(("value", "plain"), [
    ("[SCHEDULER|scheduler.1]", "scheduler.1"),
    ("[BUFFER_PROFILE_TABLE:pg_lossless_100000_5m_profile]", "pg_lossless_100000_5m_profile"),
    ("[BUFFER_PROFILE|a],[BUFFER_PROFILE|b]", "a,b"),
    ("scheduler.1", "scheduler.1"),
    ("3,4", "3,4"),
    ("", ""),
])
def test_plain_field(value: str, plain: str) -> None:
    assert configdb.plain_field(value) == plain


def test_a_switch_writing_references_has_no_drift_from_the_plain_render(
        leaf1: DeviceState) -> None:
    """A release before 202012 names the same objects as `[TABLE|name]`: not drift, and no
    change to push."""
    double = sonic_double(leaf1, pushed=True)
    rewritten = 0
    for rows in double.config_db.values():
        for fields in rows.values():
            for name, table in REFERENCES.items():
                if fields.get(name):
                    fields[name] = f"[{table}|{fields[name]}]"
                    rewritten += 1
    assert rewritten > 10
    intended = PLATFORM.render(leaf1)
    running, wanted = PLATFORM.drift_texts(sonic_driver(double), intended)
    assert PLATFORM.sections(running) == PLATFORM.sections(wanted)
    assert PLATFORM.change_notes(running, intended) == []
    seen = collect(leaf1, double)
    for name in ("Ethernet0", "Ethernet400"):  # a host port and an uplink, read as planned
        assert seen.interfaces[name].qos == leaf1.interfaces[name].qos, name
    printed = configdb.normalize(double.config_db)[0]  # as the driver reads it: lists as `@`
    assert changes.project(printed) == changes.project(configdb.plain_references(printed))


def test_an_interface_zebra_does_not_list_has_no_state_read(lab: FabricState,
                                                            leaf1: DeviceState) -> None:
    """Zebra's `show interface vrf all` is where the oper state comes from: a port it does
    not list is not read as up from its CONFIG_DB admin status (what was asked, not what
    is); admin down is down."""
    double = sonic_double(leaf1, pushed=True)
    shown = json.loads(double.outputs[INTERFACES])
    port = next(n for n in sorted(shown) if n.startswith("Ethernet") and "." not in n)
    del shown[port]
    double.broken[INTERFACES] = json.dumps(shown)
    seen = collect(leaf1, double)
    assert seen.interfaces[port].up is None
    assert not [f for f in findings(lab, seen, "interface.up") if f.port == port]
    with_tables(double, {"PORT": {port: {"admin_status": "down"}}})
    assert collect(leaf1, double).interfaces[port].up is False

