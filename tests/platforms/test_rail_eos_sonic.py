"""The rail example fabric (intents/rail: a 5-stage Clos of super-spines, pod spines and rail
leaves with multi-NIC servers) with its switches on EOS and on SONiC.

Render: what a super-spine and a pod spine get (the vendor oracles and golden files of every
rail switch are in test_platform_eos.py and test_platform_sonic.py). Collect: every switch,
running its render (EOS: the eAPI double holds it; SONiC: pushed through the driver onto a
factory switch), answers the shows of a healthy fabric (tests/doubles/eos.py
`healthy_shows`, tests/doubles/sonic.py `healthy_outputs`); it must read back as planned,
with no drift, and the check catalog on the collected fabric must find nothing. Faults
read from these switches are named by check, device and port: a pod spine that lost its
super-spine sessions, two NICs of a server swapped between rails, a leaf cabled into the
other plane.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from napalm.eos.eos import EOSDriver

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.model.state import DEFAULT_VRF, DeviceState, FabricState, IfKind, Role
from flatfab.platforms.base import Platform, ReadOnlyDriver
from flatfab.platforms.eos import PLATFORM as EOS
from flatfab.platforms.sonic import PLATFORM as SONIC
from flatfab.platforms.sonic.render import config_db
from tests.doubles.eos import EosDouble, healthy_shows
from tests.doubles.sonic import SonicDouble, factory_config_db, healthy_outputs
from tests.support.eos import eos_fabric, eos_switches
from tests.support.sonic import DAY0_TABLES, fabric, sonic_driver, switches

PLATFORMS = ("eos", "sonic")
BGP_EOS = "show ip bgp summary vrf all"
ROUTES_EOS = "show ip route vrf all"
BGP_SONIC = "vtysh -c 'show bgp vrf all summary json'"
ROUTES_SONIC = "vtysh -c 'show ip route vrf all json'"


@pytest.fixture(scope="module")
def sonic_rail(tmp_path_factory: pytest.TempPathFactory) -> FabricState:
    return fabric("rail", tmp_path_factory.mktemp("rail-sonic"))


@pytest.fixture(scope="module")
def rails(sonic_rail: FabricState) -> dict[str, FabricState]:
    return {"eos": eos_fabric("rail"), "sonic": sonic_rail}


def _platform(name: str) -> Platform:
    return EOS if name == "eos" else SONIC


def _switches(state: FabricState, platform: str) -> list[DeviceState]:
    return eos_switches(state) if platform == "eos" else switches(state)


def _ports(state: FabricState, device: DeviceState, role: Role) -> list[str]:
    """The device's physical fabric ports cabled to a switch of `role`."""
    return [i.name for i in device.interfaces.values()
            if i.kind is IfKind.FABRIC and i.parent is None and i.peer is not None
            and state.devices[i.peer.device].role is role]


def _super_spine(state: FabricState) -> DeviceState:
    return state.of_role(Role.SUPERSPINE)[0]


def _pod_spine(state: FabricState) -> DeviceState:
    return next(s for s in state.of_role(Role.SPINE) if _ports(state, s, Role.SUPERSPINE))


def _subs(device: DeviceState, port: str) -> list[str]:
    """The VRF sub-interfaces planned on a physical port."""
    return [i.name for i in device.interfaces.values() if i.parent == port]


def _uplink_numbers(state: FabricState, spine: DeviceState, platform: Platform) -> list[int]:
    physical = {platform.names.physical(n): n for n in range(1, 129)}
    return sorted(physical[p] for p in _ports(state, spine, Role.SUPERSPINE))


# ---- render ------------------------------------------------------------------------------


def test_the_rail_fabric_has_five_stages(rails: dict[str, FabricState]) -> None:
    for platform, state in rails.items():
        roles = {d.role for d in _switches(state, platform)}
        assert roles == {Role.SUPERSPINE, Role.SPINE, Role.LEAF}, platform
        spine = _pod_spine(state)
        assert _ports(state, spine, Role.LEAF) and spine.pod is not None
        # the rail intent's spine_uplink_base 32: a pod spine's uplinks are ports 33 and up
        assert _uplink_numbers(state, spine, _platform(platform))[0] == 33


def test_eos_super_spine_has_routed_downlinks_to_every_pod(rails: dict[str, FabricState]) -> None:
    state = rails["eos"]
    top = _super_spine(state)
    text = EOS.render(top)
    lines = text.splitlines()
    assert "switchport access" not in text and "interface Vlan" not in text
    downlinks = _ports(state, top, Role.SPINE)
    pods = {d.pod for d in state.of_role(Role.SPINE) if d.plane == top.plane}
    assert {state.devices[top.interfaces[p].peer.device].pod  # type: ignore[union-attr]
            for p in downlinks} == pods and len(pods) >= 2
    pod_asns = set()
    for port in downlinks:
        peer = top.interfaces[port].peer
        assert peer is not None
        spine = state.devices[peer.device]
        pod_asns.add(spine.asn)
        assert f"   description {peer.device}:{peer.port}" in lines
        assert f"   neighbor interface {port} peer-group FABRIC remote-as {spine.asn}" in lines
        assert _subs(top, port)
        for sub in _subs(top, port):  # the tenant sessions sit in the BGP VRF blocks
            assert f"      neighbor interface {sub} peer-group FABRIC remote-as {spine.asn}" \
                in lines
    assert len(pod_asns) == len(pods)  # RFC 7938: each pod's spines share their own AS
    assert f"router bgp {top.asn}" in lines


def test_eos_pod_spine_has_down_and_uplinks(rails: dict[str, FabricState]) -> None:
    state = rails["eos"]
    spine = _pod_spine(state)
    lines = EOS.render(spine).splitlines()
    for role in (Role.LEAF, Role.SUPERSPINE):
        for port in _ports(state, spine, role):
            peer = spine.interfaces[port].peer
            assert peer is not None
            asn = state.devices[peer.device].asn
            assert f"interface {port}" in lines
            assert all(f"interface {sub}" in lines for sub in _subs(spine, port))
            assert f"   neighbor interface {port} peer-group FABRIC remote-as {asn}" in lines
    uplink = _ports(state, spine, Role.SUPERSPINE)[0]
    peer = spine.interfaces[uplink].peer
    assert uplink == "Ethernet33" and peer is not None
    assert f"   description {peer.device}:{peer.port}" in lines


def test_sonic_pod_spine_uplinks_are_longer_optics(rails: dict[str, FabricState]) -> None:
    """The super-spine link class is 50 m of SR optics: its ports carry that cable length
    and a lossless PG profile with the headroom it needs, the downlinks their own."""
    state = rails["sonic"]
    spine = _pod_spine(state)
    db = config_db(spine, SONIC.names)
    up, down = _ports(state, spine, Role.SUPERSPINE), _ports(state, spine, Role.LEAF)
    assert up[0] == "Ethernet256"  # port 33 of 8-lane ports
    cables = {p: int(m.removesuffix("m")) for p, m in db["CABLE_LENGTH"]["AZURE"].items()}
    assert min(cables[p] for p in up) > max(cables[p] for p in down)
    for port in up + down:
        qos = spine.interfaces[port].qos
        assert qos is not None and cables[port] == qos.cable_m
    up_pg = {db["BUFFER_PG"][f"{p}|3"]["profile"] for p in up}
    down_pg = {db["BUFFER_PG"][f"{p}|3"]["profile"] for p in down}
    assert len(up_pg) == len(down_pg) == 1 and up_pg != down_pg
    profiles = db["BUFFER_PROFILE"]
    assert int(profiles[up_pg.pop()]["xoff"]) > int(profiles[down_pg.pop()]["xoff"])
    frr = SONIC.sections(SONIC.render(spine))["frr"]
    for port in up + down:
        peer = spine.interfaces[port].peer
        assert peer is not None
        assert f" neighbor {port} remote-as {state.devices[peer.device].asn}" in frr
        for sub in _subs(spine, port):
            assert f" neighbor {sub} description {peer.device}" in frr
            vrf = SONIC.names.vrf(spine.interfaces[sub].vrf)
            assert db["VLAN_SUB_INTERFACE"][sub]["vrf_name"] == vrf


def test_sonic_super_spine_is_routed_only(rails: dict[str, FabricState]) -> None:
    state = rails["sonic"]
    top = _super_spine(state)
    db = config_db(top, SONIC.names)
    assert "VLAN" not in db and "VLAN_MEMBER" not in db
    assert set(db["INTERFACE"]) == set(_ports(state, top, Role.SPINE))
    assert db["DEVICE_METADATA"]["localhost"]["bgp_asn"] == str(top.asn)


# ---- collect -----------------------------------------------------------------------------


def _collect_eos(state: FabricState, name: str,
                 shows: dict[str, dict[str, Any]] | None = None) -> DeviceState:
    planned = state.devices[name]
    intended = EOS.render(planned)
    double = EosDouble(running=intended.splitlines(),
                       shows=shows if shows is not None else healthy_shows(state, name))
    eos = EOSDriver(name, "admin", "admin", optional_args={"transport": "https"})
    eos.device = double  # the pyeapi node: every eAPI request lands in the double
    eos.open()
    driver = EOS.read_only(eos)
    assert isinstance(driver, ReadOnlyDriver)
    running, wanted = EOS.drift_texts(driver, intended)
    assert EOS.sections(running) == EOS.sections(wanted), f"{name}: drift"
    seen = EOS.collect(driver, planned, [])
    assert not [c for c in double.log if c.startswith(("configure", "copy", "write"))]
    return seen


def _collect_sonic(state: FabricState, name: str,
                   outputs: dict[str, str] | None = None) -> DeviceState:
    """A factory switch (with the day-0 buffer tables `config qos reload` writes) gets the
    render pushed through the driver, then is read back through the read-only guard."""
    planned = state.devices[name]
    db = factory_config_db(name)
    rendered = config_db(planned, SONIC.names)
    db.update({t: rendered[t] for t in DAY0_TABLES})
    double = SonicDouble(db, outputs=outputs if outputs is not None
                         else healthy_outputs(state, name, SONIC.names.vrf))
    intended = SONIC.render(planned)
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=intended)
    driver.commit_config()
    reader = SONIC.read_only(sonic_driver(double, read_only=True))
    running, wanted = SONIC.drift_texts(reader, intended)
    assert SONIC.sections(running) == SONIC.sections(wanted), f"{name}: drift"
    pushed = len(double.log)
    seen = SONIC.collect(reader, planned, [])
    assert not [entry for entry in double.log[pushed:] if entry.mutating]
    return seen


def _collect(platform: str, state: FabricState, name: str) -> DeviceState:
    return _collect_eos(state, name) if platform == "eos" else _collect_sonic(state, name)


def _catalog(state: FabricState, seen: dict[str, DeviceState]) -> list[Finding]:
    observed = state.model_copy(update={"devices": {**state.devices, **seen}})
    return run_checks(CheckContext(state=observed, plan=state, stage=Stage.LIVE))


@pytest.fixture(scope="module")
def collected(rails: dict[str, FabricState]) -> dict[str, dict[str, DeviceState]]:
    return {platform: {d.name: _collect(platform, state, d.name)
                       for d in _switches(state, platform)}
            for platform, state in rails.items()}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_rail_switch_reads_back_as_planned(
        platform: str, rails: dict[str, FabricState],
        collected: dict[str, dict[str, DeviceState]]) -> None:
    state = rails[platform]
    for name, seen in collected[platform].items():
        planned = state.devices[name]
        assert seen.errors == [] and seen.reachable, name
        assert (seen.role, seen.asn, seen.router_id, seen.loopback) == (
            planned.role, planned.asn, planned.router_id, planned.loopback), name
        assert seen.vrfs == planned.vrfs, name
        for port, iface in planned.interfaces.items():
            got = seen.interfaces.get(port)
            assert got is not None, f"{name}:{port}"
            assert (got.kind, got.vrf, got.up, got.parent, got.bridge) == (
                iface.kind, iface.vrf, True, iface.parent, iface.bridge), f"{name}:{port}"
            assert iface.mtu is None or got.mtu == iface.mtu, f"{name}:{port}"
            if iface.parent is None and iface.kind is not IfKind.BRIDGE:
                # the cabling (EOS also states the TTL each neighbour advertised)
                assert ((got.peer.device, got.peer.port) if got.peer else None) == (
                    (iface.peer.device, iface.peer.port) if iface.peer else None), \
                    f"{name}:{port}"
        for vrf, instance in planned.bgp.items():
            peers = seen.bgp[vrf].peers
            assert {k: (p.interface, p.remote_asn, p.peer_device, p.state)
                    for k, p in peers.items()} == {
                k: (p.interface, p.remote_asn, p.peer_device, "Established")
                for k, p in instance.peers.items()}, f"{name} VRF {vrf}"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_lossless_plane_of_every_tier_reads_back(
        platform: str, rails: dict[str, FabricState],
        collected: dict[str, dict[str, DeviceState]]) -> None:
    state = rails[platform]
    for device in (_super_spine(state), _pod_spine(state)):
        seen = collected[platform][device.name]
        for port, iface in device.interfaces.items():
            if iface.qos is not None and iface.parent is None:
                assert seen.interfaces[port].qos == iface.qos, f"{device.name}:{port}"
                counters = seen.interfaces[port].counters
                assert counters is not None and counters.pfc_tx_frames == 0
        assert seen.qos is not None and device.qos is not None
        if platform == "sonic":
            assert seen.qos == device.qos, device.name
        else:  # Trident: one switch-wide headroom, each lossless PG reads the largest
            largest = max(p.xoff for p in device.qos.profiles.values())
            assert {p.xoff for p in seen.qos.profiles.values() if p.xoff} == {largest}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_catalog_finds_nothing_on_the_collected_fabric(
        platform: str, rails: dict[str, FabricState],
        collected: dict[str, dict[str, DeviceState]]) -> None:
    """Every switch as collected (hosts as planned): no finding of any severity."""
    findings = _catalog(rails[platform], collected[platform])
    assert [f"{f.check} {f.device}: {f.message}" for f in findings] == []


def _without_uplinks_eos(shows: dict[str, dict[str, Any]],
                         uplinks: list[str]) -> dict[str, dict[str, Any]]:
    """The pod spine's super-spine sessions are Active; no route leaves by an uplink."""
    for summary in shows[BGP_EOS]["vrfs"].values():
        for key, peer in summary["peers"].items():
            port = "Ethernet" + key.partition("%Et")[2].split(".")[0]
            if port in uplinks:
                peer.update(peerState="Active", prefixReceived=0, prefixAccepted=0)
    for table in shows[ROUTES_EOS]["vrfs"].values():
        routes = table["routes"]
        for prefix in list(routes):
            vias = [v for v in routes[prefix]["vias"]
                    if v["interface"].split(".")[0] not in uplinks]
            if vias:
                routes[prefix]["vias"] = vias
            else:
                del routes[prefix]
    return shows


def _without_uplinks_sonic(outputs: dict[str, str], uplinks: list[str]) -> dict[str, str]:
    summary = json.loads(outputs[BGP_SONIC])
    for vrf in summary.values():
        for key, peer in vrf["ipv4Unicast"]["peers"].items():
            if key.split(".")[0] in uplinks:
                peer.update(state="Active", peerState="OK", pfxRcd=0)
    rib = json.loads(outputs[ROUTES_SONIC])
    for table in rib.values():
        for prefix in list(table):
            hops = [h for h in table[prefix][0]["nexthops"]
                    if h["interfaceName"].split(".")[0] not in uplinks]
            if hops:
                table[prefix][0]["nexthops"] = hops
            else:
                del table[prefix]
    return {**outputs, BGP_SONIC: json.dumps(summary), ROUTES_SONIC: json.dumps(rib)}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_pod_spine_that_lost_its_super_spines_is_named(
        platform: str, rails: dict[str, FabricState],
        collected: dict[str, dict[str, DeviceState]]) -> None:
    state = rails[platform]
    spine = _pod_spine(state)
    uplinks = _ports(state, spine, Role.SUPERSPINE)
    if platform == "eos":
        seen = _collect_eos(state, spine.name,
                            _without_uplinks_eos(healthy_shows(state, spine.name), uplinks))
    else:
        seen = _collect_sonic(state, spine.name, _without_uplinks_sonic(
            healthy_outputs(state, spine.name, SONIC.names.vrf), uplinks))
    assert seen.errors == []
    findings = _catalog(state, {**collected[platform], spine.name: seen})
    assert {f.device for f in findings} == {spine.name}
    sessions = sorted((f.port, f.vrf) for f in findings if f.check == "bgp.session")
    assert sessions == sorted((p.key, vrf) for vrf, bgp in spine.bgp.items()
                              for p in bgp.peers.values()
                              if (p.interface or "").split(".")[0] in uplinks)
    assert len(sessions) > len(uplinks)  # the default VRF's and the tenants' sessions
    assert all("is Active" in f.message for f in findings if f.check == "bgp.session")
    pod_paths = [f for f in findings if f.check == "ecmp.pod_paths"]
    assert {f.vrf for f in pod_paths} == set(spine.bgp)
    assert all(f.port == ",".join(sorted(uplinks)) for f in pod_paths
               if f.vrf == DEFAULT_VRF)
    assert {f.check for f in findings} == {"bgp.session", "ecmp.pod_paths"}


def test_healthy_doubles_answer_only_what_the_plan_holds(rails: dict[str, FabricState]) -> None:
    """The super-spine's converged RIB: every leaf prefix of its plane, in every VRF, by
    ECMP over its downlinks to that leaf's pod; no route to another super-spine's loopback
    (every Tier 1 device has the same AS, RFC 7938 section 5.2.1, so that path is a loop)."""
    state = rails["sonic"]
    top = _super_spine(state)
    rib = json.loads(healthy_outputs(state, top.name, SONIC.names.vrf)[ROUTES_SONIC])
    peers = [d for d in state.of_role(Role.SUPERSPINE) if d.name != top.name]
    assert peers and all(p.loopback not in rib[DEFAULT_VRF] for p in peers)
    below: dict[int | None, list[str]] = {}  # pod -> downlinks to its spines
    for port in _ports(state, top, Role.SPINE):
        peer = top.interfaces[port].peer
        assert peer is not None
        below.setdefault(state.devices[peer.device].pod, []).append(port)
    leaves = [d for d in state.of_role(Role.LEAF) if d.plane == top.plane]
    assert leaves
    for leaf in leaves:
        for vrf, bgp in leaf.bgp.items():
            table = rib[vrf if vrf == DEFAULT_VRF else SONIC.names.vrf(vrf)]
            ports = {i.name for p in below[leaf.pod] for i in top.interfaces.values()
                     if (i.parent or i.name) == p and i.vrf == vrf}
            for prefix in bgp.networks:
                hops = {h["interfaceName"] for h in table[prefix][0]["nexthops"]}
                assert hops == ports, f"{prefix} ({leaf.name}, VRF {vrf})"


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("example", ["lab", "numbered"])
def test_the_healthy_doubles_fit_the_3_stage_examples_too(
        platform: str, example: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The doubles are not made for the rail fabric: unnumbered (lab) and numbered sessions
    of a 3-stage fabric collect as clean."""
    state = eos_fabric(example) if platform == "eos" else fabric(
        example, tmp_path_factory.mktemp(f"{example}-sonic"))
    seen = {d.name: _collect(platform, state, d.name) for d in _switches(state, platform)}
    assert {n: s.errors for n, s in seen.items() if s.errors} == {}
    assert [f"{f.check} {f.device}: {f.message}" for f in _catalog(state, seen)] == []


# ---- cabling read from LLDP: rails and planes ----------------------------------------------


def _relabel_eos(shows: dict[str, dict[str, Any]],
                 seen_on: dict[str, tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """LLDP on the given local ports names another neighbour (device, port)."""
    for entry in shows["show lldp neighbors"]["lldpNeighbors"]:
        if entry["port"] in seen_on:
            entry["neighborDevice"], entry["neighborPort"] = seen_on[entry["port"]]
    return shows


def _relabel_sonic(outputs: dict[str, str],
                   seen_on: dict[str, tuple[str, str]]) -> dict[str, str]:
    lines = []
    for line in outputs["show lldp table"].splitlines():
        cols = line.split()
        if cols and cols[0] in seen_on:
            device, port = seen_on[cols[0]]
            lines.append(f"{cols[0]}  {device}  {port}  {cols[3]}  {port}")
        else:
            lines.append(line)
    # FRR names a session's peer by the hostname it announces: the switch really cabled there
    summary = json.loads(outputs[BGP_SONIC])
    for vrf in summary.values():
        for key, peer in vrf["ipv4Unicast"]["peers"].items():
            if key.split(".")[0] in seen_on:
                peer["hostname"] = seen_on[key.split(".")[0]][0]
    return {**outputs, "show lldp table": "\n".join(lines) + "\n",
            BGP_SONIC: json.dumps(summary)}


def _collect_relabelled(platform: str, state: FabricState, name: str,
                        seen_on: dict[str, tuple[str, str]]) -> DeviceState:
    if platform == "eos":
        return _collect_eos(state, name, _relabel_eos(healthy_shows(state, name), seen_on))
    return _collect_sonic(state, name, _relabel_sonic(
        healthy_outputs(state, name, SONIC.names.vrf), seen_on))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_two_nics_swapped_between_rails_are_named_by_both_leaves(
        platform: str, rails: dict[str, FabricState],
        collected: dict[str, dict[str, DeviceState]]) -> None:
    """A multi-NIC server's NIC 1 and NIC 2 cabled to each other's rail leaf: each rail
    leaf's LLDP (as EOS and SONiC report it) names the NIC it sees on the server's port."""
    state = rails[platform]
    server = next(d for d in state.of_role(Role.HOST)
                  if len([i for i in d.interfaces.values() if i.rail is not None]) >= 2)
    one, two = sorted((i for i in server.interfaces.values() if i.rail is not None),
                      key=lambda i: i.rail or 0)[:2]
    assert one.peer is not None and two.peer is not None
    assert one.peer.device != two.peer.device and one.peer.port == two.peer.port
    seen = dict(collected[platform])
    seen[one.peer.device] = _collect_relabelled(
        platform, state, one.peer.device, {one.peer.port: (server.name, two.name)})
    seen[two.peer.device] = _collect_relabelled(
        platform, state, two.peer.device, {two.peer.port: (server.name, one.name)})
    findings = _catalog(state, seen)
    assert sorted((f.check, f.device, f.port) for f in findings) == sorted([
        ("rail.alignment", one.peer.device, one.peer.port),
        ("rail.alignment", two.peer.device, two.peer.port)])
    assert all(f"{server.name} " in f.message for f in findings)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_leaf_cabled_into_the_other_plane_is_named(
        platform: str, rails: dict[str, FabricState],
        collected: dict[str, dict[str, DeviceState]]) -> None:
    state = rails[platform]
    leaf = next(d for d in state.of_role(Role.LEAF) if d.plane is not None)
    uplink = _ports(state, leaf, Role.SPINE)[0]
    planned = leaf.interfaces[uplink].peer
    assert planned is not None
    spine = state.devices[planned.device]
    other = next(s for s in state.of_role(Role.SPINE)
                 if s.plane != leaf.plane and s.pod == spine.pod)
    seen = dict(collected[platform])
    seen[leaf.name] = _collect_relabelled(platform, state, leaf.name,
                                          {uplink: (other.name, planned.port)})
    findings = _catalog(state, seen)
    # the link, and every session on it (EOS: its peer is the port's LLDP neighbour; FRR:
    # the hostname the peer announces), in the default VRF and each tenant's
    sessions = [("plane.independence", leaf.name, p.interface) for bgp in leaf.bgp.values()
                for p in bgp.peers.values() if (p.interface or "").split(".")[0] == uplink]
    assert len(sessions) == len(leaf.bgp) >= 2
    assert sorted((f.check, f.device, f.port) for f in findings) == sorted([
        ("cabling.lldp", leaf.name, uplink), ("plane.independence", leaf.name, uplink),
        *sessions])
    assert all(other.name in f.message for f in findings)


def test_sonic_counters_of_every_tier_are_read(rails: dict[str, FabricState]) -> None:
    """What `verify --traffic` and `verify --lossless` read on a super-spine and a pod spine:
    queue packets per class and PFC frames on every lossless port, the uplinks included."""
    state = rails["sonic"]
    for device in (_super_spine(state), _pod_spine(state)):
        double = SonicDouble(factory_config_db(device.name),
                             outputs=healthy_outputs(state, device.name, SONIC.names.vrf))
        driver = SONIC.read_only(sonic_driver(double, read_only=True))
        ports = [n for n, i in device.interfaces.items() if i.qos is not None and not i.parent]
        classes = SONIC.class_counters(driver)
        assert sorted(classes) == sorted(ports) and all(len(c) == 8 for c in classes.values())
        frames = SONIC.pfc_counters(driver, ports)
        assert sorted(frames) == sorted(ports)
        assert {n for f in frames.values() for d in f.values() for n in d.values()} == {0}
        assert double.mutating == []


def test_an_unnumbered_eos_session_is_named_by_its_port_s_lldp_neighbour(
        rails: dict[str, FabricState]) -> None:
    """`neighbor interface` takes no description, so EOS prints none for the session: its
    peer is the LLDP neighbour of the port (of the parent port for a VRF sub-interface);
    without one it stays unnamed rather than guessed from the plan."""
    state = rails["eos"]
    top = _super_spine(state)
    shows = healthy_shows(state, top.name)
    assert not [p for s in shows[BGP_EOS]["vrfs"].values() for p in s["peers"].values()
                if "description" in p]
    seen = _collect_eos(state, top.name, shows)
    port = _ports(state, top, Role.SPINE)[0]
    planned = top.interfaces[port].peer
    assert planned is not None
    named = {p.key: p.peer_device for b in seen.bgp.values() for p in b.peers.values()}
    assert named[port] == planned.device
    assert all(named[sub] == planned.device for sub in _subs(top, port))
    shows["show lldp neighbors"]["lldpNeighbors"] = [
        n for n in shows["show lldp neighbors"]["lldpNeighbors"] if n["port"] != port]
    blind = _collect_eos(state, top.name, shows)
    named = {p.key: p.peer_device for b in blind.bgp.values() for p in b.peers.values()}
    assert {named[k] for k in (port, *_subs(top, port))} == {None}
