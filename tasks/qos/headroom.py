"""PFC headroom: how many bytes can still arrive on a lossless PG after it decides to pause.

Two models (lossless-domain reference §2):
- generic (§2.3): the IEEE 802.1Qbb-style sum with one cell-occupancy factor; a lower bound.
- cell-based (§2.4): SONiC's dynamic headroom algorithm for cell-based ASICs (Spectrum), which
  reproduces the vendors' shipped pg_profile_lookup tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flatfab.model.state import Asic as ModelAsic

SIGNAL_SPEED_M_PER_S = 1.98e8  # ~0.66 c in copper/fibre
KIB = 1024

# IEEE 802.3 Annex 31B.3.7 pause response, in quanta of 512 bit times (64 bytes).
PAUSE_QUANTA = {10_000: 67, 25_000: 80, 40_000: 118, 50_000: 147, 100_000: 394,
                200_000: 453, 400_000: 905, 800_000: 905}


@dataclass(frozen=True)
class Asic:
    """What the headroom of one ASIC family depends on."""

    name: str
    cell_bytes: int  # 0: the generic model (no cell waste)
    mac_phy_bytes: int
    pipeline_bytes: int  # xon: latency of the pipeline before XON takes effect
    tile_delay: bool = False  # Spectrum-4/5 add speed-dependent bytes on the tile
    buffer_bytes: int = 0  # total packet buffer, for the budget check


ASICS: dict[str, Asic] = {
    "generic": Asic("generic", cell_bytes=0, mac_phy_bytes=819, pipeline_bytes=19 * KIB,
                    buffer_bytes=64_000_000),
    "spectrum-1": Asic("spectrum-1", 96, 819, 19 * KIB, buffer_bytes=16_000_000),
    "spectrum-2": Asic("spectrum-2", 144, 819, 19 * KIB, buffer_bytes=42_000_000),
    "spectrum-3": Asic("spectrum-3", 144, 819, 19 * KIB, buffer_bytes=64_000_000),
    "spectrum-4": Asic("spectrum-4", 192, 819, 19 * KIB, tile_delay=True,
                       buffer_bytes=160_000_000),
    "spectrum-5": Asic("spectrum-5", 192, 819, 19 * KIB, tile_delay=True,
                       buffer_bytes=160_000_000),
    # Broadcom: 254-byte MMU cells (the unit of SONiC's shipped TH3/TH5 PG sizes: 2540 =
    # 10 cells, 18796 = 74), 256 on Trident 3. The worst-case cell model above is applied;
    # it sizes above Broadcom's own lookup tables (TH3: 1.6-2.5x), never below them.
    "trident-3": Asic("trident-3", 256, 819, 19 * KIB, buffer_bytes=32_000_000),
    "trident-4": Asic("trident-4", 254, 819, 19 * KIB, buffer_bytes=132_000_000),
    "tomahawk-3": Asic("tomahawk-3", 254, 819, 19 * KIB, buffer_bytes=64_000_000),
    "tomahawk-4": Asic("tomahawk-4", 254, 819, 19 * KIB, buffer_bytes=113_000_000),
    "tomahawk-5": Asic("tomahawk-5", 254, 819, 19 * KIB, buffer_bytes=165_000_000),
    # Jericho buffers per VOQ (on-chip plus HBM); no PG headroom is configured there, so
    # the generic lower bound only feeds the budget check against the on-chip buffer.
    "jericho-2": Asic("jericho-2", 0, 819, 19 * KIB, buffer_bytes=32_000_000),
}


@dataclass(frozen=True)
class Headroom:
    xon: int
    xoff: int  # bytes reserved above the XOFF point: what must still fit after PFC is sent
    size: int  # PG size in the independent-headroom model (xon + xoff)


def pause_quanta(speed_mbps: int) -> int:
    try:
        return PAUSE_QUANTA[speed_mbps]
    except KeyError:
        raise ValueError(f"no pause response time known for {speed_mbps} Mb/s") from None


def cable_bytes(speed_mbps: int, cable_m: float) -> float:
    """Bytes in flight on the cable during one round trip."""
    return 2 * cable_m / SIGNAL_SPEED_M_PER_S * speed_mbps * 1e6 / 8


def generic_xoff(speed_mbps: int, cable_m: float, mtu_tx: int, mtu_rx: int,
                 mac_phy_bytes: int = 819, cell_factor: float = 1.0) -> int:
    """§2.1/§2.3: H = MTU_tx + (MTU_rx + cable RTT + peer response + MAC/PHY) x cell factor."""
    response = pause_quanta(speed_mbps) * 64
    inner = mtu_rx + cable_bytes(speed_mbps, cable_m) + response + mac_phy_bytes
    return round(mtu_tx + inner * cell_factor)


def _roundup_kib(value: float) -> int:
    return math.ceil(value / KIB) * KIB


def _cell_occupancy(cell: int, small_packet_percent: int, lossless_mtu: int) -> float:
    worst = math.ceil(cell / 64) if cell > 128 else math.ceil(2 * cell / (1 + cell))
    spp = small_packet_percent
    by_bytes = 100 * 64 / ((spp * 64 + (100 - spp) * lossless_mtu) / 100)
    return (100 - by_bytes + by_bytes * worst) / 100


def cell_headroom(asic: Asic, speed_mbps: int, cable_m: float, port_mtu: int,
                  small_packet_percent: int = 100, lossless_mtu: int = 1024) -> Headroom:
    """§2.4: SONiC's dynamic headroom for a cell-based ASIC, independent-headroom model."""
    occupancy = _cell_occupancy(asic.cell_bytes, small_packet_percent, lossless_mtu)
    tile = speed_mbps / 1000 * 120 / 8 if asic.tile_delay else 0.0
    propagation = (port_mtu + cable_bytes(speed_mbps, cable_m) + asic.mac_phy_bytes
                   + pause_quanta(speed_mbps) * 64 + tile)
    xoff = _roundup_kib(lossless_mtu + propagation * occupancy)
    if small_packet_percent < 100:
        # the plugin compensates 2 KiB when a non-worst-case pattern leaves it well short
        worst = _roundup_kib(lossless_mtu + propagation
                             * _cell_occupancy(asic.cell_bytes, 100, lossless_mtu))
        if worst - xoff > 2 * KIB:
            xoff += 2 * KIB
    xon = _roundup_kib(asic.pipeline_bytes)
    return Headroom(xon=xon, xoff=xoff, size=_roundup_kib(xon + xoff))


def required_headroom(asic: Asic, speed_mbps: int, cable_m: float, port_mtu: int,
                      peer_mtu: int) -> Headroom:
    """The headroom flatfab plans and checks against for one lossless PG of one port."""
    if asic.cell_bytes:
        return cell_headroom(asic, speed_mbps, cable_m, port_mtu)
    xoff = _roundup_kib(generic_xoff(speed_mbps, cable_m, peer_mtu, port_mtu,
                                     asic.mac_phy_bytes))
    xon = _roundup_kib(asic.pipeline_bytes)
    return Headroom(xon=xon, xoff=xoff, size=xon + xoff)


def model_asic(asic: ModelAsic) -> Asic:
    """The headroom inputs of a planned or observed ASIC (its family gives the tile delay)."""
    return Asic(asic.family, asic.cell_bytes, asic.mac_phy_bytes, asic.pipeline_bytes,
                tile_delay=ASICS[asic.family].tile_delay, buffer_bytes=asic.buffer_bytes)
