"""How the fabric spreads RoCE traffic over its equal-cost paths: fabric.yaml's
`load_balancing`.

A RoCEv2 flow is one queue pair: its UDP destination port is always 4791, and the NIC varies
the UDP source port per queue pair so that switches which do not read InfiniBand headers can
still tell flows apart. A hash without the source port puts every queue pair between two
hosts on one path. Switches of adjacent tiers that hash alike with the same seed pick
correlated paths (polarization): a spine then uses only some of its uplinks. Without the
section, flatfab leaves each switch's hashing as it is.

A tier (`tiers`) or a plane (`planes`, and a tier within it) may balance otherwise than the
fabric: adaptive routing on the spines only, a plane of another vendor with its own seeds.
Each switch takes the fabric's settings, then its tier's, its plane's, and its plane's tier's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Literal, get_args

from pydantic import Field, field_validator, model_validator

from flatfab.intent.base import Strict
from flatfab.model.state import FIVE_TUPLE, HashField, LbMode, LoadBalancing
from flatfab.yamlio import PathPart

Tier = Literal["leaf", "spine", "superspine"]


Seed = Annotated[int, Field(ge=1, le=2**32 - 1)]
Fields = Annotated[list[HashField], Field(min_length=1)]
FlowletUs = Annotated[int, Field(ge=1, le=1_000_000)]
TIERS: tuple[Tier, ...] = get_args(Tier)


def _once_each(value: list[HashField] | None) -> list[HashField] | None:
    if value is None:
        return None
    twice = sorted({f.value for f in value if value.count(f) > 1})
    if twice:
        raise ValueError(f"{twice[0]!r} is listed twice")
    return [f for f in HashField if f in value]  # one order, whatever the file's


class BalancingPatch(Strict):
    """What a tier balances otherwise than the scope above it; unset keys stay as there."""

    hash_fields: Fields | None = Field(None, description="See `load_balancing.hash_fields`.")
    mode: LbMode | None = Field(None, description="See `load_balancing.mode`. Setting it "
                                "here drops the scope above's `flowlet_us`.")
    flowlet_us: FlowletUs | None = Field(None, description="See `load_balancing.flowlet_us`.")

    _fields = field_validator("hash_fields")(_once_each)


class PlaneBalancing(BalancingPatch):
    """What one plane of a multi-plane fabric balances otherwise than the fabric."""

    seeds: dict[Tier, Seed] = Field(
        default_factory=dict, description="The plane's seeds per tier, over the fabric's "
        "`seeds`.")
    tiers: dict[Tier, BalancingPatch] = Field(
        default_factory=dict, description="What a tier of this plane does otherwise.")


class LoadBalancingIntent(Strict):
    """ECMP hashing of every switch, with a seed per tier."""

    hash_fields: Fields = Field(
        default_factory=lambda: list(FIVE_TUPLE),
        description="The packet fields every switch's ECMP hash reads: `src_ip`, `dst_ip`, "
        "`protocol`, `flow_label` (IPv6), `src_port`, `dst_port`. `src_port` is RoCEv2's "
        "entropy (the NIC varies it per queue pair); without it every queue pair between two "
        "hosts takes one path.")
    seeds: dict[Tier, Seed] = Field(
        default_factory=dict,
        description="The hash seed of each tier's switches (`leaf`, `spine`, `superspine`), "
        "different between adjacent tiers so their choices do not correlate (polarize). A "
        "tier without one keeps its switches' own seed.")

    mode: LbMode = Field(
        LbMode.HASH, description="How every switch picks a path per packet: `hash` (static "
        "ECMP), `resilient` (hashed; a path that goes away moves only its own flows), "
        "`flowlet` (dynamic load balancing: a flow idle for `flowlet_us` may move to a less "
        "loaded path), `adaptive` (per packet, the least loaded path: NVIDIA's adaptive "
        "routing), `spray` (per packet over every path: every host NIC must accept packets "
        "out of order, qos.yaml `hosts.out_of_order`). Where a platform cannot, refused at "
        "load with the reason.")
    flowlet_us: FlowletUs | None = Field(
        None, description="`flowlet` only: the inactivity time in microseconds after which a "
        "flow may move; longer than the largest difference in path latency, or packets "
        "arrive out of order.")
    tiers: dict[Tier, BalancingPatch] = Field(
        default_factory=dict, description="What a tier (`leaf`, `spine`, `superspine`) does "
        "otherwise than the fabric, e.g. `spine: {mode: adaptive}`.")
    planes: dict[Annotated[int, Field(ge=1)], PlaneBalancing] = Field(
        default_factory=dict, description="What a plane (by number, fabric.yaml `planes`) "
        "does otherwise than the fabric, over `tiers`.")

    _fields = field_validator("hash_fields")(_once_each)

    def layers(self, tier: Tier, plane: int | None
               ) -> Iterator[tuple[tuple[PathPart, ...], BalancingPatch | LoadBalancingIntent]]:
        """(key path under `load_balancing`, settings) from the fabric's down to the
        narrowest scope that applies to the switches of `tier` in `plane`."""
        yield (), self
        if tier in self.tiers:
            yield ("tiers", tier), self.tiers[tier]
        if plane is not None and plane in self.planes:
            scope = self.planes[plane]
            yield ("planes", plane), scope
            if tier in scope.tiers:
                yield ("planes", plane, "tiers", tier), scope.tiers[tier]

    def of(self, tier: Tier, plane: int | None = None) -> LoadBalancing:
        """How the switches of `tier` in `plane` balance."""
        fields, mode, timer = list(self.hash_fields), self.mode, self.flowlet_us
        seeds: dict[Tier, int] = dict(self.seeds)
        for _, layer in self.layers(tier, plane):
            if layer is self:
                continue
            if layer.hash_fields is not None:
                fields = list(layer.hash_fields)
            if layer.mode is not None:
                mode, timer = layer.mode, layer.flowlet_us
            elif layer.flowlet_us is not None:
                timer = layer.flowlet_us
            if isinstance(layer, PlaneBalancing):
                seeds.update(layer.seeds)
        return LoadBalancing(hash_fields=fields, seed=seeds.get(tier), mode=mode,
                             flowlet_us=timer)

    def where(self, tier: Tier, plane: int | None, key: str) -> tuple[PathPart, ...]:
        """The key path of the narrowest scope that sets `key` for these switches."""
        found: tuple[PathPart, ...] = (key,)
        for path, layer in self.layers(tier, plane):
            if path and getattr(layer, key, None) is not None:
                found = (*path, key)
        return found

    def scopes(self) -> Iterator[tuple[Tier, int | None]]:
        """Every (tier, plane) whose switches may balance differently."""
        for plane in (None, *sorted(self.planes)):
            for tier in TIERS:
                yield tier, plane

    @model_validator(mode="after")
    def _timer_of_flowlets(self) -> LoadBalancingIntent:
        for tier, plane in self.scopes():
            way = self.of(tier, plane)
            if way.mode is LbMode.FLOWLET and way.flowlet_us is None:
                raise ValueError(f"{_named(self.where(tier, plane, 'mode'))}mode flowlet "
                                 "needs `flowlet_us`, the inactivity time")
            if way.mode is not LbMode.FLOWLET and way.flowlet_us is not None:
                raise ValueError(f"{_named(self.where(tier, plane, 'flowlet_us'))}"
                                 f"`flowlet_us` is for mode flowlet, not {way.mode.value}")
        return self


def _named(path: tuple[PathPart, ...]) -> str:
    """'tiers.spine: ' for a scope below the fabric's, '' for the fabric's own keys."""
    return "" if len(path) == 1 else ".".join(str(p) for p in path[:-1]) + ": "
