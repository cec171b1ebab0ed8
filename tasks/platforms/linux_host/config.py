"""The linux_host config text: NIC state, addresses and routes of a GPU host's data NICs.

    nic <name> mtu <mtu> <up|down>
    address <nic> <ip>/<len>
    route <prefix> via <gateway> dev <nic>

A NIC that is down at MTU 1500 with no address is unconfigured and has no line. The
management NIC is never listed and never touched.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
from dataclasses import dataclass, field

from tasks.platforms.linux_host.nic_qos import NicQosError, NicSettings, parse_line

DEFAULT_MTU = 1500
NIC_RE = re.compile(r"^nic (?P<name>\S+) mtu (?P<mtu>\d+) (?P<state>up|down)$")
ADDRESS_RE = re.compile(r"^address (?P<nic>\S+) (?P<address>\S+/\d+)$")
ROUTE_RE = re.compile(r"^route (?P<prefix>\S+/\d+) via (?P<via>\S+) dev (?P<nic>\S+)$")


class HostConfigError(ValueError):
    """A config line that does not parse or refers to something undefined."""


@dataclass(frozen=True)
class Nic:
    name: str
    mtu: int = DEFAULT_MTU
    up: bool = False
    addresses: tuple[str, ...] = ()

    @property
    def unconfigured(self) -> bool:
        return not self.up and self.mtu == DEFAULT_MTU and not self.addresses


@dataclass(frozen=True)
class HostRoute:
    prefix: str
    via: str
    nic: str


@dataclass(frozen=True)
class HostConfig:
    nics: dict[str, Nic] = field(default_factory=dict)
    routes: tuple[HostRoute, ...] = ()
    qos: dict[str, NicSettings] = field(default_factory=dict)  # lossless NIC settings
    # read back only: what the host showed that flatfab could not read (what -> why); it is
    # no part of the config text, and collect reports it instead of judging a default
    unread: dict[str, str] = field(default_factory=dict, compare=False)


def format_config(config: HostConfig) -> str:
    lines = []
    for name in sorted(config.nics):
        nic = config.nics[name]
        if nic.unconfigured:
            continue
        lines.append(f"nic {name} mtu {nic.mtu} {'up' if nic.up else 'down'}")
        lines += [f"address {name} {a}" for a in sorted(nic.addresses)]
    for route in sorted(config.routes, key=lambda r: (r.nic, r.prefix, r.via)):
        lines.append(f"route {route.prefix} via {route.via} dev {route.nic}")
    lines += [config.qos[nic].line(nic) for nic in sorted(config.qos)]
    return "".join(f"{line}\n" for line in lines)


def parse_config(text: str) -> HostConfig:
    nics: dict[str, Nic] = {}
    addresses: dict[str, list[str]] = {}
    routes: list[HostRoute] = []
    qos: dict[str, NicSettings] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("!", "#")):
            continue
        if match := NIC_RE.match(line):
            if match["name"] in nics:
                raise HostConfigError(f"line {number}: nic {match['name']} is given twice")
            nics[match["name"]] = Nic(name=match["name"], mtu=int(match["mtu"]),
                                      up=match["state"] == "up")
        elif match := ADDRESS_RE.match(line):
            try:
                ipaddress.IPv4Interface(match["address"])
            except ValueError:
                raise HostConfigError(f"line {number}: bad address {match['address']!r}") \
                    from None
            if match["address"] in addresses.get(match["nic"], []):
                raise HostConfigError(f"line {number}: address {match['address']} is given twice")
            addresses.setdefault(match["nic"], []).append(match["address"])
        elif match := ROUTE_RE.match(line):
            routes.append(_route(number, match))
        elif line.startswith("qos "):
            try:
                nic_name, settings = parse_line(line, number)
            except NicQosError as exc:
                raise HostConfigError(str(exc)) from None
            if nic_name in qos:
                raise HostConfigError(f"line {number}: qos of {nic_name} is given twice")
            qos[nic_name] = settings
        else:
            raise HostConfigError(f"line {number}: cannot parse {line!r}")
    for nic, addrs in addresses.items():
        if nic not in nics:
            raise HostConfigError(f"address on {nic}, which has no `nic` line")
        nics[nic] = Nic(name=nic, mtu=nics[nic].mtu, up=nics[nic].up, addresses=tuple(addrs))
    for route in routes:
        if route.nic not in nics:
            raise HostConfigError(f"route via {route.nic}, which has no `nic` line")
    for nic in qos:
        if nic not in nics:
            raise HostConfigError(f"qos of {nic}, which has no `nic` line")
    return HostConfig(nics=nics, routes=tuple(routes), qos=qos)


def _route(number: int, match: re.Match[str]) -> HostRoute:
    try:
        prefix = ipaddress.IPv4Network(match["prefix"])
    except ValueError as exc:
        raise HostConfigError(f"line {number}: bad route prefix: {exc}") from None
    try:
        via = ipaddress.IPv4Address(match["via"])
    except ValueError:
        raise HostConfigError(f"line {number}: bad gateway {match['via']!r}") from None
    return HostRoute(prefix=str(prefix), via=str(via), nic=match["nic"])


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _list(data: object, what: str) -> list[dict[str, object]]:
    if not isinstance(data, list):
        raise HostConfigError(f"ip -j {what} output is not a list")
    return [item for item in data if isinstance(item, dict)]


def from_ip_json(links: str, addrs: str, routes: str, ignore: set[str]) -> HostConfig:
    """Running state from `ip -j link`, `ip -j addr` and `ip -j route`.

    What iproute2 adds that flatfab does not use (altnames, linkinfo, addr_info lifetimes
    and labels, route flags and metrics, ...) is ignored. A NIC whose MTU iproute2 does not
    print, and a route flatfab cannot express (multipath, an IPv6 next hop) through a data
    NIC, are left out and named in `unread`.
    """
    try:
        link_data, addr_data, route_data = (json.loads(t or "[]") for t in (links, addrs, routes))
    except ValueError as exc:
        raise HostConfigError(f"ip -j output is not JSON: {exc}") from None
    unread: dict[str, str] = {}
    addr_of: dict[str, tuple[str, ...]] = {}
    for item in _list(addr_data, "addr"):
        infos = item.get("addr_info")
        addr_of[str(item.get("ifname", ""))] = tuple(
            f"{a['local']}/{a['prefixlen']}" for a in (infos if isinstance(infos, list) else [])
            if isinstance(a, dict) and a.get("family") == "inet" and a.get("scope") == "global"
            and isinstance(a.get("local"), str) and _int(a.get("prefixlen")) is not None)
    nics = {}
    for link in _list(link_data, "link"):
        name = link.get("ifname", "")
        if not isinstance(name, str) or not name or name == "lo" or name in ignore:
            continue
        mtu, flags = _int(link.get("mtu")), link.get("flags")
        if mtu is None or not isinstance(flags, list):
            missing = "mtu" if mtu is None else "flags"
            unread[f"nic {name}"] = f"`ip -j link` prints no {missing} for it"
            continue
        nics[name] = Nic(name=name, mtu=mtu, up="UP" in flags, addresses=addr_of.get(name, ()))
    host_routes = []
    for route in _list(route_data, "route"):
        if route.get("protocol") == "kernel":
            continue
        dst = str(route.get("dst", ""))
        prefix = "0.0.0.0/0" if dst == "default" else (dst if "/" in dst else f"{dst}/32")
        hops = route.get("nexthops")
        if isinstance(hops, list):  # multipath: `ip route replace` per line cannot keep it
            devs = sorted({str(h.get("dev")) for h in hops
                           if isinstance(h, dict) and h.get("dev") in nics})
            if devs:
                unread[f"route {prefix} dev {','.join(devs)}"] = (
                    "a multipath route, which flatfab does not express")
            continue
        if route.get("dev") not in nics:
            continue
        gateway = route.get("gateway")
        if isinstance(gateway, str) and dst:
            host_routes.append(HostRoute(prefix=prefix, via=gateway, nic=str(route["dev"])))
        elif isinstance(via := route.get("via"), dict):
            unread[f"route {prefix} dev {route['dev']}"] = (
                "its next hop is not an IPv4 gateway (`via` "
                f"{via.get('family', '?')}), which flatfab does not express")
    return HostConfig(nics=nics, routes=tuple(dict.fromkeys(host_routes)), unread=unread)


def transition(current: HostConfig, desired: HostConfig) -> list[str]:
    """iproute2 commands from current to desired."""
    missing = [n for n in desired.nics if n not in current.nics]
    if missing:
        raise HostConfigError(f"no such NIC on the host: {', '.join(missing)}")
    ops: list[str] = []
    wanted_routes = set(desired.routes)
    for route in current.routes:
        if route not in wanted_routes:
            ops.append(f"ip route del {route.prefix} via {route.via} dev {route.nic}")
    # the kernel flushes a NIC's routes when it goes down, so routes through a NIC whose
    # admin state changes are (re)installed at the end
    disturbed: set[str] = set()
    for name, cur in sorted(current.nics.items()):
        want = desired.nics.get(name, Nic(name=name))
        args = []
        if cur.mtu != want.mtu:
            args.append(f"mtu {want.mtu}")
        if cur.up != want.up:
            args.append("up" if want.up else "down")
            disturbed.add(name)
        link_op = [f"ip link set {shlex.quote(name)} {' '.join(args)}"] if args else []
        going_down = cur.up and not want.up
        if not going_down:
            ops += link_op
        # add new addresses before deleting old ones: a renumbered NIC never has none, so
        # the kernel keeps the routes through it
        ops += [f"ip addr add {a} dev {shlex.quote(name)}"
                for a in want.addresses if a not in cur.addresses]
        ops += [f"ip addr del {a} dev {shlex.quote(name)}"
                for a in cur.addresses if a not in want.addresses]
        if going_down:
            ops += link_op
    current_routes = set(current.routes)
    for route in desired.routes:
        if route not in current_routes or route.nic in disturbed:
            ops.append(f"ip route replace {route.prefix} via {route.via} dev {route.nic}")
    return ops
