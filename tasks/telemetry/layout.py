"""Samples held by column, not as an object each: what keeps one process watching a thousand
switches of 64 ports (3.3 million readings an interval) in memory and in time.

A `Layout` numbers the series one kind of source sends (its metric, port and key): the
switches of one platform send the same leaves, so they share one layout and a series is a
column in it. A `Block` is one notification's readings: a device, the time stamped, the
columns and the values in parallel lists. The health engine keeps each device's counters
in arrays indexed by column (flatfab.telemetry.rates); whoever wants `Sample`s iterates a
block and gets them, made on demand.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from flatfab.telemetry.samples import COUNTERS, GAUGES, Metric, Number, Sample

SeriesId = tuple[Metric, str | None, int | None]  # metric, port, key: a device's series


class Kind(IntEnum):
    COUNTER = 0  # cumulative: judged by its delta
    GAUGE = 1  # a level (samples.GAUGES)
    STATE = 2  # oper-up: neither


def kind_of(metric: Metric) -> Kind:
    if metric in COUNTERS:
        return Kind.COUNTER
    return Kind.GAUGE if metric in GAUGES else Kind.STATE


class Layout:
    """The columns of one kind of source: append-only, so a column number never changes and
    a reader in another thread sees a prefix of the same list (written under a lock)."""

    def __init__(self) -> None:
        self.ids: list[SeriesId] = []
        self.kinds: list[Kind] = []
        self.slots: list[int] = []  # a gauge column's index among the gauges; -1 otherwise
        self.gauges = 0
        self._index: dict[SeriesId, int] = {}
        self._by_port: dict[str | None, list[int]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, metric: Metric, port: str | None, key: int | None) -> int:
        series = (metric, port, key)
        found = self._index.get(series)
        if found is not None:
            return found
        with self._lock:
            found = self._index.get(series)
            if found is None:
                found = len(self.ids)
                kind = kind_of(metric)
                self.ids.append(series)
                self.kinds.append(kind)
                self.slots.append(self.gauges if kind is Kind.GAUGE else -1)
                self.gauges += kind is Kind.GAUGE
                self._by_port.setdefault(port, []).append(found)
                self._index[series] = found
        return found

    def find(self, metric: Metric, port: str | None, key: int | None) -> int | None:
        """The column of a series, None if no source of this layout sent it yet."""
        return self._index.get((metric, port, key))

    def of_port(self, port: str | None) -> list[int]:
        """Every column of a port (None: the device's own series)."""
        return self._by_port.get(port, [])


@dataclass(slots=True)
class Block:
    """One notification's readings: `values[i]` is column `cols[i]` of `layout`, all stamped
    `time`, and so are `more_values` of `more_cols` (the subscriber packs integer counters
    in an array, 8 bytes a value, and keeps the rest, gauges and states, apart). Iterating
    it gives them as Samples."""

    device: str
    time: float
    layout: Layout
    cols: list[int]
    values: Sequence[Number]  # a list, or an array of unsigned 64-bit counters
    more_cols: list[int] = field(default_factory=list)
    more_values: Sequence[Number] = field(default_factory=list)  # or an array of floats
    # every one of `cols` is a counter's column and `values` an array of them (unsigned 64
    # bits): what the subscriber packs, so the engine skips asking
    counters: bool = False

    def __len__(self) -> int:
        return len(self.cols) + len(self.more_cols)

    def parts(self) -> tuple[tuple[list[int], Sequence[Number]], ...]:
        if not self.more_cols:
            return ((self.cols, self.values),)
        return ((self.cols, self.values), (self.more_cols, self.more_values))

    def __iter__(self) -> Iterator[Sample]:
        ids, device, stamp = self.layout.ids, self.device, self.time
        for cols, values in self.parts():
            for col, value in zip(cols, values, strict=True):
                metric, port, key = ids[col]
                yield Sample(device, port, metric, key, value, stamp)


class Readings:
    """What one tick took in: blocks (streamed) and loose samples (polled), in order of
    arrival within each. Iterates as Samples, made only when someone asks; `devices()` and
    `len()` without making any. Readings added with `keep=False` are counted and their
    devices named, and not kept: they do not iterate (`kept` says whether all were)."""

    __slots__ = ("_count", "_devices", "blocks", "kept", "loose")

    def __init__(self, blocks: Iterable[Block] = (), loose: Iterable[Sample] = ()) -> None:
        self.blocks: list[Block] = []
        self.loose: list[Sample] = []
        self.kept = True
        self._devices: set[str] = set()
        self._count = 0
        self.add(blocks, loose)

    def add(self, blocks: Iterable[Block], loose: Iterable[Sample], *,
            keep: bool = True) -> None:
        blocks, loose = list(blocks), list(loose)
        self._devices.update(b.device for b in blocks if len(b))
        self._devices.update(s.device for s in loose)
        self._count += sum(len(b) for b in blocks) + len(loose)
        if keep:
            self.blocks += blocks
            self.loose += loose
        elif blocks or loose:
            self.kept = False

    def __iter__(self) -> Iterator[Sample]:
        for block in self.blocks:
            yield from block
        yield from self.loose

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def devices(self) -> set[str]:
        """The devices that sent something."""
        return set(self._devices)
