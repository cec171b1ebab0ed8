"""Synthetic counter streams over a planned fabric, for the health engine's tests.

A Stream holds every counter a healthy lab fabric would report (switch ports: PFC per
lossless priority, watchdog, per-queue tx/drops/ECN, and on each end of a physical link its
FEC codewords and carrier transitions; host NICs: DCQCN counters) and how much each grows per
interval, and the gauges (a physical port's pre-FEC BER, a healthy 1e-9) at their level.
step() advances one interval and returns the samples of every target that is not muted.
Tests change one growth (or value, or level) to start a condition.
"""

from __future__ import annotations

from functools import cache

from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState, Role
from flatfab.plan.planner import plan
from flatfab.telemetry.samples import Metric, Sample
from tests.support.paths import ROOT

Key = tuple[str, str | None, Metric, int | None]
START = 1_764_000_000.0  # an epoch time: samples carry wall-clock seconds


@cache
def lab_plan() -> FabricState:
    return plan(load_intent(ROOT / "intents" / "lab"))


class Stream:
    def __init__(self, state: FabricState, interval_s: float = 10.0) -> None:
        self.interval_s = interval_s
        self.time = START
        self.values: dict[Key, int] = {}
        self.growth: dict[Key, int] = {}
        self.levels: dict[Key, float] = {}  # gauges: their level now
        self.muted: set[str] = set()
        lossless = state.lossless.lossless if state.lossless is not None else []
        for device in state.devices.values():
            for iface in device.interfaces.values():
                if device.role is Role.HOST and iface.nic is not None:
                    self._host(device.name, iface.name)
                elif iface.qos is not None and iface.parent is None:
                    self._switch_port(device.name, iface.name, lossless)
                    if iface.peer is not None:
                        self._physical(device.name, iface.name)

    def _counter(self, key: Key, growth: int) -> None:
        self.values[key] = 1000
        self.growth[key] = growth

    def _switch_port(self, device: str, port: str, lossless: list[int]) -> None:
        for priority in lossless:
            # a little ordinary back-pressure: 5 pps each way, far below every threshold
            self._counter((device, port, Metric.PFC_RX, priority), 50)
            self._counter((device, port, Metric.PFC_TX, priority), 50)
            self._counter((device, port, Metric.WATCHDOG, priority), 0)
        for queue in range(8):
            self._counter((device, port, Metric.QUEUE_TX, queue), 100_000)
            self._counter((device, port, Metric.QUEUE_DROPS, queue),
                          0 if queue in lossless else 7)  # lossy queues may drop
            self._counter((device, port, Metric.QUEUE_ECN, queue),
                          40 if queue in lossless else 0)

    def _physical(self, device: str, port: str) -> None:
        # a healthy link corrects a few codewords, loses none and does not flap
        self._counter((device, port, Metric.FEC_CORRECTED, None), 500)
        self._counter((device, port, Metric.FEC_UNCORRECTABLE, None), 0)
        self._counter((device, port, Metric.CARRIER_TRANSITIONS, None), 0)
        self.levels[(device, port, Metric.PRE_FEC_BER, None)] = 1e-9

    def _host(self, device: str, port: str) -> None:
        self._counter((device, port, Metric.NIC_ECN_MARKED_RX, None), 30)
        self._counter((device, port, Metric.NIC_CNP_SENT, None), 15)
        self._counter((device, port, Metric.NIC_CNP_HANDLED, None), 20)
        self._counter((device, port, Metric.NIC_OUT_OF_BUFFER, None), 0)

    def set(self, device: str, port: str | None, metric: Metric, key: int | None,
            growth: int) -> None:
        """How much a counter grows per interval from the next step on."""
        self.values.setdefault((device, port, metric, key), 0)
        self.growth[(device, port, metric, key)] = growth

    def level(self, device: str, port: str | None, metric: Metric, value: float) -> None:
        """A gauge's level from the next step on."""
        self.levels[(device, port, metric, None)] = value

    def clear(self, device: str) -> None:
        """The device's counters start again from zero (a reboot or `clear counters`)."""
        for key in self.values:
            if key[0] == device:
                self.values[key] = 0

    def step(self) -> list[Sample]:
        self.time += self.interval_s
        samples = []
        for key, value in self.values.items():
            self.values[key] = value + self.growth[key]
            if key[0] in self.muted:
                continue
            device, port, metric, index = key
            samples.append(Sample(device, port, metric, index, self.values[key], self.time))
        for (device, port, metric, index), level in self.levels.items():
            if device not in self.muted:
                samples.append(Sample(device, port, metric, index, level, self.time))
        return samples
