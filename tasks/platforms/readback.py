"""Small pieces every switch collector needs when turning device output into DeviceState."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from flatfab.asn import read_asn
from flatfab.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    BgpPeer,
    DeviceState,
    Endpoint,
    IfKind,
    Interface,
    NextHop,
    PortQos,
    Route,
)
from flatfab.platforms.base import DeviceDriver, InterfaceNames


def tenant(names: InterfaceNames, vrf: str | None) -> str:
    """The tenant a device VRF name stands for (the default VRF stays itself)."""
    if not vrf or vrf == DEFAULT_VRF:
        return DEFAULT_VRF
    return names.tenant_of(vrf) or vrf


def identity_from_bgp(device: DeviceState) -> None:
    """The device's AS number and router id are those of its default BGP instance."""
    default = device.bgp.get(DEFAULT_VRF)
    device.asn = default.asn if default else None
    device.router_id = default.router_id if default else None


def asn_of(device: DeviceState, value: Any, where: str) -> int | None:
    """An AS number a device reported, in any notation (asplain, asdot, asdot+).

    None when the device gave none, when it gave AS 0 (reserved, RFC 7607: FRR shows it for
    a peer whose AS it has not learned yet), and when the value is unreadable: that one
    is recorded in the device's errors with what it was, never silently dropped.
    """
    asn = read_asn(value)
    if asn is None and value is not None and value != "":
        device.errors.append(f"{where}: AS number {value!r} is not asplain or asdot")
    return asn or None


# FRR's `show bgp vrf all summary json` (the frr platform's and SONiC's routing stack).
# The address families FRR's summary may hold per VRF, besides the IPv4 unicast flatfab uses
OTHER_FAMILIES = ("ipv6Unicast", "l2VpnEvpn", "ipv4Multicast", "ipv6Multicast",
                  "ipv4LabeledUnicast", "ipv6LabeledUnicast", "ipv4Vpn", "ipv6Vpn",
                  "ipv4Flowspec", "ipv6Flowspec")


def frr_ipv4_unicast(vrf: object) -> tuple[dict[str, Any], bool]:
    """(the VRF's IPv4 unicast summary, whether the VRF has one) in any FRR release's shape.

    FRR 7.5 to 10.x nest each address family (`ipv4Unicast`, `ipv6Unicast`, `l2VpnEvpn`,
    ...) under the VRF; a flat summary (`peers` right under the VRF, as `show ip bgp vrf all
    summary json` prints it) is read as IPv4 unicast. A VRF with only other families gives
    its AS and router id from the first of them, and no IPv4 peers.
    """
    if not isinstance(vrf, dict):
        return {}, False
    unicast = vrf.get("ipv4Unicast")
    if isinstance(unicast, dict):
        return unicast, True
    if "peers" in vrf or "as" in vrf or "routerId" in vrf:
        return vrf, True
    other: dict[str, Any] = next(
        (vrf[f] for f in OTHER_FAMILIES if isinstance(vrf.get(f), dict)), {})
    return {k: v for k, v in other.items() if k != "peers"}, False


def frr_prefixes_received(info: dict[str, Any]) -> int | None:
    """A peer's received prefixes: `pfxRcd` (FRR 7.3 on), `prefixReceivedCount` (before);
    None when the release prints neither (FRR leaves it out for a peer not Established)."""
    for key in ("pfxRcd", "prefixReceivedCount"):
        value = info.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None


def frr_bgp_instance(device: DeviceState, vrf: str, unicast: dict[str, Any], where: str,
                     is_interface: Callable[[str, dict[str, Any]], bool]) -> BgpInstance:
    """One VRF's BGP instance from FRR's IPv4 unicast summary (frr_ipv4_unicast); a peer
    that is not an object, or an AS number no notation reads, is named in the errors."""
    instance = BgpInstance(vrf=vrf, asn=asn_of(device, unicast.get("as"), where),
                           router_id=str(unicast.get("routerId", "")))
    peers = unicast.get("peers") or {}
    for key, info in (peers.items() if isinstance(peers, dict) else []):
        if not isinstance(info, dict):
            device.errors.append(f"{where}: peer {key}: not an object")
            continue
        interface = is_interface(key, info)
        state = info.get("state")
        instance.peers[key] = BgpPeer(
            key=key, interface=key if interface else None, address=None if interface else key,
            remote_asn=asn_of(device, info.get("remoteAs"), f"{where} peer {key}"),
            peer_device=str(info.get("hostname") or "") or None,
            state=str(state) if state is not None else None,
            prefixes_received=frr_prefixes_received(info))
    return instance


# ---- the steps every switch collector takes the same way --------------------------------

# what a reader raises on output whose shape it does not know (pydantic's errors included)
UNREADABLE: tuple[type[Exception], ...] = (ValueError, TypeError, AttributeError, KeyError)


def guarded(device: DeviceState, what: str, read: Callable[[], None],
            errors: tuple[type[Exception], ...] = UNREADABLE) -> None:
    """Run one reader; output it cannot read is named in the device's errors (`what:
    unexpected output (...)`) and the collect goes on with the next."""
    try:
        read()
    except errors as exc:
        device.errors.append(f"{what}: unexpected output ({str(exc).splitlines()[0]})")


def read_errors() -> tuple[type[Exception], ...]:
    """What a failed read raises: NAPALM's command and connection errors, OS and value
    errors. NAPALM is imported here, not at module level: its package imports every driver
    it ships (seconds of CPU), which `plan`, `render` and `check` never use."""
    from napalm.base.exceptions import (  # noqa: PLC0415 - see the docstring
        CommandErrorException,
        ConnectionException,
    )

    return (CommandErrorException, ConnectionException, OSError, ValueError)


def json_shows(driver: DeviceDriver, device: DeviceState, commands: tuple[str, ...],
               optional: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """Each show of a NAPALM driver that answers JSON (`cli(encoding="json")`), in one read
    apiece; a failing command is recorded in the device's errors, not fatal, and one of
    `optional` (counters the switch may not have) fails silently: what it reads is unknown."""
    out: dict[str, dict[str, Any]] = {}
    for command in (*commands, *optional):
        try:
            reply = driver.cli([command], encoding="json")[command]
        except read_errors() as exc:
            if command not in optional:
                device.errors.append(
                    f"{command}: {(str(exc) or type(exc).__name__).splitlines()[0]}")
            reply = {}
        if not isinstance(reply, dict):
            device.errors.append(f"{command}: expected a JSON object")
            reply = {}
        out[command] = reply
    return out


def oper_up(status: object) -> bool | None:
    """An interface's oper state as an OS prints it: up, down (any other state: down,
    lowerLayerDown, notPresent, ...), or None where it prints none or says `unknown`: a state
    not stated is never read as down."""
    if status is None or str(status).strip().lower() in ("", "unknown"):
        return None
    return str(status).strip().lower() == "up"


def loopback_address(device: DeviceState, loopback: str) -> str | None:
    """The first address of the device's loopback interface (None: no such interface or
    no address)."""
    iface = device.interfaces.get(loopback)
    return iface.addresses[0] if iface and iface.addresses else None


def kind_by_name(planned: DeviceState, name: str, *, loopback: str, lag: str,
                 bridge: str = "Vlan") -> IfKind:
    """An interface's kind: the plan's, else what its name starts with (a LAG's
    sub-interface is no LAG)."""
    if name in planned.interfaces:
        return planned.interfaces[name].kind
    if name.startswith(loopback):
        return IfKind.LOOPBACK
    if name.startswith(lag) and "." not in name:
        return IfKind.LAG
    return IfKind.BRIDGE if name.startswith(bridge) else IfKind.OTHER


def port_speed_to_subinterfaces(device: DeviceState) -> None:
    """A sub-interface the device gives no speed (or 0) runs at its port's."""
    for iface in device.interfaces.values():
        if iface.parent is not None and iface.parent in device.interfaces:
            iface.speed_mbps = iface.speed_mbps or device.interfaces[iface.parent].speed_mbps


def separate_limitations(device: DeviceState,
                         unreadable: Callable[[str], tuple[str, str] | None]) -> None:
    """Move the unread settings the OS never states (`unreadable`: the platform's declared
    pattern and why, None for any other setting) out of the device's `unknown` maps into its
    `limitations`, by pattern: what remains unknown should have been read and was not."""
    def keep(unknown: dict[str, str], prefix: str = "") -> dict[str, str]:
        kept = {}
        for setting, said in unknown.items():
            declared = unreadable(prefix + setting)
            if declared is None:
                kept[setting] = said
            else:
                device.limitations[declared[0]] = declared[1]
        return kept

    if device.qos is not None and device.qos.unknown:
        device.qos = device.qos.model_copy(update={"unknown": keep(device.qos.unknown)})
    for name, iface in list(device.interfaces.items()):
        update: dict[str, object] = {}
        if iface.qos is not None:
            qos = iface.qos
            if qos.unknown:
                qos = qos.model_copy(update={"unknown": keep(qos.unknown)})
            if qos.watchdog is not None and qos.watchdog.unknown:
                qos = qos.model_copy(update={"watchdog": qos.watchdog.model_copy(
                    update={"unknown": keep(qos.watchdog.unknown, "watchdog.")})})
            if qos is not iface.qos:
                update["qos"] = qos
        if iface.nic is not None and iface.nic.unknown:
            update["nic"] = iface.nic.model_copy(update={"unknown": keep(iface.nic.unknown)})
        if iface.phy is not None and iface.phy.unknown:
            update["phy"] = iface.phy.model_copy(
                update={"unknown": keep(iface.phy.unknown, "phy.")})
        if update:
            device.interfaces[name] = iface.model_copy(update=update)


def cabled_ports(planned: DeviceState) -> list[str]:
    """The device's physical ports the plan cables (what the physical layer is read for)."""
    return [name for name, iface in planned.interfaces.items()
            if iface.parent is None and iface.peer is not None]


def lldp_device(system_name: object) -> str:
    """A neighbour's LLDP system name as flatfab names devices: its host label, in lower case.

    Device names are one DNS label (flatfab refuses dots in them), so a domain an OS appends
    (`leaf1.example.net`) is cut, and case does not matter in host names (RFC 4343): every
    platform's reader names a neighbour the same way, whatever its OS prints."""
    return str(system_name).strip().split(".", maxsplit=1)[0].lower()


# IEEE 802.1AB port ID subtypes (Table 8-3 / LldpPortIdSubtype), keyed by how OSes spell them
# with spaces, dashes and underscores dropped: Junos "Interface name", "Locally assigned",
# "Mac address"; SR Linux INTERFACE_NAME, LOCAL, MAC_ADDRESS; NX-OS "Mac Address"; lldpd
# ifname, local, mac, ip; or the number itself
_PORT_SUBTYPES = {"interfacealias": 1, "ifalias": 1, "portcomponent": 2, "macaddress": 3,
                  "mac": 3, "networkaddress": 4, "ip": 4, "addr": 4, "interfacename": 5,
                  "ifname": 5, "agentcircuitid": 6, "locallyassigned": 7, "local": 7}
PORT_SUBTYPE_NAMES = {1: "an interface alias", 2: "a port component", 3: "a MAC address",
                      4: "a network address", 5: "an interface name",
                      6: "an agent circuit id", 7: "locally assigned"}
_MAC = re.compile(r"^(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2}$|^(?:[0-9a-f]{4}\.){2}[0-9a-f]{4}$",
                  re.IGNORECASE)


def lldp_port_subtype(text: object) -> int | None:
    """The IEEE 802.1AB port ID subtype an OS names (None: not stated or not known)."""
    if text is None:
        return None
    key = str(text).split("(", 1)[0]  # "Locally assigned (7)"
    key = re.sub(r"[\s_-]", "", key).lower()
    if key.isdigit():
        return int(key) if 1 <= int(key) <= 7 else None
    return _PORT_SUBTYPES.get(key)


def lldp_far_port(port_id: object, subtype: object = None,
                  description: object = None) -> tuple[str | None, str]:
    """(the far port an LLDP entry names, '') or (None, why it names none), by the port ID
    subtype (IEEE 802.1AB 8.5.3): an interface name is the port id; any other id (an index
    the neighbour assigned, a MAC or network address, a circuit id) names no port, so the
    port description (its ifDescr, the port's name on most OSes) does. Where the OS prints
    no subtype, an id shaped like a MAC (a Linux host's lldpd by default) is taken as one;
    any other id is the name. An alias, a port component or a locally assigned id that is
    not a number (lldpd's way of sending a name) is the name itself."""
    port = "" if port_id in (None, "") else str(port_id).strip().strip('"')
    described = "" if description in (None, "") else str(description).strip()
    kind = lldp_port_subtype(subtype)
    if subtype in (None, ""):
        kind = 3 if _MAC.match(port) else 5
    if not port and not described:
        return None, "the neighbour sent no port id"
    if kind == 5:
        return (port or described), ""
    # an alias or a locally assigned name is the port's own name (a description may be free
    # text, as Cumulus's interface alias is)
    if kind in (1, 2, 7) and port and not port.isdigit():
        return port, ""
    if described:
        return described, ""
    what = PORT_SUBTYPE_NAMES.get(kind or 0, f"of subtype {subtype!r}")
    return None, (f"its port id {port!r} is {what} (IEEE 802.1AB), not a port name, and it "
                  "sent no port description")


def lldp_seconds(value: object) -> int | None:
    """An LLDP age or TTL in whole seconds: a number, or digits as text; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value >= 0 else None
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() else None


# LLDP's system name is optional (IEEE 802.1AB 8.5.6)
NO_SYSTEM_NAME = "it sent no system name: the neighbouring device cannot be named"


def lldp_unnamed(device: DeviceState, port: str, neighbour: object, why: str) -> None:
    """An LLDP entry of `port` that names no far device or port is no cabling flatfab can read:
    named in `not_modelled` with why, never dropped and never read as a neighbour."""
    device.not_modelled[f"{port} LLDP entry {neighbour}"] = why


def lldp_neighbours(found: list[Endpoint]) -> tuple[Endpoint | None, list[Endpoint]]:
    """(Interface.peer, Interface.lldp_neighbours) of one port's LLDP entries: freshest first
    by age where the OS states one (entries without an age after, in the OS's order); the
    list is kept when the port has more than one entry (see Interface)."""
    ordered = sorted(found, key=lambda e: (e.age_s is None, e.age_s or 0))
    return (ordered[0] if ordered else None), (ordered if len(ordered) > 1 else [])


def peers_from_lldp(device: DeviceState,
                    locate: Callable[[BgpPeer], Interface | None] | None = None) -> None:
    """Name the peer device of every session that has none by the LLDP neighbour of the
    port the session runs on (the physical port of a VRF sub-interface). `locate` finds the
    interface of a session that names none (a numbered one); without it those stay unnamed."""
    for instance in device.bgp.values():
        for peer in instance.peers.values():
            if peer.peer_device is not None:
                continue
            if peer.interface is not None:
                iface = device.interfaces.get(peer.interface)
            elif locate is not None:
                iface = locate(peer)
            else:
                continue
            port = device.interfaces.get(iface.parent) if iface and iface.parent else iface
            if port is not None and port.peer is not None:
                peer.peer_device = port.peer.device


def planned_qos_ports(device: DeviceState,
                      planned: DeviceState) -> Iterator[tuple[str, Interface, PortQos]]:
    """(name, observed interface, planned PortQos) of every port the plan gives QoS (VRF
    sub-interfaces share their port's and are left out)."""
    for name, iface in device.interfaces.items():
        plan = planned.interfaces.get(name)
        if plan is None or plan.qos is None or iface.parent is not None:
            continue
        yield name, iface, plan.qos


# a route's next hops: (interface, address) each, or (interface, address, vtep, vni) for an
# EVPN/VXLAN next hop (NextHop.overlay)
HopKey = tuple[tuple[Any, ...], ...]


def next_hop(hop: tuple[Any, ...]) -> NextHop:
    """The NextHop of one (interface, address[, vtep, vni]) tuple."""
    if len(hop) > 2:
        return NextHop(interface=hop[0], address=hop[1], vtep=hop[2], vni=hop[3])
    return NextHop(interface=hop[0], address=hop[1])


class Routes:
    """One device's routes as a collect makes them: a Route per distinct protocol and next
    hops, shared by every prefix that has them (see Route), each validated once; prefixes
    are interned, so the same prefix on every leaf is one string."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, HopKey], Route] = {}

    def route(self, protocol: str, hops: HopKey) -> Route:
        key = (protocol, hops)
        found = self._made.get(key)
        if found is None:
            found = self._made[key] = Route(
                protocol=protocol, nexthops=[next_hop(h) for h in hops])
        return found

    @staticmethod
    def prefix(text: str) -> str:
        return sys.intern(text)


# FRR's `show ip route vrf <vrf> json` (the frr platform's and SONiC's routing stack)


def frr_routes(table: dict[str, Any], made: Routes) -> dict[str, Route]:
    """The selected routes of one VRF's table, with their next hops in the FIB.

    FRR 8 numbers each route's next-hop group (`nexthopGroupId`): routes of one group (a
    leaf's routes to every other leaf) have the same next hops, read once per group.
    """
    routes: dict[str, Route] = {}
    by_group: dict[tuple[Any, str, int], Route] = {}
    for prefix, entries in table.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict) or not entry.get("selected"):
                continue
            protocol = str(entry.get("protocol", ""))
            listed = entry.get("nexthops", [])
            group = entry.get("nexthopGroupId")
            seen = (by_group.get((group, protocol, len(listed)))
                    if isinstance(group, int) and isinstance(listed, list) else None)
            if seen is None:
                seen = made.route(protocol, tuple(
                    (h.get("interfaceName"), h.get("ip")) for h in listed
                    if isinstance(h, dict) and h.get("fib")))
                if isinstance(group, int) and isinstance(listed, list):
                    by_group[(group, protocol, len(listed))] = seen
            routes[made.prefix(prefix)] = seen
    return routes


class FrrHop(msgspec.Struct, gc=False):
    """One next hop of `show ip route vrf <vrf> json`: the fields a Route keeps."""

    fib: bool = False
    interfaceName: str | None = None  # noqa: N815 - FRR's key
    ip: str | None = None


class FrrEntry(msgspec.Struct, gc=False):
    """One route entry; its next hops stay JSON text until a route with other ones is met
    (a leaf's thousand routes to other leaves share one ECMP set)."""

    selected: bool = False
    protocol: str = ""
    nexthops: msgspec.Raw = msgspec.Raw(b"[]")


FrrTable = dict[str, list[FrrEntry] | FrrEntry]
_FRR_TABLE = msgspec.json.Decoder(FrrTable)
_FRR_HOPS = msgspec.json.Decoder(list[FrrHop])
_FRR_PREFIXES = msgspec.json.Decoder(dict[str, msgspec.Raw])
_FRR_ENTRIES = msgspec.json.Decoder(list[FrrEntry] | FrrEntry)
FrrTableError = msgspec.DecodeError  # not JSON, or not the shape of FRR's route table


def frr_table(text: str | bytes) -> FrrTable:
    """`show ip route vrf <vrf> json` decoded, only the fields flatfab reads (msgspec skips
    the others without making objects of them); FrrTableError names the offending key."""
    try:
        return _FRR_TABLE.decode(text or b"{}")
    except msgspec.ValidationError:
        # msgspec's path hides a mapping's keys (`$[...]`): find the prefix to name it
        for prefix, entries in _FRR_PREFIXES.decode(text).items():
            try:
                _FRR_ENTRIES.decode(entries)
            except msgspec.ValidationError as exc:
                raise msgspec.ValidationError(
                    str(exc).replace("`$", f"`$[{prefix!r}]", 1)) from None
        raise


def frr_table_routes(table: FrrTable, made: Routes) -> dict[str, Route]:
    """frr_routes of a decoded table: each distinct next-hop text is read once."""
    routes: dict[str, Route] = {}
    by_hops: dict[tuple[str, bytes], Route] = {}
    for prefix, entries in table.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not entry.selected:
                continue
            key = (entry.protocol, bytes(entry.nexthops))
            seen = by_hops.get(key)
            if seen is None:
                hops = _FRR_HOPS.decode(key[1])
                seen = by_hops[key] = made.route(entry.protocol, tuple(
                    (h.interfaceName, h.ip) for h in hops if h.fib))
            routes[made.prefix(prefix)] = seen
    return routes
