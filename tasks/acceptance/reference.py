"""The figure each engine must reach, from what the intent gives: a NIC's link speed (Mb/s,
as the model keeps it), how many NICs and GPUs a server has, how many servers a collective
spans, the RoCE MTU. Each default is stated with its reason in `Reference.basis`.

RoCEv2 (ib_write_bw and NCCL over the NICs): a RoCE packet at MTU M carries M bytes of
payload in M + ROCE_HEADER_BYTES (the kernel's iboe_get_mtu worst case, flatfab.model.wire)
+ 38 bytes of Ethernet framing (header 14, FCS 4, preamble and SFD 8, inter-packet gap 12:
IEEE 802.3). ib_write_bw and nccl-tests count payload only, so the most they can show is
that share of the line: 4096 / 4230 = 96.8 % at MTU 4096 (98.0 % with the 44 B IPv4, UDP,
BTH and ICRC actually take: the worst case keeps the reference on the safe side).
"""

from __future__ import annotations

from dataclasses import dataclass

from flatfab.acceptance.engines.iperf3 import NAME as IPERF3
from flatfab.acceptance.engines.nccl import Collective
from flatfab.acceptance.engines.perftest import NAME as IB_WRITE_BW
from flatfab.model.wire import ROCE_HEADER_BYTES

ETHERNET_FRAMING_BYTES = 14 + 4 + 8 + 12  # header, FCS, preamble + SFD, inter-packet gap
DEFAULT_ROCE_MTU = 4096
# iperf3 over the kernel's TCP: at MTU 1500 the headers alone take 6 % (1448 B of payload in
# 1538 B on the wire), every byte is copied by a CPU, and iperf3 before 3.16 (Debian 12 ships
# 3.12) serves all -P streams from one thread (iperf3 3.16 release notes): above 25G one
# core, not the link, sets the figure. 70 % is what a hand-over can ask of a plain TCP host.
IPERF3_TCP_FRACTION = 0.70


@dataclass(frozen=True)
class Reference:
    """The figure a result must reach (Gb/s), and how it was reached."""

    gbps: float
    basis: str


def roce_payload_share(roce_mtu: int = DEFAULT_ROCE_MTU) -> float:
    """The share of a link's bits that are RoCE payload, at full packets of `roce_mtu`."""
    if roce_mtu < 256:
        raise ValueError(f"RoCE MTU {roce_mtu}: RoCE MTUs are 256 to 4096")
    return roce_mtu / (roce_mtu + ROCE_HEADER_BYTES + ETHERNET_FRAMING_BYTES)


def ib_write_bw_reference(nic_speed_mbps: int, roce_mtu: int = DEFAULT_ROCE_MTU) -> Reference:
    """ib_write_bw between two NICs of one speed: the RoCE payload share of that speed."""
    gbps = _gbps(nic_speed_mbps)
    share = roce_payload_share(roce_mtu)
    return Reference(gbps * share, f"{share:.3f} x {gbps:g} Gb/s: RoCE payload share at MTU "
                                   f"{roce_mtu} ({roce_mtu} B per {roce_mtu + ROCE_HEADER_BYTES}"
                                   f" B of RoCE packet + {ETHERNET_FRAMING_BYTES} B of framing)")


def iperf3_reference(nic_speed_mbps: int, fraction: float = IPERF3_TCP_FRACTION) -> Reference:
    """iperf3 TCP between two NICs of one speed: `fraction` of it (see IPERF3_TCP_FRACTION)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction {fraction}: between 0 and 1")
    gbps = _gbps(nic_speed_mbps)
    return Reference(gbps * fraction, f"{fraction:g} x {gbps:g} Gb/s: TCP through the "
                                      f"kernel, iperf3's streams on one core before 3.16")


def pair_reference(engine: str, nic_speed_mbps: int,
                   roce_mtu: int = DEFAULT_ROCE_MTU) -> Reference:
    """The default reference of a pairwise engine by its name."""
    if engine == IB_WRITE_BW:
        return ib_write_bw_reference(nic_speed_mbps, roce_mtu)
    if engine == IPERF3:
        return iperf3_reference(nic_speed_mbps)
    raise ValueError(f"no reference for engine {engine!r} ({IB_WRITE_BW} or {IPERF3})")


def nccl_reference(collective: Collective, *, nic_speed_mbps: int, nics_per_server: int,
                   gpus_per_server: int, servers: int,
                   roce_mtu: int = DEFAULT_ROCE_MTU) -> Reference:
    """The busbw (as Gb/s) a collective over `servers` servers should reach, the fabric being
    the bottleneck (NVLink inside a server is faster than its NICs).

    all_reduce: busbw = algbw x 2(n-1)/n is each rank's link bandwidth in a ring
    (nccl-tests PERFORMANCE.md). NCCL spreads its rings over a server's NICs, each ring
    crossing between servers through one NIC, and rings run side by side: busbw reaches the
    payload share of every NIC of a server together, whatever the GPU count. That is the
    ring's bound; NCCL's tree or NVLS algorithms can exceed it on few servers, which never
    fails the verdict.

    alltoall: busbw = algbw x (n-1)/n. Each rank sends (n-G)/n of its data over the network
    (G GPUs per server) through its own share of the NICs (alltoall cannot pool NICs:
    nccl-tests issue #267), so busbw = per-GPU network bandwidth x (n-1)/(n-G): one NIC's
    bandwidth with one GPU per server, about twice it on two servers of many GPUs, and
    N/(N-1) of it on N servers (nccl-tests issue #130)."""
    if servers < 2:
        raise ValueError("a collective on one server never crosses the fabric: no reference")
    if min(nics_per_server, gpus_per_server) < 1:
        raise ValueError("a server needs at least one NIC and one GPU")
    share = roce_payload_share(roce_mtu)
    nic = _gbps(nic_speed_mbps)
    if collective is Collective.ALL_REDUCE:
        return Reference(share * nic * nics_per_server,
                         f"{share:.3f} x {nics_per_server} NICs x {nic:g} Gb/s: all_reduce "
                         f"busbw of rings over every NIC of a server")
    ranks = servers * gpus_per_server
    per_gpu = nic * nics_per_server / gpus_per_server
    factor = (ranks - 1) / (ranks - gpus_per_server)
    return Reference(share * per_gpu * factor,
                     f"{share:.3f} x {per_gpu:g} Gb/s per GPU x {factor:.3f} ((n-1)/(n-G), "
                     f"n={ranks}, G={gpus_per_server}): alltoall busbw")


def _gbps(speed_mbps: int) -> float:
    if speed_mbps <= 0:
        raise ValueError(f"link speed {speed_mbps} Mb/s: not a speed")
    return speed_mbps / 1000
