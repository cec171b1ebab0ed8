"""Resilient ECMP hashing on SR Linux (fabric.yaml `load_balancing.mode: resilient`):
`/network-instance[name]/ip-load-balancing/resilient-hash-prefix[ip-prefix]`, rendered in
every routed network-instance and read back from the running configuration.

Sources: Nokia's SR Linux YANG models v25.3.1 (`srl_nokia-network-instance.yang`, container
`ip-load-balancing`, list `resilient-hash-prefix`) and Nokia's SR Linux Routing Protocols
Guide 25.10, "IP ECMP Load Balancing". What they state:

- an entry's `ip-prefix` (IPv4 or IPv6) gives resilient-hash programming to the active FIB
  routes that match it exactly *or are longer matches of it*: `0.0.0.0/0` and `::/0` cover
  every IPv4 and IPv6 route of the network-instance, whichever protocol installed it (the
  guide: static, IS-IS, OSPF and BGP routes are programmed with their ECMP next hops);
- entries exist only in network-instances of type `default` or `ip-vrf` (a `must` of the
  model): flatfab's underlay (`default`) and its tenants (`ip-vrf`, render.py) both qualify;
- `max-paths` 1..64, default 1: a matching route with more ECMP next hops than that uses only
  the first max-paths of them; `hash-buckets-per-path` 1..32, default 1: how many times each
  next hop is repeated in the fill pattern (more buckets: finer moves, more resources); the
  product of the two has a platform-specific limit the public documents do not give;
- the container exists only with the features `trident3`, `trident4`, `ixr-dnx` or `fpcx`:
  7220 IXR-D1..D5, 7250 IXR, 7730 SXR. The 7220 IXR-H2..H5 (Tomahawk 3/4/5) have none:
  platform.yaml refuses `lb_resilient` at load on those families.

What flatfab renders, per routed network-instance: one entry each for `0.0.0.0/0` and `::/0`
with `max-paths` the instance's BGP multipath (`maximum-paths`, which the load keeps at or
above the switch's equal-cost uplinks), at most 64; and as many buckets per path as keep the
fill pattern (max-paths x buckets) at 64 entries or fewer. 64 is the pattern the model's
widest `max-paths` makes with its default single bucket, so a platform that takes max-paths
64 holds it; with fewer next hops than max-paths the pattern is shared among those there are,
so a failed path's buckets go to the survivors in pieces of 1/64 of the traffic.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from flatfab.model.state import BgpInstance, LbMode, LoadBalancing

Json = dict[str, Any]

CONTAINER = "ip-load-balancing"
LIST = "resilient-hash-prefix"
BUCKETS = "hash-buckets-per-path"
PATHS = "max-paths"
EVERY_ROUTE = ("0.0.0.0/0", "::/0")  # every IPv4 and every IPv6 route (longer matches)
PATHS_RANGE = (1, 64)  # uint8, srl_nokia-network-instance.yang
BUCKETS_RANGE = (1, 32)
DEFAULT = 1  # both leaves' YANG default
PATTERN = 64  # fill-pattern entries flatfab renders at most (max-paths x buckets)
ROUTED = ("default", "ip-vrf")  # the instance types that take the list


class ResilientError(ValueError):
    """An ECMP width SR Linux's resilient hashing cannot cover, or a value read that is not
    one the model allows."""


def max_paths(bgp: BgpInstance | None) -> int:
    """The `max-paths` of an instance: its BGP multipath, at most 64. BGP that may install
    more next hops than 64 (maximum_paths above 64 and more peers than 64) is refused: the
    resilient table would use only the first 64."""
    if bgp is None or bgp.maximum_paths is None:
        return PATHS_RANGE[1]  # no multipath set here: the widest pattern
    width = min(bgp.maximum_paths, len(bgp.peers))
    if width > PATHS_RANGE[1]:
        raise ResilientError(
            f"BGP {bgp.vrf} may install up to {width} equal-cost next hops (maximum_paths "
            f"{bgp.maximum_paths}, {len(bgp.peers)} peers); SR Linux's resilient hashing uses "
            f"at most {PATHS_RANGE[1]} per route (max-paths): set underlay.maximum_paths to "
            f"{PATHS_RANGE[1]} or fewer")
    return max(PATHS_RANGE[0], min(bgp.maximum_paths, PATHS_RANGE[1]))


def buckets(paths: int) -> int:
    """Buckets per path that keep the fill pattern at PATTERN entries or fewer."""
    return max(BUCKETS_RANGE[0], min(BUCKETS_RANGE[1], PATTERN // paths))


def render(bgp: BgpInstance | None) -> Json:
    """The `ip-load-balancing` container of a routed network-instance whose BGP is `bgp`
    (None: it runs none; its routes are still hashed resiliently)."""
    paths = max_paths(bgp)
    return {LIST: [{"ip-prefix": prefix, BUCKETS: buckets(paths), PATHS: paths}
                   for prefix in EVERY_ROUTE]}


def _count(entry: Json, leaf: str, bounds: tuple[int, int]) -> int:
    value = entry.get(leaf, DEFAULT)
    if isinstance(value, str) and value.isdigit():  # a number printed as a string
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) \
            and bounds[0] <= value <= bounds[1]:
        return value
    raise ResilientError(f"{LIST} {entry.get('ip-prefix')!r}: {leaf} reads {value!r}, not "
                         f"{bounds[0]}..{bounds[1]}")


def _prefix(entry: Json) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(str(entry.get("ip-prefix")), strict=False)
    except ValueError:
        raise ResilientError(f"{LIST} key {entry.get('ip-prefix')!r} is not an IP prefix"
                             ) from None


def read(instances: Iterable[Json], lb: LoadBalancing, bgp_paths: dict[str, int | None]
         ) -> tuple[LoadBalancing | None, dict[str, str]]:
    """The way the switch balances, from its routed network-instances as the running
    configuration states them (module prefixes off; mgmt and mac-vrfs left out by the
    caller), on top of its hashing `lb`; and what flatfab does not map, by name with why.

    resilient: every routed instance has entries for 0.0.0.0/0 and ::/0 (every route);
    hash: none has any entry. Anything between (some instances, some prefixes, one family
    only) is no way flatfab models: named in the notes, and the mode is not read (None).
    `bgp_paths`: instance name -> the BGP multipath it states (None: none read)."""
    notes: dict[str, str] = {}
    whole: list[str] = []
    partial: dict[str, list[str]] = {}
    bare: list[str] = []
    for ni in instances:
        name = str(ni.get("name"))
        container = ni.get(CONTAINER)
        listed = container.get(LIST) if isinstance(container, dict) else None
        entries = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
        if not entries:
            bare.append(name)
            continue
        families: set[int] = set()
        longer: list[str] = []
        found: dict[str, str] = {}
        for entry in entries:
            prefix = _prefix(entry)
            paths = _count(entry, PATHS, PATHS_RANGE)
            _count(entry, BUCKETS, BUCKETS_RANGE)
            if prefix.prefixlen:
                longer.append(str(prefix))
                continue
            families.add(prefix.version)
            stated = bgp_paths.get(name)
            if stated and paths < min(stated, PATHS_RANGE[1]):
                found[f"network-instance {name} {LIST} {prefix} {PATHS} {paths}"] = (
                    f"a route with more than {paths} equal-cost next hops uses only the first "
                    f"{paths} (BGP installs up to {stated} here): its other paths stay idle")
        if families != {4, 6}:
            partial[name] = sorted(str(_prefix(e)) for e in entries)
            continue
        whole.append(name)
        notes.update(found)
        for inner in longer:
            notes[f"network-instance {name} {LIST} {inner}"] = (
                f"an entry within {' or '.join(EVERY_ROUTE)}, which already make its routes "
                "resilient: flatfab renders only those two and does not read this one's "
                "settings")
    if not whole and not partial:
        return lb, notes  # no entry anywhere: plain hashing, which `lb` already says
    if not partial and not bare:
        return lb.model_copy(update={"mode": LbMode.RESILIENT}), notes
    # not one way for the whole switch: name each instance that is not resilient throughout
    for name, prefixes in sorted(partial.items()):
        notes[f"network-instance {name} {LIST}"] = (
            f"resilient hashing for {', '.join(prefixes)} only, not every IPv4 and IPv6 "
            f"route ({' and '.join(EVERY_ROUTE)}): flatfab's load_balancing.mode is one way "
            "for every route of the switch; the mode is not read")
    if whole:
        for name in sorted(bare):
            notes[f"network-instance {name} {CONTAINER}"] = (
                f"no resilient hashing here, while {', '.join(sorted(whole))} hash every "
                "route resiliently: flatfab's load_balancing.mode is one way for every "
                "network-instance of the switch; the mode is not read")
    return None, notes


def refuse_other_modes(lb: LoadBalancing) -> None:
    """flowlet, adaptive and spray are refused at load (platform.yaml); a plan made otherwise
    still never renders them as hashing."""
    if lb.mode not in (LbMode.HASH, LbMode.RESILIENT):
        raise ResilientError(f"load balancing mode {lb.mode.value}: SR Linux has none "
                             "(flatfab renders hash and resilient only)")
