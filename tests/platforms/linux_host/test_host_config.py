"""GPU host config text and its transitions (flatfab.platforms.linux_host.config), no device.

Running state comes from `ip -j -d link`, `ip -j addr` and `ip -j route` recorded on host
leaf1-h1 of the embedded lab: data NIC eth1 at MTU 9000 with a default route via its leaf,
management NIC eth0 (tests/fixtures/linux_host/leaf1-h1, verbatim lab output).
transition() is checked against exact commands and by replaying them on a model of the
kernel (`KernelHost`).
"""

from __future__ import annotations

import ipaddress
import random
import re
import shlex
from dataclasses import dataclass, field
from ipaddress import IPv4Interface

import pytest

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, IfKind
from flatfab.plan.planner import plan
from flatfab.platforms.linux_host.config import (
    HostConfig,
    HostConfigError,
    HostRoute,
    HostRule,
    Nic,
    format_config,
    format_managed,
    from_ip_json,
    parse_config,
    parse_managed,
    sysctl_op,
    sysctls_after,
    sysctls_from_proc,
    transition,
)
from flatfab.platforms.linux_host.render import render
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import FIXTURES, ROOT

HOST = FIXTURES / "linux_host" / "leaf1-h1"
MGMT = {"eth0"}

LEAF1_H1 = """\
nic eth1 mtu 9000 up
address eth1 10.100.1.11/24
route 0.0.0.0/0 via 10.100.1.1 dev eth1
"""


def recorded_host(extra_nics: tuple[str, ...] = ()) -> HostConfig:
    """leaf1-h1 as recorded, plus factory-state NICs for tests that need more than one."""
    state = from_ip_json(*(HOST.joinpath(f"ip_{what}.json").read_text(encoding="utf-8")
                           for what in ("link", "addr", "route")), MGMT)
    return HostConfig(nics={**state.nics, **{n: Nic(name=n) for n in extra_nics}},
                      routes=state.routes)


def factory(*names: str) -> HostConfig:
    return HostConfig(nics={name: Nic(name=name) for name in names})


Normal = tuple[dict[str, tuple[int, bool, frozenset[str]]], frozenset[HostRoute]]


def normal(config: HostConfig) -> Normal:
    """What a config means: order of addresses and routes, and factory NICs, do not count."""
    nics = {name: (nic.mtu, nic.up, frozenset(nic.addresses))
            for name, nic in config.nics.items() if not nic.unconfigured}
    return nics, frozenset(config.routes)


# ---- a model of what the kernel does with the commands transition emits -------------------


class KernelError(AssertionError):
    """A command the real `ip` would reject in this state."""


@dataclass
class KernelNic:
    mtu: int
    up: bool
    addresses: list[str] = field(default_factory=list)


GUARDED_DEL = re.compile(r"if ip -o -4 addr show dev (?P<dev>\S+) \| grep -qF ' inet "
                         r"(?P<shown>\S+) '; then ip addr del (?P<address>\S+) dev "
                         r"(?P<again>\S+); fi")


class KernelHost:
    """NICs and main-table routes of a host, changed by `ip link|addr|route` commands.

    Kernel rules that make the order matter (checked with iproute2 on Linux 6.x):
    a gateway route needs its NIC up and the gateway in a connected subnet of that NIC;
    taking a NIC down, or deleting its last IPv4 address, flushes every route through it;
    deleting a subnet's primary address (its first) deletes the subnet's other addresses;
    `route replace` replaces the route to the same prefix; deleting a missing route or
    address, or adding an existing address, fails.
    """

    def __init__(self, config: HostConfig) -> None:
        self.nics = {n: KernelNic(nic.mtu, nic.up, list(nic.addresses))
                     for n, nic in config.nics.items()}
        self.routes = {route.prefix: route for route in config.routes}

    def config(self) -> HostConfig:
        return HostConfig(nics={n: Nic(name=n, mtu=k.mtu, up=k.up, addresses=tuple(k.addresses))
                                for n, k in self.nics.items()},
                          routes=tuple(self.routes.values()))

    def _flush(self, nic: str) -> None:
        self.routes = {p: r for p, r in self.routes.items() if r.nic != nic}

    def _nic(self, name: str) -> KernelNic:
        if name not in self.nics:
            raise KernelError(f'Cannot find device "{name}"')
        return self.nics[name]

    def apply(self, command: str) -> None:
        if guarded := GUARDED_DEL.fullmatch(command):  # delete if (still) there
            name, address = guarded["dev"], guarded["address"]
            if name != guarded["again"] or address != guarded["shown"]:
                raise KernelError(f"a guard that tests another address: {command}")
            if address in self._nic(name).addresses:
                self._addr_del(self._nic(name), name, address)
            return
        words = shlex.split(command)
        match words:
            case ["ip", "link", "set", name, *args]:
                self._link_set(self._nic(name), name, args)
            case ["ip", "addr", "add", address, "dev", name]:
                nic = self._nic(name)
                if address in nic.addresses:
                    raise KernelError(f"{name}: address {address} already assigned")
                nic.addresses.append(address)
            case ["ip", "addr", "replace", address, "dev", name]:
                nic = self._nic(name)
                if address not in nic.addresses:
                    nic.addresses.append(address)
            case ["ip", "addr", "del", address, "dev", name]:
                self._addr_del(self._nic(name), name, address)

            case ["ip", "route", "del", prefix, "via", via, "dev", name]:
                if self.routes.get(prefix) != HostRoute(prefix=prefix, via=via, nic=name):
                    raise KernelError(f"no route {prefix} via {via} dev {name}")
                del self.routes[prefix]
            case ["ip", "route", "replace", prefix, "via", via, "dev", name]:
                nic = self._nic(name)
                gateway = ipaddress.IPv4Address(via)
                if not nic.up or not any(gateway in ipaddress.IPv4Interface(a).network
                                         for a in nic.addresses):
                    raise KernelError(f"{command}: Nexthop has invalid gateway")
                self.routes[prefix] = HostRoute(prefix=prefix, via=via, nic=name)
            case _:
                raise KernelError(f"unexpected command: {command}")

    def _addr_del(self, nic: KernelNic, name: str, address: str) -> None:
        """Deleting a subnet's primary (its first address) deletes its secondaries too
        (promote_secondaries=0, the kernel's default)."""
        if address not in nic.addresses:
            raise KernelError(f"{name}: no address {address}")
        subnet = ipaddress.IPv4Interface(address).network
        same = [a for a in nic.addresses if ipaddress.IPv4Interface(a).network == subnet]
        gone = same if same[0] == address else [address]
        nic.addresses = [a for a in nic.addresses if a not in gone]
        if not nic.addresses:
            self._flush(name)

    def _link_set(self, nic: KernelNic, name: str, args: list[str]) -> None:
        while args:
            word, args = args[0], args[1:]
            if word == "mtu":
                nic.mtu, args = int(args[0]), args[1:]
            elif word in {"up", "down"}:
                nic.up = word == "up"
                if not nic.up:
                    self._flush(name)
            else:
                raise KernelError(f"unexpected argument {word!r}")


def replay(current: HostConfig, ops: list[str]) -> HostConfig:
    kernel = KernelHost(current)
    for op in ops:
        kernel.apply(op)
    return kernel.config()


def assert_reaches(current: HostConfig, desired: HostConfig) -> list[str]:
    ops = transition(current, desired)
    reached = replay(current, ops)
    assert normal(reached) == normal(desired), f"{current=}\n{desired=}\n{ops=}"
    return ops


# ---- parse / format -----------------------------------------------------------------------

TWO_NICS = """\
nic eth1 mtu 9000 up
address eth1 10.100.1.11/24
address eth1 10.100.9.11/24
nic eth2 mtu 9000 up
address eth2 10.100.2.11/24
route 0.0.0.0/0 via 10.100.1.1 dev eth1
route 10.200.0.0/16 via 10.100.2.1 dev eth2
"""


@pytest.mark.parametrize("text", [LEAF1_H1, TWO_NICS, ""])
def test_canonical_text_round_trips(text: str) -> None:
    assert format_config(parse_config(text)) == text


def test_parse_reads_nics_addresses_and_routes() -> None:
    config = parse_config(LEAF1_H1)
    assert config == HostConfig(
        nics={"eth1": Nic(name="eth1", mtu=9000, up=True, addresses=("10.100.1.11/24",))},
        routes=(HostRoute(prefix="0.0.0.0/0", via="10.100.1.1", nic="eth1"),))


def test_format_is_canonical_whatever_the_input_order() -> None:
    shuffled = ("# routes first\n"
                "route 10.200.0.0/16 via 10.100.2.1 dev eth2\n"
                "route 0.0.0.0/0 via 10.100.1.1 dev eth1\n"
                "address eth1 10.100.9.11/24\n"
                "nic eth2 mtu 9000 up\n"
                "\n"
                "address eth2 10.100.2.11/24\n"
                "address eth1 10.100.1.11/24\n"
                "nic eth1 mtu 9000 up\n")
    assert format_config(parse_config(shuffled)) == TWO_NICS


def test_unconfigured_nic_has_no_line() -> None:
    config = parse_config("nic eth2 mtu 1500 down\n" + LEAF1_H1)
    assert config.nics["eth2"].unconfigured
    assert format_config(config) == LEAF1_H1


@pytest.mark.parametrize(("nic", "line"), [
    (Nic(name="eth2", up=True), "nic eth2 mtu 1500 up"),
    (Nic(name="eth2", mtu=9000), "nic eth2 mtu 9000 down"),
    (Nic(name="eth2", addresses=("10.1.1.1/24",)), "nic eth2 mtu 1500 down"),
])
def test_any_difference_from_the_factory_state_gets_a_line(nic: Nic, line: str) -> None:
    assert format_config(HostConfig(nics={nic.name: nic})).splitlines()[0] == line


@pytest.mark.parametrize(("text", "message"), [
    ("nic eth1 mtu 9000\n", r"^line 1: cannot parse 'nic eth1 mtu 9000'$"),
    ("nic eth1 mtu 9000 up\n\nnic eth1 mtu 1500 down\n", r"^line 3: nic eth1 is given twice$"),
    ("nic eth1 mtu 9000 up\naddress eth1 10.100.1.300/24\n",
     r"^line 2: bad address '10.100.1.300/24'$"),
    ("nic eth1 mtu 9000 up\naddress eth1 10.100.1.11\n", r"^line 2: cannot parse"),
    ("nic eth1 mtu 9000 up\nroute default via 10.100.1.1 dev eth1\n", r"^line 2: cannot parse"),
    ("nic eth1 mtu 9000 up\naddress eth2 10.100.2.11/24\n",
     r"^address on eth2, which has no `nic` line$"),
    ("nic eth1 mtu 9000 up\nroute 0.0.0.0/0 via 10.100.1.1 dev eth2\n",
     r"^route via eth2, which has no `nic` line$"),
])
def test_errors(text: str, message: str) -> None:
    with pytest.raises(HostConfigError, match=message):
        parse_config(text)


def test_route_prefix_with_host_bits_is_a_config_error_naming_the_line() -> None:
    # Regression: the route prefix goes through IPv4Network() unguarded, so a plain ValueError
    # without a line number escapes (and the driver does not turn it into a NAPALM error).
    text = "nic eth1 mtu 9000 up\naddress eth1 10.100.1.11/24\nroute 10.200.0.1/16 via " \
           "10.100.1.1 dev eth1\n"
    with pytest.raises(HostConfigError, match=r"^line 3: "):
        parse_config(text)


# ---- from_ip_json -------------------------------------------------------------------------


def test_from_ip_json_reads_recorded_host_without_management_nic() -> None:
    assert recorded_host() == HostConfig(
        nics={"eth1": Nic(name="eth1", mtu=9000, up=True, addresses=("10.100.1.11/24",))},
        routes=(HostRoute(prefix="0.0.0.0/0", via="10.100.1.1", nic="eth1"),))
    assert format_config(recorded_host()) == LEAF1_H1


def test_from_ip_json_keeps_gateway_routes_of_data_nics_only() -> None:
    links = ('[{"ifname":"lo","flags":["LOOPBACK","UP"],"mtu":65536},'
             '{"ifname":"eth0","flags":["UP"],"mtu":1500},'
             '{"ifname":"eth1","flags":["UP","LOWER_UP"],"mtu":9000}]')
    addrs = ('[{"ifname":"eth1","addr_info":['
             '{"family":"inet","local":"10.100.1.11","prefixlen":24,"scope":"global"},'
             '{"family":"inet6","local":"fe80::1","prefixlen":64,"scope":"link"}]}]')
    routes = ('[{"dst":"default","gateway":"172.31.255.1","dev":"eth0","flags":[]},'
              '{"dst":"10.9.9.9","gateway":"10.100.1.1","dev":"eth1","flags":[]},'
              '{"dst":"10.100.1.0/24","dev":"eth1","protocol":"kernel","scope":"link",'
              '"prefsrc":"10.100.1.11","flags":[]},'
              '{"dst":"10.50.0.0/16","flags":[],"nexthops":[{"gateway":"10.100.1.1",'
              '"dev":"eth1","weight":1,"flags":[]}]}]')
    config = from_ip_json(links, addrs, routes, MGMT)
    assert config.nics == {"eth1": Nic(name="eth1", mtu=9000, up=True,
                                       addresses=("10.100.1.11/24",))}
    assert config.routes == (HostRoute(prefix="10.9.9.9/32", via="10.100.1.1", nic="eth1"),)


def test_from_ip_json_rejects_output_that_is_not_json() -> None:
    with pytest.raises(HostConfigError, match="not JSON"):
        from_ip_json("[]", "Device does not exist", "[]", MGMT)


# ---- transition: exact commands -----------------------------------------------------------


def test_first_configuration() -> None:
    ops = assert_reaches(factory("eth1"), parse_config(LEAF1_H1))
    assert ops == ["ip link set eth1 mtu 9000 up",
                   "ip addr add 10.100.1.11/24 dev eth1",
                   "ip route replace 0.0.0.0/0 via 10.100.1.1 dev eth1"]  # after its address


def test_add_address() -> None:
    desired = parse_config(LEAF1_H1 + "address eth1 10.100.9.11/24\n")
    assert assert_reaches(recorded_host(), desired) == ["ip addr add 10.100.9.11/24 dev eth1"]


def test_remove_one_of_two_addresses() -> None:
    current = parse_config(LEAF1_H1 + "address eth1 10.100.9.11/24\n")
    assert assert_reaches(current, parse_config(LEAF1_H1)) == [
        "ip addr del 10.100.9.11/24 dev eth1"]


def test_mtu_change() -> None:
    desired = parse_config(LEAF1_H1.replace("mtu 9000", "mtu 4200"))
    assert assert_reaches(recorded_host(), desired) == ["ip link set eth1 mtu 4200"]


def test_add_route() -> None:
    desired = parse_config(LEAF1_H1 + "route 10.200.0.0/16 via 10.100.1.1 dev eth1\n")
    assert assert_reaches(recorded_host(), desired) == [
        "ip route replace 10.200.0.0/16 via 10.100.1.1 dev eth1"]


def test_remove_route() -> None:
    desired = parse_config("nic eth1 mtu 9000 up\naddress eth1 10.100.1.11/24\n")
    assert assert_reaches(recorded_host(), desired) == [
        "ip route del 0.0.0.0/0 via 10.100.1.1 dev eth1"]


def test_change_route_gateway() -> None:
    desired = parse_config(LEAF1_H1.replace("via 10.100.1.1", "via 10.100.1.2"))
    assert assert_reaches(recorded_host(), desired) == [
        "ip route del 0.0.0.0/0 via 10.100.1.1 dev eth1",
        "ip route replace 0.0.0.0/0 via 10.100.1.2 dev eth1"]


def test_nic_dropped_from_the_config_returns_to_the_factory_state() -> None:
    assert assert_reaches(recorded_host(), parse_config("")) == [
        "ip route del 0.0.0.0/0 via 10.100.1.1 dev eth1",  # before its address goes
        "ip addr del 10.100.1.11/24 dev eth1",
        "ip link set eth1 mtu 1500 down"]


def test_second_nic_configured_beside_the_first() -> None:
    desired = parse_config(LEAF1_H1 + "nic eth2 mtu 9000 up\naddress eth2 10.100.2.11/24\n")
    assert assert_reaches(recorded_host(extra_nics=("eth2",)), desired) == [
        "ip link set eth2 mtu 9000 up", "ip addr add 10.100.2.11/24 dev eth2"]


def test_same_state_needs_no_commands() -> None:
    assert transition(recorded_host(), parse_config(LEAF1_H1)) == []


def test_unknown_nic_is_an_error() -> None:
    desired = parse_config(LEAF1_H1 + "nic eth7 mtu 9000 up\nnic eth5 mtu 9000 up\n")
    with pytest.raises(HostConfigError, match=r"^no such NIC on the host: eth7, eth5$"):
        transition(recorded_host(), desired)


def test_management_nic_is_never_touched() -> None:
    # eth0 is not in the running state at all, so even an empty config leaves it alone
    assert all("eth0" not in op for op in transition(recorded_host(), parse_config("")))


@pytest.mark.parametrize("text", [
    "",
    LEAF1_H1 + "address eth1 10.100.9.11/24\nroute 10.9.0.0/16 via 10.100.9.1 dev eth1\n",
    LEAF1_H1.replace("mtu 9000 up", "mtu 9000 down").replace("route 0.0.0.0/0 via 10.100.1.1 "
                                                             "dev eth1\n", ""),
    "nic eth1 mtu 9000 up\naddress eth1 10.100.1.11/24\naddress eth1 10.100.9.11/24\n"
    "nic eth2 mtu 9000 up\naddress eth2 10.100.2.11/24\n"
    "route 0.0.0.0/0 via 10.100.2.1 dev eth2\n",
])
def test_transition_and_its_rollback_reach_their_targets(text: str) -> None:
    current, desired = recorded_host(extra_nics=("eth2",)), parse_config(text)
    assert_reaches(current, desired)
    # once applied, the host has every NIC: the ones the config leaves out in factory state
    applied = HostConfig(nics={**factory(*current.nics).nics, **desired.nics},
                         routes=desired.routes)
    assert_reaches(applied, current)


def test_transition_renumbering_a_nic_keeps_its_route() -> None:
    # Regression: the old address is deleted before the new one is added, so for a moment eth1 has
    # no IPv4 address and the kernel flushes every route through it; the default route is
    # unchanged in the config, so transition never adds it back.
    desired = parse_config(LEAF1_H1.replace("10.100.1.11/24", "10.100.1.12/24"))
    assert_reaches(recorded_host(), desired)


# ---- transition on generated states -------------------------------------------------------

POOL = {"eth1": ("10.100.1.11/24", "10.100.1.12/24", "10.101.1.11/24"),
        "eth2": ("10.100.2.11/24", "10.100.2.12/24")}
PREFIXES = ("0.0.0.0/0", "10.200.0.0/16", "10.9.9.9/32")


def random_host(rng: random.Random) -> HostConfig:
    """A state the kernel can hold: routes only via up NICs to gateways on their subnets."""
    nics = {name: Nic(name=name, mtu=rng.choice([1500, 9000]), up=rng.choice([True, False]),
                      addresses=tuple(a for a in pool if rng.choice([True, False])))
            for name, pool in POOL.items()}
    gateways = [(n, str(ipaddress.IPv4Interface(a).network[1]))
                for n, nic in nics.items() if nic.up for a in nic.addresses]
    routes = tuple(HostRoute(prefix=prefix, via=via, nic=nic)
                   for prefix in PREFIXES if gateways and rng.choice([True, False])
                   for nic, via in [rng.choice(gateways)])
    return HostConfig(nics=nics, routes=routes)


@pytest.mark.parametrize("seed", range(10))
def test_transition_reaches_random_desired_states(seed: int) -> None:
    rng = random.Random(seed)  # seeded: a failure is reproducible
    checked = 0
    while checked < 100:
        current, desired = random_host(rng), random_host(rng)
        assert_reaches(current, desired)
        assert normal(parse_config(format_config(desired))) == normal(desired)
        checked += 1


# ---- per-NIC routing of a multi-NIC server -------------------------------------------------

RAIL = """\
nic eth1 mtu 9000 up
address eth1 10.100.1.11/24
nic eth2 mtu 9000 up
address eth2 10.100.2.11/24
route 0.0.0.0/0 via 10.100.1.1 dev eth1
route 0.0.0.0/0 via 10.100.1.1 dev eth1 src 10.100.1.11 table 101
route 10.100.1.0/24 dev eth1 src 10.100.1.11 table 101
route 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102
route 10.100.2.0/24 dev eth2 src 10.100.2.11 table 102
rule from 10.100.1.11 table 101 priority 101
rule from 10.100.2.11 table 102 priority 102
sysctl net.ipv4.conf.eth1.arp_announce 2
sysctl net.ipv4.conf.eth1.arp_ignore 1
sysctl net.ipv4.conf.eth1.rp_filter 2
sysctl net.ipv4.conf.eth2.arp_announce 2
sysctl net.ipv4.conf.eth2.arp_ignore 1
sysctl net.ipv4.conf.eth2.rp_filter 2
"""
RAIL_SYSCTLS = {f"net.ipv4.conf.{nic}.{name}": value for nic in ("eth1", "eth2")
                for name, value in (("arp_ignore", "1"), ("arp_announce", "2"),
                                    ("rp_filter", "2"))}
FACTORY_VALUES = {f"net.ipv4.conf.{nic}.{name}": "0" for nic in ("eth1", "eth2")
                  for name in ("arp_ignore", "arp_announce", "rp_filter")}


def test_rail_text_round_trips_and_reads_its_tables_rules_and_sysctls() -> None:
    config = parse_config(RAIL)
    assert format_config(config) == RAIL
    assert HostRoute(prefix="10.100.2.0/24", via=None, nic="eth2", table=102,
                     source="10.100.2.11") in config.routes
    assert HostRoute(prefix="0.0.0.0/0", via="10.100.1.1", nic="eth1") in config.routes
    assert config.rules == (HostRule(priority=101, source="10.100.1.11", table=101),
                            HostRule(priority=102, source="10.100.2.11", table=102))
    assert config.sysctls == RAIL_SYSCTLS


def test_rail_text_is_canonical_whatever_the_input_order() -> None:
    lines = RAIL.splitlines(keepends=True)
    nic_lines = [line for line in lines if line.startswith(("nic", "address"))]
    rest = [line for line in lines if line not in nic_lines]
    random.Random(7).shuffle(rest)
    assert format_config(parse_config("".join(rest[::-1] + nic_lines))) == RAIL


def test_sysctl_values_are_written_canonically() -> None:
    text = "nic eth1 mtu 9000 up\nsysctl net.ipv4.conf.eth1.rp_filter 02\n"
    assert format_config(parse_config(text)).endswith("sysctl net.ipv4.conf.eth1.rp_filter 2\n")


def test_a_vlan_nics_sysctl_keeps_its_dotted_name() -> None:
    text = "nic eth1.100 mtu 9000 up\nsysctl net.ipv4.conf.eth1.100.arp_ignore 1\n"
    assert parse_config(text).sysctls == {"net.ipv4.conf.eth1.100.arp_ignore": "1"}
    assert format_config(parse_config(text)) == text
    # sysctl(8) takes `/` for `.`: the NIC's own dot stays a dot
    assert sysctl_op("net.ipv4.conf.eth1.100.arp_ignore", "1") == \
        "sysctl -qw net/ipv4/conf/eth1.100/arp_ignore=1"
    assert sysctl_op("net.ipv4.conf.eth2.rp_filter", "2") == \
        "sysctl -qw net.ipv4.conf.eth2.rp_filter=2"


NIC1 = "nic eth1 mtu 9000 up\naddress eth1 10.100.1.11/24\n"


@pytest.mark.parametrize(("text", "message"), [
    (NIC1 + "route 10.100.1.0/24 dev eth1\n",
     r"^line 3: a route without `via` needs a `table`: the main table's connected routes are "
     r"the kernel's$"),
    (NIC1 + "route 0.0.0.0/0 via 10.100.1.1 dev eth1 table 254\n",
     r"^line 3: table 254 is the kernel's main table; use a table of its own$"),
    (NIC1 + "route 0.0.0.0/0 via 10.100.1.1 dev eth1 table 255\n", r"^line 3: table 255 .*local"),
    (NIC1 + "route 0.0.0.0/0 via 10.100.1.1 dev eth1 table 253\n",
     r"^line 3: table 253 .*default"),
    (NIC1 + "route 0.0.0.0/0 via 10.100.1.1 dev eth1 table 0\n", r"^line 3: table 0 "),
    (NIC1 + "route 0.0.0.0/0 via 10.100.1.1 dev eth1 table 4294967296\n",
     r"^line 3: table 4294967296 is above 4294967295$"),
    (NIC1 + "route 0.0.0.0/0 via 10.100.1.1 dev eth1 src 10.100.1.300 table 101\n",
     r"^line 3: bad source '10.100.1.300'$"),
    (NIC1 + "route 0.0.0.0/0 via 10.100.1.1 dev eth1 table 101 src 10.100.1.11\n",
     r"^line 3: cannot parse"),  # the order is fixed: src before table
    (NIC1 + "route 0.0.0.0/0 via 10.100.1.1 dev eth1 table 1O1\n", r"^line 3: cannot parse"),
    (NIC1 + "rule from 10.100.1.11 table 101\n", r"^line 3: cannot parse"),
    (NIC1 + "rule from 10.100.1.0/24 table 101 priority 101\n",
     r"^line 3: bad rule source '10.100.1.0/24'$"),
    (NIC1 + "rule from 10.100.1.11 table 101 priority 0\n",
     r"^line 3: rule priority 0 is not in 1..32765 \(0, 32766 and 32767 are the kernel's "
     r"default rules\)$"),
    (NIC1 + "rule from 10.100.1.11 table 101 priority 32766\n", r"^line 3: rule priority 32766"),
    (NIC1 + "rule from 10.100.1.11 table 254 priority 101\n", r"^line 3: table 254 .*main"),
    (NIC1 + "rule from 10.100.1.11 table 101 priority 101\n\n"
            "rule from 10.100.1.11 table 101 priority 101\n",
     r"^line 5: rule from 10.100.1.11 table 101 priority 101 is given twice$"),
    (NIC1 + "sysctl net.ipv4.conf.eth1.forwarding 1\n",
     r"^line 3: sysctl net.ipv4.conf.eth1.forwarding is not one flatfab configures \(only "
     r"net.ipv4.conf.<nic>.\{arp_ignore,arp_announce,rp_filter\}\)$"),
    (NIC1 + "sysctl net.ipv4.ip_forward 1\n", r"^line 3: sysctl net.ipv4.ip_forward is not one"),
    (NIC1 + "sysctl net.ipv4.conf.all.rp_filter 2\n",
     r"^line 3: sysctl net.ipv4.conf.all.rp_filter is not a data NIC's: `all` reaches every "
     r"NIC, the management NIC too$"),
    (NIC1 + "sysctl net.ipv4.conf.default.arp_ignore 1\n", r"^line 3: .*`default` reaches"),
    (NIC1 + "sysctl net.ipv4.conf.lo.arp_ignore 1\n", r"^line 3: .*`lo` reaches"),
    (NIC1 + "sysctl net.ipv4.conf.eth1.arp_ignore 4\n",
     r"^line 3: sysctl net.ipv4.conf.eth1.arp_ignore '4' is not one of 0, 1, 2, 3, 8$"),
    (NIC1 + "sysctl net.ipv4.conf.eth1.rp_filter on\n", r"^line 3: .*'on' is not one of 0, 1, 2$"),
    (NIC1 + "sysctl net.ipv4.conf.eth1.rp_filter ²\n", r"^line 3: .*is not one of 0, 1, 2$"),
    (NIC1 + "sysctl net.ipv4.conf.eth1.rp_filter 2\nsysctl net.ipv4.conf.eth1.rp_filter 1\n",
     r"^line 4: sysctl net.ipv4.conf.eth1.rp_filter is given twice$"),
    (NIC1 + "sysctl net.ipv4.conf.eth2.rp_filter 2\n",
     r"^line 3: sysctl net.ipv4.conf.eth2.rp_filter of eth2, which has no `nic` line$"),
    (NIC1 + "route 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102\n",
     r"^route via eth2, which has no `nic` line$"),
])
def test_multi_nic_errors(text: str, message: str) -> None:
    with pytest.raises(HostConfigError, match=message):
        parse_config(text)


def rail_host(values: dict[str, str] | None = None) -> HostConfig:
    """Two data NICs in factory state, their sysctls at `values` (the kernel's 0s)."""
    return HostConfig(nics=factory("eth1", "eth2").nics,
                      sysctl_values=dict(FACTORY_VALUES if values is None else values))


def applied(current: HostConfig, text: str) -> HostConfig:
    """The desired state of a replace with `text`, as the driver builds it."""
    wanted = parse_config(text)
    values, before = sysctls_after(current, wanted.sysctls)
    kept = {name: Nic(name=name) for name in current.nics}
    return HostConfig(nics={**kept, **wanted.nics}, routes=wanted.routes, rules=wanted.rules,
                      sysctls=wanted.sysctls, sysctl_values=values, sysctl_before=before)


def test_first_configuration_of_a_rail_server() -> None:
    current = rail_host()
    desired = applied(current, RAIL)
    assert desired.sysctl_before == FACTORY_VALUES  # what each key had before flatfab
    assert transition(current, desired) == [
        "ip link set eth1 mtu 9000 up",
        "ip addr add 10.100.1.11/24 dev eth1",
        "ip link set eth2 mtu 9000 up",
        "ip addr add 10.100.2.11/24 dev eth2",
        "sysctl -qw net.ipv4.conf.eth1.arp_announce=2",
        "sysctl -qw net.ipv4.conf.eth1.arp_ignore=1",
        "sysctl -qw net.ipv4.conf.eth1.rp_filter=2",
        "sysctl -qw net.ipv4.conf.eth2.arp_announce=2",
        "sysctl -qw net.ipv4.conf.eth2.arp_ignore=1",
        "sysctl -qw net.ipv4.conf.eth2.rp_filter=2",
        "ip route replace 0.0.0.0/0 via 10.100.1.1 dev eth1",
        "ip route replace 0.0.0.0/0 via 10.100.1.1 dev eth1 src 10.100.1.11 table 101",
        "ip route replace 10.100.1.0/24 dev eth1 src 10.100.1.11 table 101",
        "ip route replace 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102",
        "ip route replace 10.100.2.0/24 dev eth2 src 10.100.2.11 table 102",
        "ip rule add from 10.100.1.11 table 101 priority 101",  # once its table is filled
        "ip rule add from 10.100.2.11 table 102 priority 102"]
    # and back (the revert script): rules first, sysctls to the values they had before
    assert transition(desired, current) == [
        "ip rule del from 10.100.1.11 table 101 priority 101",
        "ip rule del from 10.100.2.11 table 102 priority 102",
        "ip route del 0.0.0.0/0 via 10.100.1.1 dev eth1",
        "ip route del 0.0.0.0/0 via 10.100.1.1 dev eth1 src 10.100.1.11 table 101",
        "ip route del 10.100.1.0/24 dev eth1 src 10.100.1.11 table 101",
        "ip route del 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102",
        "ip route del 10.100.2.0/24 dev eth2 src 10.100.2.11 table 102",
        "ip addr del 10.100.1.11/24 dev eth1",
        "ip link set eth1 mtu 1500 down",
        "ip addr del 10.100.2.11/24 dev eth2",
        "ip link set eth2 mtu 1500 down",
        "sysctl -qw net.ipv4.conf.eth1.arp_announce=0",
        "sysctl -qw net.ipv4.conf.eth1.arp_ignore=0",
        "sysctl -qw net.ipv4.conf.eth1.rp_filter=0",
        "sysctl -qw net.ipv4.conf.eth2.arp_announce=0",
        "sysctl -qw net.ipv4.conf.eth2.arp_ignore=0",
        "sysctl -qw net.ipv4.conf.eth2.rp_filter=0"]


def running(text: str, before: dict[str, str]) -> HostConfig:
    """A configured host as the driver reads it back: `text` applied, `before` recorded."""
    config = parse_config(text)
    return HostConfig(nics=config.nics, routes=config.routes, rules=config.rules,
                      sysctls=config.sysctls,
                      sysctl_values={**FACTORY_VALUES, **config.sysctls}, sysctl_before=before)


def test_the_same_rail_config_again_needs_no_commands() -> None:
    current = running(RAIL, FACTORY_VALUES)
    assert transition(current, applied(current, RAIL)) == []


def test_a_replace_without_a_nics_routing_removes_it_and_restores_its_sysctls() -> None:
    # eth2's rp_filter was 1 before flatfab (a distribution's default): it goes back to 1
    before = {**FACTORY_VALUES, "net.ipv4.conf.eth2.rp_filter": "1"}
    current = running(RAIL, before)
    text = "".join(line for line in RAIL.splitlines(keepends=True)
                   if "eth2" not in line and "10.100.2." not in line)
    desired = applied(current, text)
    assert desired.sysctl_before == {k: v for k, v in before.items() if ".eth1." in k}
    assert transition(current, desired) == [
        "ip rule del from 10.100.2.11 table 102 priority 102",
        "ip route del 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102",
        "ip route del 10.100.2.0/24 dev eth2 src 10.100.2.11 table 102",
        "ip addr del 10.100.2.11/24 dev eth2",
        "ip link set eth2 mtu 1500 down",
        "sysctl -qw net.ipv4.conf.eth2.arp_announce=0",
        "sysctl -qw net.ipv4.conf.eth2.arp_ignore=0",
        "sysctl -qw net.ipv4.conf.eth2.rp_filter=1"]


def test_a_sysctl_changed_out_of_band_is_set_again() -> None:
    current = running(RAIL, FACTORY_VALUES)
    current = HostConfig(nics=current.nics, routes=current.routes, rules=current.rules,
                         sysctls={**current.sysctls, "net.ipv4.conf.eth2.rp_filter": "1"},
                         sysctl_before=FACTORY_VALUES)
    desired = applied(current, RAIL)
    assert desired.sysctl_before == FACTORY_VALUES  # the record is kept, not re-read
    assert transition(current, desired) == ["sysctl -qw net.ipv4.conf.eth2.rp_filter=2"]


def test_a_nic_going_down_and_up_gets_its_table_back() -> None:
    current = running(RAIL.replace("nic eth2 mtu 9000 up", "nic eth2 mtu 9000 down"),
                      FACTORY_VALUES)
    # the kernel flushed eth2's routes when it went down: the running state has none
    current = HostConfig(nics=current.nics,
                         routes=tuple(r for r in current.routes if r.nic != "eth2"),
                         rules=current.rules, sysctls=current.sysctls,
                         sysctl_values=current.sysctl_values, sysctl_before=FACTORY_VALUES)
    assert transition(current, applied(current, RAIL)) == [
        "ip link set eth2 up",
        "ip route replace 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102",
        "ip route replace 10.100.2.0/24 dev eth2 src 10.100.2.11 table 102"]


def test_a_rule_moved_to_another_table_is_deleted_then_added() -> None:
    current = running(RAIL, FACTORY_VALUES)
    ops = transition(current, applied(current, RAIL.replace(
        "rule from 10.100.2.11 table 102 priority 102",
        "rule from 10.100.2.11 table 102 priority 202")))
    assert ops == ["ip rule del from 10.100.2.11 table 102 priority 102",
                   "ip rule add from 10.100.2.11 table 102 priority 202"]


def test_a_sysctl_the_host_shows_no_value_for_cannot_be_taken_over() -> None:
    current = rail_host({k: v for k, v in FACTORY_VALUES.items() if ".eth2." not in k})
    with pytest.raises(HostConfigError, match=r"^sysctl net.ipv4.conf.eth2.arp_announce: the "
                                              r"host shows no value for it, so the value it "
                                              r"had before flatfab would be lost$"):
        sysctls_after(current, RAIL_SYSCTLS)


def test_sysctl_records_round_trip_and_bad_ones_are_refused() -> None:
    assert parse_managed(format_managed(FACTORY_VALUES)) == FACTORY_VALUES
    assert format_managed({}) == ""
    with pytest.raises(HostConfigError, match=r"^sysctl record line 2: cannot parse"):
        parse_managed("net.ipv4.conf.eth1.rp_filter 0\nnet.ipv4.conf.eth1.forwarding 1\n")


def test_sysctls_from_proc_read_data_nics_only() -> None:
    listing = ("/proc/sys/net/ipv4/conf/all/rp_filter:2\n"
               "/proc/sys/net/ipv4/conf/eth0/rp_filter:1\n"
               "/proc/sys/net/ipv4/conf/eth1/rp_filter:2\n"
               "/proc/sys/net/ipv4/conf/eth1.100/arp_ignore:1\n"
               "/proc/sys/net/ipv4/conf/eth1/forwarding:1\n"
               "/proc/sys/net/ipv4/conf/eth2/arp_ignore:\n"
               "grep: /proc/sys/net/ipv4/conf/eth3/arp_ignore: Permission denied\n")
    assert sysctls_from_proc(listing, {"eth1", "eth1.100", "eth2", "eth3"}) == {
        "net.ipv4.conf.eth1.rp_filter": "2", "net.ipv4.conf.eth1.100.arp_ignore": "1"}


def test_renumbering_within_a_subnet_survives_the_primarys_secondaries_going_with_it() -> None:
    # Regression (found applying random configs in a namespace): the new address was added
    # first, as a secondary of the old one, and deleting the old primary deleted it too
    # (promote_secondaries=0): the NIC was left without an address and its routes failed.
    desired = parse_config(LEAF1_H1.replace("10.100.1.11/24", "10.100.1.12/24"))
    assert assert_reaches(recorded_host(), desired) == [
        "if ip -o -4 addr show dev eth1 | grep -qF ' inet 10.100.1.11/24 '; then "
        "ip addr del 10.100.1.11/24 dev eth1; fi",
        "ip addr replace 10.100.1.12/24 dev eth1",
        "ip route replace 0.0.0.0/0 via 10.100.1.1 dev eth1"]


def test_deleting_two_addresses_of_a_subnet_does_not_fail_on_the_second() -> None:
    current = parse_config("nic eth2 mtu 9000 up\naddress eth2 10.100.2.11/24\n"
                           "address eth2 10.100.2.12/24\naddress eth2 10.101.2.12/24\n")
    current = HostConfig(nics={**current.nics, **recorded_host().nics})
    desired = parse_config(LEAF1_H1 + "nic eth2 mtu 9000 up\naddress eth2 10.101.2.11/24\n"
                                      "address eth2 10.101.2.12/24\n")
    ops = assert_reaches(current, desired)
    assert [op for op in ops if "eth2" in op] == [
        "if ip -o -4 addr show dev eth2 | grep -qF ' inet 10.100.2.11/24 '; then "
        "ip addr del 10.100.2.11/24 dev eth2; fi",  # takes 10.100.2.12 with it
        "if ip -o -4 addr show dev eth2 | grep -qF ' inet 10.100.2.12/24 '; then "
        "ip addr del 10.100.2.12/24 dev eth2; fi",
        "ip addr add 10.101.2.11/24 dev eth2"]


def test_a_kept_secondary_is_added_again_after_its_primary_goes() -> None:
    current = parse_config(LEAF1_H1 + "address eth1 10.100.1.12/24\n")
    desired = parse_config(LEAF1_H1.replace("address eth1 10.100.1.11/24\n",
                                            "address eth1 10.100.1.12/24\n"))
    assert assert_reaches(current, desired) == [
        "if ip -o -4 addr show dev eth1 | grep -qF ' inet 10.100.1.11/24 '; then "
        "ip addr del 10.100.1.11/24 dev eth1; fi",
        "ip addr replace 10.100.1.12/24 dev eth1",
        "ip route replace 0.0.0.0/0 via 10.100.1.1 dev eth1"]


# ---- render of the example fabrics' servers -----------------------------------------------


def _hosts(fabric: str) -> list[DeviceState]:
    state = plan(load_intent(ROOT / "intents" / fabric, known_platforms=PLATFORMS))
    return [d for d in state.devices.values() if d.platform == "linux_host"]


def test_every_rail_server_renders_a_table_rule_and_sysctls_per_nic() -> None:
    servers = _hosts("rail")
    assert {d.name for d in servers} >= {"su1-s1", "su2-s2", "store1"}
    for device in servers:
        text = render(device)
        config = parse_config(text)
        assert format_config(config) == text, device.name
        nics = sorted(n for n, i in device.interfaces.items() if i.kind is IfKind.NIC)
        assert len(nics) >= 2 and "eth0" not in nics
        for nic in nics:
            address = device.interfaces[nic].addresses[0]
            source, subnet = address.split("/")[0], str(IPv4Interface(address).network)
            [rule] = [r for r in config.rules if r.source == source]
            assert rule.priority == rule.table
            table = {(r.prefix, r.via is None) for r in config.routes if r.table == rule.table}
            assert table == {(subnet, True), ("0.0.0.0/0", False)}, (device.name, nic)
            assert all(r.nic == nic and r.source == source for r in config.routes
                       if r.table == rule.table)
            assert {k: v for k, v in config.sysctls.items() if f".{nic}." in k} == {
                f"net.ipv4.conf.{nic}.arp_ignore": "1",
                f"net.ipv4.conf.{nic}.arp_announce": "2",
                f"net.ipv4.conf.{nic}.rp_filter": "2"}
        # the main table: the first NIC's routes, as a one-NIC host has
        assert {r.nic for r in config.routes if r.table is None} == {nics[0]}
        assert not any(".eth0." in k or ".all." in k for k in config.sysctls)


@pytest.mark.parametrize("fabric", ["lab", "lab4x16", "mixed", "numbered"])
def test_one_nic_hosts_render_no_table_rule_or_sysctl(fabric: str) -> None:
    for device in _hosts(fabric):
        text = render(device)
        assert not any(line.startswith(("rule ", "sysctl ")) or " table " in line
                       for line in text.splitlines()), device.name


def test_rules_read_with_their_protocol_as_ip_d_prints_them() -> None:
    # `ip -j -d rule show` (iproute2 6.1, captured here) adds `protocol` to every rule
    rules = ('[{"priority":0,"src":"all","table":"local","protocol":"kernel"},'
             '{"priority":101,"src":"10.100.1.11","table":"101","protocol":"unspec"},'
             '{"priority":300,"src":"all","fwmark":"0x10","table":"300","protocol":"unspec"},'
             '{"priority":32766,"src":"all","table":"main","protocol":"kernel"},'
             '{"priority":32767,"src":"all","table":"default","protocol":"kernel"}]')
    links = '[{"ifname":"eth1","flags":["UP"],"mtu":9000}]'
    config = from_ip_json(links, "[]", "[]", MGMT, rules=rules)
    assert config.rules == (HostRule(priority=101, source="10.100.1.11", table=101),)
    assert set(config.unread) == {"rule 300 src all fwmark 0x10 table 300 protocol unspec"}
