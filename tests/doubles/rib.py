"""What every switch of a planned fabric learns by eBGP once it has converged: the routes the
doubles print (sonic, eos, junos, the simulated fleet).

Every switch originates its planned networks; a route is accepted unless its AS path holds
the receiver's own AS (eBGP loop prevention, RFC 4271 section 9.1.2, on which the ASN scheme
of RFC 7938 section 5.2 relies), and the shortest AS paths are all used (`multipath-relax`
with maximum-paths: ECMP over paths of equal length).

Computed once per class of origins, not once per origin: under RFC 7938's ASNs a path through
a leaf always repeats an AS (down into a leaf and up again meets the same spine or pod AS
twice), so leaves only receive, and what every switch beyond an origin's own neighbours
learns depends only on which switches those neighbours are, never on the origin. A 3-stage
fabric whose leaves all reach every spine is one class per VRF; a 5-stage one, one per pod.
That makes a 1,000-switch fabric's routes a few breadth-first passes instead of one per leaf.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from ipaddress import ip_address, ip_interface

from flatfab.model.state import BgpPeer, DeviceState, FabricState, Role

RECENT_RIBS = 64  # switches whose RIB FabricRib.of keeps: more than a run reads at once


@dataclass(frozen=True)
class Learned:
    """One BGP route of a converged fabric: the local ports (ECMP) and the AS path length."""

    ports: tuple[str, ...]
    length: int


def session_port(device: DeviceState, peer: BgpPeer) -> str | None:
    """The local interface a session runs over: its own (unnumbered), or the port whose
    subnet holds the peer's address (numbered)."""
    if peer.interface is not None:
        return peer.interface
    if peer.address is None:
        return None
    address = ip_address(peer.address)
    for iface in device.interfaces.values():
        if any(address in ip_interface(a).network for a in iface.addresses):
            return iface.name
    return None


def connected(device: DeviceState) -> dict[str, dict[str, str]]:
    """VRF -> prefix -> interface of the device's own subnets (loopback, gateways, links)."""
    out: dict[str, dict[str, str]] = {}
    for iface in device.interfaces.values():
        for address in iface.addresses:
            if ":" not in address:
                network = str(ip_interface(address).network)
                out.setdefault(iface.vrf, {})[network] = iface.name
    return out


def link_local(port: str) -> str:
    """A stable link-local address for the neighbour on a port (RFC 4291 section 2.5.6)."""
    digest = sum(ord(c) * (i + 1) for i, c in enumerate(port)) & 0xFFFF
    return f"fe80::5200:ff:fe{digest >> 8:02x}:{digest & 0xFF:x}"


@dataclass
class _Vrf:
    """One VRF's sessions: receiver -> sender -> the receiver's ports to it."""

    senders: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # the switches that hear a sender: sender -> receivers (the reverse of `senders`)
    receivers: dict[str, list[str]] = field(default_factory=dict)


class FabricRib:
    """The converged routes of every switch of `fabric`, computed on first use per VRF."""

    def __init__(self, fabric: FabricState) -> None:
        self.switches = {n: d for n, d in fabric.devices.items() if d.bgp}
        self._vrfs: dict[str, _Vrf] = {}
        self._classes: dict[tuple[str, frozenset[str], int | None], dict[str, Learned]] = {}
        self._interned: dict[Learned, Learned] = {}
        self._shared: set[int] | None = None
        self._origins: dict[str, list[tuple[str, list[str]]]] = {}
        # a switch's RIB is asked for a few times in a row (its BGP summary, each VRF's
        # table): the last few are kept, not every switch's (a fleet's would be gigabytes)
        self._recent: OrderedDict[str, dict[str, dict[str, Learned]]] = OrderedDict()

    def _learned(self, ports: list[str] | set[str], length: int) -> Learned:
        made = Learned(tuple(sorted(ports)), length)
        return self._interned.setdefault(made, made)

    def _vrf(self, vrf: str) -> _Vrf:
        found = self._vrfs.get(vrf)
        if found is not None:
            return found
        table = _Vrf()
        for name, device in self.switches.items():
            instance = device.bgp.get(vrf)
            if instance is None or device.asn is None:
                continue
            for peer in instance.peers.values():
                sender = self.switches.get(peer.peer_device or "")
                port = session_port(device, peer)
                if sender is None or sender.asn is None or port is None:
                    continue
                table.senders.setdefault(name, {}).setdefault(sender.name, []).append(port)
        for name, senders in table.senders.items():
            for sender in senders:
                table.receivers.setdefault(sender, []).append(name)
        self._vrfs[vrf] = table
        return table

    def _beyond(self, vrf: str, first: frozenset[str], origin_as: int | None
                 ) -> dict[str, Learned]:
        """What switches other than `first` learn of a route whose origin's neighbours are
        `first`, each holding it with the origin's AS alone as its path. `origin_as` is the
        origin's AS where other switches share it (spines, pod spines: they must refuse the
        route), None where it is the origin's own (a leaf's: then it matters to no one else).
        Advertisements are replayed from the switches whose paths changed until nothing
        changes; a leaf beyond `first` never passes a route on."""
        key = (vrf, first, origin_as)
        cached = self._classes.get(key)
        if cached is not None:
            return cached
        table = self._vrf(vrf)
        start = (origin_as if origin_as is not None else -1,)
        paths: dict[str, set[tuple[int, ...]]] = {n: {start} for n in first}
        result: dict[str, Learned] = {}
        changed: set[str] = set(first)
        while changed:
            affected = {receiver for sender in changed if self._passes_on(sender, first)
                        for receiver in table.receivers.get(sender, ())
                        if receiver not in first}
            changed = set()
            for receiver in sorted(affected):
                mine = self.switches[receiver].asn
                offers: dict[tuple[int, ...], set[str]] = {}
                for sender, ports in table.senders[receiver].items():
                    if not self._passes_on(sender, first):
                        continue
                    sender_as = self.switches[sender].asn
                    assert sender_as is not None
                    for path in paths.get(sender, ()):
                        advertised = (sender_as, *path)
                        if mine not in advertised:
                            offers.setdefault(advertised, set()).update(ports)
                if not offers:
                    continue
                shortest = min(len(p) for p in offers)
                kept = {p for p in offers if len(p) == shortest}
                if paths.get(receiver) == kept:
                    continue
                paths[receiver] = kept
                result[receiver] = self._learned({port for p in kept for port in offers[p]},
                                                 shortest)
                changed.add(receiver)
        self._classes[key] = result
        return result

    def _passes_on(self, sender: str, first: frozenset[str]) -> bool:
        return sender in first or self.switches[sender].role is not Role.LEAF

    def _shared_asns(self) -> set[int]:
        if self._shared is None:
            seen: dict[int, int] = {}
            for device in self.switches.values():
                if device.asn is not None:
                    seen[device.asn] = seen.get(device.asn, 0) + 1
            self._shared = {asn for asn, count in seen.items() if count > 1}
        return self._shared

    def of(self, name: str) -> dict[str, dict[str, Learned]]:
        """VRF -> prefix -> what switch `name` learns (its own networks left out)."""
        found = self._recent.get(name)
        if found is not None:
            self._recent.move_to_end(name)
            return found
        me = self.switches.get(name)
        if me is None:
            return {}
        rib: dict[str, dict[str, Learned]] = {}
        for vrf in me.bgp:
            for origin, networks in self._origins_of(vrf):
                if origin == name:
                    continue
                learned = self._at(vrf, origin, name)
                if learned is not None:
                    rib.setdefault(vrf, {}).update(dict.fromkeys(networks, learned))
        self._recent[name] = rib
        if len(self._recent) > RECENT_RIBS:
            self._recent.popitem(last=False)
        return rib

    def _origins_of(self, vrf: str) -> list[tuple[str, list[str]]]:
        """(switch, networks) of every switch announcing networks in `vrf`, by name."""
        found = self._origins.get(vrf)
        if found is None:
            found = self._origins[vrf] = [
                (origin, list(device.bgp[vrf].networks))
                for origin, device in sorted(self.switches.items())
                if vrf in device.bgp and device.bgp[vrf].networks]
        return found

    def _at(self, vrf: str, origin: str, name: str) -> Learned | None:
        table = self._vrf(vrf)
        ports = table.senders.get(name, {}).get(origin)
        if ports is not None:
            return self._learned(ports, 1)
        first = frozenset(table.receivers.get(origin, ()))
        asn = self.switches[origin].asn
        origin_as = asn if asn in self._shared_asns() else None
        return self._beyond(vrf, first, origin_as).get(name)


def converged_rib(fabric: FabricState, name: str) -> dict[str, dict[str, Learned]]:
    """VRF -> prefix -> what `name` learns by eBGP once `fabric` has converged."""
    return FabricRib(fabric).of(name)
