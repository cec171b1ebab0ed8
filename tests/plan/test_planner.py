"""The planner: deterministic, stable under growth, and right about the lab's structure."""

from __future__ import annotations

import ipaddress
import shutil
from pathlib import Path

import pytest

from flatfab.intent.loader import load_intent
from flatfab.model.state import DEFAULT_VRF, DeviceState, FabricState, Link, LinkKind, Role
from flatfab.plan.planner import plan
from flatfab.plan.probes import ICMP_IP_HEADERS, plan_probes
from tests.support.paths import ROOT

LAB = ROOT / "intents" / "lab"
LEAVES = "  - name: leaf1\n  - name: leaf2\n  - name: leaf3\n  - name: leaf4\n"
SPINES = "  - name: spine1\n  - name: spine2\n"


def lab_copy(directory: Path, *edits: tuple[str, str, str]) -> Path:
    """intents/lab/ copied to `directory`, with (file, old, new) text replacements applied."""
    shutil.copytree(LAB, directory)
    for name, old, new in edits:
        path = directory / name
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not found in {name}"  # a stale edit would test nothing
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return directory


def plan_of(directory: Path) -> FabricState:
    return plan(load_intent(directory))


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return plan_of(LAB)


def physical(state: FabricState) -> list[Link]:
    """Fabric links that are cables, not VRF sub-links riding on one."""
    return [x for x in state.links if x.kind is LinkKind.FABRIC and x.parent is None]


def ip(address: str) -> ipaddress.IPv4Interface:
    return ipaddress.IPv4Interface(address)


# --- determinism ---


def test_plan_is_byte_identical_across_runs() -> None:
    assert plan_of(LAB).model_dump_json() == plan_of(LAB).model_dump_json()


def test_reordered_switches_give_identical_devices_and_links(tmp_path: Path,
                                                             lab: FabricState) -> None:
    # the planner sorts switches by stable id, so list order in fabric.yaml is irrelevant
    shuffled = plan_of(lab_copy(
        tmp_path / "lab",
        ("fabric.yaml", LEAVES, "  - name: leaf3\n  - name: leaf1\n  - name: leaf4\n"
                                "  - name: leaf2\n"),
        ("fabric.yaml", SPINES, "  - name: spine2\n  - name: spine1\n")))
    assert list(shuffled.devices) == list(lab.devices)
    for name, device in lab.devices.items():
        assert shuffled.devices[name].model_dump_json() == device.model_dump_json(), name
    assert [x.model_dump_json() for x in shuffled.links] == [x.model_dump_json()
                                                             for x in lab.links]


def test_reordered_leaves_do_not_change_tenant_member_order(
        tmp_path: Path, lab: FabricState) -> None:
    # planner.py builds TenantState.members from the hosts in fabric.yaml leaf order, not
    # in stable-id order, so the whole plan JSON differs although nothing was changed
    shuffled = plan_of(lab_copy(tmp_path / "lab", (
        "fabric.yaml", LEAVES, "  - name: leaf3\n  - name: leaf1\n  - name: leaf4\n"
                               "  - name: leaf2\n")))
    assert shuffled.tenants["blue"].members == lab.tenants["blue"].members
    assert shuffled.model_dump_json() == lab.model_dump_json()


# --- stability: growth never renumbers what exists ---


def assert_grown_switch(before: DeviceState, after: DeviceState) -> None:
    """`after` is `before` plus new interfaces/peers/VRFs; nothing that existed changed."""
    assert after.model_dump(exclude={"interfaces", "bgp", "vrfs"}) == before.model_dump(
        exclude={"interfaces", "bgp", "vrfs"})
    for name, interface in before.interfaces.items():
        assert after.interfaces[name] == interface, f"{before.name} {name}"
    assert after.vrfs.items() >= before.vrfs.items()
    for vrf, instance in before.bgp.items():
        grown = after.bgp[vrf]
        assert grown.model_dump(exclude={"peers"}) == instance.model_dump(exclude={"peers"})
        for key, peer in instance.peers.items():
            assert grown.peers[key] == peer, f"{before.name} {vrf} {key}"


def test_adding_a_leaf_changes_no_existing_device(tmp_path: Path, lab: FabricState) -> None:
    grown = plan_of(lab_copy(tmp_path / "lab",
                             ("fabric.yaml", "  - name: leaf4\n",
                              "  - name: leaf4\n  - name: leaf5\n")))
    assert set(grown.devices) - set(lab.devices) == {"leaf5", "leaf5-h1", "leaf5-h2"}
    for name, device in lab.devices.items():
        if device.role is Role.SPINE:
            assert_grown_switch(device, grown.devices[name])
            # only leaf5's port and its VRF subinterfaces are new on a spine
            assert set(grown.devices[name].interfaces) - set(device.interfaces) == {
                "swp5", "swp5.100", "swp5.200"}
        else:
            # leaves and hosts: ASNs, loopbacks, addresses, interfaces all identical
            assert grown.devices[name].model_dump_json() == device.model_dump_json(), name
    assert grown.devices["leaf5"].asn == 65105


def test_adding_a_tenant_keeps_existing_hosts_and_addressing(tmp_path: Path,
                                                            lab: FabricState) -> None:
    grown = plan_of(lab_copy(
        tmp_path / "lab",
        ("hosts.yaml", "count: 2", "count: 3"),
        ("tenants.yaml", '    members: ["*-h2"]\n',
         '    members: ["*-h2"]\n  - name: green\n    vrf_id: 300\n'
         '    prefixes: [10.250.0.0/16]\n    members: ["*-h3"]\n')))
    for name, device in lab.devices.items():
        if device.role is Role.HOST:
            assert grown.devices[name].model_dump_json() == device.model_dump_json(), name
        else:
            # switches only gain green's bridge, host port and subinterfaces
            assert_grown_switch(device, grown.devices[name])
    for tenant in ("blue", "red"):
        assert grown.tenants[tenant] == lab.tenants[tenant]
    assert grown.tenants["green"].members == [f"leaf{i}-h3" for i in range(1, 5)]
    assert grown.devices["leaf2-h3"].interfaces["eth1"].addresses == ["10.250.2.13/24"]


# --- numbered underlay ---


def test_numbered_underlay_gives_each_link_one_31_spine_side_even(tmp_path: Path) -> None:
    state = plan_of(lab_copy(
        tmp_path / "lab",
        ("fabric.yaml", "mode: unnumbered", "mode: numbered\n  p2p_pool: 172.16.0.0/22"),
        ("tenants.yaml", '    members: ["*-h1"]', '    p2p_pool: 172.17.0.0/22\n'
                                                  '    members: ["*-h1"]'),
        ("tenants.yaml", '    members: ["*-h2"]', '    p2p_pool: 172.18.0.0/22\n'
                                                  '    members: ["*-h2"]')))
    pools = {DEFAULT_VRF: "172.16.0.0/22", "blue": "172.17.0.0/22", "red": "172.18.0.0/22"}
    fabric_links = [x for x in state.links if x.kind is LinkKind.FABRIC]
    assert len(fabric_links) == 24
    used: set[ipaddress.IPv4Network] = set()
    for link in fabric_links:
        leaf, spine = state.devices[link.a.device], state.devices[link.b.device]
        assert (leaf.role, spine.role) == (Role.LEAF, Role.SPINE)
        [leaf_addr] = leaf.interfaces[link.a.port].addresses
        [spine_addr] = spine.interfaces[link.b.port].addresses
        net = ip(spine_addr).network
        assert net.prefixlen == 31 and ip(leaf_addr).network == net, link.id
        assert net.subnet_of(ipaddress.IPv4Network(pools[link.vrf])), link.id
        assert int(ip(spine_addr).ip) % 2 == 0 and ip(leaf_addr).ip == ip(spine_addr).ip + 1
        assert net not in used, f"{net} used twice"
        used.add(net)
        # sessions are keyed by the neighbour's address and expect its ASN
        for local, remote, port, addr in ((leaf, spine, link.a.port, spine_addr),
                                          (spine, leaf, link.b.port, leaf_addr)):
            peer = local.bgp[link.vrf].peers[str(ip(addr).ip)]
            assert peer.address == str(ip(addr).ip) and peer.interface == port
            assert peer.remote_asn == remote.asn and peer.peer_device == remote.name
    for device in state.devices.values():
        for instance in device.bgp.values():
            assert all(peer.address == key for key, peer in instance.peers.items())


# --- explicit cabling ---


def test_explicit_links_are_the_only_links_and_take_their_class(tmp_path: Path) -> None:
    state = plan_of(lab_copy(
        tmp_path / "lab",
        ("fabric.yaml", "  host: {speed: 100G", "  long: {speed: 400G, cable_m: 100, "
                                               "mtu: 9216}\n  host: {speed: 100G"),
        ("fabric.yaml", LEAVES, LEAVES + "links:\n"
                                "  - {leaf: leaf1, spine: spine1}\n"
                                "  - {leaf: leaf2, spine: spine2, class: long}\n"
                                "  - {leaf: leaf3, spine: spine1, class: long}\n"
                                "  - {leaf: leaf4, spine: spine2}\n")))
    cables = physical(state)
    assert {(x.a.device, x.b.device) for x in cables} == {
        ("leaf1", "spine1"), ("leaf2", "spine2"), ("leaf3", "spine1"), ("leaf4", "spine2")}
    assert len(cables) == 4
    expected = {"leaf1": ("fabric", 3.0, 100_000), "leaf2": ("long", 100.0, 400_000),
                "leaf3": ("long", 100.0, 400_000), "leaf4": ("fabric", 3.0, 100_000)}
    fabric_links = [x for x in state.links if x.kind is LinkKind.FABRIC]
    assert len(fabric_links) == 12  # each cable carries blue and red sub-links
    for link in fabric_links:
        assert (link.link_class, link.cable_m, link.speed_mbps) == expected[link.a.device]
        assert state.devices[link.a.device].interfaces[link.a.port].speed_mbps == \
            link.speed_mbps
    for leaf in state.of_role(Role.LEAF):
        assert all(len(instance.peers) == 1 for instance in leaf.bgp.values()), leaf.name


# --- structure of the lab plan ---


def test_lab_device_and_link_counts(lab: FabricState) -> None:
    assert [len(lab.of_role(r)) for r in (Role.SPINE, Role.LEAF, Role.HOST)] == [2, 4, 8]
    assert len(lab.links) == 32
    assert len(physical(lab)) == 8
    sub_links = [x for x in lab.links if x.kind is LinkKind.FABRIC and x.parent is not None]
    assert len(sub_links) == 16 and {x.vrf for x in sub_links} == {"blue", "red"}
    physical_ids = {x.id for x in physical(lab)}
    assert all(x.parent in physical_ids for x in sub_links)
    assert len([x for x in lab.links if x.kind is LinkKind.HOST]) == 8


def test_lab_asns_and_bgp_instances(lab: FabricState) -> None:
    assert [s.asn for s in lab.of_role(Role.SPINE)] == [65000, 65000]
    leaves = lab.of_role(Role.LEAF)
    assert [leaf.asn for leaf in leaves] == [65101, 65102, 65103, 65104]
    for leaf in leaves:
        assert list(leaf.bgp) == [DEFAULT_VRF, "blue", "red"], leaf.name
        for instance in leaf.bgp.values():
            assert len(instance.peers) == 2, (leaf.name, instance.vrf)
            assert {p.remote_asn for p in instance.peers.values()} == {65000}


def test_lab_first_host_address_tenant_and_gateway(lab: FabricState) -> None:
    host = lab.devices["leaf1-h1"]
    assert host.tenant == "blue"
    assert host.interfaces["eth1"].addresses == ["10.100.1.11/24"]
    assert [(r.prefix, r.via) for r in host.static_routes] == [("0.0.0.0/0", "10.100.1.1")]
    assert lab.devices["leaf1"].interfaces["br100"].addresses == ["10.100.1.1/24"]


def test_lab_probes_cover_own_tenant_on_other_leaves_and_isolation_probes(
        lab: FabricState) -> None:
    # fanout 0: every other leaf of the tenant (the default fanout covers half the ring)
    probes = plan_probes(lab, fanout=0)
    assert set(probes) == {h.name for h in lab.of_role(Role.HOST)}
    for host in lab.of_role(Role.HOST):
        nic = host.interfaces["eth1"]
        assert nic.peer is not None and nic.mtu is not None
        own = [m for m in lab.tenants[host.tenant or ""].members if m != host.name]
        mine = probes[host.name]
        replies = [p for p in mine if p.expect_reply]
        assert {p.target for p in replies} == set(own) and len(own) == 3
        assert sorted((p.target, p.size, p.dont_fragment) for p in replies) == sorted(
            (t, size, df) for t in own
            for size, df in ((56, False), (nic.mtu - ICMP_IP_HEADERS, True)))
        assert all(p.address == lab.devices[p.target].interfaces["eth1"].addresses[0]
                   .split("/")[0] for p in mine)
        # isolation: the other tenant's host beside this one, and one behind another leaf
        beside, remote = [lab.devices[p.target] for p in mine if not p.expect_reply]
        assert beside.tenant == remote.tenant and beside.tenant not in (None, host.tenant)
        beside_leaf = beside.interfaces["eth1"].peer
        assert beside_leaf is not None and beside_leaf.device == nic.peer.device
        remote_leaf = remote.interfaces["eth1"].peer
        assert remote_leaf is not None and remote_leaf.device != nic.peer.device
    assert [p.size for p in probes["leaf1-h1"] if p.dont_fragment] == [8972] * 3


@pytest.mark.parametrize("fabric", ["lab", "numbered", "lab4x16"])
def test_the_plan_survives_full_validation(fabric: str) -> None:
    """The planner copies prototypes instead of validating each object (flatfab.model.build):
    every value it puts in must still pass the model's validation."""
    planned = plan(load_intent(ROOT / "intents" / fabric))
    assert FabricState.model_validate(planned.model_dump()) == planned
    assert FabricState.model_validate_json(planned.model_dump_json()) == planned
