"""Counter deltas per series (device, port, metric, key), drained once per tick.

Each series keeps its last reading and what it counted since the last drain: memory is
fixed per series however long the stream runs. A value going down is a counter reset (the
device cleared it, or rebooted): the reading becomes the new baseline and counts nothing,
so a reset never looks like a burst. A reading not newer than the last one is a duplicate or
arrived late, and is ignored.

A gauge (samples.GAUGES: the pre-FEC BER) has no delta: what a drain gives for it is its
level, the newest reading since the last drain and the highest (`WindowMap.levels`).

The series are held by column (flatfab.telemetry.layout): per device and layout, four
arrays indexed by column (last value, its time, the delta and the start of the pending
window), 32 bytes a series, not an object each. A drain hands the arrays of what moved to
the `WindowMap` it returns, which makes a `Window` only for a series someone reads: the
ones its `Listing` names (a healthy fabric's judged counters mostly stay flat), and any
looked up by key.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from flatfab.telemetry.layout import Block, Kind, Layout
from flatfab.telemetry.samples import Metric, Number, Sample

SeriesKey = tuple[str, str | None, Metric, int | None]  # device, port, metric, key

_NONE: Final = -math.inf  # no time: no baseline yet, or no window pending
_U64: Final = 1 << 64


@dataclass(frozen=True, slots=True)
class Window:
    """What a series counted between two drains: `delta` over `start`..`end` (sample times)."""

    delta: Number  # an int: counters are (samples.Sample)
    start: float
    end: float

    @property
    def span(self) -> float:
        return self.end - self.start

    @property
    def rate(self) -> float:
        """Per second."""
        return self.delta / self.span

    def per_interval(self, interval_s: float) -> float:
        """The count scaled to one interval; never scaled up (a short window counts as is)."""
        return self.delta * interval_s / max(self.span, interval_s)


@dataclass(frozen=True, slots=True)
class Level:
    """A gauge between two drains: its newest reading (`value`, stamped `time`) and the
    highest one (`peak`: a spike between two ticks is not missed)."""

    value: float
    peak: float
    time: float


@dataclass(frozen=True)
class Listing:
    """Which windows a drain lists in `by_metric` (the others are still there by key):
    `moved` metrics' when they counted something, `always` metrics' whatever they counted,
    and every window of the (device, port)s in `keep` (where a finding is active, or a
    condition tracks a series over ticks); the levels of `levels`' gauges."""

    moved: frozenset[Metric] = frozenset()
    always: frozenset[Metric] = frozenset()
    keep: frozenset[tuple[str, str | None]] = frozenset()
    levels: frozenset[Metric] | None = None  # the gauges made Levels (None: every one)


_ALWAYS: Final = 2  # a column's code in a listing: listed whatever it counted
_MOVED: Final = 1  # listed when it counted something; 0: never (looked up by key only)


def _codes(layout: Layout, listing: Listing) -> bytearray:
    """Per column of `layout`, how `listing` lists its windows."""
    return bytearray(_ALWAYS if metric in listing.always else
                     _MOVED if metric in listing.moved else 0
                     for metric, _, _ in layout.ids)


def _counter(value: Number) -> int | None:
    """A counter's reading as an unsigned 64-bit integer (a whole float taken as its
    integer); None for a fraction, a negative or anything past 64 bits: not a reading."""
    if type(value) is not int:
        if not isinstance(value, float) or not value.is_integer():
            return None
        value = int(value)
    return value if 0 <= value < _U64 else None


class _Device:
    """One device's series of one layout, by column."""

    __slots__ = ("delta", "device", "layout", "level", "leveled", "moved", "peak", "start",
                 "time", "value")

    def __init__(self, device: str, layout: Layout) -> None:
        self.device, self.layout = device, layout
        self.value = array("Q")  # last reading (counters); 0 for other kinds
        self.time = array("d")  # its time; -inf: no baseline yet
        self.delta = array("Q")  # counted since the last drain
        self.start = array("d")  # start of the pending window; -inf: nothing pending
        self.moved: list[int] = []  # columns pending since the last drain, in order
        # gauges, by slot (Layout.slots): the newest level and the highest since the last
        # drain (-inf: none read since), and the columns read since, in order
        self.level = array("d")
        self.peak = array("d")
        self.leveled: list[int] = []

    def fit(self) -> None:
        """Room for every column of the layout (it grows as targets send new leaves)."""
        more = len(self.layout) - len(self.time)
        if more > 0:
            self.value.extend(array("Q", [0]) * more)
            self.delta.extend(array("Q", [0]) * more)
            self.time.extend(array("d", [_NONE]) * more)
            self.start.extend(array("d", [_NONE]) * more)
        more = self.layout.gauges - len(self.level)
        if more > 0:
            self.level.extend(array("d", [0.0]) * more)
            self.peak.extend(array("d", [_NONE]) * more)


@dataclass(slots=True)
class _Drained:
    """A device's arrays as a drain found them: the windows of `moved` columns."""

    device: str
    layout: Layout
    delta: array[int]
    start: array[float]
    end: array[float]
    moved: list[int]

    def window(self, col: int) -> Window | None:
        start, end = self.start[col], self.end[col]
        if start == _NONE or not end > start:  # nothing pending, or nothing newer
            return None
        return Window(self.delta[col], start, end)


class WindowMap(Mapping[SeriesKey, Window]):
    """What `drain` returns: the windows by series (a Window made when read), each metric's
    listed series apart in `by_metric` (so a condition reads its own metrics' windows, not
    every series of the fabric), and the gauges' levels beside them (`levels`)."""

    __slots__ = ("_devices", "_listed", "by_metric", "levels")

    def __init__(self) -> None:
        self.by_metric: dict[Metric, list[SeriesKey]] = {}
        self.levels: dict[SeriesKey, Level] = {}
        self._listed: dict[SeriesKey, Window] = {}
        self._devices: dict[str, list[_Drained]] = {}

    def __getitem__(self, key: SeriesKey) -> Window:
        found = self._listed.get(key)
        if found is None:
            found = self._look_up(key)
            if found is None:
                raise KeyError(key)
        return found

    def get(self, key: SeriesKey, default: Window | None = None) -> Window | None:  # type: ignore[override]
        found = self._listed.get(key)
        if found is None:
            found = self._look_up(key)
        return default if found is None else found

    def _look_up(self, key: SeriesKey) -> Window | None:
        device, port, metric, index = key
        for drained in self._devices.get(device, ()):
            col = drained.layout.find(metric, port, index)
            if col is not None and col < len(drained.end):
                return drained.window(col)
        return None

    def __iter__(self) -> Iterator[SeriesKey]:
        for drained in self._all():
            ids = drained.layout.ids
            for col in drained.moved:
                if drained.window(col) is not None:
                    metric, port, index = ids[col]
                    yield (drained.device, port, metric, index)

    def __len__(self) -> int:
        return sum(1 for drained in self._all() for col in drained.moved
                   if drained.window(col) is not None)

    def size_bound(self) -> int:
        """At least `len()`, without walking a window (the series that moved)."""
        return sum(len(drained.moved) for drained in self._all())

    def _all(self) -> Iterator[_Drained]:
        for per_device in self._devices.values():
            yield from per_device


class Rates:
    """Cumulative counters in, windows of deltas out.

    Per reading nothing new is kept but the reading, in its device's arrays: a tick's
    millions of readings must not leave millions of objects behind."""

    def __init__(self) -> None:
        self._devices: dict[tuple[str, int], _Device] = {}  # (device, id(layout))
        self._by_name: dict[str, list[_Device]] = {}
        self._loose = Layout()  # the columns of readings that came as Samples
        self._count = 0  # series with a baseline (counters and gauges)
        self.resets = 0  # counter resets seen (for tests and diagnostics)

    def __len__(self) -> int:
        return self._count

    def add(self, sample: Sample) -> None:
        self.add_all((sample,))

    def add_all(self, samples: Iterable[Sample], heard: dict[str, None] | None = None) -> None:
        """Samples one at a time (polled counters, tests): each goes to its device's arrays
        in the layout of loose samples (the names of their devices go in `heard`, if
        given)."""
        column = self._loose.column
        for s in samples:
            if heard is not None:
                heard[s.device] = None
            self._take(self._device(s.device, self._loose), s.time,
                       (column(s.metric, s.port, s.key),), (s.value,))

    def add_blocks(self, blocks: Iterable[Block], heard: dict[str, None] | None = None) -> None:
        """Streamed notifications, each one device's readings by column."""
        for block in blocks:
            if not len(block):
                continue
            if heard is not None:
                heard[block.device] = None
            dev = self._device(block.device, block.layout)
            if block.counters:
                self._take_counters(dev, block.time, block.cols, block.values)
                if block.more_cols:
                    self._take(dev, block.time, block.more_cols, block.more_values)
                continue
            for cols, values in block.parts():
                self._take(dev, block.time, cols, values)

    def _device(self, name: str, layout: Layout) -> _Device:
        dev = self._devices.get((name, id(layout)))
        if dev is None:
            dev = self._devices[(name, id(layout))] = _Device(name, layout)
            self._by_name.setdefault(name, []).append(dev)
        return dev

    def _take(self, dev: _Device, stamp: float, cols: Iterable[int],
              values: Iterable[Number]) -> None:
        """Readings of any kind: the gauges' levels kept, the counters in range taken by
        `_take_counters` (a state has no rate)."""
        dev.fit()
        kinds = dev.layout.kinds
        counted: list[int] = []
        counts: list[int] = []
        for col, value in zip(cols, values, strict=True):
            kind = kinds[col]
            if kind is Kind.GAUGE:
                self._level(dev, col, value, stamp)
            elif kind is Kind.COUNTER:
                whole = _counter(value)
                if whole is not None:
                    counted.append(col)
                    counts.append(whole)
        if counted:
            self._take_counters(dev, stamp, counted, counts)

    def _take_counters(self, dev: _Device, stamp: float, cols: Iterable[int],
                       values: Iterable[Number]) -> None:
        """`_take` for what is known to be counters in range (Block.counters): the loop
        a fabric's millions of readings a tick go through."""
        dev.fit()
        last_value, last_time, delta, start = dev.value, dev.time, dev.delta, dev.start
        moved = dev.moved
        for col, value in zip(cols, values, strict=True):
            was = last_time[col]
            if stamp <= was:
                continue  # a duplicate, or late (never a first reading: its time is -inf)
            if was == _NONE:  # the first reading is a baseline: it never counts
                last_value[col], last_time[col] = value, stamp  # type: ignore[assignment]
                self._count += 1
                continue
            before = last_value[col]
            if value < before:
                self.resets += 1
            else:
                if start[col] == _NONE:  # its first move since the last drain
                    start[col] = was
                    moved.append(col)
                delta[col] += value - before  # type: ignore[assignment]
            last_value[col], last_time[col] = value, stamp  # type: ignore[assignment]

    def _level(self, dev: _Device, col: int, value: Number, stamp: float) -> None:
        last = dev.time[col]
        if last != _NONE and stamp <= last:
            return  # a duplicate, or late
        if last == _NONE:
            self._count += 1
        dev.time[col] = stamp
        slot = dev.layout.slots[col]
        level = float(value)
        dev.level[slot] = level
        if dev.peak[slot] == _NONE:  # its first reading since the last drain
            dev.peak[slot] = level
            dev.leveled.append(col)
        elif level > dev.peak[slot]:
            dev.peak[slot] = level

    def drain(self, listing: Listing | None = None) -> WindowMap:
        """The window of every series that got a newer reading since the last drain (listed
        by metric as `listing` says; None: every one), and the level of every gauge read
        since."""
        windows = WindowMap()
        for dev in self._devices.values():
            if dev.leveled:
                self._drain_levels(windows, dev, listing)
        kept_ports: dict[str, list[str | None]] = {}
        for where, port in listing.keep if listing is not None else ():
            kept_ports.setdefault(where, []).append(port)
        codes: dict[int, bytearray] = {}
        for dev in self._devices.values():
            if not dev.moved:
                continue
            n = len(dev.time)
            drained = _Drained(dev.device, dev.layout, dev.delta, dev.start,
                               array("d", dev.time), dev.moved)
            dev.delta, dev.start, dev.moved = (array("Q", [0]) * n, array("d", [_NONE]) * n,
                                               [])
            windows._devices.setdefault(dev.device, []).append(drained)
            if listing is None:
                listed = drained.moved
            else:
                code = codes.get(id(dev.layout))
                if code is None or len(code) < n:
                    code = codes[id(dev.layout)] = _codes(dev.layout, listing)
                delta = drained.delta
                # a comprehension, not a loop: a fabric's millions of moved series pass here
                listed = [col for col in drained.moved
                          if code[col] == _ALWAYS or (code[col] and delta[col])]
                ports = kept_ports.get(dev.device)
                if ports:
                    kept = {col for port in ports for col in dev.layout.of_port(port)}
                    chosen = set(listed)
                    listed += [col for col in drained.moved if col in kept and col not in chosen]
            self._list(windows, drained, listed)
        return windows

    @staticmethod
    def _drain_levels(windows: WindowMap, dev: _Device, listing: Listing | None) -> None:
        """The gauges read since the last drain, as Levels where `listing` wants them (a
        fabric's lanes' optical power is hundreds of thousands a tick, read by no
        condition), every one of them made ready for the next interval."""
        ids, slots, levels = dev.layout.ids, dev.layout.slots, windows.levels
        wanted = None if listing is None else listing.levels
        for col in dev.leveled:
            slot = slots[col]
            metric, port, index = ids[col]
            if wanted is None or metric in wanted:
                levels[(dev.device, port, metric, index)] = Level(
                    dev.level[slot], dev.peak[slot], dev.time[col])
            dev.peak[slot] = _NONE
        dev.leveled = []

    @staticmethod
    def _list(windows: WindowMap, drained: _Drained, cols: Iterable[int]) -> None:
        ids, device = drained.layout.ids, drained.device
        by_metric, listed = windows.by_metric, windows._listed
        for col in cols:
            window = drained.window(col)
            if window is None:
                continue
            metric, port, index = ids[col]
            key = (device, port, metric, index)
            listed[key] = window
            found = by_metric.get(metric)
            if found is None:
                found = by_metric[metric] = []
            found.append(key)

    def forget(self, device: str, metric: Metric, port: str | None, key: int | None) -> int:
        """End the series a target deleted (a gNMI `delete`: the path no longer exists):
        `port` None is every port's, `key` None every key's. What they counted since the
        last drain is dropped with them, and a series of the same name that comes back
        starts from a new baseline. Returns how many series ended."""
        ended = 0
        for dev in self._by_name.get(device, ()):
            for col, (m, p, k) in enumerate(dev.layout.ids[:len(dev.time)]):
                if m is not metric or (port is not None and p != port) or (
                        key is not None and k != key):
                    continue
                if dev.time[col] == _NONE:
                    continue  # never read
                if dev.start[col] != _NONE:  # a pending window is never drained
                    dev.moved.remove(col)
                slot = dev.layout.slots[col]
                if slot >= 0 and dev.peak[slot] != _NONE:  # nor a pending level
                    dev.peak[slot] = _NONE
                    dev.leveled.remove(col)
                dev.time[col] = dev.start[col] = _NONE
                dev.delta[col] = 0
                ended += 1
        self._count -= ended
        return ended
