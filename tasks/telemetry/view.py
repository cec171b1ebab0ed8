"""The live view of `flatfab watch`: worst ports first, then the active findings.

A port's rank is the worst finding active on it, then what it counted in the last interval
(lossless drops before any drops, then pauses, then ECN marks): the port an operator should
look at is always on top, however many ports the fabric has.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flatfab.checks.base import Finding, Severity
from flatfab.telemetry.rates import SeriesKey
from flatfab.telemetry.samples import COUNTERS, Metric, Number, Sample

SEVERITY_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "blue"}
NO_FINDING = len(Severity)  # ranks after every severity


@dataclass(slots=True)
class PortRow:
    device: str
    port: str
    drops: int = 0
    pauses: int = 0  # PFC frames received + sent
    ecn: int = 0
    packets: int = 0


class PortCounts:
    """Per port, what its counters grew by in the last interval that spoke about it."""

    def __init__(self) -> None:
        self._last: dict[SeriesKey, Number] = {}
        self.rows: dict[tuple[str, str], PortRow] = {}

    def update(self, samples: Iterable[Sample]) -> None:
        fresh: dict[tuple[str, str], PortRow] = {}
        for s in samples:
            if s.port is None or s.metric not in COUNTERS:
                continue  # a state or a gauge: nothing grows
            key: SeriesKey = (s.device, s.port, s.metric, s.key)
            before = self._last.get(key)
            self._last[key] = s.value
            row = fresh.setdefault((s.device, s.port), PortRow(s.device, s.port))
            if before is None or s.value < before:
                continue  # a baseline or a counter reset counts nothing
            grew = int(s.value - before)  # counters are whole numbers
            if s.metric is Metric.QUEUE_DROPS:
                row.drops += grew
            elif s.metric in (Metric.PFC_RX, Metric.PFC_TX):
                row.pauses += grew
            elif s.metric is Metric.QUEUE_ECN:
                row.ecn += grew
            elif s.metric is Metric.QUEUE_TX:
                row.packets += grew
        self.rows.update(fresh)  # ports this tick did not mention keep their last row

    def worst(self, active: Iterable[Finding], limit: int = 20) -> list[tuple[PortRow, int]]:
        """Rows, worst first, with the rank of the worst finding on each port."""
        rank: dict[tuple[str, str], int] = {}
        for f in active:
            if f.device and f.port:
                where = (f.device, f.port)
                rank[where] = min(rank.get(where, NO_FINDING), f.severity.rank)
        ordered = sorted(self.rows.items(), key=lambda item: (
            rank.get(item[0], NO_FINDING), -item[1].drops, -item[1].pauses, -item[1].ecn,
            item[0]))
        return [(row, rank.get(where, NO_FINDING)) for where, row in ordered[:limit]]


def render(title: str, counts: PortCounts, active: list[Finding], status: list[str],
           limit: int = 20) -> RenderableType:
    """The view: a heading, the worst ports, the active findings, the connection notes."""
    ports = Table(title=title, title_justify="left")
    for column in ("device", "port", "drops", "PFC pauses", "ECN marks", "packets",
                   "worst finding"):
        ports.add_column(column, justify="right" if column in ("drops", "PFC pauses",
                                                                  "ECN marks", "packets")
                         else "left")
    for row, rank in counts.worst(active, limit):
        severity = list(Severity)[rank].value if rank < NO_FINDING else ""
        ports.add_row(row.device, row.port, str(row.drops), str(row.pauses), str(row.ecn),
                      str(row.packets),
                      Text(severity, style=SEVERITY_STYLE.get(severity, "")))
    parts: list[RenderableType] = [ports]
    if active:
        table = Table(title=f"active findings: {len(active)}", title_justify="left")
        for column in ("severity", "check", "device", "port", "finding"):
            table.add_column(column, overflow="fold")
        for f in active:
            # device output lands in these cells: Text, so brackets are never read as markup
            table.add_row(Text(f.severity.value, style=SEVERITY_STYLE[f.severity.value]),
                          Text(f.check), Text(f.device or ""), Text(f.port or ""),
                          Text(f.message))
        parts.append(table)
    else:
        parts.append(Text("no active findings", style="green"))
    parts += [Text(line, style="dim") for line in status]
    return Group(*parts)
