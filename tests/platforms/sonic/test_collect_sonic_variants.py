"""SONiC collect against each release's documented shape of what flatfab reads.

Variants: tests/fixtures/sonic/variants/*.json (derived from documentation, each naming its
release). A `show runningconfiguration all` variant is laid over leaf1's pushed CONFIG_DB
(table by table, as the switch would print both), then the switch is collected, its facts
read and its drift taken; what each variant adds is then read for what it means.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flatfab.checks import CATALOG, CheckContext, Stage, run_checks
from flatfab.model.state import DeviceState, FabricState, IfKind
from flatfab.platforms import configdb
from flatfab.platforms.readback import asn_of
from flatfab.platforms.sonic import PLATFORM, changes
from flatfab.platforms.sonic.collect import BGP, RUNNING, _db_hash
from tests.doubles.sonic import FIXTURES, SonicDouble
from tests.support.sonic import fabric, sonic_double, sonic_driver

VARIANTS = FIXTURES / "variants"
RUNNING_VARIANTS = sorted(p.name for p in VARIANTS.glob("running_*.json"))
BGP_VARIANTS = sorted(p.name for p in VARIANTS.glob("bgp_*.json"))


def variant(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VARIANTS / name).read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> FabricState:
    return fabric("lab", tmp_path_factory.mktemp("sonic-variants"))


@pytest.fixture(scope="module")
def leaf1(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


def overlaid(leaf1: DeviceState, name: str) -> SonicDouble:
    """leaf1 after a push, printing its CONFIG_DB with the variant's tables laid over it."""
    double = sonic_double(leaf1, pushed=True)
    printed: dict[str, Any] = json.loads(json.dumps(double.config_db))
    for table, rows in variant(name)["output"].items():
        if isinstance(rows, dict):  # fields merge into leaf1's rows, as on the switch
            for key, fields in rows.items():
                printed.setdefault(table, {}).setdefault(key, {}).update(fields)
        else:
            printed[table] = rows  # bgpraw: not a table
    double.broken[RUNNING] = json.dumps(printed, indent=4)
    return double


def read(name: str) -> tuple[configdb.ConfigDb, dict[str, Any]]:
    db, _ = configdb.normalize(variant(name)["output"])
    return db, configdb.from_config_db(db, virtual=False)[1]


def test_every_variant_says_where_it_comes_from() -> None:
    assert len(RUNNING_VARIANTS) >= 7 and len(BGP_VARIANTS) >= 3
    for path in VARIANTS.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert "derived from documentation" in data["source"], path
        assert data["release"] and data["command"], path


@pytest.mark.parametrize("name", RUNNING_VARIANTS)
def test_a_release_s_running_config_never_refuses_the_switch(leaf1: DeviceState,
                                                             name: str) -> None:
    double = overlaid(leaf1, name)
    driver = PLATFORM.read_only(sonic_driver(double, read_only=True))
    seen = PLATFORM.collect(driver, leaf1, [])
    # the double keeps COUNTERS_DB only for leaf1's planned queues: a variant's extra lossless
    # queue has no recorded hash (a failed read, named, not fatal)
    assert [e for e in seen.errors if "sonic-db-cli: command not found" not in e] == []
    assert seen.reachable
    assert seen.asn == 65101 and seen.interfaces["Ethernet400"].kind is IfKind.FABRIC
    facts = driver.get_facts()
    assert facts["hostname"] == "leaf1" and "Ethernet0" in facts["interface_list"]
    running, _ = PLATFORM.drift_texts(driver, PLATFORM.render(leaf1))
    assert running.startswith("!! config_db\n")
    # (the double logs a failed command as if it had changed something)
    assert [c for c in double.mutating if not c.startswith("sonic-db-cli COUNTERS_DB")] == []


def test_bgpraw_is_set_aside_not_read_as_a_table() -> None:
    db, aside = configdb.normalize(variant("running_202405_bgpraw.json")["output"])
    assert db == {} and aside == ["bgpraw: not a table (str)"]


def test_list_fields_keep_sonic_s_redis_spelling() -> None:
    db, aside = configdb.normalize(variant("running_202205_lists.json")["output"])
    assert aside == []
    assert db["ACL_TABLE"]["DATAACL"]["ports@"] == "Ethernet16,PortChannel0001"
    assert db["VLAN"]["Vlan100"]["dhcp_servers@"] == "192.0.2.10,192.0.2.11"
    assert configdb.json_fields(db["VLAN"]["Vlan100"]) == {
        "vlanid": "100", "dhcp_servers": ["192.0.2.10", "192.0.2.11"]}
    ntp, _ = configdb.normalize(variant("running_202411_bgpraw_lists.json")["output"])
    assert ntp["NTP"]["global"] == {"src_intf": "eth0", "authentication": "false",
                                    "polling_interval": "10"}


def test_a_patch_gives_list_fields_back_as_lists() -> None:
    running: configdb.ConfigDb = {"VLAN": {"Vlan100": {"vlanid": "100",
                                                       "dhcp_servers@": "192.0.2.10"}}}
    desired: configdb.ConfigDb = {"VLAN": {"Vlan100": {"vlanid": "100",
                                                       "dhcp_servers@": "192.0.2.10,192.0.2.11"}},
                                  "ACL_TABLE": {"X": {"ports@": "Ethernet0"}}}
    assert changes.patch(running, desired) == [
        {"op": "add", "path": "/ACL_TABLE", "value": {"X": {"ports": ["Ethernet0"]}}},
        {"op": "replace", "path": "/VLAN/Vlan100/dhcp_servers",
         "value": ["192.0.2.10", "192.0.2.11"]}]


def test_portchannels_are_lags_with_members_subinterfaces_and_addresses(
        leaf1: DeviceState) -> None:
    seen = PLATFORM.collect(sonic_driver(overlaid(leaf1, "running_202205_lists.json")), leaf1, [])
    lag = seen.interfaces["PortChannel0001"]
    assert (lag.kind, lag.members, lag.addresses, lag.vrf, lag.mtu) == (
        IfKind.LAG, ["Ethernet24", "Ethernet32"], ["10.1.9.0/31"], "default", 9100)
    assert lag.speed_mbps == 2 * 800000  # the members' speeds
    assert seen.interfaces["Ethernet24"].lag == "PortChannel0001"
    sub = seen.interfaces["Po0001.10"]
    assert (sub.parent, sub.vrf, sub.addresses) == ("PortChannel0001", "blue", ["10.10.9.0/31"])
    assert seen.interfaces["Vlan100"].addresses == ["10.100.1.1/24"]  # dhcp_servers aside


def test_portchannel_members_from_the_row_list_and_a_vlan_of_lags(leaf1: DeviceState) -> None:
    seen = PLATFORM.collect(sonic_driver(overlaid(leaf1, "running_202012_references.json")),
                            leaf1, [])
    assert seen.interfaces["PortChannel0001"].members == ["Ethernet24", "Ethernet32"]
    assert seen.interfaces["PortChannel0001"].bridge == "Vlan300"
    assert seen.interfaces["Ethernet16"].bridge == "Vlan300"


def test_a_lag_in_a_tenant_vrf_without_a_members_list(leaf1: DeviceState) -> None:
    seen = PLATFORM.collect(sonic_driver(overlaid(leaf1, "running_202411_bgpraw_lists.json")),
                            leaf1, [])
    lag = seen.interfaces["PortChannel0002"]
    assert (lag.members, lag.vrf, lag.addresses) == (["Ethernet40"], "red", ["10.20.9.0/31"])


def test_table_references_read_as_the_names_they_carry() -> None:
    db, ports = read("running_202012_references.json")
    port = ports["Ethernet0"]
    assert port.trust == "dscp" and port.maps.dscp_to_tc[26] == 3
    assert port.pgs == {3: "lossless_100000_5m", 4: "lossless_100000_5m"}
    assert {q: (v.weight, v.ecn.min_bytes if v.ecn else None, v.profile)
            for q, v in port.queues.items()} == {3: (15, 1048576, "egress_lossless"),
                                                 4: (15, 1048576, "egress_lossless")}
    qos, _ = configdb.from_config_db(db, virtual=False)
    assert qos is not None and qos.profiles["lossless_100000_5m"].pool == "ingress_lossless"
    # before pfcwd_sw_enable, the watchdog watches the PFC priorities: said so
    assert port.watchdog is not None and port.watchdog.priorities == [3, 4]
    assert (port.watchdog.action, port.watchdog.detect_ms, port.watchdog.poll_ms) == (
        "drop", 200, 200)
    assert list(port.watchdog.unknown) == ["priorities"]


@pytest.mark.parametrize("name", ["running_202305_dynamic_buffers.json",
                                  "running_201911_null_profile_object.json"])
def test_a_null_profile_is_no_profile_and_says_why(name: str) -> None:
    db, ports = read(name)
    port = ports["Ethernet0"]
    assert "NULL" not in port.pgs.values() and 3 not in port.pgs and 4 not in port.pgs
    assert set(port.unknown) == {"pgs.3", "pgs.4"}
    assert "dynamic buffer model" in port.unknown["pgs.3"]
    qos, _ = configdb.from_config_db(db, virtual=False)
    assert qos is not None and "NULL" not in qos.profiles


def test_dynamic_model_keeps_its_lossy_pg() -> None:
    _, ports = read("running_202305_dynamic_buffers.json")
    assert ports["Ethernet0"].pgs == {0: "ingress_lossy"}


def test_trust_is_the_map_bound_to_the_port() -> None:
    db, ports = read("running_202311_trust.json")
    assert {p: (q.trust, q.maps.dscp_to_tc[26]) for p, q in ports.items()} == {
        "Ethernet0": ("dscp", 3), "Ethernet8": ("dscp", 3),  # global map serves it
        "Ethernet16": ("pcp", 0), "Ethernet24": ("dscp", 3)}
    del db["PORT_QOS_MAP"]["global"]
    _, alone = configdb.from_config_db(db, virtual=False)
    assert alone["Ethernet24"].trust == "none"  # not PCP: no map is bound
    assert "trust" not in alone["Ethernet24"].unknown  # no map bound: a value, judged
    assert alone["Ethernet16"].trust == "pcp" and alone["Ethernet16"].unknown == {}


def test_watchdog_settings_left_out_are_unknown_not_defaults() -> None:
    _, ports = read("running_202311_trust.json")
    dog = ports["Ethernet0"].watchdog
    assert dog is not None
    assert (dog.priorities, dog.detect_ms, dog.restore_ms, dog.action) == ([3], 400, 400, None)
    assert set(dog.unknown) == {"action", "poll_ms"}
    assert dog.unknown["poll_ms"] == "PFC_WD|GLOBAL has no POLL_INTERVAL"
    assert ports["Ethernet8"].watchdog is None  # no PFC_WD row: no watchdog


@pytest.mark.parametrize("name", BGP_VARIANTS)
def test_bgp_summary_of_each_frr_release(leaf1: DeviceState, name: str) -> None:
    double = sonic_double(leaf1, pushed=True)
    double.broken[BGP] = json.dumps(variant(name)["output"])
    seen = PLATFORM.collect(sonic_driver(double), leaf1, [])
    assert seen.errors == []
    up = seen.bgp["default"].peers["Ethernet400"]
    assert (up.interface, up.address, up.peer_device, up.state) == (
        "Ethernet400", None, "spine1", "Established")
    if name == "bgp_frr10_asdot.json":
        assert seen.asn == 65002 * 65536 + 2048 and up.remote_asn == 65000 * 65536 + 1
    else:
        assert seen.asn == 65101 and up.remote_asn == 65000
    assert "blue" not in seen.bgp or seen.bgp["blue"].peers == {}


def test_a_peer_frr_has_not_heard_from_has_no_name() -> None:
    peers = variant("bgp_frr75_202012.json")["output"]["default"]["ipv4Unicast"]["peers"]
    assert "hostname" not in peers["Ethernet408"] and peers["Ethernet408"]["state"] == "Active"


def test_asn_in_every_notation_and_an_unreadable_one_named() -> None:
    device = DeviceState(name="x", role="leaf", platform="sonic")
    assert asn_of(device, 65101, "w") == 65101
    assert asn_of(device, "65101", "w") == 65101
    assert asn_of(device, "65002.2048", "w") == 4_259_973_120
    assert asn_of(device, "0.65001", "w") == 65001  # asdot+
    assert asn_of(device, 0, "w") is None and asn_of(device, None, "w") is None
    assert device.errors == []
    assert asn_of(device, "65002:2048", "bgp: VRF default") is None
    assert device.errors == ["bgp: VRF default: AS number '65002:2048' is not asplain or asdot"]


def test_the_catalog_runs_on_a_switch_with_lags(lab: FabricState, leaf1: DeviceState) -> None:
    """The planner plans no LAG; observed ones must neither crash a check nor be judged."""
    for name in ("running_202205_lists.json", "running_202411_bgpraw_lists.json"):
        seen = PLATFORM.collect(sonic_driver(overlaid(leaf1, name)), leaf1, [])
        clean = PLATFORM.collect(sonic_driver(sonic_double(leaf1, pushed=True)), leaf1, [])
        state = lab.model_copy(update={"devices": {**lab.devices, "leaf1": seen}})
        base = lab.model_copy(update={"devices": {**lab.devices, "leaf1": clean}})
        found = run_checks(CheckContext(state=state, plan=lab, stage=Stage.LIVE))
        before = run_checks(CheckContext(state=base, plan=lab, stage=Stage.LIVE))
        assert [f.message for f in found] == [f.message for f in before], name


@pytest.mark.parametrize(("printed", "fields"), [
    ("{'SAI_PORT_STAT_PFC_3_RX_PKTS': '12', 'SAI_PORT_STAT_PFC_3_TX_PKTS': '0'}",
     {"SAI_PORT_STAT_PFC_3_RX_PKTS": "12", "SAI_PORT_STAT_PFC_3_TX_PKTS": "0"}),
    ("{}\n", {}),  # a hash the switch does not keep (virtual switch, polling off)
    ("", {}),  # no output at all for a missing key
])
def test_sonic_db_cli_hgetall_shapes(printed: str, fields: dict[str, str]) -> None:
    assert _db_hash(printed, "COUNTERS:oid:0x1") == fields


def test_variant_files_are_json_objects() -> None:
    for path in Path(VARIANTS).glob("*.json"):
        assert isinstance(json.loads(path.read_text(encoding="utf-8"))["output"], dict)


@pytest.mark.parametrize("name", ["running_202405_bgpraw.json",
                                  "running_202411_bgpraw_lists.json"])
def test_a_switch_printing_current_shapes_verifies(lab: FabricState, leaf1: DeviceState,
                                                   name: str) -> None:
    """What issue 19 found: bgpraw and list fields used to refuse the whole switch. Now it
    is read in full and the catalog (lossless included) finds nothing wrong with it."""
    seen = PLATFORM.collect(sonic_driver(overlaid(leaf1, name)), leaf1, [])
    assert seen.reachable and seen.asn == leaf1.asn
    assert {vrf: sorted(b.peers) for vrf, b in seen.bgp.items()} == {
        vrf: sorted(b.peers) for vrf, b in leaf1.bgp.items()}
    planned_ports = {n for n, i in leaf1.interfaces.items() if i.qos is not None}
    assert planned_ports <= {n for n, i in seen.interfaces.items() if i.qos is not None}
    clean = PLATFORM.collect(sonic_driver(sonic_double(leaf1, pushed=True)), leaf1, [])

    def failing(device: DeviceState) -> list[str]:
        state = lab.model_copy(update={"devices": {**lab.devices, "leaf1": device}})
        found = run_checks(CheckContext(state=state, plan=lab, stage=Stage.LIVE))
        return [f"{f.check}: {f.message}" for f in found
                if f.device == "leaf1" and f.severity.fails]

    # the recorded BGP summary has sessions still coming up: the same as the clean switch's
    assert failing(seen) == failing(clean)
    assert not [line for line in failing(seen) if CATALOG[line.split(":")[0]].lossless]
