"""iperf3 between two hosts without RDMA: TCP (or UDP) over the kernel's stack, read from its
JSON report (`iperf3 -J`).

The figure is `end.sum_received.bits_per_second`: what the receiving side read off its
sockets. `end.sum_sent` counts what the sender wrote into its socket buffers, which includes
bytes still in flight (or, for UDP, lost) when the test stopped; iperf3's maintainers explain
the sender/receiver difference that way (esnet/iperf issue #306), and a UDP run's sender
figure is the offered load, not what arrived (esnet/iperf issues #238, #391). With -P, the
`sum_*` objects already add every stream up; the per-stream receiver figures are kept too,
and must add up to the sum (a report where they do not is refused).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flatfab.acceptance.engines.base import (
    BITS_PER_GIGABIT,
    EngineOutputError,
    EngineSpecError,
    Measurement,
    PairSpec,
)

NAME = "iperf3"
DEFAULT_PORT = 5201  # iperf3(1): -p, --port
# how far the streams' receiver figures may drift from the reported sum (rounding of each
# stream's own seconds) before the report is refused
_STREAM_SUM_SLACK = 0.02


@dataclass(frozen=True, kw_only=True)
class Iperf3Measurement(Measurement):
    protocol: str  # "TCP" or "UDP"
    sent_gbps: float
    streams_gbps: tuple[float, ...]  # each stream's receiver figure
    retransmits: int | None  # TCP only: the sender's retransmitted segments
    lost_percent: float | None = None  # UDP only


@dataclass(frozen=True)
class Iperf3Engine:
    """iperf3 3.x. `udp_bitrate`: the UDP target rate (e.g. "10G"; None: TCP)."""

    name: str = NAME
    udp_bitrate: str | None = None

    def server_argv(self, spec: PairSpec) -> list[str]:
        # -1: serve one test, then exit (the run starts a server per pair)
        return [NAME, "-s", "-1", "-J", "-p", str(_port(spec)), "-B", spec.server.address]

    def client_argv(self, spec: PairSpec) -> list[str]:
        # -B on the client picks the source address, so the NIC under test, on a multi-NIC
        # host
        argv = [NAME, "-c", spec.server.address, "-p", str(_port(spec)),
                "-B", spec.client.address, "-t", str(spec.duration_s),
                "-P", str(spec.parallel), "-J"]
        if spec.message_bytes is not None:
            argv += ["-l", str(spec.message_bytes)]
        if spec.tclass is not None:
            argv += ["-S", str(spec.tclass)]  # --tos: the whole ToS byte
        if self.udp_bitrate is not None:
            argv += ["-u", "-b", self.udp_bitrate]
        return argv

    def parse(self, output: str) -> Iperf3Measurement:
        return parse(output)


def _port(spec: PairSpec) -> int:
    if spec.rdma_cm:
        raise EngineSpecError(NAME, "rdma_cm is an RDMA option; iperf3 runs over TCP/UDP")
    return spec.port if spec.port is not None else DEFAULT_PORT


def parse(output: str) -> Iperf3Measurement:
    """The client's (or server's) `iperf3 -J` report as a measurement."""
    try:
        report = json.loads(output)
    except ValueError as exc:
        raise EngineOutputError(NAME, f"not a JSON report (truncated?): {exc}") from None
    if not isinstance(report, dict):
        raise EngineOutputError(NAME, "not a JSON object")
    if report.get("error"):
        raise EngineOutputError(NAME, f"the run failed: {report['error']}")
    end = _object(report, "end", "end")
    received = _object(end, "sum_received", "end.sum_received (no summary: run cut short?)")
    sent = _object(end, "sum_sent", "end.sum_sent")
    gbps = _number(received, "bits_per_second", "end.sum_received") / BITS_PER_GIGABIT
    streams = _stream_figures(end)
    if streams and abs(sum(streams) - gbps) > _STREAM_SUM_SLACK * max(gbps, 1e-9):
        raise EngineOutputError(NAME, f"the streams' receiver figures add up to "
                                      f"{sum(streams):.3f} Gb/s, the sum says {gbps:.3f}")
    protocol = _protocol(report)
    return Iperf3Measurement(
        engine=NAME, gbps=gbps, protocol=protocol, streams_gbps=streams,
        sent_gbps=_number(sent, "bits_per_second", "end.sum_sent") / BITS_PER_GIGABIT,
        retransmits=_retransmits(sent) if protocol == "TCP" else None,
        lost_percent=_lost(received) if protocol == "UDP" else None)


def _object(parent: Mapping[str, Any], key: str, what: str) -> Mapping[str, Any]:
    value = parent.get(key)
    if not isinstance(value, dict):
        raise EngineOutputError(NAME, f"no {what} in the report")
    return value


def _number(parent: Mapping[str, Any], key: str, where: str) -> float:
    value = parent.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EngineOutputError(NAME, f"no number {where}.{key} in the report")
    return float(value)


def _stream_figures(end: Mapping[str, Any]) -> tuple[float, ...]:
    """Each stream's receiver figure (Gb/s): TCP streams under `receiver`, UDP under `udp`
    (a UDP stream object holds the local side only, so it is left out of the check)."""
    streams = end.get("streams")
    if not isinstance(streams, list):
        raise EngineOutputError(NAME, "no end.streams in the report")
    found = []
    for index, stream in enumerate(streams):
        receiver = stream.get("receiver") if isinstance(stream, dict) else None
        if receiver is None:
            continue
        if not isinstance(receiver, dict):
            raise EngineOutputError(NAME, f"end.streams[{index}].receiver is not an object")
        found.append(_number(receiver, "bits_per_second", f"end.streams[{index}].receiver")
                     / BITS_PER_GIGABIT)
    return tuple(found)


def _protocol(report: Mapping[str, Any]) -> str:
    start = report.get("start")
    test = start.get("test_start") if isinstance(start, dict) else None
    protocol = test.get("protocol") if isinstance(test, dict) else None
    if protocol not in ("TCP", "UDP"):
        raise EngineOutputError(NAME, "no start.test_start.protocol (TCP or UDP) in the report")
    return str(protocol)


def _retransmits(sent: Mapping[str, Any]) -> int | None:
    # absent when the sender's kernel gives no TCP_INFO (iperf3 then leaves it out)
    value = sent.get("retransmits")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _lost(received: Mapping[str, Any]) -> float | None:
    value = received.get("lost_percent")
    return float(value) if isinstance(value, int | float) else None
