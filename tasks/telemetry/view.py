"""The live view of `flatfab watch`: worst ports first, then the active findings.

A port's rank is the worst finding active on it, then what it counted in the last interval
(lossless drops before any drops, then pauses, then ECN marks): the port an operator should
look at is always on top, however many ports the fabric has.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flatfab.checks.base import Finding, Severity
from flatfab.telemetry.rates import SeriesKey, Window, WindowMap
from flatfab.telemetry.samples import Metric

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


# what a row adds up, and the counters a fabric's worst ports are found by
_SHOWN: Final = frozenset({Metric.QUEUE_DROPS, Metric.PFC_RX, Metric.PFC_TX, Metric.QUEUE_ECN,
                           Metric.QUEUE_TX})
_RANKED: Final = (Metric.QUEUE_DROPS, Metric.PFC_RX, Metric.PFC_TX, Metric.QUEUE_ECN)
# up to this many windows a tick, every one is walked; past it, the ones the drain lists
# (what moved of the ranked counters): a thousand switches' millions are not walked a tick
WALK_ALL: Final = 200_000


class PortCounts:
    """Per port, what its counters grew by in the last interval that spoke about it: the
    health engine's windows of the tick (flatfab.telemetry.rates.WindowMap)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], PortRow] = {}

    def update(self, windows: Mapping[SeriesKey, Window]) -> None:
        fresh: dict[tuple[str, str], PortRow] = {}
        for (device, port, metric, _), window in _walked(windows):
            if port is None or metric not in _SHOWN:
                continue
            row = fresh.get((device, port))
            if row is None:
                row = fresh[(device, port)] = PortRow(device, port)
            grew = int(window.delta)  # counters are whole numbers
            if metric is Metric.QUEUE_DROPS:
                row.drops += grew
            elif metric is Metric.QUEUE_TX:
                row.packets += grew
            elif metric is Metric.QUEUE_ECN:
                row.ecn += grew
            else:
                row.pauses += grew
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


def _walked(windows: Mapping[SeriesKey, Window]) -> Iterator[tuple[SeriesKey, Window]]:
    """Every window of a small tick; of a large one, the listed windows of what ranks a
    port (its packets then show only where the port moved otherwise)."""
    if not isinstance(windows, WindowMap) or windows.size_bound() <= WALK_ALL:
        yield from windows.items()
        return
    for metric in _RANKED:
        for key in windows.by_metric.get(metric, ()):
            yield key, windows[key]


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
