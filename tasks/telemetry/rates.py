"""Counter deltas per series (device, port, metric, key), drained once per tick.

Each series keeps its last reading and what it counted since the last drain: memory is
fixed per series however long the stream runs. A value going down is a counter reset (the
device cleared it, or rebooted): the reading becomes the new baseline and counts nothing,
so a reset never looks like a burst. A reading not newer than the last one is a duplicate or
arrived late, and is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from tasks.telemetry.samples import COUNTERS, Metric, Sample

SeriesKey = tuple[str, str | None, Metric, int | None]  # device, port, metric, key


@dataclass(frozen=True, slots=True)
class Window:
    """What a series counted between two drains: `delta` over `start`..`end` (sample times)."""

    delta: int
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


@dataclass(slots=True)
class _Series:
    value: int
    time: float
    delta: int = 0
    start: float | None = None  # start of the pending window (None: nothing pending)


class Rates:
    """Cumulative counters in, windows of deltas out."""

    def __init__(self) -> None:
        self._series: dict[SeriesKey, _Series] = {}
        self._moved: dict[SeriesKey, None] = {}  # pending since the last drain, in order
        self.resets = 0  # counter resets seen (for tests and diagnostics)

    def __len__(self) -> int:
        return len(self._series)

    def add(self, sample: Sample) -> None:
        if sample.metric not in COUNTERS:
            return  # a state (oper_up), not a counter: it has no rate
        key: SeriesKey = (sample.device, sample.port, sample.metric, sample.key)
        series = self._series.get(key)
        if series is None:  # the first reading is a baseline: it never counts
            self._series[key] = _Series(sample.value, sample.time)
            return
        if sample.time <= series.time:
            return
        if sample.value < series.value:
            self.resets += 1
        else:
            if series.start is None:
                series.start = series.time
            series.delta += sample.value - series.value
            self._moved[key] = None
        series.value, series.time = sample.value, sample.time

    def drain(self) -> dict[SeriesKey, Window]:
        """The window of every series that got a newer reading since the last drain."""
        windows: dict[SeriesKey, Window] = {}
        for key in self._moved:
            series = self._series[key]
            if series.start is not None and series.time > series.start:
                windows[key] = Window(series.delta, series.start, series.time)
            series.delta, series.start = 0, None
        self._moved.clear()
        return windows
