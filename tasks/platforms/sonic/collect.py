"""Read a SONiC switch into observed DeviceState with show-type commands only.

Sources: CONFIG_DB (`show runningconfiguration all`) for ports, addresses, VRFs and the
lossless tables; FRR's JSON (vtysh) for link state, BGP and routes; `show lldp table` for
cabling; COUNTERS_DB for PFC frames and `show queue counters --json` for queue packets.
Device VRF names (Vrf_blue) are mapped back to tenants (blue).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from tasks.model.state import (
    BgpInstance,
    BgpPeer,
    DeviceState,
    Endpoint,
    IfKind,
    Interface,
    NextHop,
    Probe,
    Route,
)
from tasks.platforms import configdb
from tasks.platforms.base import DeviceDriver, InterfaceNames
from tasks.platforms.configdb import ConfigDb
from tasks.platforms.readback import identity_from_bgp, tenant
from tasks.platforms.sonic.driver import SonicError, parse_json

RUNNING = "show runningconfiguration all"
INTERFACES = "vtysh -c 'show interface vrf all json'"
BGP = "vtysh -c 'show bgp vrf all summary json'"
ROUTES = "vtysh -c 'show ip route vrf all json'"
LLDP = "show lldp table"
QUEUES = "show queue counters --json"
PORT_MAP = "sonic-db-cli COUNTERS_DB HGETALL COUNTERS_PORT_NAME_MAP"
_SHORT = re.compile(r"^Eth(\d+)$")


def _one(driver: DeviceDriver, command: str) -> str:
    return str(driver.cli([command])[command])


def read_config_db(driver: DeviceDriver) -> ConfigDb:
    try:
        return configdb.parse_json(parse_json(_one(driver, RUNNING), "CONFIG_DB"))
    except configdb.ConfigDbError as exc:
        raise SonicError(f"CONFIG_DB: {exc}") from None


def _json(driver: DeviceDriver, command: str, device: DeviceState, what: str) -> dict[str, Any]:
    """One FRR/SONiC JSON read; a failing daemon is recorded, not fatal."""
    try:
        value = parse_json(_one(driver, command), what)
    except SonicError as exc:
        device.errors.append(f"{what}: {exc}")
        return {}
    if not isinstance(value, dict):
        device.errors.append(f"{what}: expected a JSON object")
        return {}
    return value



def _parent(name: str) -> str | None:
    if "." not in name:
        return None
    head = name.split(".", maxsplit=1)[0]
    short = _SHORT.match(head)
    return f"Ethernet{short.group(1)}" if short else head


def _addresses(db: ConfigDb, table: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key in db.get(table, {}):
        name, _, prefix = key.partition("|")
        if prefix:
            out.setdefault(name, []).append(prefix)
    return {name: sorted(prefixes) for name, prefixes in out.items()}


def lldp_peers(text: str, names: InterfaceNames) -> dict[str, Endpoint]:
    """`show lldp table`: LocalPort RemoteDevice RemotePortID Capability RemotePortDescr."""
    peers: dict[str, Endpoint] = {}
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 3 and names.is_port(cols[0]):
            peers[cols[0]] = Endpoint(device=cols[1], port=cols[2])
    return peers


def _rows(db: ConfigDb, table: str) -> dict[str, dict[str, str]]:
    return {k: v for k, v in db.get(table, {}).items() if "|" not in k}


def _interfaces(device: DeviceState, db: ConfigDb, planned: DeviceState,
                names: InterfaceNames, oper: dict[str, Any],
                peers: dict[str, Endpoint]) -> None:
    members = {key.partition("|")[2]: key.partition("|")[0] for key in db.get("VLAN_MEMBER", {})}

    def up(name: str, admin: str | None) -> bool:
        state = oper.get(name, {})
        if isinstance(state, dict) and "operationalStatus" in state:
            return bool(state["operationalStatus"] == "up")
        return admin != "down"

    def kind(name: str, default: IfKind) -> IfKind:
        return planned.interfaces[name].kind if name in planned.interfaces else default

    loopbacks = _addresses(db, "LOOPBACK_INTERFACE")
    for name in _rows(db, "LOOPBACK_INTERFACE") | {n: {} for n in loopbacks}:
        device.interfaces[name] = Interface(name=name, kind=IfKind.LOOPBACK, up=True,
                                            addresses=loopbacks.get(name, []))
    routed = _rows(db, "INTERFACE")
    vlan_vrfs = _rows(db, "VLAN_INTERFACE")
    port_addresses = _addresses(db, "INTERFACE")
    for name, row in db.get("PORT", {}).items():
        speed = row.get("speed", "")
        member = members.get(name)
        device.interfaces[name] = Interface(
            name=name, kind=kind(name, IfKind.HOST_PORT if member else
                                 IfKind.FABRIC if name in routed else IfKind.OTHER),
            # a VLAN member port is in the VRF of its VLAN's gateway
            vrf=tenant(names, (vlan_vrfs.get(member, {}) if member else routed.get(name, {}))
                        .get("vrf_name")),
            mtu=int(row["mtu"]) if row.get("mtu", "").isdigit() else None,
            up=up(name, row.get("admin_status")), addresses=port_addresses.get(name, []),
            bridge=member, speed_mbps=int(speed) if speed.isdigit() else None,
            peer=peers.get(name))
    sub_addresses = _addresses(db, "VLAN_SUB_INTERFACE")
    for name, row in _rows(db, "VLAN_SUB_INTERFACE").items():
        parent = _parent(name)
        parent_row = device.interfaces.get(parent or "")
        device.interfaces[name] = Interface(
            name=name, kind=kind(name, IfKind.FABRIC), vrf=tenant(names, row.get("vrf_name")),
            mtu=parent_row.mtu if parent_row else None, up=up(name, row.get("admin_status")),
            addresses=sub_addresses.get(name, []), parent=parent,
            speed_mbps=parent_row.speed_mbps if parent_row else None)
    vlan_addresses = _addresses(db, "VLAN_INTERFACE")
    for name, row in _rows(db, "VLAN").items():
        device.interfaces[name] = Interface(
            name=name, kind=kind(name, IfKind.BRIDGE),
            vrf=tenant(names, vlan_vrfs.get(name, {}).get("vrf_name")),
            mtu=int(row["mtu"]) if row.get("mtu", "").isdigit() else None,
            up=up(name, row.get("admin_status")), addresses=vlan_addresses.get(name, []))


def _bgp(device: DeviceState, summary: dict[str, Any], names: InterfaceNames) -> None:
    for vrf_name, families in summary.items():
        unicast = families.get("ipv4Unicast") if isinstance(families, dict) else None
        if not isinstance(unicast, dict):
            continue
        name = tenant(names, vrf_name)
        instance = BgpInstance(vrf=name, asn=unicast.get("as"),
                               router_id=str(unicast.get("routerId", "")))
        for key, peer in unicast.get("peers", {}).items():
            is_interface = peer.get("idType") == "interface" or key in device.interfaces
            instance.peers[key] = BgpPeer(
                key=key, interface=key if is_interface else None,
                address=None if is_interface else key, remote_asn=peer.get("remoteAs"),
                peer_device=peer.get("hostname") or None, state=peer.get("state"),
                prefixes_received=peer.get("pfxRcd"))
        device.bgp[name] = instance
    identity_from_bgp(device)


def _routes(device: DeviceState, rib: dict[str, Any], names: InterfaceNames) -> None:
    routes: dict[str, dict[str, Route]] = {}
    for vrf_name, table in rib.items():
        if not isinstance(table, dict):
            continue
        selected: dict[str, Route] = {}
        for prefix, entries in table.items():
            for entry in entries if isinstance(entries, list) else []:
                if not entry.get("selected"):
                    continue
                hops = [NextHop(interface=h.get("interfaceName"), address=h.get("ip"))
                        for h in entry.get("nexthops", []) if h.get("fib")]
                selected[prefix] = Route(prefix=prefix, protocol=entry.get("protocol", ""),
                                         nexthops=hops)
        routes[tenant(names, vrf_name)] = selected
    device.routes = routes


def _lossless(device: DeviceState, db: ConfigDb, planned: DeviceState) -> None:
    try:
        qos, ports = configdb.from_config_db(db, virtual=False)
    except configdb.ConfigDbError as exc:
        device.errors.append(f"lossless: {exc}")
        return
    if qos is not None and planned.qos is not None:
        # headroom inputs are hardware constants SONiC keeps outside CONFIG_DB
        qos = qos.model_copy(update={"asic": planned.qos.asic})
    device.qos = qos
    for name, port in ports.items():
        if name in device.interfaces:
            device.interfaces[name].qos = port


def collect(driver: DeviceDriver, planned: DeviceState, probes: list[Probe],
            names: InterfaceNames) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform)
    db = read_config_db(driver)
    oper_all = _json(driver, INTERFACES, device, "interfaces")
    # FRR keys `vrf all` output by VRF on some releases, by interface on others
    oper: dict[str, Any] = {}
    for key, value in oper_all.items():
        nested = isinstance(value, dict) and "operationalStatus" not in value
        oper.update(value if nested else {key: value})
    peers: dict[str, Endpoint] = {}
    try:
        peers = lldp_peers(_one(driver, LLDP), names)
    except SonicError as exc:
        device.errors.append(f"lldp: {exc}")
    _interfaces(device, db, planned, names, oper, peers)
    loopback = device.interfaces.get(names.loopback)
    device.loopback = loopback.addresses[0] if loopback and loopback.addresses else None
    device.vrfs = {tenant(names, v): planned.vrfs.get(tenant(names, v), 0)
                   for v in db.get("VRF", {})}
    for what, command, reader in (("bgp", BGP, _bgp), ("routes", ROUTES, _routes)):
        try:
            reader(device, _json(driver, command, device, what), names)
        except (ValueError, TypeError, AttributeError) as exc:  # pydantic's errors included
            device.errors.append(f"{what}: unexpected output ({str(exc).splitlines()[0]})")
    if planned.qos is not None:
        _lossless(device, db, planned)
    return device


def _db_hash(text: str, what: str) -> dict[str, str]:
    """sonic-db-cli prints a hash as a Python dict literal."""
    try:
        value = ast.literal_eval(text.strip() or "{}")
    except (ValueError, SyntaxError):
        raise SonicError(f"{what}: not a sonic-db-cli hash ({text.strip()[:80]!r})") from None
    if not isinstance(value, dict):
        raise SonicError(f"{what}: not a sonic-db-cli hash")
    return {str(k): str(v) for k, v in value.items()}


def pfc_counters(driver: DeviceDriver, ports: list[str]) -> dict[str, dict[str, dict[int, int]]]:
    """Per port, PFC frames received and sent per priority ("rx"/"tx" -> prio -> frames)."""
    oids = _db_hash(_one(driver, PORT_MAP), "COUNTERS_PORT_NAME_MAP")
    wanted = [p for p in ports if p in oids]
    commands = [f"sonic-db-cli COUNTERS_DB HGETALL COUNTERS:{oids[p]}" for p in wanted]
    outputs = driver.cli(commands) if commands else {}
    out: dict[str, dict[str, dict[int, int]]] = {}
    for port, command in zip(wanted, commands, strict=True):
        stats = _db_hash(str(outputs[command]), f"COUNTERS:{oids[port]}")
        out[port] = {direction: {prio: int(stats.get(
            f"SAI_PORT_STAT_PFC_{prio}_{direction.upper()}_PKTS", "0") or 0)
            for prio in range(8)} for direction in ("rx", "tx")}
    return out


def queue_counters(driver: DeviceDriver) -> dict[str, dict[int, int]]:
    """Per port, packets sent per unicast queue (SONiC queue n serves traffic class n)."""
    data = parse_json(_one(driver, QUEUES), "queue counters")
    if not isinstance(data, dict):
        raise SonicError("queue counters: expected a JSON object")
    out: dict[str, dict[int, int]] = {}
    for port, queues in data.items():
        if not isinstance(queues, dict):
            continue
        for queue, row in queues.items():
            if queue.startswith("UC") and queue[2:].isdigit() and isinstance(row, dict):
                packets = str(row.get("totalpacket", "0")).replace(",", "")
                out.setdefault(port, {})[int(queue[2:])] = int(packets) if packets.isdigit() else 0
    return out
