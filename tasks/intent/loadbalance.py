"""How the fabric spreads RoCE traffic over its equal-cost paths: fabric.yaml's
`load_balancing`.

A RoCEv2 flow is one queue pair: its UDP destination port is always 4791, and the NIC varies
the UDP source port per queue pair so that switches which do not read InfiniBand headers can
still tell flows apart. A hash without the source port puts every queue pair between two
hosts on one path. Switches of adjacent tiers that hash alike with the same seed pick
correlated paths (polarization): a spine then uses only some of its uplinks. Without the
section, flatfab leaves each switch's hashing as it is.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from flatfab.intent.base import Strict
from flatfab.model.state import FIVE_TUPLE, HashField, LbMode

Tier = Literal["leaf", "spine", "superspine"]


class LoadBalancingIntent(Strict):
    """ECMP hashing of every switch, with a seed per tier."""

    hash_fields: Annotated[list[HashField], Field(min_length=1)] = Field(
        default_factory=lambda: list(FIVE_TUPLE),
        description="The packet fields every switch's ECMP hash reads: `src_ip`, `dst_ip`, "
        "`protocol`, `flow_label` (IPv6), `src_port`, `dst_port`. `src_port` is RoCEv2's "
        "entropy (the NIC varies it per queue pair); without it every queue pair between two "
        "hosts takes one path.")
    seeds: dict[Tier, Annotated[int, Field(ge=1, le=2**32 - 1)]] = Field(
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
    flowlet_us: Annotated[int, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="`flowlet` only: the inactivity time in microseconds after which a "
        "flow may move; longer than the largest difference in path latency, or packets "
        "arrive out of order.")

    @model_validator(mode="after")
    def _timer_of_flowlets(self) -> LoadBalancingIntent:
        if self.mode is LbMode.FLOWLET and self.flowlet_us is None:
            raise ValueError("mode flowlet needs `flowlet_us`, the inactivity time")
        if self.mode is not LbMode.FLOWLET and self.flowlet_us is not None:
            raise ValueError(f"`flowlet_us` is for mode flowlet, not {self.mode.value}")
        return self

    @field_validator("hash_fields")
    @classmethod
    def _once_each(cls, value: list[HashField]) -> list[HashField]:
        twice = sorted({f.value for f in value if value.count(f) > 1})
        if twice:
            raise ValueError(f"{twice[0]!r} is listed twice")
        return [f for f in HashField if f in value]  # one order, whatever the file's
