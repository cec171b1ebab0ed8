"""Read a SONiC switch into observed DeviceState with show-type commands only.

Sources: CONFIG_DB (`show runningconfiguration all`) for ports, addresses, VRFs, the
lossless tables, packet trimming (configdb.from_config_db: `SWITCH_TRIMMING|GLOBAL`, each
port's `tc_to_dscp_map`, a profile's `packet_discard_action`; what of it flatfab has no place
for is named in `not_modelled`, sonic/trimming.py) and ECMP hashing (`SWITCH_HASH|GLOBAL`
`ecmp_hash`, sonic/hashing.py: none there leaves the hashing unknown; a field flatfab has no
name for is named in `not_modelled`) and link-level retry (a port's `LLR_PORT` row, read as
on where llrmgrd runs it: static mode, both directions enabled; sonic/llr.py);
FRR's JSON (vtysh) for link state, BGP and routes (in a VRF with an L3VNI, `VRF|<vrf> vni`
mapped to its VLAN by VXLAN_TUNNEL_MAP, a route's next hop on that VLAN is an EVPN/VXLAN
one: its address is the remote VTEP); `show lldp table` for cabling (every row of a port: a
port may have several neighbours; the table states no age, TTL or port-id subtype, so an id
shaped like a MAC gives way to the port description); `show queue counters --json` for
queue packets. COUNTERS_DB (`sonic-db-cli COUNTERS_DB HGETALL`,
read-only) gives each port with lossless state its PFC pause frames
(SAI_PORT_STAT_PFC_<p>_RX/TX_PKTS of the port's oid in COUNTERS_PORT_NAME_MAP, summed over
the priorities) and the ECN marks of its lossless queues (SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS
of the queue oid COUNTERS_QUEUE_NAME_MAP gives "Ethernet0:3"): two map reads, then one batch
of per-oid reads. A switch without these counters (no map entry, an empty hash or no such
field: a virtual switch, counter polling off) leaves them unknown; an unreadable reply is
recorded in errors.
Device VRF names (Vrf_blue) are mapped back to tenants (blue).
"""

from __future__ import annotations

import ast
import functools
import re
import time
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import (
    DeviceState,
    Endpoint,
    IfKind,
    Interface,
    PortCounters,
    Probe,
    Route,
)
from flatfab.platforms import configdb, readback
from flatfab.platforms.base import DeviceDriver, InterfaceNames
from flatfab.platforms.configdb import ConfigDb
from flatfab.platforms.readback import (
    Routes,
    frr_bgp_instance,
    frr_ipv4_unicast,
    frr_routes,
    identity_from_bgp,
    lldp_device,
    lldp_far_port,
    lldp_neighbours,
    tenant,
)
from flatfab.platforms.sonic import hashing, llr, phy, trimming
from flatfab.platforms.sonic.driver import SonicError, parse_json, read_running_db

RUNNING = "show runningconfiguration all"
INTERFACES = "vtysh -c 'show interface vrf all json'"
BGP = "vtysh -c 'show bgp vrf all summary json'"
ROUTES = "vtysh -c 'show ip route vrf all json'"
LLDP = "show lldp table"
QUEUES = "show queue counters --json"
PORT_MAP = "sonic-db-cli COUNTERS_DB HGETALL COUNTERS_PORT_NAME_MAP"
QUEUE_MAP = "sonic-db-cli COUNTERS_DB HGETALL COUNTERS_QUEUE_NAME_MAP"  # "Ethernet0:3" -> oid
ECN_MARKED = "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"
_SHORT = re.compile(r"^(Eth|Po)(\d+)$")
_LONG = {"Eth": "Ethernet", "Po": "PortChannel"}


def _one(driver: DeviceDriver, command: str) -> str:
    return str(driver.cli([command])[command])


def read_config_db(driver: DeviceDriver) -> ConfigDb:
    return read_running_db(_one(driver, RUNNING))


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
    return f"{_LONG[short.group(1)]}{short.group(2)}" if short else head


def _addresses(db: ConfigDb, table: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key in db.get(table, {}):
        name, _, prefix = key.partition("|")
        if prefix:
            out.setdefault(name, []).append(prefix)
    return {name: sorted(prefixes) for name, prefixes in out.items()}


_RULE = re.compile(r"-+")


def _columns(text: str) -> list[tuple[int, int]] | None:
    """The column spans of a `show lldp table` (tabulate's dashes under the header), or None
    when the output has no such line (then columns are split on whitespace)."""
    for line in text.splitlines():
        if line.strip() and set(line.strip()) <= {"-", " "} and "  " in line.strip():
            spans = [m.span() for m in _RULE.finditer(line)]
            return [(start, spans[i + 1][0] if i + 1 < len(spans) else 10_000)
                    for i, (start, _) in enumerate(spans)]
    return None


def lldp_peers(text: str, names: InterfaceNames,
               unnamed: dict[str, str] | None = None) -> dict[str, list[Endpoint]]:
    """`show lldp table`: LocalPort RemoteDevice RemotePortID Capability RemotePortDescr, one
    row per neighbour (a port may have several, in the table's order). Read by the columns
    the dashes under the header mark, so an empty Capability or a description with spaces
    does not shift the others; an id shaped like a MAC (a Linux host's default) gives way to
    the description (readback.lldp_far_port). A port's row naming no device or no far port goes
    to `unnamed` (port -> why)."""
    spans = _columns(text)
    peers: dict[str, list[Endpoint]] = {}
    for line in text.splitlines():
        cols = [line[a:b].strip() for a, b in spans] if spans else []
        if " ".join(cols).split() != line.split():  # a row off the columns: by whitespace
            cols = line.split(maxsplit=4)
        if not cols or not names.is_port(cols[0]):
            continue
        port, why = lldp_far_port(cols[2] if len(cols) > 2 else None, None,
                                  cols[4] if len(cols) > 4 else None)
        if len(cols) < 2 or not cols[1] or port is None:
            if unnamed is not None:
                unnamed[cols[0]] = (readback.NO_SYSTEM_NAME if len(cols) < 2 or not cols[1]
                                    else why)
            continue
        peers.setdefault(cols[0], []).append(Endpoint(device=lldp_device(cols[1]), port=port))
    return peers


def _rows(db: ConfigDb, table: str) -> dict[str, dict[str, str]]:
    return {k: v for k, v in db.get(table, {}).items() if "|" not in k}


def _oper_up(oper: dict[str, Any], name: str, admin: str | None) -> bool | None:
    """Zebra's oper state of the kernel interface; one zebra does not list has no state read
    (its admin status in CONFIG_DB says what was asked, not what is), unless it is down."""
    state = oper.get(name, {})
    if isinstance(state, dict) and "operationalStatus" in state:
        return readback.oper_up(state["operationalStatus"])
    return False if admin == "down" else None


def _interfaces(device: DeviceState, db: ConfigDb, planned: DeviceState,
                names: InterfaceNames, oper: dict[str, Any],
                peers: dict[str, list[Endpoint]]) -> None:
    up = functools.partial(_oper_up, oper)
    # VLAN_MEMBER rows; older releases also list them in the VLAN row (`members`)
    members = {port: vlan for vlan, row in _rows(db, "VLAN").items()
               for port in row.get("members@", "").split(",") if port}
    members |= {key.partition("|")[2]: key.partition("|")[0] for key in db.get("VLAN_MEMBER", {})}

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
        peer, neighbours = lldp_neighbours(peers.get(name, []))
        device.interfaces[name] = Interface(
            name=name, kind=kind(name, IfKind.HOST_PORT if member else
                                 IfKind.FABRIC if name in routed else IfKind.OTHER),
            # a VLAN member port is in the VRF of its VLAN's gateway
            vrf=tenant(names, (vlan_vrfs.get(member, {}) if member else routed.get(name, {}))
                        .get("vrf_name")),
            mtu=int(row["mtu"]) if row.get("mtu", "").isdigit() else None,
            up=up(name, row.get("admin_status")), addresses=port_addresses.get(name, []),
            bridge=member, speed_mbps=int(speed) if speed.isdigit() else None,
            peer=peer, lldp_neighbours=neighbours)
    _lags(device, db, names, members, oper, kind)
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


def _lags(device: DeviceState, db: ConfigDb, names: InterfaceNames, vlan_of: dict[str, str],
          oper: dict[str, Any], kind: Any) -> None:
    """PortChannels (PORTCHANNEL, its members in PORTCHANNEL_MEMBER or, in older releases,
    the row's `members` list, its addresses and VRF in PORTCHANNEL_INTERFACE)."""
    members: dict[str, list[str]] = {}
    for key in db.get("PORTCHANNEL_MEMBER", {}):
        lag, _, port = key.partition("|")
        if port:
            members.setdefault(lag, []).append(port)
    routed = _rows(db, "PORTCHANNEL_INTERFACE")
    addresses = _addresses(db, "PORTCHANNEL_INTERFACE")
    vlan_vrfs = _rows(db, "VLAN_INTERFACE")
    for name, row in _rows(db, "PORTCHANNEL").items():
        listed = [m for m in row.get("members@", "").split(",") if m]
        ports = sorted(set(members.get(name, [])) | set(listed))
        vlan = vlan_of.get(name)
        speeds = [device.interfaces[p].speed_mbps or 0 for p in ports if p in device.interfaces]
        device.interfaces[name] = Interface(
            name=name, kind=kind(name, IfKind.LAG),
            vrf=tenant(names, (vlan_vrfs.get(vlan, {}) if vlan else routed.get(name, {}))
                       .get("vrf_name")),
            mtu=int(row["mtu"]) if row.get("mtu", "").isdigit() else None,
            up=_oper_up(oper, name, row.get("admin_status")),
            addresses=addresses.get(name, []), bridge=vlan,
            speed_mbps=sum(speeds) or None, members=ports)
        for port in ports:
            if port in device.interfaces:
                device.interfaces[port].lag = name


def _bgp(device: DeviceState, summary: dict[str, Any], names: InterfaceNames) -> None:
    for vrf_name, families in summary.items():
        unicast, has_ipv4 = frr_ipv4_unicast(families)
        if not has_ipv4:
            continue
        name = tenant(names, vrf_name)
        device.bgp[name] = frr_bgp_instance(
            device, name, unicast, f"bgp: VRF {vrf_name}",
            lambda key, peer: peer.get("idType") == "interface" or key in device.interfaces)
    identity_from_bgp(device)


def l3vni_vlans(db: ConfigDb) -> dict[str, tuple[str, int]]:
    """VRF -> (its L3VNI's VLAN, the VNI): `VRF|<vrf> vni` and the VXLAN_TUNNEL_MAP row that
    maps that VNI to a VLAN (SONiC's EVPN symmetric IRB; the VLAN's interface is the VRF's)."""
    vnis = {row["vni"]: vrf for vrf, row in _rows(db, "VRF").items()
            if row.get("vni", "").isdigit() and row["vni"] != "0"}
    out: dict[str, tuple[str, int]] = {}
    for row in db.get("VXLAN_TUNNEL_MAP", {}).values():
        vni, vlan = row.get("vni", ""), row.get("vlan", "")
        if vni in vnis and vlan:
            out[vnis[vni]] = (vlan, int(vni))
    return out


def _overlay(routes: dict[str, Route], vlan: str, vni: int, made: Routes) -> dict[str, Route]:
    """A VRF's routes with each next hop on its L3VNI VLAN read as the EVPN/VXLAN next hop it
    is (FRR installs a type-5 route via the remote VTEP's address, onlink on that VLAN):
    interface the VLAN, no neighbour address, the VTEP and the VNI. Shared routes stay
    shared."""
    done: dict[int, Route] = {}
    out: dict[str, Route] = {}
    for prefix, route in routes.items():
        found = done.get(id(route))
        if found is None:
            hops = tuple((h.interface, None, h.address, vni)
                         if h.interface == vlan and h.address and not h.overlay
                         else (h.interface, h.address) for h in route.nexthops)
            found = done[id(route)] = made.route(route.protocol, hops)
        out[prefix] = found
    return out


def _routes(device: DeviceState, rib: dict[str, Any], names: InterfaceNames,
            db: ConfigDb) -> None:
    made = Routes()
    evpn = l3vni_vlans(db)
    tables: dict[str, dict[str, Route]] = {}
    for vrf_name, table in rib.items():
        if not isinstance(table, dict):
            continue
        routes = frr_routes(table, made)
        if vrf_name in evpn:
            routes = _overlay(routes, *evpn[vrf_name], made)
        tables[tenant(names, vrf_name)] = routes
    device.routes = tables


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
    retry = db.get(llr.TABLE, {})
    for name, port in ports.items():
        if name in device.interfaces:
            # SONiC's row carries llr_mode (and maybe llr_profile): read as llrmgrd does
            device.interfaces[name].qos = port.model_copy(
                update={"llr": llr.retries(retry.get(name))})


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
    peers: dict[str, list[Endpoint]] = {}
    try:
        unnamed: dict[str, str] = {}
        peers = lldp_peers(_one(driver, LLDP), names, unnamed)
        for port, why in sorted(unnamed.items()):
            readback.lldp_unnamed(device, port, "row", why)
    except SonicError as exc:
        device.errors.append(f"lldp: {exc}")
    _interfaces(device, db, planned, names, oper, peers)
    device.loopback = readback.loopback_address(device, names.loopback)
    device.vrfs = {tenant(names, v): planned.vrfs.get(tenant(names, v), 0)
                   for v in db.get("VRF", {})}
    unreadable = (ValueError, TypeError, AttributeError)  # pydantic's errors included
    readback.guarded(device, "bgp",
                     lambda: _bgp(device, _json(driver, BGP, device, "bgp"), names),
                     errors=unreadable)
    readback.guarded(device, "routes",
                     lambda: _routes(device, _json(driver, ROUTES, device, "routes"), names,
                                     db),
                     errors=unreadable)
    if planned.qos is not None:
        _lossless(device, db, planned)
        _counters(driver, device, planned)
        device.not_modelled.update(trimming.not_modelled(db))
        device.not_modelled.update(llr.not_modelled(db))
    device.lb, unmodelled = hashing.from_config_db(db)
    device.not_modelled.update(unmodelled)
    return device


def physical(driver: DeviceDriver, planned: DeviceState) -> dict[str, PortPhysical]:
    """Each cabled port's module, diagnostics, FEC and flaps from the Redis databases
    (sonic/phy.py), its hashes read in one call; a hash that does not read leaves the port's
    physical layer unknown, with why."""
    ports = readback.cabled_ports(planned)
    if not ports:
        return {}
    failed: tuple[type[Exception], ...] = (SonicError, *readback.read_errors())
    try:
        oids = _db_hash(_one(driver, PORT_MAP), "COUNTERS_PORT_NAME_MAP")
    except failed:
        oids = {}  # the FEC counters are then unknown, with why; the module is still read
    wanted = {port: phy.commands(port, oids.get(port)) for port in ports}
    try:
        outputs = driver.cli([c for per in wanted.values() for c in per.values()])
    except failed as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return {port: PortPhysical(unknown={"module": why}) for port in ports}
    now = time.time()  # SONiC stamps link changes in UTC; a clock apart shifts the age
    found: dict[str, PortPhysical] = {}
    for port, per in wanted.items():
        try:
            tables = {table: _db_hash(str(outputs[command]), f"{table} of {port}")
                      for table, command in per.items()}
            found[port] = phy.read_port(port, tables, now=now)
        except (SonicError, phy.PhyReadError) as exc:
            found[port] = PortPhysical(unknown={"module": str(exc)})
    return found


def _db_hash(text: str, what: str) -> dict[str, str]:
    """sonic-db-cli prints a hash as a Python dict literal."""
    try:
        value = ast.literal_eval(text.strip() or "{}")
    except (ValueError, SyntaxError):
        raise SonicError(f"{what}: not a sonic-db-cli hash ({text.strip()[:80]!r})") from None
    if not isinstance(value, dict):
        raise SonicError(f"{what}: not a sonic-db-cli hash")
    return {str(k): str(v) for k, v in value.items()}


def _hgetall(oid: str) -> str:
    return f"sonic-db-cli COUNTERS_DB HGETALL COUNTERS:{oid}"


def _count(stats: dict[str, str], field: str, what: str) -> int | None:
    """One counter of a COUNTERS hash; None when the hash has no such field."""
    if field not in stats:
        return None
    value = stats[field].strip()
    if not value.isdigit():
        raise SonicError(f"{what}: {field} is not a count ({value[:40]!r})")
    return int(value)


def _pfc_frames(stats: dict[str, str], what: str) -> dict[str, dict[int, int]]:
    """Direction ("rx"/"tx") -> priority -> PFC frames, for the priorities the hash counts."""
    out: dict[str, dict[int, int]] = {}
    for direction in ("rx", "tx"):
        for prio in range(8):
            frames = _count(stats, f"SAI_PORT_STAT_PFC_{prio}_{direction.upper()}_PKTS", what)
            if frames is not None:
                out.setdefault(direction, {})[prio] = frames
    return out


def pfc_counters(driver: DeviceDriver, ports: list[str]) -> dict[str, dict[str, dict[int, int]]]:
    """Per port, PFC frames received and sent per priority ("rx"/"tx" -> prio -> frames)."""
    oids = _db_hash(_one(driver, PORT_MAP), "COUNTERS_PORT_NAME_MAP")
    wanted = [p for p in ports if p in oids]
    commands = [_hgetall(oids[p]) for p in wanted]
    outputs = driver.cli(commands) if commands else {}
    out: dict[str, dict[str, dict[int, int]]] = {}
    for port, command in zip(wanted, commands, strict=True):
        what = f"COUNTERS:{oids[port]}"
        frames = _pfc_frames(_db_hash(str(outputs[command]), what), what)
        out[port] = {direction: {prio: frames.get(direction, {}).get(prio, 0)
                                 for prio in range(8)} for direction in ("rx", "tx")}
    return out


def _lossless_queues(device: DeviceState, planned: DeviceState) -> dict[str, list[int]]:
    """Per physical port with lossless state, the queues its PFC priorities (planned and
    observed) map to through its observed TC -> queue map."""
    out: dict[str, list[int]] = {}
    for name, iface in sorted(device.interfaces.items()):
        if iface.qos is None or iface.parent is not None:
            continue
        plan = planned.interfaces.get(name)
        prios = set(iface.qos.pfc) | set(plan.qos.pfc if plan and plan.qos else [])
        tc_to_queue = iface.qos.maps.tc_to_queue
        out[name] = sorted({tc_to_queue[p] for p in prios if 0 <= p < len(tc_to_queue)})
    return out


def _counters(driver: DeviceDriver, device: DeviceState, planned: DeviceState) -> None:
    """PortCounters of every port with lossless state, from COUNTERS_DB (see the module
    docstring); what the switch does not count stays None, an unreadable reply is an error."""
    ports = _lossless_queues(device, planned)
    if not ports:
        return
    try:
        maps = driver.cli([PORT_MAP, QUEUE_MAP])
        port_oids = _db_hash(str(maps[PORT_MAP]), "COUNTERS_PORT_NAME_MAP")
        queue_oids = _db_hash(str(maps[QUEUE_MAP]), "COUNTERS_QUEUE_NAME_MAP")
    except SonicError as exc:
        device.errors.append(f"counters: {exc}")
        return
    # (port, queue or None for the port's own hash, oid), one HGETALL each, in one batch
    reads: list[tuple[str, int | None, str]] = []
    for port, queues in ports.items():
        if port in port_oids:
            reads.append((port, None, port_oids[port]))
        reads += [(port, q, queue_oids[f"{port}:{q}"]) for q in queues
                  if f"{port}:{q}" in queue_oids]
    if not reads:
        return
    try:
        outputs = driver.cli(list(dict.fromkeys(_hgetall(oid) for _, _, oid in reads)))
    except SonicError as exc:
        device.errors.append(f"counters: {exc}")
        return
    pfc: dict[str, dict[str, dict[int, int]]] = {}
    marked: dict[str, dict[int, int]] = {}
    for port, queue, oid in reads:
        what = f"COUNTERS:{oid} ({port}{'' if queue is None else f' queue {queue}'})"
        try:
            stats = _db_hash(str(outputs[_hgetall(oid)]), what)
            if queue is None:
                pfc[port] = _pfc_frames(stats, what)
            elif (marks := _count(stats, ECN_MARKED, what)) is not None:
                marked.setdefault(port, {})[queue] = marks
        except SonicError as exc:
            device.errors.append(f"counters: {exc}")
    for port in ports:
        frames = pfc.get(port, {})
        if not frames and port not in marked:
            continue  # nothing counted: unknown, not zero
        rx, tx = frames.get("rx"), frames.get("tx")
        device.interfaces[port].counters = PortCounters(
            pfc_rx_frames=sum(rx.values()) if rx is not None else None,
            pfc_tx_frames=sum(tx.values()) if tx is not None else None,
            ecn_marked=marked.get(port, {}))


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
