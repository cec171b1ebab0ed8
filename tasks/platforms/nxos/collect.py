"""Read an NX-OS switch into observed DeviceState with show commands only.

Sources (Cisco Nexus 9000 command references; `| json` gives NX-OS's TABLE_x/ROW_x form):
`show running-config` for VRF membership, addresses, VLAN access and the lossless plane
(tasks/platforms/nxos/running.py); `show interface | json` for link state, MTU and speed;
`show lldp neighbors detail | json` for cabling (every neighbour of a port, its time left,
the far port by its port-id subtype); `show bgp ipv4 unicast summary vrf all | json` for the
underlay and tenant sessions; `show ip route vrf all | json` for the RIB (a path learned over
EVPN/VXLAN, `encap` vxlan with its `segid`, is an overlay next hop to the VTEP `ipnexthop`);
`show interface priority-flow-control | json` for PFC pause frames; the running config's
`ip load-sharing` line for ECMP hashing (hashing.py) and its `hardware profile ecmp
resilient` line for the resilient mode (lbmode.py).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import (
    BgpInstance,
    BgpPeer,
    DeviceState,
    Endpoint,
    Interface,
    LbMode,
    PortCounters,
    Route,
)
from flatfab.platforms import phy_read, readback
from flatfab.platforms.base import DeviceDriver, InterfaceNames
from flatfab.platforms.nxos import hashing, lbmode, phy, running
from flatfab.platforms.nxos.driver import NxosError, parse_json
from flatfab.platforms.nxos.running import NxosConfig
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

INTERFACES = "show interface"
LLDP = "show lldp neighbors detail"
BGP = "show bgp ipv4 unicast summary vrf all"
ROUTES = "show ip route vrf all"
PFC = "show interface priority-flow-control"
JSON_COMMANDS = (INTERFACES, LLDP, BGP, ROUTES)
COUNTER_COMMANDS = (PFC,)  # N9000v has no lossless data plane: its absence is no error
# NX-OS's short names (Eth1/1, Lo0, Po10); a host's eth1 is not one
_SHORT = re.compile(r"^(Eth|Lo|Po)(\d.*)$")
_LONG = {"Eth": "Ethernet", "Lo": "loopback", "Po": "port-channel"}
_PROTOCOLS = {"bgp": "bgp", "direct": "connected", "local": "local", "static": "static",
              "hmm": "host"}


def long_name(name: str) -> str:
    m = _SHORT.match(name)
    return f"{_LONG[m[1]]}{m[2]}" if m else name


def rows(table: Any, name: str) -> list[dict[str, Any]]:
    """NX-OS JSON rows: TABLE_<name>.ROW_<name> is a dict for one row, a list for more;
    some releases make TABLE_<name> itself a list of such ROW_<name> holders."""
    if not isinstance(table, dict):
        return []
    holders = table.get(f"TABLE_{name}", [])
    found: list[dict[str, Any]] = []
    for holder in holders if isinstance(holders, list) else [holders]:
        inner = holder.get(f"ROW_{name}", []) if isinstance(holder, dict) else []
        found += [r for r in (inner if isinstance(inner, list) else [inner])
                  if isinstance(r, dict)]
    return found


def _int(value: Any) -> int | None:
    text = str(value).strip()
    return int(text) if text.isdigit() else None


def _json(driver: DeviceDriver, device: DeviceState,
          commands: tuple[str, ...] = (*JSON_COMMANDS, *COUNTER_COMMANDS)
          ) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for command in commands:
        try:
            reply = driver.cli([f"{command} | json"], encoding="text")[f"{command} | json"]
            value = _parse(str(reply), command)
        except (NxosError, OSError, ValueError) as exc:
            if command not in COUNTER_COMMANDS:
                device.errors.append(f"{command}: {(str(exc) or type(exc).__name__)}")
            value = {}
        out[command] = value
    return out


def _parse(text: str, command: str) -> dict[str, Any]:
    if not text.strip():
        return {}  # NX-OS answers an empty table with nothing at all
    value = parse_json(text, command)
    if not isinstance(value, dict):
        raise NxosError(f"{command}: expected a JSON object")
    return value


def _addresses(config: NxosConfig, name: str) -> list[str]:
    found = []
    for line in config.interfaces.get(name, []):
        words = line.split()
        if words[:2] in (["ip", "address"], ["ipv6", "address"]) and "/" in words[2]:
            found.append(words[2])
    return sorted(found)


def _lldp(device: DeviceState, reply: dict[str, Any]) -> dict[str, list[Endpoint]]:
    """Every row of `show lldp neighbors detail` per local port (a port may have several), in
    the switch's order: the far port by its subtype (`port_type`: "Interface Name", "Mac
    Address", "Locally Assigned" or the subtype's number; readback.lldp_far_port) with `port_desc`,
    and `ttl` (NX-OS's "Time remaining", `hold_time` in some releases) as the time left. A
    row naming no system or no far port is named in `not_modelled`."""
    peers: dict[str, list[Endpoint]] = {}
    for index, row in enumerate(rows(reply, "nbor_detail")):
        port, system = row.get("l_port_id"), row.get("sys_name")
        far, why = lldp_far_port(row.get("port_id"), row.get("port_type"), row.get("port_desc"))
        if port and not (system and far):
            readback.lldp_unnamed(device, long_name(str(port)),
                                  system or row.get("chassis_id") or f"#{index}",
                                  why if system else readback.NO_SYSTEM_NAME)
        elif port and system and far:
            peers.setdefault(long_name(str(port)), []).append(Endpoint(
                device=lldp_device(system), port=long_name(far),
                expires_s=lldp_seconds(row.get("ttl", row.get("hold_time")))))
    # NX-OS states no age: of one port's entries, the one with the most time left was heard
    # last (stable: equal or unstated times keep the switch's order)
    return {port: sorted(found, key=lambda e: -(e.expires_s or 0))
            for port, found in peers.items()}


def _interfaces(device: DeviceState, planned: DeviceState, config: NxosConfig,
                shown: dict[str, Any], names: InterfaceNames) -> None:
    peers = _lldp(device, shown[LLDP])
    for row in rows(shown[INTERFACES], "interface"):
        name = str(row.get("interface", ""))
        if not name or name == "mgmt0":
            continue
        bandwidth = _int(row.get("eth_bw") or row.get("svi_bw"))  # Kbit/s
        mtu = _int(row.get("eth_mtu") or row.get("svi_mtu"))
        state = row.get("state") or row.get("svi_line_proto")
        access = config.setting(name, "switchport access vlan")
        vrf = config.setting(f"Vlan{access}" if access else name, "vrf member")
        peer, neighbours = lldp_neighbours(peers.get(name, []))
        device.interfaces[name] = Interface(
            name=name, vrf=tenant(names, vrf), mtu=mtu,
            kind=readback.kind_by_name(planned, name, loopback="loopback", lag="port-channel"),
            up=readback.oper_up(state), addresses=_addresses(config, name),
            bridge=f"Vlan{access}" if access is not None else None,
            parent=name.split(".", maxsplit=1)[0] if "." in name else None,
            speed_mbps=bandwidth // 1000 if bandwidth else None, peer=peer,
            lldp_neighbours=neighbours)
    readback.port_speed_to_subinterfaces(device)
    for iface in device.interfaces.values():
        gateway = device.interfaces.get(iface.bridge or "")
        if gateway is not None and gateway.mtu is not None and iface.mtu is not None:
            # an L2 port's MTU is only its frame limit (1500 or the jumbo MTU): what
            # a host can send through it is bounded by its VLAN's SVI, the L3 MTU
            iface.mtu = min(iface.mtu, gateway.mtu)


def _peer(raw: str) -> tuple[str, str | None, str | None]:
    """(key, interface, address): an interface peering shows its interface, or the
    link-local address scoped to it (fe80::1%Ethernet1/1)."""
    if "%" in raw:
        interface = long_name(raw.split("%", 1)[1])
        return interface, interface, None
    if not re.match(r"^[0-9a-fA-F:.]+$", raw):
        interface = long_name(raw)
        return interface, interface, None
    return raw, None, raw


def _bgp(device: DeviceState, reply: dict[str, Any], names: InterfaceNames) -> None:
    for row in rows(reply, "vrf"):
        vrf = tenant(names, str(row.get("vrf-name-out", "default")))
        where = f"bgp: VRF {vrf}"
        instance = BgpInstance(vrf=vrf, asn=asn_of(device, row.get("vrf-local-as"), where),
                               router_id=str(row.get("vrf-router-id", "")))
        for af in rows(row, "af"):
            for saf in rows(af, "saf"):
                for row_peer in rows(saf, "neighbor"):
                    key, interface, address = _peer(str(row_peer.get("neighborid", "")))
                    instance.peers[key] = BgpPeer(
                        key=key, interface=interface, address=address,
                        remote_asn=asn_of(device, row_peer.get("neighboras"), f"{where} {key}"),
                        state=str(row_peer.get("state", "")) or None,
                        prefixes_received=_int(row_peer.get("prefixreceived")))
        device.bgp[vrf] = instance
    identity_from_bgp(device)
    # the summary has no description: LLDP names every peer
    readback.peers_from_lldp(device, lambda peer: _local_port(device, peer.address))


def _local_port(device: DeviceState, address: str | None) -> Interface | None:
    """The interface with an address in a numbered peer's subnet (not the peer's own)."""
    if address is None:
        return None
    return next((i for i in device.interfaces.values() if any(
        a.split("/")[0] != address and _same_subnet(a, address) for a in i.addresses)), None)


def _same_subnet(cidr: str, address: str) -> bool:
    try:
        return ipaddress.ip_address(address) in ipaddress.ip_interface(cidr).network
    except ValueError:
        return False


def path(row: dict[str, Any]) -> tuple[Any, ...]:
    """One ROW_path as a next hop: (interface, address); a path learned over EVPN/VXLAN
    (`encap` vxlan, or a `segid`, the VNI; NX-OS prints `segid N tunnelid 0x.. encap VXLAN`)
    as (interface, None, VTEP, VNI): its `ipnexthop` is the remote VTEP, not a neighbour."""
    interface = long_name(str(row["ifname"])) if row.get("ifname") else None
    address = row.get("ipnexthop") or None
    vni = _int(row.get("segid"))
    if address and (str(row.get("encap", "")).lower() == "vxlan" or vni):
        return (interface, None, str(address).split("%")[0], vni)  # "%default": its VRF
    return (interface, address)


def _routes(device: DeviceState, reply: dict[str, Any], names: InterfaceNames) -> None:
    tables: dict[str, dict[str, Route]] = {}
    made = Routes()
    for row in rows(reply, "vrf"):
        vrf = tenant(names, str(row.get("vrf-name-out", "default")))
        table = tables.setdefault(vrf, {})
        for af in rows(row, "addrf"):
            for prefix in rows(af, "prefix"):
                paths = rows(prefix, "path")
                client = str(paths[0].get("clientname", "")) if paths else ""
                protocol = _PROTOCOLS.get(client.split("-")[0], client)
                table[made.prefix(str(prefix.get("ipprefix")))] = made.route(
                    protocol, tuple(path(p) for p in paths))
    device.routes = {vrf: dict(sorted(t.items())) for vrf, t in sorted(tables.items())}


def _counters(device: DeviceState, reply: dict[str, Any]) -> None:
    for row in rows(reply, "entry"):
        iface = device.interfaces.get(long_name(str(row.get("intf_name", ""))))
        if iface is not None:
            iface.counters = PortCounters(pfc_rx_frames=_int(row.get("rx_ppp")),
                                          pfc_tx_frames=_int(row.get("tx_ppp")))


def _lossless(device: DeviceState, planned: DeviceState, config: NxosConfig) -> None:
    for name, iface, qos in readback.planned_qos_ports(device, planned):
        iface.qos = running.port_qos(config, name, qos, iface.mtu, iface.speed_mbps)


def _hashing(device: DeviceState, config: NxosConfig) -> None:
    """The ECMP hashing the running config's `ip load-sharing` line sets (no line: the
    switch's own, left unstated) with the mode its `hardware profile ecmp resilient` line
    sets (lbmode.py), and what they set beyond flatfab's model. A resilient line without an
    `ip load-sharing` line is named, not stated: the fields it hashes are the switch's own."""
    device.lb, beyond = hashing.read(config.load_sharing)
    mode, more = lbmode.read(config.resilient, config.dlb)
    if device.lb is not None:
        device.lb.mode = mode
    elif mode is LbMode.RESILIENT:
        more[lbmode.RESILIENT] = ("resilient hashing without an `ip load-sharing` line: the "
                                  "switch hashes on its own default fields, which flatfab "
                                  "does not state")
    device.not_modelled.update({**beyond, **more})


def collect(driver: DeviceDriver, planned: DeviceState, names: InterfaceNames) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform)
    config = NxosConfig.read(str(driver.get_config(retrieve="running")["running"]))
    shown = _json(driver, device)
    _interfaces(device, planned, config, shown, names)
    device.loopback = readback.loopback_address(device, names.loopback)
    device.vrfs = {t: planned.vrfs.get(t, 0)
                   for t in sorted(names.tenant_of(v) or v for v in config.vrfs)}
    readback.guarded(device, "bgp", lambda: _bgp(device, shown[BGP], names))
    readback.guarded(device, "routes", lambda: _routes(device, shown[ROUTES], names))
    _lossless(device, planned, config)
    _hashing(device, config)
    _counters(device, shown[PFC])
    return device


def physical(driver: DeviceDriver, planned: DeviceState) -> dict[str, PortPhysical]:
    """Each cabled port's module, diagnostics, FEC mode and last flap (nxos/phy.py); a show
    the switch does not answer leaves what it states unknown; {}: it answered none."""
    shown = _json(driver, phy_read.scratch(planned), phy.COMMANDS)
    return phy_read.read_answered(shown, readback.cabled_ports(planned), phy.read_ports)
