"""The linux_host config text: NIC state, addresses, routes, policy rules and per-NIC
sysctls of a GPU host's data NICs.

    nic <name> mtu <mtu> <up|down>
    address <nic> <ip>/<len>
    route <prefix> [via <gateway>] dev <nic> [src <address>] [table <id>]
    rule from <address> table <id> priority <priority>
    sysctl net.ipv4.conf.<nic>.<arp_ignore|arp_announce|rp_filter> <value>

A NIC that is down at MTU 1500 with no address is unconfigured and has no line. The
management NIC is never listed and never touched.

Routes without `table` are in the main table; they need a `via` (the main table's connected
routes are the kernel's own, `proto kernel`). A route in a numbered table may be a connected
route (no `via`): a multi-NIC server's per-NIC table holds the NIC's subnet and its default
route, and a rule `from <NIC address> lookup <table>` chooses it (ip-route(8), ip-rule(8)).
Tables 253 (default), 254 (main) and 255 (local) are the kernel's and cannot be named; rule
priorities 0, 32766 and 32767 are the kernel's default rules (ip-rule(8)), so a rule's
priority is 1..32765.

`nccl` lines are a GPU server's nccl.conf (nccl_conf.py): `nccl hca <nic>,...` and
`nccl NCCL_<VARIABLE>=<value>`; the driver writes them to the inventory's `nccl_conf` file.

`sysctl` lines are per data NIC and only the three keys a multi-NIC server needs (the
kernel's Documentation/networking/ip-sysctl.rst): arp_ignore, arp_announce and rp_filter;
never `all`, `default` or `lo`, whose values reach every NIC (the management NIC too).
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass, field

from flatfab import devicejson
from flatfab.platforms.linux_host import nccl_conf
from flatfab.platforms.linux_host.nccl_conf import NcclConfig
from flatfab.platforms.linux_host.nic_qos import NicQosError, NicSettings, parse_line

DEFAULT_MTU = 1500
NIC_RE = re.compile(r"^nic (?P<name>\S+) mtu (?P<mtu>\d+) (?P<state>up|down)$")
ADDRESS_RE = re.compile(r"^address (?P<nic>\S+) (?P<address>\S+/\d+)$")
ROUTE_RE = re.compile(r"^route (?P<prefix>\S+/\d+)(?: via (?P<via>\S+))? dev (?P<nic>\S+)"
                      r"(?: src (?P<src>\S+))?(?: table (?P<table>[0-9]+))?$")
RULE_RE = re.compile(r"^rule from (?P<src>\S+) table (?P<table>[0-9]+) priority "
                     r"(?P<priority>[0-9]+)$")
SYSCTL_RE = re.compile(r"^sysctl (?P<key>\S+) (?P<value>\S+)$")
SYSCTL_PREFIX = "net.ipv4.conf."
# per-NIC keys and the values the kernel accepts (Documentation/networking/ip-sysctl.rst):
# arp_ignore 0-3 and 8, arp_announce 0-2, rp_filter 0-2
NIC_SYSCTLS: dict[str, frozenset[int]] = {
    "arp_ignore": frozenset({0, 1, 2, 3, 8}),
    "arp_announce": frozenset({0, 1, 2}),
    "rp_filter": frozenset({0, 1, 2}),
}
# the conf/ entries that are no NIC: `all` and `default` reach every NIC, `lo` is loopback
NOT_NICS = frozenset({"all", "default", "lo"})
# the kernel's own routing tables (253 default, 254 main, 255 local) and rules (ip-rule(8):
# priority 0 `lookup local`, 32766 `lookup main`, 32767 `lookup default`)
RESERVED_TABLES = {0: "unspec", 253: "default", 254: "main", 255: "local"}
MAX_TABLE = 2**32 - 1
DEFAULT_RULES = {(0, "local"), (32766, "main"), (32767, "default")}
MAX_RULE_PRIORITY = 32765


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
    via: str | None  # None: a connected route (only in a numbered table)
    nic: str
    table: int | None = None  # None: the main table
    source: str | None = None  # the preferred source address (`src`)

    @property
    def spec(self) -> str:
        """The route as ip-route(8) and the config text spell it (after `route`)."""
        via = f" via {self.via}" if self.via is not None else ""
        src = f" src {self.source}" if self.source is not None else ""
        table = f" table {self.table}" if self.table is not None else ""
        return f"{self.prefix}{via} dev {self.nic}{src}{table}"

    @property
    def order(self) -> tuple[int, str, str, str, str]:
        # main-table routes first, in the order one-NIC hosts have always had
        return (self.table or 0, self.nic, self.prefix, self.via or "", self.source or "")


@dataclass(frozen=True, order=True)
class HostRule:
    """`ip rule`: traffic from `source` is looked up in `table`."""

    priority: int
    source: str
    table: int

    @property
    def spec(self) -> str:
        return f"from {self.source} table {self.table} priority {self.priority}"


def sysctl_key(nic: str, name: str) -> str:
    return f"{SYSCTL_PREFIX}{nic}.{name}"


def sysctl_nic(key: str) -> tuple[str, str] | None:
    """(NIC, name) of a per-NIC key flatfab configures, or None."""
    if not key.startswith(SYSCTL_PREFIX):
        return None
    nic, _, name = key[len(SYSCTL_PREFIX):].rpartition(".")
    return (nic, name) if nic and name in NIC_SYSCTLS else None


@dataclass(frozen=True)
class HostConfig:
    nics: dict[str, Nic] = field(default_factory=dict)
    routes: tuple[HostRoute, ...] = ()
    qos: dict[str, NicSettings] = field(default_factory=dict)  # lossless NIC settings
    rules: tuple[HostRule, ...] = ()
    sysctls: dict[str, str] = field(default_factory=dict)  # the keys flatfab manages
    nccl: NcclConfig | None = None  # the nccl.conf flatfab writes; None: it writes none
    # read back only: what the host showed that flatfab could not read (what -> why); it is
    # no part of the config text, and collect reports it instead of judging a default
    unread: dict[str, str] = field(default_factory=dict, compare=False)
    # read back only: every data NIC's value of every NIC_SYSCTLS key, managed or not, and
    # the value each managed key had before flatfab first set it (restored when a config
    # no longer names it); see the driver
    sysctl_values: dict[str, str] = field(default_factory=dict, compare=False)
    sysctl_before: dict[str, str] = field(default_factory=dict, compare=False)
    # read back only: the management NICs' addresses (a rule from one is not flatfab's)
    mgmt_addresses: frozenset[str] = field(default_factory=frozenset, compare=False)
    # read back only: whose the nccl.conf is: "" none there, "flatfab", "other" (another's
    # file: `nccl` is None, and a rollout keeps a copy before it writes over it)
    nccl_owner: str = field(default="", compare=False)


def format_config(config: HostConfig) -> str:
    lines = []
    # a NIC in factory state keeps its `nic` line while flatfab manages a sysctl of it
    named = {found[0] for key in config.sysctls if (found := sysctl_nic(key)) is not None}
    for name in sorted(config.nics):
        nic = config.nics[name]
        if nic.unconfigured and name not in named:
            continue
        lines.append(f"nic {name} mtu {nic.mtu} {'up' if nic.up else 'down'}")
        lines += [f"address {name} {a}" for a in sorted(nic.addresses)]
    lines += [f"route {route.spec}" for route in sorted(config.routes, key=lambda r: r.order)]
    lines += [f"rule {rule.spec}" for rule in sorted(config.rules)]
    lines += [f"sysctl {key} {config.sysctls[key]}" for key in sorted(config.sysctls)]
    lines += [config.qos[nic].line(nic) for nic in sorted(config.qos)]
    lines += config.nccl.lines() if config.nccl is not None else []
    return "".join(f"{line}\n" for line in lines)


def parse_config(text: str) -> HostConfig:
    nics: dict[str, Nic] = {}
    addresses: dict[str, list[str]] = {}
    routes: list[HostRoute] = []
    rules: dict[HostRule, int] = {}
    sysctls: dict[str, tuple[str, int]] = {}
    qos: dict[str, NicSettings] = {}
    nccl: list[tuple[str, str, int]] = []
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
        elif match := RULE_RE.match(line):
            rule = _rule(number, match)
            if rule in rules:
                raise HostConfigError(f"line {number}: rule {rule.spec} is given twice")
            rules[rule] = number
        elif match := SYSCTL_RE.match(line):
            key, value = _sysctl(number, match)
            if key in sysctls:
                raise HostConfigError(f"line {number}: sysctl {key} is given twice")
            sysctls[key] = (value, number)
        elif line.startswith("qos "):
            try:
                nic_name, settings = parse_line(line, number)
            except NicQosError as exc:
                raise HostConfigError(str(exc)) from None
            if nic_name in qos:
                raise HostConfigError(f"line {number}: qos of {nic_name} is given twice")
            qos[nic_name] = settings
        elif line.startswith("nccl "):
            try:
                nccl.append((*nccl_conf.parse_line(line, number), number))
            except nccl_conf.NcclLineError as exc:
                raise HostConfigError(str(exc)) from None
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
    for key, (_, number) in sysctls.items():
        nic = key[len(SYSCTL_PREFIX):].rpartition(".")[0]
        if nic not in nics:
            raise HostConfigError(f"line {number}: sysctl {key} of {nic}, which has no `nic` "
                                  "line")
    try:
        written = nccl_conf.from_lines(nccl)
    except nccl_conf.NcclLineError as exc:
        raise HostConfigError(str(exc)) from None
    for nic in written.hca if written is not None else ():
        if nic not in nics:
            raise HostConfigError(f"nccl hca names {nic}, which has no `nic` line")
    return HostConfig(nics=nics, routes=tuple(routes), qos=qos, rules=tuple(rules),
                      sysctls={key: value for key, (value, _) in sysctls.items()}, nccl=written)


def _route(number: int, match: re.Match[str]) -> HostRoute:
    try:
        prefix = ipaddress.IPv4Network(match["prefix"])
    except ValueError as exc:
        raise HostConfigError(f"line {number}: bad route prefix: {exc}") from None
    via = None if match["via"] is None else _address(number, match["via"], "gateway")
    source = None if match["src"] is None else _address(number, match["src"], "source")
    table = None if match["table"] is None else _table(number, match["table"])
    if via is None and table is None:
        raise HostConfigError(f"line {number}: a route without `via` needs a `table`: the "
                              "main table's connected routes are the kernel's")
    return HostRoute(prefix=str(prefix), via=via, nic=match["nic"], table=table, source=source)


def _address(number: int, text: str, what: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise HostConfigError(f"line {number}: bad {what} {text!r}") from None


def _table(number: int, text: str) -> int:
    table = int(text)
    if table in RESERVED_TABLES:
        raise HostConfigError(f"line {number}: table {table} is the kernel's "
                              f"{RESERVED_TABLES[table]} table; use a table of its own")
    if table > MAX_TABLE:
        raise HostConfigError(f"line {number}: table {table} is above {MAX_TABLE}")
    return table


def _rule(number: int, match: re.Match[str]) -> HostRule:
    source = _address(number, match["src"], "rule source")
    table = _table(number, match["table"])
    priority = int(match["priority"])
    if not 1 <= priority <= MAX_RULE_PRIORITY:
        raise HostConfigError(f"line {number}: rule priority {priority} is not in "
                              f"1..{MAX_RULE_PRIORITY} (0, 32766 and 32767 are the kernel's "
                              "default rules)")
    return HostRule(priority=priority, source=source, table=table)


def _sysctl(number: int, match: re.Match[str]) -> tuple[str, str]:
    key, value = match["key"], match["value"]
    found = sysctl_nic(key)
    if found is None:
        raise HostConfigError(
            f"line {number}: sysctl {key} is not one flatfab configures (only "
            f"{SYSCTL_PREFIX}<nic>.{{{','.join(NIC_SYSCTLS)}}})")
    nic, name = found
    if nic in NOT_NICS:
        raise HostConfigError(f"line {number}: sysctl {key} is not a data NIC's: `{nic}` "
                              "reaches every NIC, the management NIC too")
    if not (value.isascii() and value.isdigit()) or int(value) not in NIC_SYSCTLS[name]:
        allowed = ", ".join(str(v) for v in sorted(NIC_SYSCTLS[name]))
        raise HostConfigError(f"line {number}: sysctl {key} {value!r} is not one of "
                              f"{allowed}")
    return key, str(int(value))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _list(data: object, what: str) -> list[dict[str, object]]:
    if not isinstance(data, list):
        raise HostConfigError(f"ip -j {what} output is not a list")
    return [item for item in data if isinstance(item, dict)]


def from_ip_json(links: str, addrs: str, routes: str, ignore: set[str],
                 rules: str = "") -> HostConfig:
    """Running state from `ip -j link`, `ip -j addr`, `ip -4 -j route show table all` and
    `ip -j rule show`.

    What iproute2 adds that flatfab does not use (altnames, linkinfo, addr_info lifetimes
    and labels, route flags and metrics, ...) is ignored. A NIC whose MTU iproute2 does not
    print, and a route flatfab cannot express (multipath, an IPv6 next hop, a named table)
    through a data NIC, are left out and named in `unread`. Routes: the kernel's own
    (`proto kernel`, the local table, types other than unicast) are not flatfab's; in the
    main table only gateway routes count (its connected routes are the kernel's), in a
    numbered table connected routes too. Rules: the kernel's three default rules are not
    flatfab's; a rule with more than a source address, a table and a priority is named in
    `unread` (and never deleted).
    """
    try:
        link_data, addr_data, route_data, rule_data = (
            devicejson.loads(t or "[]") for t in (links, addrs, routes, rules))
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
    host_routes = [route for item in _list(route_data, "route")
                   if (route := _ip_route(item, nics, unread)) is not None]
    # a rule from a management NIC's address is the management network's, never flatfab's:
    # not read, so never deleted (and the driver refuses to configure one)
    mgmt = frozenset(a.split("/")[0] for name in ignore for a in addr_of.get(name, ()))
    host_rules = [rule for item in _list(rule_data, "rule")
                  if item.get("src") not in mgmt and (rule := _ip_rule(item, unread)) is not None]
    return HostConfig(nics=nics, routes=tuple(dict.fromkeys(host_routes)),
                      rules=tuple(dict.fromkeys(host_rules)), unread=unread,
                      mgmt_addresses=mgmt)


def _ip_table(value: object) -> int | str | None:
    """A route's or rule's table as `ip -j` prints it: None for main, its number, or the
    name iproute2 printed for a table flatfab does not number (rt_tables(5))."""
    if value is None or value == "main":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    return int(text) if text.isascii() and text.isdigit() else text


def _ip_route(route: dict[str, object], nics: dict[str, Nic],
              unread: dict[str, str]) -> HostRoute | None:
    """One `ip -j route` entry as a HostRoute, or None (not flatfab's, or named unread)."""
    if route.get("protocol") == "kernel" or route.get("type", "unicast") != "unicast":
        return None
    table = _ip_table(route.get("table"))
    if table == "local":
        return None
    dst = str(route.get("dst", ""))
    if ":" in dst:  # an IPv6 route: flatfab routes IPv4 only
        return None
    prefix = "0.0.0.0/0" if dst == "default" else (dst if "/" in dst else f"{dst}/32")
    in_table = "" if table is None else f" table {table}"
    hops = route.get("nexthops")
    if isinstance(hops, list):  # multipath: `ip route replace` per line cannot keep it
        devs = sorted({str(h.get("dev")) for h in hops
                       if isinstance(h, dict) and h.get("dev") in nics})
        if devs:
            unread[f"route {prefix} dev {','.join(devs)}{in_table}"] = (
                "a multipath route, which flatfab does not express")
        return None
    if route.get("dev") not in nics:
        return None
    nic = str(route["dev"])
    if isinstance(table, str) or (table is not None and table in RESERVED_TABLES):
        unread[f"route {prefix} dev {nic}{in_table}"] = (
            f"it is in table {table}, and flatfab routes in the main table and numbered "
            "tables of its own")
        return None
    gateway, source = route.get("gateway"), route.get("prefsrc")
    source = source if isinstance(source, str) else None
    if isinstance(gateway, str) and dst:
        return HostRoute(prefix=prefix, via=gateway, nic=nic, table=table, source=source)
    if isinstance(via := route.get("via"), dict):
        unread[f"route {prefix} dev {nic}{in_table}"] = (
            "its next hop is not an IPv4 gateway (`via` "
            f"{via.get('family', '?')}), which flatfab does not express")
        return None
    if table is not None and dst:  # a connected route in a table of its own
        return HostRoute(prefix=prefix, via=None, nic=nic, table=table, source=source)
    return None


# what `ip -j rule show` prints for flatfab's rules; `protocol` (who installed it, printed by
# `-d` and by some releases) selects no traffic
RULE_KEYS = {"priority", "src", "table", "protocol"}


def _ip_rule(rule: dict[str, object], unread: dict[str, str]) -> HostRule | None:
    """One `ip -j rule show` entry as a HostRule; None for the kernel's default rules and for
    what flatfab does not express (named in unread)."""
    priority, table, source = _int(rule.get("priority")), rule.get("table"), rule.get("src")
    if priority is not None and (priority, table) in DEFAULT_RULES and source == "all" \
            and set(rule) <= RULE_KEYS:
        return None  # ip-rule(8): the kernel's local, main and default rules
    number = _ip_table(table)
    extra = sorted(set(rule) - RULE_KEYS)
    why = ""
    if priority is None:
        why = "it has no priority"
    elif extra:
        why = f"it has {', '.join(extra)}"
    elif not isinstance(number, int) or number in RESERVED_TABLES or number > MAX_TABLE:
        why = f"it looks up table {table}"
    elif not isinstance(source, str) or source == "all":
        why = "it matches no source address"
    else:
        try:
            address = str(ipaddress.IPv4Address(source))
        except ValueError:
            why = f"its source {source!r} is no IPv4 address"
        else:
            if 1 <= priority <= MAX_RULE_PRIORITY:
                return HostRule(priority=priority, source=address, table=number)
            why = f"its priority {priority} is one of the kernel's"
    shown = " ".join(k if v is None else f"{k} {v}" for k, v in rule.items() if k != "priority")
    unread[f"rule {priority if priority is not None else '?'} {shown}".rstrip()] = (
        f"{why}, which flatfab does not express")
    return None


def sysctls_from_proc(listing: str, nics: set[str]) -> dict[str, str]:
    """Every data NIC's NIC_SYSCTLS values from `grep -H . /proc/sys/net/ipv4/conf/*/<key>`
    lines (`<path>:<value>`); what is not listed was not readable."""
    values: dict[str, str] = {}
    root = "/proc/sys/net/ipv4/conf/"
    for line in listing.splitlines():
        path, sep, value = line.partition(":")
        if not sep or not path.startswith(root):
            continue
        nic, _, name = path[len(root):].rpartition("/")
        value = value.strip()
        if nic in nics and name in NIC_SYSCTLS and value.isascii() and value.isdigit():
            values[sysctl_key(nic, name)] = str(int(value))
    return values


def parse_managed(text: str) -> dict[str, str]:
    """The driver's record of the sysctl keys flatfab manages: `<key> <value before>` lines."""
    managed: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        if len(words) != 2 or sysctl_nic(words[0]) is None or not words[1].isdigit():
            raise HostConfigError(f"sysctl record line {number}: cannot parse {line!r}")
        managed[words[0]] = words[1]
    return managed


def sysctls_after(current: HostConfig,
                  sysctls: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(values, before) of the host once `sysctls` are the managed keys: each key's value
    (a key no longer managed back at its value before flatfab) and the record of the value
    each managed key had before flatfab first set it (kept from the record while managed).

    A key flatfab starts to manage on a NIC the host shows no value for is refused: its value
    before would be lost (a NIC missing altogether is refused by `transition`)."""
    before: dict[str, str] = {}
    for key in sorted(sysctls):
        if key in current.sysctl_before:
            before[key] = current.sysctl_before[key]
        elif key in current.sysctl_values:
            before[key] = current.sysctl_values[key]
        elif (found := sysctl_nic(key)) is not None and found[0] in current.nics:
            raise HostConfigError(f"sysctl {key}: the host shows no value for it, so the "
                                  "value it had before flatfab would be lost")
    values = dict(current.sysctl_values)
    values.update({key: current.sysctl_before[key] for key in current.sysctls
                   if key not in sysctls and key in current.sysctl_before})
    values.update(sysctls)
    return values, before


def format_managed(before: dict[str, str]) -> str:
    return "".join(f"{key} {before[key]}\n" for key in sorted(before))


def _subnet(address: str) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Interface(address).network


def _route_op(verb: str, route: HostRoute) -> str:
    via = f" via {route.via}" if route.via is not None else ""
    src = f" src {route.source}" if route.source is not None else ""
    table = f" table {route.table}" if route.table is not None else ""
    return f"ip route {verb} {route.prefix}{via} dev {shlex.quote(route.nic)}{src}{table}"


def _rule_op(verb: str, rule: HostRule) -> str:
    # ip-rule(8): `ip rule del` with the same selector, table and priority deletes exactly
    # this rule; `ip rule add` of an existing one fails (EEXIST), so only missing ones are added
    return f"ip rule {verb} {rule.spec}"


def sysctl_op(key: str, value: str) -> str:
    """`sysctl -w` of a per-NIC key. sysctl(8) takes `/` for `.` in a key, which spells a NIC
    whose name has a dot (a VLAN, eth1.100) as the directory under /proc/sys it is."""
    found = sysctl_nic(key)
    assert found is not None, key
    nic, name = found
    spelled = key if "." not in nic else f"net/ipv4/conf/{nic}/{name}"
    return f"sysctl -qw {shlex.quote(f'{spelled}={value}')}"


def sysctl_target(current: HostConfig, desired: HostConfig, key: str) -> str:
    """The value `key` has in `desired`: its configured one, or, for a key that `desired` no
    longer manages, the value it had before flatfab (the driver records it)."""
    if key in desired.sysctls:
        return desired.sysctls[key]
    value = desired.sysctl_values.get(key) or current.sysctl_before.get(key)
    if value is None:
        raise HostConfigError(f"sysctl {key}: the value it had before flatfab is not known")
    return value


def transition(current: HostConfig, desired: HostConfig) -> list[str]:
    """iproute2 and sysctl(8) commands from current to desired."""
    missing = [n for n in desired.nics if n not in current.nics]
    if missing:
        raise HostConfigError(f"no such NIC on the host: {', '.join(missing)}")
    ops: list[str] = []
    # rules go first and come last: a rule never chooses a table that is being changed
    wanted_rules = set(desired.rules)
    ops += [_rule_op("del", rule) for rule in current.rules if rule not in wanted_rules]
    wanted_routes = set(desired.routes)
    for route in current.routes:
        if route not in wanted_routes:
            ops.append(_route_op("del", route))
    # the kernel flushes a NIC's routes (in every table) when it goes down, so routes through
    # a NIC whose admin state changes are (re)installed at the end
    disturbed: set[str] = set()
    renewed: set[str] = set()  # addresses deleted with their subnet's primary and added again
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
        dev = shlex.quote(name)
        adds = [a for a in want.addresses if a not in cur.addresses]
        dels = [a for a in cur.addresses if a not in want.addresses]
        # Deleting a subnet's primary address deletes its secondaries too (the kernel's
        # default, promote_secondaries=0: Documentation/networking/ip-sysctl.rst), whatever
        # order `ip addr` lists them in. In a subnet where an address goes and another stays
        # or comes, each one that goes is deleted only if it is still there, then every one
        # that stays or comes is (re)added, and the NIC's routes are reinstalled at the end.
        shared = {_subnet(a) for a in dels
                  if any(_subnet(b) == _subnet(a) for b in (*cur.addresses, *want.addresses)
                         if b != a)}
        if shared:
            ops += [f"if ip -o -4 addr show dev {dev} | grep -qF ' inet {a} '; then "
                    f"ip addr del {a} dev {dev}; fi" for a in dels if _subnet(a) in shared]
            again = [a for a in want.addresses if _subnet(a) in shared]
            ops += [f"ip addr replace {a} dev {dev}" for a in again]
            disturbed.add(name)
            renewed.update(a.split("/")[0] for a in again)
        # elsewhere new addresses come before old ones go: a renumbered NIC never has none,
        # so the kernel keeps the routes through it
        ops += [f"ip addr add {a} dev {dev}" for a in adds if _subnet(a) not in shared]
        ops += [f"ip addr del {a} dev {dev}" for a in dels if _subnet(a) not in shared]
        if going_down:
            ops += link_op
    for key in sorted({*current.sysctls, *desired.sysctls}):
        value = sysctl_target(current, desired, key)
        if current.sysctl_values.get(key, current.sysctls.get(key)) != value:
            ops.append(sysctl_op(key, value))
    current_routes = set(current.routes)
    for route in desired.routes:
        # the kernel also deletes the routes whose source address went (even for a moment)
        if route not in current_routes or route.nic in disturbed or route.source in renewed:
            ops.append(_route_op("replace", route))
    current_rules = set(current.rules)
    ops += [_rule_op("add", rule) for rule in desired.rules if rule not in current_rules]
    return ops
