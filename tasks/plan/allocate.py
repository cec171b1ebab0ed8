"""Address and ASN allocation keyed by stable ids: adding a device never renumbers another."""

from __future__ import annotations

import ipaddress
from functools import lru_cache


@lru_cache(maxsize=64)
def _net(prefix: str) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network(prefix)


def p2p_pair(pool: str, max_spines: int, leaf_id: int, spine_id: int) -> tuple[str, str]:
    """(spine side, leaf side) /31 addresses; leaf-major so a pool fills as leaves are added."""
    slot = (leaf_id - 1) * max_spines + (spine_id - 1)
    base = _net(pool)[2 * slot]
    return f"{base}/31", f"{base + 1}/31"


def leaf_subnet(prefixes: tuple[str, ...], length: int, leaf_id: int) -> ipaddress.IPv4Network:
    """The leaf's host subnet: subnet number `leaf_id` across the prefixes, in order."""
    index = leaf_id
    for prefix in prefixes:
        net = _net(prefix)
        count = 2 ** (length - net.prefixlen)
        if index < count:
            return ipaddress.IPv4Network((int(net.network_address) + index * 2 ** (32 - length),
                                          length))
        index -= count
    raise ValueError(f"leaf id {leaf_id} is beyond the subnets of {', '.join(prefixes)}")


def gateway(subnet: ipaddress.IPv4Network) -> str:
    return f"{subnet[1]}/{subnet.prefixlen}"


def host_address(subnet: ipaddress.IPv4Network, port: int) -> str:
    return f"{subnet[10 + port]}/{subnet.prefixlen}"
