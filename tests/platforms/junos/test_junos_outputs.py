"""The junos collector on outputs in the shapes switches print beyond flatfab's own render
(tests/fixtures/junos/cases/, each file's release, command and public source in the README):
ports outside the platform's naming, Junos's internal interfaces, units, routing instances
and tables, a VRF's loopback unit, BGP RIBs of other families, every LLDP port-id subtype,
several neighbours on one port, the brief LLDP form of older releases."""

from __future__ import annotations

import pytest

from flatfab.model.state import DeviceState, Endpoint, IfKind, Role
from flatfab.platforms.junos import PLATFORM
from flatfab.platforms.junos import collect as junos_collect
from flatfab.platforms.readback import lldp_far_port, lldp_port_subtype
from tests.doubles.junos import FIXTURES, JunosDevice, napalm_driver

CASES = FIXTURES / "cases"
# the QFX5120 of the case files: one command, one file
QFX5120 = {junos_collect.CONFIG: "configuration_qfx5120_instances.json",
           junos_collect.INTERFACES: "interfaces_qfx5120_ports_and_internals.json",
           junos_collect.LLDP: "lldp_detail_subtypes.json",
           junos_collect.BGP: "bgp_neighbor_families.json",
           junos_collect.ROUTES: "routes_internal_tables.json"}


def _outputs(**replaced: str) -> dict[str, str]:
    files = {**QFX5120, **{getattr(junos_collect, k): v for k, v in replaced.items()}}
    return {command: (CASES / name).read_text(encoding="utf-8")
            for command, name in files.items()}


def _collect(outputs: dict[str, str]) -> DeviceState:
    planned = DeviceState(name="leaf1", role=Role.LEAF, platform="junos")
    driver = PLATFORM.adapt(napalm_driver(JunosDevice(shows=outputs)), read_only=True)
    return PLATFORM.collect(PLATFORM.read_only(driver), planned, [])


@pytest.fixture(scope="module")
def qfx() -> DeviceState:
    seen = _collect(_outputs())
    assert seen.errors == []
    return seen


def test_every_case_file_is_in_the_readme() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in sorted(CASES.glob("*.json")):
        assert f"`cases/{path.name}`" in readme, path.name


# ---- 1. ports outside the platform's naming, LAGs, management --------------------------------


def test_a_port_outside_the_naming_is_named_with_its_addresses(qfx: DeviceState) -> None:
    """xe-0/0/0 on a platform naming et-: never silently dropped; its address and its LLDP
    neighbour are in the reason."""
    assert "xe-0/0/0" not in qfx.interfaces
    why = qfx.not_modelled["xe-0/0/0"]
    assert why.startswith("a port outside junos's port naming")
    assert "xe-0/0/0.0 10.1.0.1/31" in why
    assert "LLDP neighbour border1:et-0/0/1" in why
    # one with no address (Junos's own .16386 unit is no address of the operator's)
    assert qfx.not_modelled["xe-0/0/1"].startswith("a port outside junos's port naming")
    assert "addresses" not in qfx.not_modelled["xe-0/0/1"]
    assert "xe-0/0/2" in qfx.not_modelled  # a LAG member


def test_a_lag_and_the_management_port_are_named(qfx: DeviceState) -> None:
    assert qfx.not_modelled["ae0"] == (
        "an aggregated Ethernet (LAG) bundle: flatfab plans no LAG on junos; "
        "addresses ae0.0 10.2.0.1/31")
    assert qfx.not_modelled["em0"] == (
        "the management port: flatfab does not model the management network; "
        "addresses em0.0 198.51.100.20/24")


# ---- 2. OS-internal interfaces, units, instances, tables ------------------------------------


def test_junos_s_internal_interfaces_are_left_out(qfx: DeviceState) -> None:
    internal = ("pfe-0/0/0", "pfh-0/0/0", "sxe-0/0/0", "gr-0/0/0", "bme0", "cbp0", "dsc",
                "esi", "gre", "ipip", "jsrv", "lsi", "mtun", "pimd", "pime", "pip0", "tap",
                "vtep")
    named = set(qfx.interfaces) | set(qfx.not_modelled)
    for name in internal:
        assert not any(n == name or n.startswith(f"{name}.") for n in named), name


def test_internal_units_are_no_subinterfaces(qfx: DeviceState) -> None:
    """.32767 (a vlan-tagging port's control unit), .16386 (a port with no unit configured),
    lo0.16384/16385: made by Junos, not configured."""
    assert not [n for n in qfx.interfaces if n.rpartition(".")[2] in (
        "32767", "16383", "16384", "16385", "16386")]
    assert set(qfx.interfaces) == {
        "et-0/0/48", "et-0/0/49", "et-0/0/50", "et-0/0/50.100", "et-0/0/51", "et-0/0/51.100",
        "et-0/0/52", "et-0/0/53", "lo0", "lo0.5"}
    # a port with no unit 0 is still read: link, speed, cabling
    assert (qfx.interfaces["et-0/0/49"].up, qfx.interfaces["et-0/0/49"].speed_mbps) == (
        False, 100_000)
    assert qfx.interfaces["et-0/0/51"].addresses == []
    assert qfx.interfaces["et-0/0/51.100"].parent == "et-0/0/51"


def test_internal_tables_are_no_vrfs(qfx: DeviceState) -> None:
    assert qfx.routes is not None
    assert set(qfx.routes) == {"default", "blue"}
    assert qfx.not_modelled[":vxlan.inet.0"].startswith("Junos's VXLAN underlay table")
    assert "3 routes" in qfx.not_modelled[":vxlan.inet.0"]
    assert not [k for k in qfx.not_modelled if "__" in k or "mgmt_junos" in k]
    assert qfx.routes["blue"]["10.0.5.11/32"].nexthops[0].interface == "lo0.5"


def test_only_vrf_instances_are_vrfs(qfx: DeviceState) -> None:
    """A mac-vrf instance has no IPv4 table: named, not counted; mgmt_junos is the
    management instance: neither."""
    assert qfx.vrfs == {"blue": 0}
    assert qfx.not_modelled["routing-instance evpn-1"].startswith("instance-type mac-vrf")


# ---- 3. a loopback unit in a routing instance -------------------------------------------------


def test_a_vrf_loopback_unit_is_read_into_its_vrf(qfx: DeviceState) -> None:
    lo5 = qfx.interfaces["lo0.5"]
    assert (lo5.kind, lo5.vrf, lo5.addresses, lo5.parent) == (
        IfKind.LOOPBACK, "blue", ["10.0.5.11/32"], None)
    assert qfx.loopback == "10.0.0.11/32"  # lo0.0: a host address printed without a subnet


# ---- 4. BGP prefixes of the session's IPv4 unicast RIB only ----------------------------------


def test_prefixes_received_count_the_ipv4_unicast_rib_only(qfx: DeviceState) -> None:
    default = qfx.bgp["default"].peers
    assert default["10.0.1.0"].prefixes_received == 12  # not 12 + 340 + 340 + 2 EVPN
    assert default["10.0.2.0"].prefixes_received is None  # Active: no RIB, nothing known
    assert default["192.168.2.15"].prefixes_received == 2  # rib-groups' vrf.inet.0 left out
    blue = qfx.bgp["blue"].peers["et-0/0/50.100"]
    assert (blue.interface, blue.prefixes_received) == ("et-0/0/50.100", 3)


def test_a_release_without_peer_cfg_rti_is_read_by_its_ribs(qfx: DeviceState) -> None:
    """Junos 14.1's show bgp neighbor has no peer-cfg-rti: the session's instance is the
    one its RIBs belong to."""
    frontend = qfx.bgp["frontend"].peers["10.2.1.254"]
    assert (frontend.state, frontend.remote_asn, frontend.prefixes_received) == (
        "Established", 65006, 5)


# ---- 5 and 6. LLDP: the port by its subtype, every neighbour, age and hold time -------------


def test_a_locally_assigned_port_id_reads_the_port_description(qfx: DeviceState) -> None:
    assert qfx.interfaces["et-0/0/50"].peer == Endpoint(device="spine3", port="et-0/0/9",
                                                        age_s=11, expires_s=109)


def test_a_mac_port_id_reads_the_port_description(qfx: DeviceState) -> None:
    peer = qfx.interfaces["et-0/0/51"].peer
    assert peer is not None and (peer.device, peer.port) == ("gpu01", "enp65s0f0")


def test_an_index_without_a_description_names_no_port(qfx: DeviceState) -> None:
    assert qfx.interfaces["et-0/0/52"].peer is None
    why = qfx.not_modelled["et-0/0/52 LLDP neighbour spine4"]
    assert "'612' is locally assigned" in why and "no port description" in why


def test_an_alias_that_is_a_name_is_the_port(qfx: DeviceState) -> None:
    peer = qfx.interfaces["et-0/0/53"].peer
    assert peer is not None and (peer.device, peer.port) == ("spine5", "swp12")


def test_a_neighbour_without_a_system_name_is_named_by_its_chassis(qfx: DeviceState) -> None:
    assert qfx.not_modelled["et-0/0/53 LLDP neighbour 0c:42:a1:00:00:70"] == (
        "it sent no system name: the neighbouring device cannot be named")
    assert qfx.interfaces["et-0/0/53"].lldp_neighbours == []  # the named one only


def test_every_neighbour_of_a_port_freshest_first(qfx: DeviceState) -> None:
    port = qfx.interfaces["et-0/0/49"]
    assert port.lldp_neighbours == [
        Endpoint(device="spine2", port="Ethernet1/50", age_s=3, expires_s=117),
        Endpoint(device="leaf7", port="et-0/0/31", age_s=95, expires_s=25)]
    assert port.peer == port.lldp_neighbours[0]
    one = qfx.interfaces["et-0/0/48"]
    assert one.peer == Endpoint(device="spine1", port="et-0/0/3", age_s=5, expires_s=115)
    assert one.lldp_neighbours == []  # one neighbour: `peer` says it all


def test_the_brief_form_of_older_releases_reads_too() -> None:
    """Local ports with their unit (et-0/0/48.0), no port-id subtype, a description only:
    no age or hold time is stated, none is made up."""
    seen = _collect(_outputs(LLDP="lldp_brief_old_release.json"))
    assert seen.errors == []
    assert seen.interfaces["et-0/0/48"].peer == Endpoint(device="spine1", port="et-0/0/3")
    assert seen.interfaces["et-0/0/49"].peer == Endpoint(device="spine2", port="et-0/0/4")
    assert seen.interfaces["et-0/0/50"].peer == Endpoint(device="spine3", port="et-0/0/5")


@pytest.mark.parametrize(("subtype", "port_id", "description", "port"), [
    ("Interface name", "et-0/0/1", "uplink", "et-0/0/1"),
    ("Locally assigned", "549", "et-0/0/9", "et-0/0/9"),
    ("Locally assigned", "Ethernet4", None, "Ethernet4"),  # lldpd's names
    ("Mac address", "0c:42:a1:00:00:51", "enp65s0f0", "enp65s0f0"),
    ("Network address", "10.0.0.1", "ge-0/0/1", "ge-0/0/1"),
    ("Agent circuit ID", "x", "eth0", "eth0"),
    ("Port component", "1/1", None, "1/1"),
    (None, "et-0/0/2", "ignored", "et-0/0/2"),
    (None, None, "et-0/0/3", "et-0/0/3"),
    ("INTERFACE_NAME", "ethernet-1/1", None, "ethernet-1/1"),
    ("LOCAL", "17", "ethernet-1/3", "ethernet-1/3"),
])
def test_the_far_port_follows_ieee_802_1ab_subtypes(subtype: str | None, port_id: str | None,
                                                     description: str | None,
                                                     port: str) -> None:
    assert lldp_far_port(port_id, subtype, description) == (port, "")


@pytest.mark.parametrize(("subtype", "port_id"), [
    ("Locally assigned", "612"), ("Mac address", "0c:42:a1:00:00:51"),
    ("Network address", "10.0.0.1"), ("MAC_ADDRESS", "aa:bb:cc:dd:ee:ff")])
def test_an_id_that_is_no_name_without_a_description_is_unknown(subtype: str,
                                                                  port_id: str) -> None:
    port, why = lldp_far_port(port_id, subtype, None)
    assert port is None and repr(port_id) in why and "IEEE 802.1AB" in why


def test_subtypes_in_every_spelling() -> None:
    assert [lldp_port_subtype(s) for s in (
        "Interface name", "INTERFACE_NAME", "ifname", "5", "Locally assigned", "local",
        "LOCAL", "Locally assigned (7)", "Mac address", "mac", "MAC_ADDRESS", "Interface alias",
        "Port component", "Network address", "Agent circuit ID", "AGENT_CIRCUIT_ID", None,
        "9", "banana")] == [5, 5, 5, 5, 7, 7, 7, 7, 3, 3, 3, 1, 2, 4, 6, 6, None, None, None]


def test_the_lldp_command_asks_for_the_detail_form() -> None:
    assert junos_collect.LLDP == "show lldp neighbors detail | display json"
    assert PLATFORM.show_command(junos_collect.LLDP)


def test_an_unreadable_lldp_reply_is_one_error_naming_the_command() -> None:
    """A reply that is not JSON is one error naming the command, never a traceback."""
    outputs = _outputs()
    outputs[junos_collect.LLDP] = "error: syntax error, expecting <command>: detail"
    seen = _collect(outputs)
    assert seen.errors == [f"{junos_collect.LLDP}: not JSON"]
    assert seen.interfaces["et-0/0/48"].peer is None


@pytest.mark.parametrize(("address", "read"), [
    ({"ifa-local": [{"data": "10.0.1.1"}], "ifa-destination": [{"data": "10.0.1.0/31"}]},
     "10.0.1.1/31"),
    ({"ifa-local": [{"data": "10.0.0.11"}]}, "10.0.0.11/32"),  # lo0 in the normal form
    # the terse form: a host address's destination "0/0", a prefix printed with the address
    ({"ifa-local": [{"data": "10.0.0.11"}], "ifa-destination": [
        {"data": "0/0", "attributes": {"junos:emit": "emit"}}]}, "10.0.0.11/32"),
    ({"ifa-local": [{"data": "10.0.12.1/30"}]}, "10.0.12.1/30"),
])
def test_addresses_in_every_form(address: dict[str, object], read: str) -> None:
    unit = {"address-family": [{"address-family-name": [{"data": "inet"}],
                                "interface-address": [address]}]}
    assert junos_collect._addresses(unit) == [read]


def test_watchdog_timers_left_out_are_junos_s_documented_defaults() -> None:
    """A `pfc-watchdog` with no timers polls every 100 ms, detects after two polls and
    recovers after 200 ms (Junos's defaults): judged, not unknown; no action stays unknown."""
    dog = junos_collect._watchdog({}, [3])
    assert dog is not None
    assert (dog.poll_ms, dog.detect_ms, dog.restore_ms) == (100, 200, 200)
    assert set(dog.unknown) == {"action"}
    dog = junos_collect._watchdog({"poll-interval": 50, "detection": "x",
                                   "watchdog-action": "drop"}, [3])
    assert dog is not None and dog.poll_ms == 50 and dog.action == "drop"
    assert set(dog.unknown) == {"detect_ms"}
