"""The srlinux collector on outputs in the shapes boxes print beyond flatfab's own render
(tests/fixtures/srlinux/cases/, each file's release, command and public source in the
README): BGP multipath in every release's shape, the management network-instance, the
node-contents form `info <path>` prints from SR Linux 25.10, every LLDP port-id-type, several
neighbours on one port."""

from __future__ import annotations

import json
from typing import Any

import pytest

from flatfab.model.state import DeviceState, Endpoint, PortCounters
from flatfab.platforms.srlinux import PLATFORM
from flatfab.platforms.srlinux.collect import (
    CLOCK,
    INSTANCES,
    LLDP,
    PATHS,
    QOS_STATE,
    entries,
    maximum_paths,
    node,
    timestamp,
)
from flatfab.platforms.srlinux.sections import unprefixed
from tests.doubles.srlinux import FIXTURES, SrlinuxDouble, recorded

CASES = FIXTURES / "cases"
COMMANDS = {"INSTANCES": INSTANCES, "LLDP": LLDP, "QOS_STATE": QOS_STATE}


def _case(name: str) -> Any:
    return json.loads((CASES / name).read_text(encoding="utf-8"))


def _leaf1() -> DeviceState:
    return DeviceState.model_validate_json((FIXTURES / "leaf1.planned.json").read_text())


def _collect(**replaced: str) -> DeviceState:
    """leaf1's recorded outputs, with some commands answered by case files instead."""
    outputs = recorded("leaf1")
    for command, name in replaced.items():
        outputs[COMMANDS[command]] = _case(name)
    double = SrlinuxDouble(running=json.loads((FIXTURES / "leaf1.running.json").read_text()),
                           outputs=outputs)
    driver = double.driver()
    driver.open()
    return PLATFORM.collect(PLATFORM.read_only(driver), _leaf1(), [])


def test_every_case_file_is_in_the_readme() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in sorted(CASES.glob("*.json")):
        assert f"`cases/{path.name}`" in readme, path.name


# ---- 7. BGP multipath in every release's shape ------------------------------------------------


def test_multipath_per_peer_type_is_read() -> None:
    """25.3: ebgp/maximum-paths 64 configured, the all-peers leaf at its default 1."""
    seen = _collect(INSTANCES="network_instance_25_3_multipath_mgmt.json")
    assert seen.errors == []
    assert seen.bgp["default"].maximum_paths == 64
    assert seen.bgp["blue"].maximum_paths == 8  # the all-peers leaf alone


def test_prefixes_received_are_the_ipv4_unicast_family_s() -> None:
    seen = _collect(INSTANCES="network_instance_25_3_multipath_mgmt.json")
    peers = seen.bgp["default"].peers
    assert peers["ethernet-1/49"].prefixes_received == 9  # its EVPN routes are not counted
    assert peers["10.0.2.0"].prefixes_received == 7
    assert (peers["10.0.4.0"].state, peers["10.0.4.0"].prefixes_received) == ("Active", 0)


def test_the_level_1_multipath_of_older_releases_is_read() -> None:
    """Up to 22.11: bgp/ipv4-unicast (no afi-safi list), multipath/max-paths-level-1; the
    neighbour's received routes in its own ipv4-unicast container."""
    seen = _collect(INSTANCES="network_instance_22_11_level1.json")
    assert seen.errors == []
    assert seen.bgp["default"].maximum_paths == 16
    assert seen.bgp["default"].peers["10.0.2.0"].prefixes_received == 5


@pytest.mark.parametrize(("multipath", "paths"), [
    ({"maximum-paths": 64}, 64),
    ({"maximum-paths": 1, "ebgp": {"maximum-paths": 32}, "ibgp": {"maximum-paths": 1}}, 32),
    ({"maximum-paths": 16, "ebgp": {"maximum-paths": 1}, "ibgp": {"maximum-paths": 1}}, 16),
    ({"ebgp": {"maximum-paths": 8}, "ibgp": {"maximum-paths": 4}}, 8),
    ({"ibgp": {"maximum-paths": 4}}, 4),
    ({"max-paths-level-1": 16, "max-paths-level-2": 2}, 16),
    ({"allow-multiple-as": True}, None),
    (None, None),
    ({"maximum-paths": True}, None),
])
def test_maximum_paths_of_every_shape(multipath: Any, paths: int | None) -> None:
    assert maximum_paths(multipath) == paths


# ---- 8. the management network-instance -------------------------------------------------------


def test_the_management_instance_is_no_tenant_vrf() -> None:
    seen = _collect(INSTANCES="network_instance_25_3_multipath_mgmt.json")
    assert "mgmt" not in seen.vrfs and "mgmt" not in seen.bgp
    assert seen.routes is not None and "mgmt" not in seen.routes
    assert sorted(seen.vrfs) == ["blue"]
    assert not [k for k in seen.not_modelled if "mgmt" in k]  # listed nowhere


def test_the_recorded_box_s_management_instance_is_left_out() -> None:
    seen = _collect()
    assert seen.errors == []
    assert sorted(seen.vrfs) == sorted(_leaf1().vrfs)
    assert seen.routes is not None and "mgmt" not in seen.routes


# ---- 9 and 10. LLDP in both forms, every port-id-type, several neighbours --------------------


@pytest.mark.parametrize("form", ["lldp_25_3_full_path.json", "lldp_25_10_node_contents.json"])
def test_lldp_is_read_in_both_forms(form: str) -> None:
    seen = _collect(LLDP=form)
    assert seen.errors == []
    uplink = seen.interfaces["ethernet-1/51"]
    # freshest first, aged against the box's clock (2025-11-24T16:00:07Z in leaf1.json);
    # SR Linux keeps no hold time of the neighbour's: no expiry
    assert uplink.lldp_neighbours == [
        Endpoint(device="spine1", port="ethernet-1/1", age_s=5),
        Endpoint(device="leaf7", port="ethernet-1/31", age_s=97)]
    assert uplink.peer == uplink.lldp_neighbours[0]
    assert seen.interfaces["ethernet-1/52"].peer == Endpoint(device="spine2",
                                                             port="ethernet-1/1", age_s=7)
    assert seen.interfaces["ethernet-1/1"].peer == Endpoint(device="leaf1-h1", port="eth1",
                                                            age_s=7)
    assert seen.interfaces["ethernet-1/2"].peer is None
    why = seen.not_modelled["ethernet-1/2 LLDP neighbour leaf1-h2"]
    assert "'612' is locally assigned" in why
    # a neighbour that sends no system name (optional in LLDP) is named by its chassis
    assert list(seen.not_modelled) == ["ethernet-1/2 LLDP neighbour leaf1-h2",
                                       "ethernet-1/52 LLDP neighbour 0C:42:A1:00:00:70"]
    assert "no system name" in seen.not_modelled[
        "ethernet-1/52 LLDP neighbour 0C:42:A1:00:00:70"]
    # a VRF sub-interface's far end: the freshest neighbour's port, same index
    assert seen.interfaces["ethernet-1/51.100"].peer == Endpoint(device="spine1",
                                                                 port="ethernet-1/1.100")


def test_without_the_box_s_clock_no_age_is_made_up() -> None:
    outputs = recorded("leaf1")
    outputs[LLDP] = _case("lldp_25_10_node_contents.json")
    del outputs[CLOCK]  # a box refusing it: optional, no error
    double = SrlinuxDouble(running=json.loads((FIXTURES / "leaf1.running.json").read_text()),
                           outputs=outputs)
    driver = double.driver()
    driver.open()
    seen = PLATFORM.collect(PLATFORM.read_only(driver), _leaf1(), [])
    assert seen.errors == []
    assert [n.age_s for n in seen.interfaces["ethernet-1/51"].lldp_neighbours] == [None, None]
    assert [n.device for n in seen.interfaces["ethernet-1/51"].lldp_neighbours] == [
        "spine1", "leaf7"]  # still by last-update


@pytest.mark.parametrize(("stated", "parsed"), [
    ("2025-11-24T16:00:02.000Z", "2025-11-24T16:00:02+00:00"),
    ("2025-11-24T16:00:02.000Z (2 seconds ago)", "2025-11-24T16:00:02+00:00"),
    ("", None), (None, None), ("yesterday", None)])
def test_timestamps(stated: str | None, parsed: str | None) -> None:
    got = timestamp(stated)
    assert (got.isoformat() if got else None) == parsed


def test_the_node_contents_form_of_qos_interfaces_is_read() -> None:
    """25.10 prints the `interfaces` container's own list, no qos/interfaces above it."""
    seen = _collect(QOS_STATE="qos_interfaces_25_10_node_contents.json")
    assert seen.errors == []
    assert seen.interfaces["ethernet-1/51"].counters == PortCounters(
        pfc_rx_frames=41, pfc_tx_frames=9, ecn_marked={3: 1200})
    assert seen.interfaces["ethernet-1/52"].counters is None  # not in the reply: unknown


def test_node_and_entries_read_both_forms() -> None:
    lldp = _case("lldp_25_10_node_contents.json")
    full = _case("lldp_25_3_full_path.json")
    assert node(unprefixed(full), PATHS[LLDP]) == lldp
    assert node(lldp, PATHS[LLDP]) == lldp
    assert [e["name"] for e in entries(lldp, "interface")][:2] == ["ethernet-1/1",
                                                                    "ethernet-1/2"]
    one = {"name": "ethernet-1/1", "oper-state": "up"}
    assert entries(one, "interface") == [one]  # a keyed path prints the one entry
    assert entries([one], "interface") == [one]
    assert entries("x", "interface") == []
