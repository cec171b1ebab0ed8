"""The live health engine (the lossless plane and the physical layer): counter and gauge
samples in, findings raised and cleared out.

feed() takes samples as they arrive; tick(now), once per sample interval, judges what was
fed since the last tick and returns what changed. A condition is raised at the first tick
whose samples show it and cleared at the first tick whose samples show it no longer holds,
so both happen within one interval. A subject the tick's samples do not speak about keeps
its state: no data is not recovery. A target that stops sending for `silent_after`
intervals is itself a finding (its other findings are held: it is blind, not healthy);
findings whose counters stop arriving from a target that still talks are dropped as stale
after the same time.

Work per tick is proportional to the samples fed since the last one (plus the active
findings and the targets seen); memory is fixed per series, per target and per finding.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from flatfab.checks.base import Finding
from flatfab.model.state import FabricState
from flatfab.telemetry import conditions
from flatfab.telemetry.conditions import Context, Subject
from flatfab.telemetry.layout import Block
from flatfab.telemetry.lossless_map import LosslessMap
from flatfab.telemetry.physical_map import PhysicalMap
from flatfab.telemetry.rates import Rates, SeriesKey, Window
from flatfab.telemetry.samples import Gone, Sample
from flatfab.telemetry.thresholds import Thresholds


@dataclass(frozen=True)
class Changes:
    """What one tick changed: findings newly raised, and findings cleared (as last seen)."""

    raised: list[Finding]
    cleared: list[Finding]
    # the tick's windows (what the live view shows): handed over, not kept by the engine,
    # so a watch holds them only while it shows them (tens of MB at a thousand switches)
    windows: Mapping[SeriesKey, Window] = field(default_factory=dict, compare=False,
                                                repr=False)

    def __bool__(self) -> bool:
        return bool(self.raised or self.cleared)


def _ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Worst first, then check, device, port, message: the reports' order."""
    return sorted(findings, key=lambda f: f.sort_key)


# allocations between young collections while watching (CPython's default is 700), and
# young collections between middle ones (default 10). A tick brings millions of samples and
# windows; with the defaults the GC walked the fabric's series in full 5 times an interval,
# 1.9 of 5 CPU s at 300 switches (benchmarks/watch.py); a middle collection walks every
# sample still buffered, so those are made rarer too (10% -> 4% of the engine's CPU at 600).
GC_YOUNG: Final = 200_000
GC_MIDDLE: Final = 100


def collect_less() -> tuple[int, int, int]:
    """Make the cyclic garbage collector's runs rarer for a process that streams samples
    (they are acyclic: reference counting frees them). Returns the thresholds to restore."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], GC_YOUNG), max(old[1], GC_MIDDLE), old[2])
    return old


class HealthEngine:
    def __init__(self, plan: FabricState, thresholds: Thresholds) -> None:
        self.thresholds = thresholds
        self._ctx = Context(thresholds, LosslessMap(plan), PhysicalMap(plan))
        self._rates = Rates()
        # target -> the tick that last heard from it: arrival, not the source's stamp, so a
        # target whose clock is off is not silent (rates use the stamps: one clock per series)
        self._last_seen: dict[str, float] = {}
        self._heard: dict[str, None] = {}  # targets fed since the last tick
        self._active: dict[Subject, Finding] = {}
        self._judged: dict[Subject, float] = {}  # active subject -> tick that last judged it

    @property
    def rates(self) -> Rates:
        return self._rates

    def feed(self, samples: Iterable[Sample]) -> None:
        self._rates.add_all(samples, self._heard)

    def feed_blocks(self, blocks: Iterable[Block]) -> None:
        """Streamed notifications, as they came (flatfab.telemetry.layout)."""
        self._rates.add_blocks(blocks, self._heard)

    def forget(self, gone: Iterable[Gone]) -> None:
        """Series a target deleted end: their counts are not judged, and one that comes back
        starts from a new baseline. A finding on them clears once no tick judges it (stale)."""
        for ended in gone:
            self._rates.forget(ended.device, ended.metric, ended.port, ended.key)

    def tick(self, now: float) -> Changes:
        windows = self._rates.drain(conditions.listing(self._ctx,
                                                                      self._active))
        for device in self._heard:
            self._last_seen[device] = now
        self._heard.clear()
        verdicts: dict[Subject, Finding | None] = {}
        active = self._active
        for condition in conditions.CONDITIONS:
            for subject, verdict in condition(windows, self._ctx):
                # "holds not" for a subject not active changes nothing: most of a healthy
                # fabric's verdicts, not kept (unless it overrides an earlier verdict)
                if verdict is None and (not active or subject not in active) and (
                        not verdicts or subject not in verdicts):
                    continue  # (emptiness first: a healthy fabric hashes no subject here)
                verdicts[subject] = verdict
        silent = self._silent(now)
        for device, last in self._last_seen.items():
            subject = (conditions.SILENT, device, "", "")
            verdicts[subject] = conditions.silent(device, last, now, self.thresholds) \
                if device in silent else None
        raised: list[Finding] = []
        cleared: list[Finding] = []
        for subject, finding in verdicts.items():
            was = self._active.get(subject)
            if finding is None:
                if was is not None:
                    cleared.append(self._drop(subject))
                continue
            if was is None:
                raised.append(finding)
            self._active[subject] = finding  # the newest figures, same identity
            self._judged[subject] = now
        cleared.extend(self._stale(now, silent))
        return Changes(_ordered(raised), _ordered(cleared), windows)

    def active(self) -> list[Finding]:
        return _ordered(self._active.values())

    def _drop(self, subject: Subject) -> Finding:
        self._judged.pop(subject, None)
        return self._active.pop(subject)

    def _silent(self, now: float) -> set[str]:
        quiet = self.thresholds.silent_s
        return {d for d, last in self._last_seen.items() if now - last > quiet}

    def _stale(self, now: float, silent: set[str]) -> list[Finding]:
        """Findings not judged for `silent_after` intervals on a target that still talks
        (the port went away, or its counters stopped while others arrive)."""
        quiet = self.thresholds.silent_s
        old = [s for s, when in self._judged.items()
               if now - when > quiet and s[1] not in silent]
        return [self._drop(s) for s in old]
