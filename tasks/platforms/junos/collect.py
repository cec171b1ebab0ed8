"""Read a Junos switch into observed DeviceState with show commands only.

Every read is a `| display json` CLI command through NAPALM's cli() (NAPALM hands a
`format="json"` reply back as a Python repr, so the commands ask for JSON in the text):

- `show configuration | display json`: VRF membership, host-port VLANs and the whole
  lossless plane (classifier, forwarding classes, congestion-notification-profile,
  schedulers, drop profiles). Junos keeps CoS in configuration only, as EOS does. The ECMP
  hash too (`forwarding-options enhanced-hash-key`, junos/hashing.py): none configured is
  Junos's documented default, the 5-tuple; and the way of balancing in that key (DLB
  `ecmp-dlb`, resilient hashing: junos/dlb.py), a mode flatfab has no name for named.
- `show interfaces | display json` (get-interface-information): link state, MTU, speed,
  addresses per logical unit.
- `show lldp neighbors detail | display json`: cabling, every neighbour of a port with its
  time to live and age (the brief form, without them, reads too).
- `show bgp neighbor | display json`: sessions of every instance (peer-cfg-rti).
- `show route | display json`: the RIB of every instance (`<instance>.inet.0`).

Operational JSON wraps every value as `[{"data": "..."}]` (Juniper, "Junos XML API
Operational Developer Reference" / "Displaying operational output in JSON format").

What the switch has beyond flatfab's model is named in `not_modelled` with why, never
dropped: a port outside the platform's port naming, a LAG, a management port, a routing
instance that is no VRF, the VXLAN underlay table. What is Junos's own plumbing (internal
interfaces, units and routing instances; see the lists below) is left out, as it carries
nothing an operator configured.
"""

from __future__ import annotations

import ast
import json
import math
import re
from ipaddress import ip_address, ip_interface
from typing import Any

from flatfab.model.physical import PortPhysical
from flatfab.model.state import (
    DEFAULT_VRF,
    BgpInstance,
    BgpPeer,
    DeviceState,
    EcnProfile,
    Endpoint,
    IfKind,
    Interface,
    PortQos,
    QueueQos,
    Route,
    Watchdog,
)
from flatfab.platforms import phy_read, readback
from flatfab.platforms.base import DeviceDriver, InterfaceNames
from flatfab.platforms.junos import hashing, phy
from flatfab.platforms.junos.render import as_int, ecn_levels, queue_reference_bytes
from flatfab.platforms.readback import Routes, asn_of, identity_from_bgp, lldp_device, tenant

CONFIG = "show configuration | display json"
INTERFACES = "show interfaces | display json"
LLDP = "show lldp neighbors detail | display json"
BGP = "show bgp neighbor | display json"
ROUTES = "show route | display json"
COMMANDS = (CONFIG, INTERFACES, LLDP, BGP, ROUTES)
DEFAULT_INSTANCE = "master"  # Junos's name of the default routing instance
_PROTOCOLS = {"BGP": "bgp", "Direct": "connected", "Local": "local", "Static": "static"}
# the management instance (`system management-instance`): the management port's own table,
# no fabric VRF (Juniper, "Management Interface in a Non-Default Instance")
_IGNORED_INSTANCES = ("mgmt_junos",)
# routing-instance types that are a VRF (an IPv4 table of their own); the others (evpn,
# mac-vrf, virtual-switch, forwarding, l2vpn, vpls, ...) are not, and are named
_VRF_TYPES = ("virtual-router", "vrf")
# Junos's internal routing instances (Juniper, "Routing Instances Overview": names starting
# `__` are reserved): __juniper_private1__ (RE-PFE communication, 128.0.0.0/2),
# __juniper_private2__/4__, __juniper_services__, __master.anon__ (the anonymous master
# instance), __pfe_private__, __default_evpn__, __mpls-oam__ ...; their tables hold no
# operator's route
_INTERNAL_INSTANCE = re.compile(r"^__")
# a physical interface named type-fpc/pic/port (channelized :n)
_PORT_SHAPED = re.compile(r"^([a-z]+)-[0-9]+/[0-9]+/[0-9]+(:[0-9]+)?$")
# Junos's internal physical interfaces (Juniper, "Interface Naming Overview" and "Understanding
# Interface Naming Conventions" for switches): the PFE host and switch-fabric ports (pfe-,
# pfh-, sxe-), tunnel and service PICs (gr-, ip-, lt-, mt-, pd-, pe-, ut-, vt-, lc-, sp-,
# ms-), and the software interfaces below: none is a cable, none carries an operator's address
_INTERNAL_PORT_TYPES = frozenset({"pfe", "pfh", "sxe", "gr", "ip", "lt", "mt", "pd", "pe", "ut",
                                  "vt", "lc", "sp", "ms", "rms"})
_INTERNAL_INTERFACES = re.compile(
    r"^(\.local\.|bme[0-9]*|cbp[0-9]*|demux[0-9]*|dsc|esi|fti[0-9]*|gre|ipip|jsrv|lsi|mtun|"
    r"pimd|pime|pip[0-9]*|pp[0-9]*|ppd[0-9]*|ppe[0-9]*|rbeb|tap|vtep)$")
# management Ethernet (fxp0, em0/em1, me0 on Junos OS; re0:mgmt-0 on Junos OS Evolved)
_MANAGEMENT = re.compile(r"^(fxp[0-9]+|em[0-9]+|me[0-9]+|vme[0-9]*|re[0-9]+:mgmt-[0-9]+)$")
_LAG = re.compile(r"^ae[0-9]+$")
# logical units Junos creates itself: 16383-16386 (lo0.16384 127.0.0.1, lo0.16385 for the RE's
# internal instance, .16386 on a port with no unit configured) and 32767 (the untagged
# control unit of a vlan-tagging port), 32768 (em2): at or above 16383 and not configured
_FIRST_INTERNAL_UNIT = 16383
# the table Junos keeps for VXLAN underlay resolution once VXLAN is configured
VXLAN_TABLE = ":vxlan.inet.0"


class JunosCollectError(ValueError):
    """A reply flatfab cannot read (names the command)."""


def parse_reply(command: str, reply: Any) -> dict[str, Any]:
    """A `| display json` reply: JSON text, a dict, or the repr NAPALM makes of a dict."""
    if isinstance(reply, dict):
        return reply
    text = str(reply).strip()
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise JunosCollectError(f"{command}: not JSON") from None
    if not isinstance(parsed, dict):
        raise JunosCollectError(f"{command}: expected a JSON object")
    return parsed


def data(obj: Any, key: str) -> str | None:
    """The text of an operational JSON leaf: obj[key] is [{"data": "..."}]."""
    value = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(value, list) and value and isinstance(value[0], dict):
        text = value[0].get("data")
        return None if text is None else str(text).strip()
    return None


def items(obj: Any, key: str) -> list[dict[str, Any]]:
    value = obj.get(key) if isinstance(obj, dict) else None
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def listed(value: Any) -> list[Any]:
    """A configuration leaf-list (an array) or a single value, as a list."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def by_name(entries: Any) -> dict[str, dict[str, Any]]:
    return {str(e.get("name")): e for e in listed(entries) if isinstance(e, dict)}


def _speed(text: str | None) -> int | None:
    if not text:
        return None
    for unit, factor in (("Gbps", 1000), ("mbps", 1), ("Mbps", 1)):
        if text.endswith(unit) and text[:-len(unit)].isdigit():
            return int(text[:-len(unit)]) * factor
    return None


def state_name(logical: str, names: InterfaceNames) -> str:
    """flatfab's name of a Junos logical interface: unit 0 of a port or of lo0 is the
    port itself (et-0/0/50.0 -> et-0/0/50, lo0.0 -> lo0)."""
    port, _, unit = logical.partition(".")
    if unit == "0" and (names.is_port(port) or port == names.loopback):
        return port
    return logical


class JunosConfig:
    """What collect reads from `show configuration | display json`."""

    def __init__(self, reply: dict[str, Any], names: InterfaceNames) -> None:
        self.root: dict[str, Any] = reply.get("configuration", {}) if reply else {}
        self.names = names
        self.interfaces = by_name(self.root.get("interfaces", {}).get("interface"))
        configured = {n: e for n, e in by_name(
            self.root.get("routing-instances", {}).get("instance")).items()
            if n not in _IGNORED_INSTANCES}
        # an instance without instance-type is read as before (a VRF); an evpn, mac-vrf or
        # virtual-switch instance has no IPv4 table of its own: named, not counted as a VRF
        self.instances = {n: e for n, e in configured.items()
                          if str(e.get("instance-type", "virtual-router")) in _VRF_TYPES}
        self.other_instances = {n: str(e.get("instance-type")) for n, e in configured.items()
                                if n not in self.instances}
        self.vlans = by_name(self.root.get("vlans", {}).get("vlan"))
        self.cos: dict[str, Any] = self.root.get("class-of-service", {}) or {}

    def vrf_of(self, logical: str) -> str:
        for name, instance in self.instances.items():
            if logical in by_name(instance.get("interface")):
                return name
        return DEFAULT_VRF

    def has_unit(self, port: str, unit: str) -> bool:
        """Whether the configuration holds this unit (a unit Junos made itself does not)."""
        return unit in by_name(self.interfaces.get(port, {}).get("unit"))

    def access_vlan(self, port: str) -> str | None:
        """The IRB gateway of a host port's access VLAN (None for a routed port)."""
        unit = by_name(self.interfaces.get(port, {}).get("unit")).get("0", {})
        switching = unit.get("family", {}).get("ethernet-switching")
        if not isinstance(switching, dict):
            return None
        members = listed(switching.get("vlan", {}).get("members"))
        vlan = self.vlans.get(str(members[0])) if members else None
        return str(vlan["l3-interface"]) if vlan and vlan.get("l3-interface") else None


def _read(driver: DeviceDriver, device: DeviceState,
          commands: tuple[str, ...] = COMMANDS) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for command in commands:
        try:
            out[command] = parse_reply(command, driver.cli([command])[command])
        except JunosCollectError as exc:  # names the command itself: one line
            device.errors.append(str(exc))
            out[command] = {}
        except (OSError, KeyError) as exc:
            device.errors.append(f"{command}: {(str(exc) or type(exc).__name__).splitlines()[0]}")
            out[command] = {}
        except Exception as exc:  # noqa: BLE001 - NAPALM/PyEZ raise their own RpcError types
            device.errors.append(f"{command}: {type(exc).__name__}: "
                                 f"{(str(exc) or '').splitlines()[0] if str(exc) else ''}")
            out[command] = {}
    return out


_UNIT = re.compile(r"\.[0-9]+$")


def _lldp_local(entry: dict[str, Any]) -> str | None:
    """The local port of an LLDP entry. The detail form names it in lldp-local-interface and
    puts the port's ifIndex in lldp-local-port-id; the brief form names it in
    lldp-local-port-id (lldp-local-interface with its unit, ge-0/0/0.0, before Junos 13)."""
    for key in ("lldp-local-interface", "lldp-local-port-id"):
        name = data(entry, key)
        if name and not name.isdigit():
            return _UNIT.sub("", name)
    return None


def _age(entry: dict[str, Any]) -> tuple[int | None, int | None]:
    """(seconds since the neighbour was last heard, seconds before its entry expires): the
    detail form's lldp-age and lldp-ttl (the hold time the neighbour sent)."""
    age, ttl = as_int(data(entry, "lldp-age")), as_int(data(entry, "lldp-ttl"))
    if ttl is None:
        return age, None
    return age, max(ttl - (age or 0), 0)


def _lldp(reply: dict[str, Any]) -> tuple[dict[str, list[Endpoint]], dict[str, str]]:
    """(local port -> its LLDP neighbours; neighbour -> why its port cannot
    be named). The far port is picked by its port ID subtype (readback.lldp_far_port)."""
    found: dict[str, list[Endpoint]] = {}
    unnamed: dict[str, str] = {}
    for info in items(reply, "lldp-neighbors-information"):
        for entry in items(info, "lldp-neighbor-information"):
            local = _lldp_local(entry)
            system = data(entry, "lldp-remote-system-name")
            if not local:
                continue
            if not system:
                chassis = data(entry, "lldp-remote-chassis-id") or "?"
                unnamed[f"{local} LLDP neighbour {chassis}"] = readback.NO_SYSTEM_NAME
                continue
            port, why = readback.lldp_far_port(data(entry, "lldp-remote-port-id"),
                                               data(entry, "lldp-remote-port-id-subtype"),
                                               data(entry, "lldp-remote-port-description"))
            device = lldp_device(system)
            if port is None:
                unnamed[f"{local} LLDP neighbour {device}"] = why
                continue
            age, expires = _age(entry)
            found.setdefault(local, []).append(
                Endpoint(device=device, port=port, age_s=age, expires_s=expires))
    return found, unnamed


def _kind(planned: DeviceState, name: str, names: InterfaceNames) -> IfKind:
    if name in planned.interfaces:
        return planned.interfaces[name].kind
    port = name.split(".", maxsplit=1)[0]
    if port == names.loopback:
        return IfKind.LOOPBACK
    if port == "irb":
        return IfKind.BRIDGE
    return IfKind.FABRIC if names.is_port(port) else IfKind.OTHER


def _addresses(logical: dict[str, Any]) -> list[str]:
    found = []
    for family in items(logical, "address-family"):
        name = data(family, "address-family-name")
        if name not in ("inet", "inet6"):
            continue
        for address in items(family, "interface-address"):
            local = data(address, "ifa-local")
            if not local or local.lower().startswith("fe80:"):
                continue
            if "/" in local:  # the terse form prints the prefix with the address
                found.append(local)
                continue
            # the subnet is the destination; a host address has none, or the terse form's
            # "0/0" (lo0.0 10.0.0.1 --> 0/0), and is a /32 (/128)
            destination = data(address, "ifa-destination") or ""
            length = destination.rsplit("/", 1)[1] if "/" in destination \
                and destination != "0/0" else ("128" if name == "inet6" else "32")
            found.append(f"{local}/{length}")
    return sorted(found)


def _family_mtu(logical: dict[str, Any]) -> int | None:
    for family in items(logical, "address-family"):
        if data(family, "address-family-name") == "inet":
            return as_int(data(family, "mtu"))
    return None


def _outside(port: str, names: InterfaceNames) -> str | None:
    """Why a physical interface outside flatfab's model is named (None: Junos's own, left
    out). Modelled ports, lo0 and irb never come here."""
    shaped = _PORT_SHAPED.match(port)
    if (shaped and shaped.group(1) in _INTERNAL_PORT_TYPES) or _INTERNAL_INTERFACES.match(port):
        return None
    if shaped:
        return (f"a port outside junos's port naming ({names.naming.ports}): flatfab "
                "models only the fabric's ports")
    if _LAG.match(port):
        return "an aggregated Ethernet (LAG) bundle: flatfab plans no LAG on junos"
    if _MANAGEMENT.match(port):
        return "the management port: flatfab does not model the management network"
    return "an interface flatfab does not know"


def _internal_unit(config: JunosConfig, port: str, unit: str) -> bool:
    """A logical unit Junos made itself (lo0.16384, et-0/0/0.32767, et-0/0/1.16386): at
    or above 16383 and not in the configuration."""
    return unit.isdigit() and int(unit) >= _FIRST_INTERNAL_UNIT \
        and not config.has_unit(port, unit)


def _not_modelled(device: DeviceState, config: JunosConfig, phys: dict[str, Any], port: str,
                  why: str, lldp: dict[str, list[Endpoint]]) -> None:
    """Name an interface flatfab does not model, with the addresses its units hold and the
    LLDP neighbour its port has, so that nothing it carries is silently left out."""
    held = [f"{data(unit, 'name')} {' '.join(_addresses(unit))}"
            for unit in items(phys, "logical-interface")
            if _addresses(unit) and not _internal_unit(
                config, port, (data(unit, "name") or "").rpartition(".")[2])]
    said = [why]
    if held:
        said.append("addresses " + ", ".join(held))
    if lldp.get(port):
        said.append(f"LLDP neighbour {lldp[port][0]}")
    device.not_modelled[port] = "; ".join(said)


def _interfaces(device: DeviceState, planned: DeviceState, config: JunosConfig,
                reply: dict[str, Any], lldp: dict[str, list[Endpoint]],
                names: InterfaceNames) -> None:
    for info in items(reply, "interface-information"):
        for phys in items(info, "physical-interface"):
            port = data(phys, "name") or ""
            if not (names.is_port(port) or port in (names.loopback, "irb")):
                why = _outside(port, names)
                if why is not None:
                    _not_modelled(device, config, phys, port, why, lldp)
                continue  # else Junos's own plumbing (see _INTERNAL_INTERFACES)
            up = data(phys, "oper-status") == "up"
            mtu = as_int(data(phys, "mtu"))
            speed = _speed(data(phys, "speed"))
            for logical in items(phys, "logical-interface"):
                full = data(logical, "name") or ""
                if _internal_unit(config, port, full.rpartition(".")[2]):
                    continue  # a unit Junos made itself: no operator's address, no VRF
                name = state_name(full, names)
                # a unit of lo0 other than 0 is a VRF's loopback (lo0.N in an instance)
                loopback = port == names.loopback
                parent = port if port not in (name, "irb") and not loopback else None
                gateway = config.access_vlan(port) if name == port else None
                vrf = config.vrf_of(gateway or full)
                iface = device.interfaces[name] = Interface(
                    name=name, kind=_kind(planned, name, names),
                    vrf=tenant(names, vrf), up=up,
                    mtu=_family_mtu(logical) if port == "irb" else mtu,
                    addresses=_addresses(logical), bridge=gateway, parent=parent,
                    speed_mbps=speed if port not in ("irb", names.loopback) else None)
                if name == port:
                    iface.peer, iface.lldp_neighbours = readback.lldp_neighbours(lldp.get(port, []))
            if names.is_port(port) and port not in device.interfaces:
                # a port with no unit 0 (only VLAN units, or none configured): the port
                # itself still has its link, MTU, speed and cabling
                iface = device.interfaces[port] = Interface(
                    name=port, kind=_kind(planned, port, names), up=up, mtu=mtu,
                    speed_mbps=speed)
                iface.peer, iface.lldp_neighbours = readback.lldp_neighbours(lldp.get(port, []))


def _bgp(device: DeviceState, reply: dict[str, Any], names: InterfaceNames) -> None:
    instances: dict[str, BgpInstance] = {}
    for info in items(reply, "bgp-information"):
        for peer in items(info, "bgp-peer"):
            rti = data(peer, "peer-cfg-rti") or _instance_of(peer)
            vrf = DEFAULT_VRF if rti == DEFAULT_INSTANCE else tenant(names, rti)
            where = f"bgp: instance {rti}"
            instance = instances.get(vrf)
            if instance is None:
                instance = BgpInstance(vrf=vrf, asn=asn_of(device, data(peer, "local-as"),
                                                            where),
                                       router_id=data(peer, "local-id") or "")
                instances[vrf] = instance
            address = (data(peer, "peer-address") or "").split("+", 1)[0]
            interface = data(peer, "local-interface-name")
            if "%" in address:  # auto-discovered: fe80::...%et-0/0/50.0
                interface = interface or address.split("%", 1)[1]
            if "%" in address or (interface and address.lower().startswith("fe80:")):
                key = state_name(interface or "", names)
                bgp_peer = BgpPeer(key=key, interface=key)
            else:
                key = address
                bgp_peer = BgpPeer(key=key, address=address,
                                   interface=_local_port(device, address))
            bgp_peer.remote_asn = asn_of(device, data(peer, "peer-as"), f"{where} peer {key}")
            bgp_peer.state = data(peer, "peer-state")
            bgp_peer.peer_device = data(peer, "description")
            # the session's IPv4 unicast RIB only (inet.0, or the instance's <rti>.inet.0):
            # its other RIBs (bgp.evpn.0, default-switch.evpn.0, inet6.0, ...) are other
            # families; a session with no such RIB (not Established) received nothing known
            unicast = "inet.0" if rti == DEFAULT_INSTANCE else f"{rti}.inet.0"
            bgp_peer.prefixes_received = next(
                (as_int(data(rib, "received-prefix-count")) for rib in items(peer, "bgp-rib")
                 if data(rib, "name") == unicast), None)
            instance.peers[key] = bgp_peer
    device.bgp = dict(sorted(instances.items()))
    identity_from_bgp(device)
    readback.peers_from_lldp(device)  # an unnumbered session's peer: LLDP's neighbour


def _instance_of(peer: dict[str, Any]) -> str:
    """A session's instance where the release names none (peer-cfg-rti is newer than Junos
    14.1): its RIBs say (frontend.inet.0 -> frontend); a session with the master's own RIBs
    (inet.0, inet6.0, bgp.l3vpn.0, ...) is the master's even when rib-groups add others."""
    ribs = [data(rib, "name") or "" for rib in items(peer, "bgp-rib")]
    if not ribs or any(r.count(".") == 1 or r.startswith("bgp.") for r in ribs):
        return DEFAULT_INSTANCE
    for rib in ribs:
        for family in (".inet.0", ".inet6.0"):
            if rib.endswith(family):
                return rib[:-len(family)]
    return DEFAULT_INSTANCE


def _local_port(device: DeviceState, address: str) -> str | None:
    """The interface whose subnet holds a numbered peer's address (the session's port)."""
    try:
        peer = ip_address(address)
    except ValueError:
        return None
    for iface in device.interfaces.values():
        if any(peer in ip_interface(a).network for a in iface.addresses):
            return iface.name
    return None


def _routes(device: DeviceState, reply: dict[str, Any], names: InterfaceNames,
            config: JunosConfig) -> None:
    tables: dict[str, dict[str, Route]] = {}
    made = Routes()
    for info in items(reply, "route-information"):
        for table in items(info, "route-table"):
            name = data(table, "table-name") or ""
            if name == "inet.0":
                vrf = DEFAULT_VRF
            elif not name.endswith(".inet.0"):
                continue  # another family (inet6.0, inet.3, mpls.0, bgp.evpn.0, ...)
            elif name == VXLAN_TABLE:
                device.not_modelled[name] = (
                    "Junos's VXLAN underlay table (the routes VTEP tunnels resolve by, copied "
                    f"from inet.0; {len(items(table, 'rt'))} routes): not a VRF, flatfab "
                    "models no VXLAN")
                continue
            elif _INTERNAL_INSTANCE.match(name) or name[:-len(".inet.0")] in (
                    *_IGNORED_INSTANCES, *config.other_instances):
                continue  # Junos's internal instances, the management instance, and
                # instances that are no VRF (named from the configuration)
            else:
                vrf = tenant(names, name[:-len(".inet.0")])
            routes = tables.setdefault(vrf, {})
            for rt in items(table, "rt"):
                prefix = data(rt, "rt-destination")
                entries = items(rt, "rt-entry")
                active = next((e for e in entries if data(e, "active-tag") == "*"),
                              entries[0] if entries else None)
                if not prefix or active is None:
                    continue
                protocol = data(active, "protocol-name") or ""
                routes[made.prefix(prefix)] = made.route(
                    _PROTOCOLS.get(protocol, protocol.lower()),
                    tuple((state_name(data(nh, "via") or "", names) or None, data(nh, "to"))
                          for nh in items(active, "nh")))
    device.routes = {vrf: dict(sorted(r.items())) for vrf, r in sorted(tables.items())}


# ---- the lossless plane ------------------------------------------------------------------


class _Cos:
    def __init__(self, config: JunosConfig) -> None:
        cos = config.cos
        self.classes = by_name(cos.get("forwarding-classes", {}).get("class"))
        self.classifiers = by_name(cos.get("classifiers", {}).get("dscp"))
        self.cnps = by_name(cos.get("congestion-notification-profile"))
        self.maps = by_name(cos.get("scheduler-maps"))
        self.schedulers = by_name(cos.get("schedulers"))
        self.drops = by_name(cos.get("drop-profiles"))
        self.bound = by_name(cos.get("interfaces", {}).get("interface"))

    def queue(self, forwarding_class: str) -> int | None:
        return as_int(self.classes.get(forwarding_class, {}).get("queue-num"))

    def dscp_table(self, name: str) -> dict[int, str]:
        table: dict[int, str] = {}
        for fc, entry in by_name(self.classifiers.get(name, {}).get("forwarding-class")).items():
            for loss in listed(entry.get("loss-priority")):
                for point in listed(loss.get("code-points") if isinstance(loss, dict) else None):
                    text = str(point)
                    if len(text) == 6 and set(text) <= {"0", "1"}:
                        table[int(text, 2)] = fc
        return table


# Junos's PFC watchdog where its statements leave a timer out (Junos OS Class of Service
# User Guide, "PFC watchdog"): polls every 100 ms, detects a stall after 2 polls, recovers
# after 200 ms. No default action is documented, so a missing one stays unknown.
WATCHDOG_DEFAULTS = {"poll-interval": 100, "detection": 2, "recovery": 200}
_WATCHDOG_FIELDS = {"poll-interval": "poll_ms", "detection": "detect_ms", "recovery": "restore_ms"}


def _watchdog(body: Any, pfc: list[int]) -> Watchdog | None:
    """A congestion-notification profile's `pfc-watchdog`: a timer it leaves out is Junos's
    documented default; a missing `watchdog-action` is unknown."""
    if body is None or not pfc:
        return None
    body = body if isinstance(body, dict) else {}
    unknown: dict[str, str] = {}
    timers: dict[str, int] = {}
    for statement, default in WATCHDOG_DEFAULTS.items():
        value = as_int(body.get(statement))
        if value is None and body.get(statement) is not None:
            unknown[_WATCHDOG_FIELDS[statement]] = (f"{statement} is {body.get(statement)!r}: "
                                                    "not a number")
        timers[statement] = default if value is None else value
    action = body.get("watchdog-action")
    if action is None:
        unknown["action"] = "no watchdog-action: Junos applies its own default"
    return Watchdog(priorities=pfc, detect_ms=timers["detection"] * timers["poll-interval"],
                    restore_ms=timers["recovery"], poll_ms=timers["poll-interval"],
                    action=str(action) if action is not None else None, unknown=unknown)


def _queues(cos: _Cos, map_name: str, planned: PortQos, reference: int) -> dict[int, QueueQos]:
    found: dict[int, QueueQos] = {}
    for fc, entry in by_name(cos.maps.get(map_name, {}).get("forwarding-class")).items():
        queue = cos.queue(fc)
        scheduler = cos.schedulers.get(str(entry.get("scheduler")), {})
        if queue is None:
            continue
        strict = scheduler.get("priority") == "strict-high"
        rate = scheduler.get("transmit-rate")
        weight = as_int(rate.get("percent")) if isinstance(rate, dict) else None
        ecn = None
        if "explicit-congestion-notification" in scheduler:
            for mapping in listed(scheduler.get("drop-profile-map")):
                drop = cos.drops.get(str(mapping.get("drop-profile")), {})
                ecn = _ecn(drop.get("interpolate", {}), planned.queues.get(queue), reference)
        profile = planned.queues[queue].profile if queue in planned.queues else ""
        found[queue] = QueueQos(strict=strict, weight=None if strict else weight, ecn=ecn,
                                profile=profile)
    for queue, plan in planned.queues.items():
        found.setdefault(queue, QueueQos(strict=False, profile=plan.profile))
    return dict(sorted(found.items()))


def _ecn(interpolate: Any, planned: QueueQos | None, reference: int) -> EcnProfile | None:
    """Fill levels are percent of the queue buffer: read back in bytes, and as the plan's
    bytes where those round to the same percent (the switch's resolution)."""
    if not isinstance(interpolate, dict):
        return None
    levels = [as_int(v) for v in listed(interpolate.get("fill-level"))]
    chances = [as_int(v) for v in listed(interpolate.get("drop-probability"))]
    if len(levels) != 2 or None in levels or not chances or chances[-1] is None:
        return None
    low, high = int(levels[0] or 0), int(levels[1] or 0)
    probability = int(chances[-1])
    if planned is not None and planned.ecn is not None \
            and ecn_levels(planned.ecn, reference) == (low, high) \
            and planned.ecn.probability == probability:
        return planned.ecn
    return EcnProfile(min_bytes=low * reference // 100, max_bytes=high * reference // 100,
                      probability=probability)


def _port_qos(cos: _Cos, port: str, planned: PortQos, mtu: int | None,
              speed: int | None, reference: int) -> PortQos | None:
    bound = cos.bound.get(port)
    if bound is None:
        return None
    unknown: dict[str, str] = {}
    units = by_name(bound.get("unit"))
    unit = units.get("*") or units.get("0") or {}
    classifiers = unit.get("classifiers", {}) if isinstance(unit, dict) else {}
    dscp = listed(classifiers.get("dscp"))
    trust = "dscp" if dscp else ("pcp" if classifiers.get("ieee-802.1") else "dscp")
    if not classifiers:
        unknown["trust"] = "no classifier bound: Junos's default classifier applies"
    table = cos.dscp_table(str(dscp[0].get("name"))) if dscp and isinstance(dscp[0], dict) \
        else {}
    dscp_to_tc = [cos.queue(table[d]) or 0 if d in table else 0 for d in range(64)]
    cnp = cos.cnps.get(str(bound.get("congestion-notification-profile")))
    pfc: list[int] = []
    pfc_to_queue = list(planned.maps.pfc_to_queue)
    cable = planned.cable_m
    watchdog = None
    if cnp is not None:
        paused = {int(str(p["name"]), 2) for p in listed(
            cnp.get("input", {}).get("dscp", {}).get("code-point"))
            if isinstance(p, dict) and "pfc" in p}
        for d in sorted(paused):
            fc = cos.classes.get(table.get(d, ""), {})
            priority = as_int(fc.get("pfc-priority"))
            if "no-loss" in fc and priority is not None and priority not in pfc:
                pfc.append(priority)
        pfc.sort()
        for point in listed(cnp.get("output", {}).get("ieee-802.1", {}).get("code-point")):
            queues = [as_int(q) for q in listed(point.get("flow-control-queue"))]
            if queues and queues[0] is not None:
                pfc_to_queue[int(str(point["name"]), 2)] = queues[0]
        length = as_int(cnp.get("input", {}).get("cable-length"))
        if length is not None and length != math.ceil(planned.cable_m):
            cable = float(length)
        watchdog = _watchdog(cnp.get("pfc-watchdog"), pfc)
    maps = planned.maps.model_copy(update={"dscp_to_tc": dscp_to_tc,
                                           "pfc_to_queue": pfc_to_queue})
    lossless_pgs = {maps.pfc_to_pg[p] for p in pfc if 0 <= p < len(maps.pfc_to_pg)}
    unknown |= {f"pgs.{pg}": SWITCH_BUFFERS for pg in sorted(lossless_pgs)}
    return PortQos(trust=trust, maps=maps, pfc=pfc, watchdog=watchdog, pgs=planned.pgs,
                   queues=_queues(cos, str(bound.get("scheduler-map")), planned, reference),
                   speed_mbps=speed or planned.speed_mbps, cable_m=cable,
                   mtu=mtu or planned.mtu, unknown=unknown)


SWITCH_BUFFERS = ("QFX52xx buffers are shared-buffer percentages and Junos sizes each "
                  "lossless priority's headroom from cable length and MTU: no per-profile "
                  "bytes to read")


def _lossless(device: DeviceState, planned: DeviceState, config: JunosConfig) -> None:
    """The lossless plane from the configuration. QFX52xx buffers have no per-profile
    bytes (the platform refuses qos.buffers at load): the planned pools and profiles stand
    for the switch's own, with every pool size and lossless PG marked unknown, so checks
    follow the class chain through them but never judge their sizes."""
    if planned.qos is None:
        return
    cos = _Cos(config)
    reference = queue_reference_bytes(planned.qos.asic.buffer_bytes)
    device.qos = planned.qos.model_copy(update={"unknown": {
        f"pools.{name}.size": SWITCH_BUFFERS for name in sorted(planned.qos.pools)}})
    for name, iface, qos in readback.planned_qos_ports(device, planned):
        iface.qos = _port_qos(cos, name, qos, iface.mtu, iface.speed_mbps, reference)


def _hashing(device: DeviceState, config: JunosConfig) -> None:
    """The switch's ECMP hashing from its configuration (junos/hashing.py): what it
    configures, or Junos's default where it configures none; a routing instance's own hash
    key, and hashing beyond the model, are named in `not_modelled`. A way of balancing
    flatfab cannot map leaves `lb` unset (junos/dlb.py names it)."""
    lb, beyond = hashing.read(config.root.get("forwarding-options"))
    device.lb = lb
    device.not_modelled.update(beyond)
    device.not_modelled.update(hashing.instance_keys(config.root.get("routing-instances")))


def collect(driver: DeviceDriver, planned: DeviceState, names: InterfaceNames) -> DeviceState:
    device = DeviceState(name=planned.name, role=planned.role, platform=planned.platform)
    shown = _read(driver, device)
    config = JunosConfig(shown[CONFIG], names)
    lldp: dict[str, list[Endpoint]] = {}
    unnamed: dict[str, str] = {}

    def read_lldp() -> None:
        found, why = _lldp(shown[LLDP])
        lldp.update(found)
        unnamed.update(why)

    readback.guarded(device, "lldp", read_lldp)
    readback.guarded(device, "interfaces",
                     lambda: _interfaces(device, planned, config, shown[INTERFACES], lldp, names))
    readback.guarded(device, "bgp", lambda: _bgp(device, shown[BGP], names))
    readback.guarded(device, "routes", lambda: _routes(device, shown[ROUTES], names, config))
    readback.guarded(device, "lossless", lambda: _lossless(device, planned, config))
    if shown[CONFIG]:  # an unread configuration says nothing of the hash (its error is named)
        readback.guarded(device, "hashing", lambda: _hashing(device, config))
    device.loopback = readback.loopback_address(device, names.loopback)
    device.vrfs = {tenant(names, vrf): planned.vrfs.get(tenant(names, vrf), 0)
                   for vrf in sorted(config.instances)}
    for name, kind in sorted(config.other_instances.items()):
        device.not_modelled[f"routing-instance {name}"] = (
            f"instance-type {kind}: not a VRF (no IPv4 table of its own); flatfab models "
            "virtual-router and vrf instances only")
    device.not_modelled = dict(sorted({**device.not_modelled, **unnamed}.items()))
    return device


def physical(driver: DeviceDriver, planned: DeviceState) -> dict[str, PortPhysical]:
    """Each cabled port's module, optics, FEC and flaps (junos/phy.py); a command the switch
    does not answer leaves what it states unknown; {}: it answered none."""
    shown = _read(driver, phy_read.scratch(planned), phy.COMMANDS)
    return phy_read.read_answered(shown, readback.cabled_ports(planned), phy.read_ports)
