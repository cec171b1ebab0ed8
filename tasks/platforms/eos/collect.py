"""Read an EOS switch into observed DeviceState with show commands only (eAPI).

Sources: `show running-config` for VRF membership, VLAN access and the lossless plane
(tasks/platforms/eos/running.py); JSON `show interfaces` for link state, MTU, speed and
addresses; `show lldp neighbors` for cabling (every neighbour of a port, its TTL: the summary
states no age and no port-id subtype); `show ip bgp summary vrf all` and `show ip route vrf
all` for the underlay and tenant routing (Arista EOS command reference; a route learned over
EVPN/VXLAN has vias to a VTEP, `vtepAddr` and `vni`, read as overlay next hops; a via of no
kind flatfab reads is named in `not_modelled`, never read as a next hop);
`show priority-flow-control counters` and `show qos interfaces ecn counters queue` for PFC
frames and ECN marks, where the switch has a lossless data plane; the running config's
`ip load-sharing` lines for the ECMP hash (tasks/platforms/eos/hashing.py: flatfab renders
none, the switch's own is read) and its `ip hardware fib load-balance distribution dynamic`
lines for the way it balances on top (tasks/platforms/eos/dlb.py: likewise never rendered).
"""

from __future__ import annotations

import re
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import (
    BgpInstance,
    BgpPeer,
    DeviceState,
    Endpoint,
    Interface,
    PortCounters,
    Route,
)
from flatfab.platforms import phy_read, readback
from flatfab.platforms.base import DeviceDriver, InterfaceNames, PlatformFacts
from flatfab.platforms.eos import dlb, hashing, phy, running
from flatfab.platforms.eos.avd import sets_buffers
from flatfab.platforms.eos.running import EosConfig
from flatfab.platforms.readback import (
    Routes,
    asn_of,
    identity_from_bgp,
    lldp_device,
    lldp_far_port,
    lldp_neighbours,
    lldp_seconds,
    tenant,
)

RUNNING = "show running-config"
INTERFACES = "show interfaces"
LLDP = "show lldp neighbors"
BGP = "show ip bgp summary vrf all"
ROUTES = "show ip route vrf all"
PFC_COUNTERS = "show priority-flow-control counters"
ECN_COUNTERS = "show qos interfaces ecn counters queue"
JSON_COMMANDS = (INTERFACES, LLDP, BGP, ROUTES)
# virtual EOS (cEOS, vEOS) has no lossless data plane and may refuse these: not an error
COUNTER_COMMANDS = (PFC_COUNTERS, ECN_COUNTERS)
# the short names EOS uses in peer keys (fe80::1%Et1) and some tables
_SHORT = {"Et": "Ethernet", "Lo": "Loopback", "Vl": "Vlan", "Po": "Port-Channel"}
_SHORT_NAME = re.compile(r"^(Et|Lo|Vl|Po)(\d.*)$")
_BGP_PROTOCOLS = {"eBGP": "bgp", "iBGP": "bgp", "connected": "connected", "static": "static"}
_VXLAN = re.compile(r"^Vxlan\d+$")  # EOS's VXLAN tunnel interface (Vxlan1)


class EosCollectError(Exception):
    """An EOS reply flatfab cannot read (names the command)."""


def long_name(name: str) -> str:
    m = _SHORT_NAME.match(name)
    return f"{_SHORT[m[1]]}{m[2]}" if m else name


def _count(value: Any) -> int | None:
    """A counter as EOS prints it: a number, a numeric string, or "-" (not counted)."""
    if isinstance(value, int):
        return value
    text = str(value).strip()
    return int(text) if text.isdigit() else None


def _counters(device: DeviceState, shown: dict[str, Any]) -> None:
    pfc = shown[PFC_COUNTERS].get("interfaceCounters", {})
    ecn = shown[ECN_COUNTERS].get("intfQueueCounters", {})
    for name in sorted(set(pfc) | set(ecn)):
        iface = device.interfaces.get(long_name(name))
        if iface is None:
            continue
        frames = pfc.get(name, {}) if isinstance(pfc.get(name), dict) else {}
        queues = ecn.get(name, {}).get("queueCounters", {}) if isinstance(ecn.get(name),
                                                                          dict) else {}
        marked = {int(q): n for q, v in queues.items()
                  if q.isdigit() and (n := _count(v)) is not None}
        iface.counters = PortCounters(pfc_rx_frames=_count(frames.get("rxFrames")),
                                      pfc_tx_frames=_count(frames.get("txFrames")),
                                      ecn_marked=dict(sorted(marked.items())))


def _addresses(state: dict[str, Any]) -> list[str]:
    found = []
    for entry in state.get("interfaceAddress", []) or []:
        primary = entry.get("primaryIp", {})
        if primary.get("address") not in (None, "0.0.0.0"):
            found.append(f"{primary['address']}/{primary.get('maskLen', 32)}")
        for secondary in entry.get("secondaryIpsOrderedList", []) or []:
            found.append(f"{secondary['address']}/{secondary.get('maskLen', 32)}")
    return sorted(found)


def _lldp(device: DeviceState, reply: dict[str, Any]) -> dict[str, list[Endpoint]]:
    """Every entry of `show lldp neighbors` per local port (a port may have several), in the
    switch's order; `ttl` is the hold time the neighbour advertised. An entry naming no
    neighbour or no far port is named in `not_modelled`."""
    peers: dict[str, list[Endpoint]] = {}
    for index, entry in enumerate(reply.get("lldpNeighbors", []) or []):
        if not (isinstance(entry, dict) and entry.get("port")):
            continue
        port, why = lldp_far_port(entry.get("neighborPort"))
        if port is None or not entry.get("neighborDevice"):
            readback.lldp_unnamed(device, long_name(str(entry["port"])),
                                  entry.get("neighborDevice") or f"#{index}",
                                  why if entry.get("neighborDevice") else readback.NO_SYSTEM_NAME)
            continue
        peers.setdefault(long_name(str(entry["port"])), []).append(Endpoint(
            device=lldp_device(entry["neighborDevice"]), port=long_name(port),
            expires_s=lldp_seconds(entry.get("ttl"))))
    return peers


def _lag_members(config: EosConfig, shown: dict[str, Any]) -> dict[str, list[str]]:
    """Port-Channel -> member ports: `channel-group N mode ...` in the running config, and
    the members `show interfaces` lists for the Port-Channel (memberInterfaces)."""
    members: dict[str, set[str]] = {}
    for name in config.interfaces:
        group = config.setting(name, "channel-group")
        if group and group.split()[0].isdigit():
            members.setdefault(f"Port-Channel{group.split()[0]}", set()).add(name)
    for name, state in shown[INTERFACES].get("interfaces", {}).items():
        listed = state.get("memberInterfaces") if isinstance(state, dict) else None
        if isinstance(listed, dict):
            members.setdefault(name, set()).update(long_name(str(m)) for m in listed)
    return {lag: sorted(ports) for lag, ports in members.items()}



def _interfaces(device: DeviceState, planned: DeviceState, config: EosConfig,
                shown: dict[str, Any], names: InterfaceNames) -> None:
    peers = _lldp(device, shown[LLDP])
    for name, state in sorted(shown[INTERFACES].get("interfaces", {}).items()):
        if not isinstance(state, dict):
            continue
        bandwidth = state.get("bandwidth")
        speed = int(bandwidth) // 1_000_000 if isinstance(bandwidth, int) and bandwidth else None
        access = config.setting(name, "switchport access vlan")
        parent = name.split(".")[0] if "." in name else None
        vrf = config.setting(name, "vrf")
        if access is not None:  # an access port is in the VRF of its VLAN's gateway
            vrf = config.setting(f"Vlan{access}", "vrf")
        peer, neighbours = lldp_neighbours(peers.get(name, []))
        device.interfaces[name] = Interface(
            name=name, vrf=tenant(names, vrf),
            kind=readback.kind_by_name(planned, name, loopback="Loopback", lag="Port-Channel"),
            mtu=state.get("mtu") if isinstance(state.get("mtu"), int) else None,
            up=readback.oper_up(state.get("lineProtocolStatus")), addresses=_addresses(state),
            bridge=f"Vlan{access}" if access is not None else None, parent=parent,
            speed_mbps=speed, peer=peer, lldp_neighbours=neighbours)
    readback.port_speed_to_subinterfaces(device)
    for lag, ports in _lag_members(config, shown).items():
        if lag in device.interfaces:
            device.interfaces[lag].members = ports
        for port in ports:
            if port in device.interfaces:
                device.interfaces[port].lag = lag


def _peer_key(key: str) -> tuple[str, str | None, str | None]:
    """(key, interface, address) of one BGP summary peer: an unnumbered session shows as
    the link-local address scoped to its interface (fe80::1%Et1)."""
    if "%" in key:
        interface = long_name(key.split("%", 1)[1])
        return interface, interface, None
    return key, None, key


def _bgp(device: DeviceState, reply: dict[str, Any], names: InterfaceNames) -> None:
    for name, summary in sorted(reply.get("vrfs", {}).items()):
        if not isinstance(summary, dict):
            continue
        vrf = tenant(names, name)
        where = f"bgp: VRF {name}"
        instance = BgpInstance(vrf=vrf, asn=asn_of(device, summary.get("asn"), where),
                               router_id=str(summary.get("routerId", "")))
        for raw, peer in sorted(summary.get("peers", {}).items()):
            key, interface, address = _peer_key(raw)
            instance.peers[key] = BgpPeer(
                key=key, interface=interface, address=address,
                remote_asn=asn_of(device, peer.get("asn"), f"{where} peer {raw}"),
                peer_device=peer.get("description") or None, state=peer.get("peerState"),
                prefixes_received=peer.get("prefixReceived"))
        device.bgp[vrf] = instance
    identity_from_bgp(device)
    # EOS prints a peer's configured description in the summary, but an unnumbered session
    # (`neighbor interface Ethernet1 peer-group G remote-as N`) takes none: the command has no
    # description keyword (Arista EOS User Manual, BGP unnumbered / "neighbor interface";
    # AVD's eos_cli_config_gen prints none either). Its peer is whoever is at the other end
    # of the port the session runs on, as LLDP reports it.
    readback.peers_from_lldp(device)


def via(entry: Any) -> tuple[Any, ...] | None:
    """One via of `show ip route vrf all` as a next hop: (interface, address) of an underlay
    via; (local interface, None, VTEP, VNI) of an EVPN/VXLAN one: `vtepAddr` and `vni` (EOS
    prints `via VTEP <addr> VNI <n> router-mac <mac> local-interface Vxlan1`; the local
    interface as `interface`/`localInterface` where the JSON gives it; `routerMac` is the
    inner Ethernet header, no path), or a via out of a VXLAN interface to an address, which
    is the VTEP. None: a via with none of these (not a next hop)."""
    if not isinstance(entry, dict):
        return None
    local = entry.get("interface") or entry.get("localInterface")
    interface = long_name(str(local)) if local else None
    vtep = entry.get("vtepAddr") or (entry.get("nexthopAddr") if _VXLAN.match(interface or "")
                                     else None)
    if vtep:
        vni = str(entry.get("vni", "")).strip()
        return (interface, None, str(vtep), int(vni) if vni.isdigit() else None)
    address = entry.get("nexthopAddr") or None
    if interface is None and address is None:
        return None
    return (interface, address)


def _routes(device: DeviceState, reply: dict[str, Any], names: InterfaceNames) -> None:
    tables: dict[str, dict[str, Route]] = {}
    made = Routes()
    unread: dict[str, tuple[list[str], set[str]]] = {}  # VRF -> (prefixes, via keys)
    for vrf, table in sorted(reply.get("vrfs", {}).items()):
        routes = table.get("routes", {}) if isinstance(table, dict) else {}
        rows: dict[str, Route] = {}
        tables[tenant(names, vrf)] = rows
        for prefix, entry in sorted(routes.items()):
            if not isinstance(entry, dict):
                continue
            hops: list[tuple[Any, ...]] = []
            for raw in entry.get("vias", []) or []:
                hop = via(raw)
                if hop is None:
                    seen = unread.setdefault(vrf, ([], set()))
                    seen[0].append(prefix)
                    seen[1].update(raw if isinstance(raw, dict) else [type(raw).__name__])
                else:
                    hops.append(hop)
            route_type = str(entry.get("routeType", ""))
            rows[made.prefix(prefix)] = made.route(_BGP_PROTOCOLS.get(route_type, route_type),
                                                   tuple(hops))
    for vrf, (prefixes, keys) in unread.items():
        listed = ", ".join(sorted(set(prefixes))[:4]) + (
            f" and {len(set(prefixes)) - 4} more" if len(set(prefixes)) > 4 else "")
        device.not_modelled[f"VRF {vrf} route vias"] = (
            f"vias with no interface, next-hop address or VTEP (keys: "
            f"{', '.join(sorted(keys)) or 'none'}) on {listed}: left out of the next hops")
    device.routes = tables


def _lossless(device: DeviceState, planned: DeviceState, config: EosConfig,
              facts: PlatformFacts) -> None:
    _, missing = running.dscp_map(config)
    if missing and config.profiles:
        device.errors.append(f"qos map dscp leaves DSCP {','.join(map(str, missing))} "
                             "unmapped (EOS default applies)")
    own = _switch_buffers(planned, facts)
    for name, iface, qos in readback.planned_qos_ports(device, planned):
        mtu = config.setting(name, "mtu")
        iface.qos = running.port_qos(config, name, qos,
                                     int(mtu) if mtu and mtu.isdigit() else None,
                                     iface.speed_mbps)
        if iface.qos is not None and own is not None:
            lossless = {at for p in iface.qos.pfc
                        if (at := _pg_of(iface.qos.maps.pfc_to_pg, p)) is not None}
            iface.qos.unknown |= {f"pgs.{pg}": own for pg in sorted(lossless)}
    if planned.qos is None:
        return
    if own is not None:
        # the switch's own buffers: the planned pools and profiles stand for them, every pool
        # size and lossless PG unknown, so the class chain is followed but no size judged
        device.qos = planned.qos.model_copy(update={"unknown": {
            f"pools.{pool}.size": own for pool in sorted(planned.qos.pools)}})
    elif sets_buffers(planned.qos, facts):
        # a Trident without its queue profile reads as having no buffer profiles at all
        device.qos = (running.mmu_qos(config, planned.qos)
                      or planned.qos.model_copy(update={"profiles": {}}))


def _switch_buffers(planned: DeviceState, facts: PlatformFacts) -> str | None:
    """Why the switch's buffers are its own (a family without buffer knobs), or None."""
    if planned.qos is None or sets_buffers(planned.qos, facts):
        return None
    limits = facts.capabilities.family_limits(planned.qos.asic.family)
    return limits.get("buffers") or "the switch keeps its own buffer settings"


def _pg_of(pfc_to_pg: list[int], priority: int) -> int | None:
    return pfc_to_pg[priority] if 0 <= priority < len(pfc_to_pg) else None


def collect(driver: DeviceDriver, planned: DeviceState, facts: PlatformFacts,
            names: InterfaceNames) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform)
    config = EosConfig.read(str(driver.get_config(retrieve="running")["running"]))
    shown = readback.json_shows(driver, device, JSON_COMMANDS, COUNTER_COMMANDS)
    _interfaces(device, planned, config, shown, names)
    device.loopback = readback.loopback_address(device, names.loopback)
    tenants = [names.tenant_of(vrf) or vrf for vrf in sorted(config.vrfs)]
    device.vrfs = {tenant: planned.vrfs.get(tenant, 0) for tenant in tenants}
    readback.guarded(device, "bgp", lambda: _bgp(device, shown[BGP], names))
    readback.guarded(device, "routes", lambda: _routes(device, shown[ROUTES], names))
    _lossless(device, planned, config, facts)
    _counters(device, shown)
    hashed, unmodelled = hashing.read(config)
    device.not_modelled.update(unmodelled)
    device.lb, unmodelled = dlb.read(config, hashed)
    device.not_modelled.update(unmodelled)
    return device


def physical(driver: DeviceDriver, planned: DeviceState) -> dict[str, PortPhysical]:
    """Each cabled port's module, FEC and flaps (eos/phy.py); a show the switch does not
    answer leaves what it states unknown, with why; {}: it answered none of them."""
    shown = readback.json_shows(driver, phy_read.scratch(planned), (), phy.COMMANDS)
    return phy_read.read_answered(shown, readback.cabled_ports(planned), phy.read_ports)
