"""The watch loop against real gNMI targets on 127.0.0.1 (TLS + password) over the lab plan:
clean streams stay quiet, lossless drops are raised and cleared within two intervals, a
stopped target is named silent and clears on restart, a bad certificate is one line while
the others stream."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from flatfab.checks.base import Finding
from flatfab.telemetry import conditions
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from flatfab.telemetry.samples import Metric
from flatfab.telemetry.targets import TargetSpec
from flatfab.telemetry.thresholds import Thresholds
from flatfab.workflows.commands.watch import TickView, Watch, WatchResult
from tests.doubles.gnmi import HealthyCounters as Counters
from tests.doubles.gnmi import LabPki
from tests.support.telemetry_streams import lab_plan

USER_ENV, PASS_ENV, WRONG_ENV = "TEST_WATCH_USER", "TEST_WATCH_PASS", "TEST_WATCH_WRONG"
INTERVAL = 0.4
LOSSLESS_Q, LOSSY_Q = 3, 0  # the lab's RoCE queue, and best effort
PORTS = {"leaf1": ("swp1", "swp51"), "leaf2": ("swp1", "swp52"), "spine1": ("swp1",)}


@dataclass
class Fabric:
    """Targets, their counters, and a watch running in a thread; ticks recorded."""

    pki: LabPki
    counters: dict[str, Counters] = field(default_factory=dict)
    targets: dict[str, GnmiTarget] = field(default_factory=dict)
    ticks: list[TickView] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    result: WatchResult | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self, device: str, port: int = 0) -> GnmiTarget:
        counters = self.counters.setdefault(device, Counters(PORTS[device]))
        target = GnmiTarget("127.0.0.1", port, counters, Credentials("flatfab", "s3cret"),
                            self.pki.cert, self.pki.key, name=device, poll_s=0.05)
        target.start()
        self.targets[device] = target
        return target

    def spec(self, device: str, *, ca: Path | None = None,
             password_env: str = PASS_ENV) -> TargetSpec:
        return TargetSpec(device, "127.0.0.1", self.targets[device].port,
                          ca or self.pki.ca_file, username_env=USER_ENV,
                          password_env=password_env)

    def watch(self, specs: list[TargetSpec], *, keep_readings: bool = True,
              **run: int) -> Watch:
        runner = Watch(lab_plan(), Thresholds(interval_s=INTERVAL), specs,
                       on_line=self._line, backoff_s=(0.05, 0.2), keep_readings=keep_readings)

        def go() -> None:
            self.result = runner.run(on_tick=self._tick, stop=self.stop, **run)
        self._thread = threading.Thread(target=go, daemon=True)
        self._thread.start()
        return runner

    def finish(self, timeout: float = 15.0, *, stop: bool = True) -> WatchResult:
        if stop:
            self.stop.set()
        assert self._thread is not None
        self._thread.join(timeout)
        assert self.result is not None
        return self.result

    def _tick(self, tick: TickView) -> None:
        with self._lock:
            self.ticks.append(tick)

    def _line(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)

    def now(self) -> int:
        with self._lock:
            return len(self.ticks)

    def until(self, ok: Callable[[TickView], bool], timeout: float = 10.0) -> TickView:
        """The first tick (from now on) for which ok() holds."""
        seen = self.now()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                for tick in self.ticks[seen:]:
                    if ok(tick):
                        return tick
                seen = len(self.ticks)
            time.sleep(0.02)
        raise AssertionError(f"not within {timeout} s; last active: "
                             f"{[f.message for f in self.ticks[-1].active] if self.ticks else []}")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> LabPki:
    return LabPki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_ENV, "flatfab")
    monkeypatch.setenv(PASS_ENV, "s3cret")
    monkeypatch.setenv(WRONG_ENV, "not-the-password")


@pytest.fixture
def fabric(pki: LabPki) -> Iterator[Fabric]:
    fab = Fabric(pki)
    for device in PORTS:
        fab.serve(device)
    yield fab
    fab.stop.set()
    if fab._thread is not None:
        fab._thread.join(15.0)
    for target in fab.targets.values():
        target.stop()


def _of(check: str, findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.check == check]


def _streaming(fab: Fabric, devices: set[str]) -> TickView:
    """Wait until every device in `devices` has delivered in one tick."""
    return fab.until(lambda t: devices <= t.samples.devices())


def test_a_clean_run_has_no_findings(fabric: Fabric) -> None:
    fabric.watch([fabric.spec(d) for d in PORTS], count=8)
    result = fabric.finish(timeout=20.0, stop=False)  # it ends by itself
    assert result.ticks == 8
    assert result.findings == [], [f.message for f in result.findings]
    assert result.streamed == sorted(PORTS)
    assert not any(t.changes.raised for t in fabric.ticks)
    assert not result.failed


@pytest.mark.parametrize("keep_readings", [True, False])
def test_lossless_drops_are_raised_within_two_intervals_and_cleared(
        fabric: Fabric, keep_readings: bool) -> None:
    # readings not kept (`flatfab watch` without a live view or exporter): what arrives is
    # fed to the engine between ticks and let go; the judging is the same
    fabric.watch([fabric.spec(d) for d in PORTS], keep_readings=keep_readings)
    _streaming(fabric, set(PORTS))
    _streaming(fabric, set(PORTS))  # a second round: every series has its baseline
    fabric.counters["leaf1"].grow(Metric.QUEUE_DROPS, "swp1", LOSSLESS_Q, 40)
    start = fabric.now()
    raised = fabric.until(lambda t: bool(_of(conditions.LOSSLESS_DROPS, t.changes.raised)))
    assert raised.number - start <= 2, f"raised after {raised.number - start} intervals"
    finding = _of(conditions.LOSSLESS_DROPS, raised.changes.raised)[0]
    assert (finding.device, finding.port) == ("leaf1", "swp1")
    assert f"queue {LOSSLESS_Q}" in finding.message or str(LOSSLESS_Q) in finding.actual
    # only that port's lossless queue: the lossy queue's drops are fine
    assert [(f.device, f.port) for f in _of(conditions.LOSSLESS_DROPS, raised.active)] == \
        [("leaf1", "swp1")]
    fabric.counters["leaf1"].grow(Metric.QUEUE_DROPS, "swp1", LOSSLESS_Q, 0)
    start = fabric.now()
    cleared = fabric.until(lambda t: bool(_of(conditions.LOSSLESS_DROPS, t.changes.cleared)))
    assert cleared.number - start <= 2, f"cleared after {cleared.number - start} intervals"
    assert not _of(conditions.LOSSLESS_DROPS, cleared.active)
    assert bool(list(cleared.samples)) is keep_readings and len(cleared.samples) > 0
    assert fabric.finish().findings == []


def test_a_port_the_target_deletes_ends_its_series(fabric: Fabric) -> None:
    """A port whose leaves the target deletes (gNMI 3.5.2.3) ends its series in the watch:
    the tick carries what went, the rates forget it, and no finding or silence follows."""
    runner = fabric.watch([fabric.spec("leaf1")])
    _streaming(fabric, {"leaf1"})
    _streaming(fabric, {"leaf1"})
    counted = len(runner.engine.rates)  # two ports' counter series
    fabric.counters["leaf1"].remove("swp51")
    tick = fabric.until(lambda t: bool(t.gone))
    assert {(g.device, g.port) for g in tick.gone} == {("leaf1", "swp51")}
    assert {g.metric for g in tick.gone} >= {Metric.QUEUE_TX, Metric.PFC_RX, Metric.OPER_UP}
    _streaming(fabric, {"leaf1"})
    assert len(runner.engine.rates) == counted // 2  # swp1's alone
    assert fabric.finish().findings == []


def test_a_stopped_target_is_silent_and_clears_when_it_is_back(fabric: Fabric) -> None:
    fabric.watch([fabric.spec(d) for d in PORTS])
    _streaming(fabric, set(PORTS))
    port = fabric.targets["leaf2"].port
    fabric.targets["leaf2"].stop()
    silent = fabric.until(lambda t: bool(_of(conditions.SILENT, t.changes.raised)))
    assert [f.device for f in _of(conditions.SILENT, silent.active)] == ["leaf2"]
    assert any(line.startswith("leaf2 ") for line in fabric.lines)  # said, in one line
    fabric.serve("leaf2", port)  # back on the same address
    back = fabric.until(lambda t: bool(_of(conditions.SILENT, t.changes.cleared)))
    assert not _of(conditions.SILENT, back.active)
    assert any("reconnected" in line for line in fabric.lines if line.startswith("leaf2 "))
    assert fabric.finish().findings == []


def test_a_refused_target_is_one_line_and_the_others_stream(fabric: Fabric) -> None:
    specs = [fabric.spec("leaf1", ca=fabric.pki.other_ca_file), fabric.spec("leaf2"),
             fabric.spec("spine1", password_env=WRONG_ENV)]
    fabric.watch(specs)
    for _ in range(4):
        _streaming(fabric, {"leaf2"})
    result = fabric.finish()
    leaf1 = [line for line in fabric.lines if line.startswith("leaf1 ")]
    spine1 = [line for line in fabric.lines if line.startswith("spine1 ")]
    assert len(leaf1) == 1 and "certificate not trusted" in leaf1[0], leaf1
    assert len(spine1) == 1 and "refused" in spine1[0], spine1
    assert all("s3cret" not in line and "not-the-password" not in line
               for line in fabric.lines)
    assert result.streamed == ["leaf2"]
    # blind targets are findings at the end: a watch that saw nothing is not healthy
    assert [(f.check, f.device) for f in result.findings] == [
        (conditions.SILENT, "leaf1"), (conditions.SILENT, "spine1")]
    assert "certificate not trusted" in result.findings[0].message
