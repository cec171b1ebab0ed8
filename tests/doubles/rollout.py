"""Doubles for a rollout without a lab: a config driver's commit cycle, and the counters
of a healthy switch's gNMI target (tests/workflows/test_telemetry_gate.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from tasks.telemetry import paths
from tasks.telemetry.samples import Metric

LOSSLESS_Q, LOSSY_Q, PRIORITY = 3, 0, 3  # the lab's RoCE queue and priority, best effort


class Counters:
    """A healthy switch: traffic on both queues, drops only on the lossy one, no pauses;
    a test changes one growth per read to start a condition."""

    def __init__(self, ports: tuple[str, ...]) -> None:
        self._lock = threading.Lock()
        self.values: dict[tuple[Metric, str, int], int] = {}
        self.growth: dict[tuple[Metric, str, int], int] = {}
        for port in ports:
            for queue in (LOSSY_Q, LOSSLESS_Q):
                self._add(Metric.QUEUE_TX, port, queue, 500)
                self._add(Metric.QUEUE_DROPS, port, queue, 2 if queue == LOSSY_Q else 0)
                self._add(Metric.QUEUE_ECN, port, queue, 5 if queue == LOSSLESS_Q else 0)
            for metric in (Metric.PFC_RX, Metric.PFC_TX, Metric.WATCHDOG):
                self._add(metric, port, PRIORITY, 0)
        self.ports = ports

    def _add(self, metric: Metric, port: str, key: int, growth: int) -> None:
        self.values[(metric, port, key)] = 1000
        self.growth[(metric, port, key)] = growth

    def grow(self, metric: Metric, port: str, key: int, growth: int) -> None:
        with self._lock:
            self.growth[(metric, port, key)] = growth

    def __call__(self) -> list[tuple[str, int | str]]:
        with self._lock:
            for k, g in self.growth.items():
                self.values[k] += g
            out: list[tuple[str, int | str]] = [
                (paths.leaf_path(m, port, key), v) for (m, port, key), v in self.values.items()]
        return out + [(paths.leaf_path(Metric.OPER_UP, p), paths.leaf_value(Metric.OPER_UP, 1))
                      for p in self.ports]


class FakeDevice:
    """A config driver's commit cycle: candidate, commit with a revert timer, confirm or
    roll back. `on_commit` runs when the change lands (a test starts a storm there)."""

    def __init__(self, running: str, on_commit: Callable[[], None]) -> None:
        self.running, self.candidate = running, ""
        self.before: str | None = None  # the running config a pending commit replaced
        self.on_commit = on_commit
        self.history: list[str] = []

    def load_replace_candidate(self, config: str) -> None:
        self.candidate = config

    def compare_config(self) -> str:
        return "" if self.candidate == self.running else "-old\n+new\n"

    def discard_config(self) -> None:
        self.candidate = ""

    def get_config(self, retrieve: str = "all") -> dict[str, str]:
        return {"running": self.running}

    def commit_config(self, revert_in: int | None = None) -> None:
        self.before = self.running if revert_in else None
        self.running, self.candidate = self.candidate, ""
        self.history.append("commit")
        self.on_commit()

    def has_pending_commit(self) -> bool:
        return self.before is not None

    def confirm_commit(self) -> None:
        self.before = None
        self.history.append("confirm")

    def rollback(self) -> None:
        assert self.before is not None
        self.running, self.before = self.before, None
        self.history.append("revert")
