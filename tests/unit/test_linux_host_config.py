"""The linux_host config: text format, reading `ip -j`, and iproute2 transitions."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from tasks.platforms.linux_host.config import (
    HostConfig,
    HostConfigError,
    HostRoute,
    Nic,
    format_config,
    from_ip_json,
    parse_config,
    transition,
)

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "recorded" / "leaf1-h1"
HOST = """nic eth1 mtu 9000 up
address eth1 10.100.1.11/24
route 0.0.0.0/0 via 10.100.1.1 dev eth1
"""


def simulate(config: HostConfig, ops: list[str]) -> HostConfig:
    """Apply generated ip commands to a HostConfig, failing on an invalid one."""
    nics = dict(config.nics)
    routes = list(config.routes)
    for op in ops:
        words = shlex.split(op)
        assert words[0] == "ip", op
        if words[1] == "link":
            name, args = words[3], words[4:]
            nic = nics[name]
            while args:
                key = args.pop(0)
                nic = (replace(nic, mtu=int(args.pop(0))) if key == "mtu"
                       else replace(nic, up=key == "up"))
            nics[name] = nic
        elif words[1] == "addr":
            verb, address, name = words[2], words[3], words[5]
            addresses = list(nics[name].addresses)
            if verb == "add":
                assert address not in addresses, op
                addresses.append(address)
            else:
                addresses.remove(address)
            nics[name] = replace(nics[name], addresses=tuple(addresses))
        else:
            verb, prefix, via, dev = words[2], words[3], words[5], words[7]
            route = HostRoute(prefix=prefix, via=via, nic=dev)
            if verb == "del":
                routes.remove(route)
            else:
                # a gateway must be on a connected subnet of an up NIC
                assert nics[dev].up and nics[dev].addresses, op
                routes = [r for r in routes if r.prefix != prefix] + [route]
    return HostConfig(nics=nics, routes=tuple(routes))


def test_round_trip_and_order() -> None:
    config = parse_config(HOST + "nic eth2 mtu 4200 up\n")
    assert format_config(config) == HOST.replace("route", "nic eth2 mtu 4200 up\nroute", 1)
    assert parse_config(format_config(config)) == config


@pytest.mark.parametrize(("text", "reason"), [
    ("nic eth1 mtu 9000 sideways\n", "line 1: cannot parse"),
    ("nic eth1 mtu 9000 up\nnic eth1 mtu 9000 up\n", "line 2: nic eth1 is given twice"),
    ("address eth1 10.0.0.1/24\n", "address on eth1, which has no `nic` line"),
    ("nic eth1 mtu 9000 up\naddress eth1 10.0.0.300/24\n", "bad address"),
    ("nic eth1 mtu 9000 up\nroute 10.0.0.0/8 via 10.0.0.1 dev eth2\n", "route via eth2"),
])
def test_bad_lines_name_the_problem(text: str, reason: str) -> None:
    with pytest.raises(HostConfigError, match=reason):
        parse_config(text)


def test_running_state_from_recorded_ip_json_ignores_management() -> None:
    running = from_ip_json(*(RECORDED.joinpath(f"{n}.json").read_text()
                             for n in ("link", "addr", "route")), ignore={"eth0"})
    assert format_config(running) == HOST


def test_configure_change_and_remove() -> None:
    fresh = HostConfig(nics={"eth1": Nic(name="eth1")})
    desired = parse_config(HOST)
    ops = transition(fresh, desired)
    assert simulate(fresh, ops) == desired
    assert transition(desired, desired) == []
    moved = parse_config(HOST.replace("10.100.1", "10.200.1").replace("9000", "4200"))
    ops = transition(desired, moved)
    assert "ip addr del 10.100.1.11/24 dev eth1" in ops
    assert "ip route del 0.0.0.0/0 via 10.100.1.1 dev eth1" in ops
    assert simulate(desired, ops) == moved
    back = simulate(desired, transition(desired, HostConfig()))
    assert format_config(back) == ""


def test_an_unknown_nic_is_refused() -> None:
    with pytest.raises(HostConfigError, match="no such NIC on the host: ens9"):
        transition(HostConfig(), parse_config("nic ens9 mtu 9000 up\n"))
