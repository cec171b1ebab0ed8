"""frr collect against each release's documented shape of what flatfab reads.

Variants: tests/fixtures/frr/variants/*.json (derived from documentation, each naming the
FRR, lldpd or iproute2 release and the command). Each answers its command in place of the
embedded lab's recording (tests/doubles/frr.py's fake shell), then leaf1 is read
through the NAPALM getters and collect: what a release adds is tolerated, what it leaves out
or prints in a shape flatfab cannot read is named in the device's errors, never taken as 0.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.frr import kernel_qos
from flatfab.platforms.frr import links as links_mod
from flatfab.platforms.frr.collect import BGP_SUMMARY, collect, lldp_neighbors
from flatfab.platforms.frr.driver import FrrDriver, normalize_frr
from tests.doubles.frr import LLDP_SOCKET, FakeShell, Reply, leaf1_driver
from tests.support.paths import FIXTURES, ROOT

VARIANTS = FIXTURES / "frr" / "variants"
LLDP = f"/usr/sbin/lldpcli -u {LLDP_SOCKET} -f json show neighbors"


def variant(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VARIANTS / name).read_text(encoding="utf-8"))
    return data


def names(prefix: str) -> list[str]:
    return sorted(p.name for p in VARIANTS.glob(f"{prefix}_*.json"))


def text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, indent=1) + "\n"


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return plan(load_intent(ROOT / "intents" / "lab"))


@pytest.fixture
def planned(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"].model_copy(update={"qos": None})


def driver_with(**answers: Any) -> tuple[FrrDriver, FakeShell]:
    driver, shell = leaf1_driver(read_only=True)
    for command, output in answers.items():
        shell.answers[command] = Reply(text(output))
    return driver, shell


def test_every_variant_says_where_it_comes_from() -> None:
    found = sorted(VARIANTS.glob("*.json"))
    assert len(found) >= 20
    for path in found:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert "derived from documentation" in data["source"], path
        assert data["release"] and data["command"], path
    for prefix in ("bgp", "routes", "version", "running", "lldp", "ip_link", "ip_addr", "tc"):
        assert names(prefix), prefix


# ---- vtysh: show bgp vrf all summary json ---------------------------------------------------


@pytest.mark.parametrize("name", names("bgp"))
def test_every_bgp_summary_release_is_read_without_refusing_the_switch(
        planned: DeviceState, name: str) -> None:
    driver, _ = driver_with(**{f"vtysh -c '{BGP_SUMMARY}'": variant(name)["output"]})
    seen = collect(driver, planned, [])
    assert seen.bgp["default"].asn is not None and seen.asn == seen.bgp["default"].asn
    assert seen.bgp["default"].peers
    neighbours = driver.get_bgp_neighbors()  # NAPALM's PeerDict: ints and strings only
    for vrf in neighbours.values():
        for peer in vrf["peers"].values():
            assert isinstance(peer["remote_as"], int) and isinstance(peer["remote_id"], str)
            assert isinstance(peer["address_family"]["ipv4"]["received_prefixes"], int)


def test_frr75_peer_without_hostname_and_peer_not_established(planned: DeviceState) -> None:
    driver, _ = driver_with(**{f"vtysh -c '{BGP_SUMMARY}'":
                               variant("bgp_frr75_no_hostname.json")["output"]})
    seen = collect(driver, planned, [])
    swp51, swp52 = seen.bgp["default"].peers["swp51"], seen.bgp["default"].peers["swp52"]
    assert (swp51.peer_device, swp51.remote_asn, swp51.prefixes_received) == (None, 65000, 4)
    # AS 0 is "not learned yet" and an absent count is not 0: both unknown
    assert (swp52.state, swp52.remote_asn, swp52.prefixes_received) == ("Active", None, None)
    admin = seen.bgp["blue"].peers["10.1.1.2"]
    assert (admin.address, admin.interface, admin.state) == ("10.1.1.2", None, "Idle (Admin)")
    assert set(seen.bgp["default"].peers) == {"swp51", "swp52"}  # ipv6Unicast: not read
    napalm = driver.get_bgp_neighbors()
    assert napalm["global"]["peers"]["swp51"]["remote_id"] == ""
    assert napalm["global"]["peers"]["swp52"]["address_family"]["ipv4"][
        "received_prefixes"] == -1
    assert napalm["blue"]["peers"]["10.1.1.2"]["is_enabled"] is False


def test_frr7_flat_summary_and_prefix_received_count(planned: DeviceState) -> None:
    driver, _ = driver_with(**{f"vtysh -c '{BGP_SUMMARY}'":
                               variant("bgp_frr7_flat_prefixReceivedCount.json")["output"]})
    seen = collect(driver, planned, [])
    assert seen.bgp["default"].asn == 65101 and seen.bgp["default"].router_id == "10.0.0.17"
    assert seen.bgp["default"].peers["swp52"].prefixes_received == 2
    assert seen.bgp["red"].peers["swp51.200"].prefixes_received == 1
    assert driver.get_bgp_neighbors()["global"]["peers"]["swp51"]["address_family"]["ipv4"][
        "received_prefixes"] == 4


def test_frr85_vrf_with_evpn_only_has_its_as_and_no_ipv4_peers(planned: DeviceState) -> None:
    driver, _ = driver_with(**{f"vtysh -c '{BGP_SUMMARY}'":
                               variant("bgp_frr85_evpn_only_vrf.json")["output"]})
    seen = collect(driver, planned, [])
    assert (seen.bgp["green"].asn, seen.bgp["green"].peers) == (65101, {})
    assert seen.bgp["default"].peers["swp51"].state == "Established"
    assert driver.get_bgp_neighbors()["green"] == {"router_id": "10.0.0.17", "peers": {}}


def test_frr10_asdot_is_read_and_an_unreadable_as_is_named(planned: DeviceState) -> None:
    driver, _ = driver_with(**{f"vtysh -c '{BGP_SUMMARY}'":
                               variant("bgp_frr10_asdot.json")["output"]})
    seen = collect(driver, planned, [])
    peers = seen.bgp["default"].peers
    assert seen.asn == 1 * 65536 + 35565
    assert (peers["swp51"].remote_asn, peers["swp52"].remote_asn) == (65546, 65000)
    assert peers["swp53"].remote_asn is None
    assert any("swp53" in e and "'not-an-as'" in e for e in seen.errors), seen.errors


# ---- vtysh: show ip route vrf X json ----------------------------------------------------------


def test_frr10_route_entries_with_extras_recursive_duplicate_and_blackhole(
        planned: DeviceState) -> None:
    out = variant("routes_frr10_extras.json")
    driver, _ = driver_with(**{out["command"]: out["output"]})
    seen = collect(driver, planned, [])
    assert seen.routes is not None
    table = seen.routes["default"]
    bgp = table["10.0.0.1/32"]
    assert bgp.protocol == "bgp"  # the selected entry, not the OSPF one
    assert [(h.interface, h.address) for h in bgp.nexthops] == [("swp51", "fe80::1")]
    static = table["10.9.0.0/16"]  # the recursive hop is not in the FIB, its resolver is
    assert [(h.interface, h.address) for h in static.nexthops] == [("swp51", "fe80::1")]
    assert [(h.interface, h.address) for h in table["10.66.0.0/16"].nexthops] == [(None, None)]


def test_frr75_route_entries(planned: DeviceState) -> None:
    out = variant("routes_frr75.json")
    driver, _ = driver_with(**{out["command"]: out["output"]})
    seen = collect(driver, planned, [])
    assert seen.routes is not None and seen.routes["default"]["10.0.0.1/32"].nexthops


def test_an_unreadable_route_table_is_unread_not_empty(planned: DeviceState) -> None:
    driver, _ = driver_with(**{"vtysh -c 'show ip route vrf blue json'": "% VRF blue not found\n"})
    seen = collect(driver, planned, [])
    assert seen.routes is None  # no check judges a RIB that was not read
    assert any(e.startswith("routes:") and "VRF blue" in e for e in seen.errors)
    driver, _ = driver_with(**{"vtysh -c 'show ip route vrf red json'": []})
    seen = collect(driver, planned, [])
    assert seen.routes is None and any("VRF red" in e for e in seen.errors)


@pytest.mark.parametrize(("entry", "named"), [
    ({"selected": "yes", "protocol": "bgp"}, 'VRF red is not FRR\'s route table: Expected `bool`, '
     'got `str` - at `$[\'10.1.0.0/24\'][0].selected`'),
    ({"selected": True, "protocol": "bgp", "nexthops": [{"fib": True, "ip": 7}]},
     "VRF red: a route's next hops are not FRR's: Expected `str | null`, got `int` - at "
     "`$[0].ip`"),
])
def test_a_route_entry_of_another_shape_is_named_with_its_key(
        planned: DeviceState, entry: dict[str, Any], named: str) -> None:
    driver, _ = driver_with(**{"vtysh -c 'show ip route vrf red json'":
                               json.dumps({"10.1.0.0/24": [entry]})})
    seen = collect(driver, planned, [])
    assert seen.routes is None
    assert any(e.startswith("routes:") and named in e for e in seen.errors), seen.errors


# ---- vtysh: show version, show running-config -------------------------------------------------


@pytest.mark.parametrize("name", names("version"))
def test_every_show_version_release_gives_the_os_version(name: str) -> None:
    out = variant(name)
    driver, _ = driver_with(**{out["command"]: out["output"]})
    assert driver.get_facts()["os_version"] == out["expect"]


@pytest.mark.parametrize("name", names("running"))
def test_every_running_config_release_normalizes_to_the_config_alone(name: str) -> None:
    out = variant(name)
    assert normalize_frr(out["output"]) == out["expect"]


# ---- lldpcli -f json show neighbors ------------------------------------------------------------


@pytest.mark.parametrize("name", names("lldp"))
def test_every_lldpd_shape_gives_napalm_neighbours(name: str) -> None:
    out = variant(name)
    driver, _ = driver_with(**{LLDP: out["output"]})
    assert driver.get_lldp_neighbors() == out["expect"]


def test_two_neighbours_on_a_port_carry_the_hold_time_they_sent(planned: DeviceState) -> None:
    """lldpd states no time of an entry's last update, only the TTL its neighbour sent: the
    longest a moved cable's old entry can outlive it, which the settling finding names."""
    out = variant("lldp_1_0_list_two_on_one_port.json")
    driver, _ = driver_with(**{LLDP: out["output"]})
    seen = collect(driver, planned, [])
    port = seen.interfaces["swp51"]
    assert [(n.device, n.port, n.hold_s) for n in port.lldp_neighbours] == [
        ("spine1", "swp1", 120), ("spine9", "swp7", 120)]


def test_a_neighbour_without_a_name_or_port_name_is_reported_not_guessed(
        planned: DeviceState) -> None:
    driver, _ = driver_with(**{LLDP: variant("lldp_1_0_no_chassis_name.json")["output"]})
    seen = collect(driver, planned, [])
    assert seen.interfaces["swp51"].peer is None  # not a device called "id"
    assert seen.interfaces["swp52"].peer is not None
    assert "lldp: swp51: the neighbour sends no system name" in seen.errors
    driver, _ = driver_with(**{LLDP: variant("lldp_1_0_mac_port_id.json")["output"]})
    seen = collect(driver, planned, [])
    assert str(seen.interfaces["swp51"].peer) == "spine1:swp1"  # from the port description
    assert seen.interfaces["swp52"].peer is None
    assert any(e.startswith("lldp: swp52: the neighbour's port id") for e in seen.errors)


# ---- ip -j -d link / addr show -------------------------------------------------------------------


def test_iproute2_6_link_extras_and_an_l3mdev_vrf(planned: DeviceState) -> None:
    out = variant("ip_link_iproute2_6_extras.json")
    driver, _ = driver_with(**{out["command"]: out["output"]})
    interfaces = driver.get_interfaces()
    assert interfaces["dummy0"]["is_up"] is True  # operstate UNKNOWN with carrier
    assert interfaces["swp51"]["mtu"] == 9216
    links = driver.get_interface_links()
    assert links["swp53"] == {"vrf": "green", "master": ""}  # a VRF device is not a bridge
    assert links["swp51"] == {"vrf": "", "master": ""}
    specs = links_mod.from_ip_json({"default": text(out["output"])}, {"eth0"})
    assert specs["swp51"] == links_mod.LinkSpec(name="swp51", mtu=9216, up=True)
    seen = collect(driver, planned, [])
    assert seen.interfaces["swp51"].mtu == 9216 and seen.interfaces["swp53"].vrf == "green"


def test_a_link_without_mtu_is_unknown_not_zero(planned: DeviceState) -> None:
    out = variant("ip_link_no_mtu.json")
    driver, _ = driver_with(**{out["command"]: out["output"]})
    assert driver.get_interfaces()["swp52"]["mtu"] == 0  # NAPALM's model wants an int
    assert driver.get_interface_links()["swp52"] == {"vrf": "", "master": "", "unread": "mtu"}
    seen = collect(driver, planned, [])
    assert seen.interfaces["swp52"].mtu is None and seen.interfaces["swp51"].mtu == 9216
    assert "interface swp52: the kernel does not report its mtu" in seen.errors
    # not a link flatfab can manage: no line, so a candidate naming it is refused
    assert "swp52" not in links_mod.from_ip_json({"default": text(out["output"])}, set())


def test_addr_info_without_an_address_is_skipped(planned: DeviceState) -> None:
    out = variant("ip_addr_iproute2_4_empty_entries.json")
    driver, _ = driver_with(**{out["command"]: out["output"]})
    addresses = driver.get_interfaces_ip()
    assert addresses["lo"]["ipv4"]["10.0.0.17"] == {"prefix_length": 32}
    assert addresses["swp51"] == {"ipv6": {"fe80::51:1": {"prefix_length": 64}}}
    assert collect(driver, planned, []).loopback == "10.0.0.17/32"


# ---- tc: the lab's kernel queues --------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in names("tc") if "expect" in variant(n)])
def test_every_tc_release_reads_back_the_same_kernel_row(name: str) -> None:
    out = variant(name)["output"]
    row, counters = kernel_qos.parse_link("swp51", "default", text(out["qdisc"]),
                                          text(out["filter"]), out["class"])
    assert row == variant(name)["expect"]
    if "counters" in variant(name):  # statistics tc does not print are left out, never 0
        assert all(c == {} for c in counters.values()) and len(counters) == 8
    else:
        assert counters[3] == {"bytes": 3000, "packets": 30, "drops": 0}


def test_a_tc_filter_flatfab_cannot_read_makes_the_lossless_state_unread(
        lab: FabricState) -> None:
    out = variant("tc_filter_without_match.json")
    with pytest.raises(kernel_qos.KernelQosError, match=out["error"]):
        kernel_qos.parse_link("swp51", "default", text(out["output"]["qdisc"]),
                              text(out["output"]["filter"]), out["output"]["class"])
    driver, _ = driver_with(**{
        "tc -j -s qdisc show dev swp51": out["output"]["qdisc"],
        "tc -j filter show dev swp51": out["output"]["filter"],
        "tc class show dev swp51": out["output"]["class"]})
    seen = collect(driver, lab.devices["leaf1"], [])
    assert seen.qos is None  # not judged
    assert any(e.startswith("lossless:") and "swp51" in e for e in seen.errors), seen.errors
    assert seen.bgp and seen.interfaces  # the rest of the switch is still read


def test_a_port_recabled_lists_its_newest_lldp_neighbour_first() -> None:
    """After a re-cable lldpd lists the old neighbour until its TTL ends: the newest (the
    smallest age) comes first, so collect sees the cable as it is now."""
    def neighbour(host: str, port: str, age: str) -> dict[str, object]:
        return {"swp1": {"age": age, "chassis": {host: {"id": {"type": "mac", "value": "x"}}},
                         "port": {"id": {"type": "ifname", "value": port}}}}

    data = {"lldp": {"interface": [neighbour("su1-s1", "eth1", "0 day, 00:01:43"),
                                   neighbour("su1-s1", "eth2", "0 day, 00:00:15")]}}
    assert lldp_neighbors(data)["swp1"] == [{"hostname": "su1-s1", "port": "eth2"},
                                            {"hostname": "su1-s1", "port": "eth1"}]
