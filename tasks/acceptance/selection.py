"""Which pairs an acceptance run measures, from the plan: pure and deterministic.

Every data NIC of a server (a host interface with a leaf peer and an address) is an end.
Two ends of different servers in one tenant VRF make a pair of a kind:
- same-rail: both NICs on one leaf (a rail leaf's NICs are one rail of one SU; in a fabric
  without rails, one leaf's hosts);
- cross-rail: two leaves of one pod (and plane), through the spines;
- cross-pod: two pods of one plane, through the super-spines;
- cross-plane: two planes. flatfab's multi-plane fabrics never join their planes (each has
  its own spines and super-spines), so these pairs have no path: the kind is skipped, and
  says why.
Per kind at most `per_kind` pairs: the sources are taken evenly spread over the ends (a
stride through them), each paired with the next end after it that makes the kind, so a
1,000-server fabric measures a few dozen pairs across it, not a million. Unmanaged servers
run nothing: they are named and left out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from flatfab.acceptance.results import NicRef, PairKind
from flatfab.model.state import DEFAULT_VRF, FabricState, LinkKind, Role

DEFAULT_PAIRS = 16
NOT_ALLOWED = {PairKind.CROSS_PLANE: "flatfab's planes never join (each has its own spines "
                                     "and super-spines): no path between them"}


@dataclass(frozen=True)
class End:
    """One data NIC of a server, where it sits."""

    server: str
    nic: str
    address: str
    leaf: str
    vrf: str
    speed_mbps: int
    managed: bool
    pod: int | None = None
    plane: int | None = None
    rail: int | None = None

    @property
    def ref(self) -> NicRef:
        return NicRef(self.server, self.nic)


@dataclass(frozen=True)
class PlannedPair:
    source: End  # the client: it sends, the destination serves and receives
    destination: End
    kind: PairKind

    @property
    def servers(self) -> tuple[str, str]:
        return self.source.server, self.destination.server

    @property
    def speed_mbps(self) -> int:
        return min(self.source.speed_mbps, self.destination.speed_mbps)


@dataclass(frozen=True)
class Skipped:
    kind: PairKind
    why: str


@dataclass(frozen=True)
class Selection:
    pairs: tuple[PlannedPair, ...]
    skipped: tuple[Skipped, ...]  # kinds asked for and not run, with why
    unmanaged: tuple[str, ...]  # servers left out: flatfab never logs in to them


def ends(plan: FabricState) -> list[End]:
    """Every server's data NICs, in plan order."""
    speeds = {(link.a.device, link.a.port): link.speed_mbps for link in plan.links
              if link.kind is LinkKind.HOST}
    found = []
    for host in plan.of_role(Role.HOST):
        for nic in host.interfaces.values():
            if nic.peer is None or not nic.addresses:
                continue
            leaf = plan.devices[nic.peer.device]
            found.append(End(server=host.name, nic=nic.name,
                             address=nic.addresses[0].split("/")[0], leaf=leaf.name,
                             vrf=host.tenant or DEFAULT_VRF,
                             speed_mbps=speeds.get((host.name, nic.name), 0),
                             managed=host.managed, pod=leaf.pod, plane=leaf.plane,
                             rail=leaf.rail if leaf.rail is not None else nic.rail))
    return found


def kind_of(a: End, b: End) -> PairKind:
    if a.plane != b.plane:
        return PairKind.CROSS_PLANE
    if a.pod != b.pod:
        return PairKind.CROSS_POD
    return PairKind.SAME_RAIL if a.leaf == b.leaf else PairKind.CROSS_RAIL


def _spread(count: int, wanted: int) -> Iterator[int]:
    """0..count-1, evenly spread first: every stride-th, then the ones between."""
    stride = max(count // max(wanted, 1), 1)
    for offset in range(stride):
        yield from range(offset, count, stride)


def _pairs_of(kind: PairKind, found: Sequence[End], per_kind: int) -> list[PlannedPair]:
    pairs: list[PlannedPair] = []
    for index in _spread(len(found), per_kind):
        if len(pairs) >= per_kind:
            break
        source = found[index]
        for step in range(1, len(found)):
            other = found[(index + step) % len(found)]
            if other.server != source.server and other.vrf == source.vrf \
                    and kind_of(source, other) is kind:
                pairs.append(PlannedPair(source, other, kind))
                break
    return pairs


def select(plan: FabricState, kinds: Sequence[PairKind],
           per_kind: int = DEFAULT_PAIRS) -> Selection:
    """At most `per_kind` pairs of each kind asked for, in a stable order."""
    if per_kind < 1:
        raise ValueError(f"pairs per kind {per_kind}: at least 1")
    every = ends(plan)
    managed = [end for end in every if end.managed]
    unmanaged = tuple(dict.fromkeys(end.server for end in every if not end.managed))
    pairs: list[PlannedPair] = []
    skipped: list[Skipped] = []
    for kind in dict.fromkeys(kinds):
        if kind in NOT_ALLOWED:
            skipped.append(Skipped(kind, f"not allowed: {NOT_ALLOWED[kind]}"))
            continue
        chosen = _pairs_of(kind, managed, per_kind)
        if not chosen:
            skipped.append(Skipped(kind, "the plan has no such pair of managed servers in "
                                         "one tenant"))
        pairs += chosen
    return Selection(pairs=tuple(pairs), skipped=tuple(skipped), unmanaged=unmanaged)


def waves(pairs: Sequence[PlannedPair]) -> list[list[PlannedPair]]:
    """The pairs in waves, first fit: no two pairs of a wave share a server or a leaf, so
    each measures its NICs and leaves alone (two flows from one leaf could hash onto one
    uplink and each show half of it)."""
    found: list[tuple[list[PlannedPair], set[str]]] = []
    for pair in pairs:
        used = {*(f"server {name}" for name in pair.servers),
                f"leaf {pair.source.leaf}", f"leaf {pair.destination.leaf}"}
        wave = next((w for w in found if not w[1] & used), None)
        if wave is None:
            found.append(([pair], used))
        else:
            wave[0].append(pair)
            wave[1].update(used)
    return [wave for wave, _ in found]
