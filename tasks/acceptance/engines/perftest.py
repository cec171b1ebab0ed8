"""perftest's ib_write_bw between two RDMA NICs (RoCEv2), read from its text report.

The report is a table under a dashed line (perftest_parameters.h, RESULT_FMT / RESULT_FMT_G):

     #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
     65536      664644           0.00               11585.23            0.185364

or, with --report_gbits, `BW peak[Gb/sec]    BW average[Gb/sec]`. perftest's MB is 2^20 bytes
(its --help: "MiB=2^20 byte, while Gb=10^9 bits"). The figure is the average of the largest
message size (one row without -a); the peak reads 0.00 under -D, where perftest does not
sample it (linux-rdma/perftest issue #234). In a unidirectional test the client measures the
bandwidth (perftest README, "Notes on Testing Methodology"): parse the client's output.

The options that matter for RoCE (perftest README and --help): -d the RDMA device, -x the
GID index (the RoCEv2 GID of the NIC's address), -p the control port, -s the message size,
-q the queue pairs, -D the duration, -F not to fail on a CPU frequency governor, and the
traffic class: --tclass sets it in the GRH of plain QPs; -T sets the ToS of rdma_cm QPs and
works only with -R. The same options must be given to server and client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flatfab.acceptance.engines.base import (
    EngineOutputError,
    EngineSpecError,
    Measurement,
    PairSpec,
    Side,
)

NAME = "ib_write_bw"
DEFAULT_PORT = 18515  # perftest_parameters.h DEF_PORT
DEFAULT_MESSAGE_BYTES = 65536  # DEF_SIZE_BW
MIB = 2**20
_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(?P<unit>MB|MiB|Gb)/sec\]\s+"
                     r"BW average\[(?P=unit)/sec\]\s+MsgRate\[Mpps\]")
_ROW = re.compile(r"^\s*(?P<bytes>\d+)\s+(?P<iters>\d+)\s+(?P<peak>\d+(?:\.\d+)?)\s+"
                  r"(?P<avg>\d+(?:\.\d+)?)\s+(?P<rate>\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class PerftestRow:
    message_bytes: int
    iterations: int
    peak_gbps: float
    average_gbps: float
    msg_rate_mpps: float


@dataclass(frozen=True, kw_only=True)
class PerftestMeasurement(Measurement):
    message_bytes: int
    peak_gbps: float  # 0.0 under -D (not sampled)
    msg_rate_mpps: float
    rows: tuple[PerftestRow, ...]  # one per message size (several with -a)
    reported_in: str  # the unit of the report: "MB", "MiB" or "Gb"


@dataclass(frozen=True)
class IbWriteBwEngine:
    name: str = NAME
    report_gbits: bool = True

    def server_argv(self, spec: PairSpec) -> list[str]:
        return self._argv(spec, spec.server, "server")

    def client_argv(self, spec: PairSpec) -> list[str]:
        return [*self._argv(spec, spec.client, "client"), spec.server.address]

    def parse(self, output: str) -> PerftestMeasurement:
        return parse(output)

    def _argv(self, spec: PairSpec, side: Side, which: str) -> list[str]:
        if side.device is None:
            raise EngineSpecError(NAME, f"the {which}'s RDMA device (-d) is not given")
        if side.gid_index is None:
            raise EngineSpecError(NAME, f"the {which}'s GID index (-x) is not given: RoCEv2 "
                                        f"needs the GID of the NIC's address")
        size = spec.message_bytes if spec.message_bytes is not None else DEFAULT_MESSAGE_BYTES
        argv = [NAME, "-d", side.device, "-x", str(side.gid_index),
                "-p", str(spec.port if spec.port is not None else DEFAULT_PORT),
                "-s", str(size), "-q", str(spec.parallel), "-D", str(spec.duration_s), "-F"]
        if self.report_gbits:
            argv.append("--report_gbits")
        return argv + _traffic_class(spec)


def _traffic_class(spec: PairSpec) -> list[str]:
    if spec.rdma_cm:
        return ["-R"] + (["-T", str(spec.tclass)] if spec.tclass is not None else [])
    return [f"--tclass={spec.tclass}"] if spec.tclass is not None else []


def parse(output: str) -> PerftestMeasurement:
    """The client's ib_write_bw report as a measurement (the largest message size's row)."""
    lines = output.splitlines()
    header = next(((i, m) for i, line in enumerate(lines) if (m := _HEADER.search(line))),
                  None)
    if header is None:
        raise EngineOutputError(NAME, f"no result table (#bytes ... BW average ... MsgRate "
                                      f"header) in the output{_last_words(lines)}")
    start, match = header
    unit = match["unit"]
    rows = tuple(_rows(lines[start + 1:], unit))
    if not rows:
        raise EngineOutputError(NAME, "the result table has no rows (run cut short?)")
    judged = max(rows, key=lambda r: r.message_bytes)
    return PerftestMeasurement(
        engine=NAME, gbps=judged.average_gbps, message_bytes=judged.message_bytes,
        peak_gbps=judged.peak_gbps, msg_rate_mpps=judged.msg_rate_mpps, rows=rows,
        reported_in=unit)


def _rows(lines: list[str], unit: str) -> list[PerftestRow]:
    """The rows under the header, up to the closing dashed line (or the end)."""
    found = []
    for line in lines:
        if line.strip().startswith("---"):
            break
        if not line.strip():
            continue
        match = _ROW.match(line)
        if match is None:
            raise EngineOutputError(NAME, f"a result row is not #bytes #iterations peak "
                                          f"average msgrate: {line.strip()!r}")
        found.append(PerftestRow(
            message_bytes=int(match["bytes"]), iterations=int(match["iters"]),
            peak_gbps=_gbps(float(match["peak"]), unit),
            average_gbps=_gbps(float(match["avg"]), unit),
            msg_rate_mpps=float(match["rate"])))
    return found


def _gbps(value: float, unit: str) -> float:
    # perftest's MB (and MiB) are 2^20 bytes; Gb are 10^9 bits
    return value if unit == "Gb" else value * MIB * 8 / 1e9


def _last_words(lines: list[str]) -> str:
    said = [line.strip() for line in lines if line.strip()]
    return f"; last line: {said[-1][:120]!r}" if said else " (empty)"
