"""Counter deltas per series (device, port, metric, key), drained once per tick.

Each series keeps its last reading and what it counted since the last drain: memory is
fixed per series however long the stream runs. A value going down is a counter reset (the
device cleared it, or rebooted): the reading becomes the new baseline and counts nothing,
so a reset never looks like a burst. A reading not newer than the last one is a duplicate or
arrived late, and is ignored.

A gauge (samples.GAUGES: the pre-FEC BER) has no delta: what a drain gives for it is its
level, the newest reading since the last drain and the highest (`WindowMap.levels`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flatfab.telemetry.samples import COUNTERS, GAUGES, Metric, Number, Sample

SeriesKey = tuple[str, str | None, Metric, int | None]  # device, port, metric, key


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


@dataclass(slots=True)
class _Series:
    key: SeriesKey
    value: Number
    time: float
    delta: Number = 0
    start: float | None = None  # start of the pending window (None: nothing pending)


class WindowMap(dict[SeriesKey, Window]):
    """What `drain` returns: the windows by series, and each metric's series listed apart,
    so a condition reads its own metrics' windows and not every series of the fabric; the
    gauges' levels beside them (`levels`: a gauge has no window)."""

    __slots__ = ("by_metric", "levels")

    def __init__(self) -> None:
        super().__init__()
        self.by_metric: dict[Metric, list[SeriesKey]] = {}
        self.levels: dict[SeriesKey, Level] = {}


class Rates:
    """Cumulative counters in, windows of deltas out.

    Per sample nothing new is kept but the reading: a tick's millions of samples must not
    leave millions of objects behind for the garbage collector to walk (the pending series
    are listed by the series objects themselves, each knowing its key)."""

    def __init__(self) -> None:
        self._series: dict[SeriesKey, _Series] = {}
        self._moved: list[_Series] = []  # pending since the last drain, in order
        self._gauges: dict[SeriesKey, float] = {}  # gauge series -> time of its last reading
        self._levels: dict[SeriesKey, Level] = {}  # gauges read since the last drain
        self.resets = 0  # counter resets seen (for tests and diagnostics)

    def __len__(self) -> int:
        return len(self._series) + len(self._gauges)

    def add(self, sample: Sample) -> None:
        self.add_all((sample,))

    def add_all(self, samples: Iterable[Sample], heard: dict[str, None] | None = None) -> None:
        """`add` for many samples (the names of their devices go in `heard`, if given). One
        loop with its lookups held locally: a fabric sends millions of samples a tick."""
        every, moved, counters = self._series, self._moved, COUNTERS
        last_device = None
        for sample in samples:
            if heard is not None and sample.device is not last_device:
                last_device = sample.device  # a notification's samples share one device
                heard[last_device] = None
            metric = sample.metric
            if metric not in counters:
                if metric in GAUGES:  # a level: the newest and highest reading are kept
                    self._level(sample)
                continue  # a state (oper_up) has no rate
            key = (sample.device, sample.port, metric, sample.key)
            series = every.get(key)
            if series is None:  # the first reading is a baseline: it never counts
                every[key] = _Series(key, sample.value, sample.time)
                continue
            if sample.time <= series.time:
                continue
            if sample.value < series.value:
                self.resets += 1
            else:
                if series.start is None:  # its first move since the last drain
                    series.start = series.time
                    moved.append(series)
                series.delta += sample.value - series.value
            series.value, series.time = sample.value, sample.time

    def _level(self, sample: Sample) -> None:
        key = (sample.device, sample.port, sample.metric, sample.key)
        last = self._gauges.get(key)
        if last is not None and sample.time <= last:
            return  # a duplicate, or late
        self._gauges[key] = sample.time
        value = float(sample.value)
        pending = self._levels.get(key)
        peak = value if pending is None else max(pending.peak, value)
        self._levels[key] = Level(value, peak, sample.time)

    def drain(self) -> WindowMap:
        """The window of every series that got a newer reading since the last drain, and the
        level of every gauge read since."""
        windows = WindowMap()
        windows.levels, self._levels = self._levels, {}
        by_metric = windows.by_metric
        for series in self._moved:
            start = series.start
            if start is not None and series.time > start:
                key = series.key
                windows[key] = Window(series.delta, start, series.time)
                listed = by_metric.get(key[2])
                if listed is None:
                    listed = by_metric[key[2]] = []
                listed.append(key)
            series.delta, series.start = 0, None
        self._moved.clear()
        return windows

    def forget(self, device: str, metric: Metric, port: str | None, key: int | None) -> int:
        """End the series a target deleted (a gNMI `delete`: the path no longer exists):
        `port` None is every port's, `key` None every key's. What they counted since the
        last drain is dropped with them, and a series of the same name that comes back
        starts from a new baseline. Returns how many series ended."""
        def ends(k: SeriesKey) -> bool:
            return k[0] == device and k[2] is metric and (port is None or k[1] == port) \
                and (key is None or k[3] == key)

        if metric in GAUGES:
            gauges = [k for k in self._gauges if ends(k)]
            for series_key in gauges:
                del self._gauges[series_key]
                self._levels.pop(series_key, None)  # a pending level is never drained
            return len(gauges)
        ended = [k for k in self._series if ends(k)]
        for series_key in ended:
            self._series.pop(series_key).start = None  # a pending window is never drained
        return len(ended)
