"""The telemetry gate of a rollout batch: no new pause storm, lossless drop, ... for N seconds.

A runbook gate with a `telemetry:` block (flatfab.runbook.model.TelemetryGate) makes the
rollout watch each batch's devices, read-only, from before the commit until the gate
decides:

1. baseline, before the commit: the batch's devices (and their link peers) are watched for
   `baseline_s`; every finding active at any tick then is "already there";
2. commit and the gate's own checks, the watch running on;
3. window, after those checks pass: `quiet_s` seconds in which any finding of the gate's
   checks that is active on a changed device (or on a peer's port facing one) and was not
   in the baseline fails the gate at once. A changed switch with no counters in the window
   (no gNMI target and nothing to poll, a refused target, a silent one) fails it too: no
   telemetry is not quiet.

Counters come from the devices' gNMI targets, and from a poller for the rest, exactly as
`flatfab watch` reads them (flatfab.workflows.commands.watch.Watch). Hosts are watched where
they have a target; a host without one does not fail the gate (no NIC counters are polled yet).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flatfab.checks.base import Finding, Severity
from flatfab.model.state import FabricState, Role
from flatfab.runbook.model import TelemetryGate
from flatfab.telemetry import conditions
from flatfab.telemetry.targets import TargetSpec
from flatfab.telemetry.thresholds import Thresholds
from flatfab.workflows.commands.watch import Poller, TickView, Watch, WatchResult

# a finding's identity across ticks (the engine's subject, from what a Finding carries:
# `expected` names the priority/queue and direction, and does not change while it is active)
Key = tuple[str, str, str, str]
Event = Callable[..., None]  # Journal.event


def key_of(finding: Finding) -> Key:
    return (finding.check, finding.device or "", finding.port or "", finding.expected)


@dataclass(frozen=True)
class TelemetrySource:
    """Where a gate's counters come from: the thresholds (qos.yaml `telemetry:`), each
    device's gNMI target, and a factory of pollers for devices without one (it returns
    None, or a Poller whose `devices` are those it can poll). `flatfab rollout` builds it
    from the project (tasks/cli/rollout_telemetry.py); tests from doubles."""

    thresholds: Thresholds
    targets: Mapping[str, TargetSpec]
    poller: Callable[[list[str]], Poller | None] = lambda _devices: None
    backoff_s: tuple[float, float] = (0.5, 30.0)
    connect_s: float = 10.0  # how long a baseline waits for the first counters, at most


def facing_ports(plan: FabricState, changed: Iterable[str]) -> dict[str, set[str]]:
    """Peer device -> its ports cabled to a changed device (the far ends of their links)."""
    mine = set(changed)
    facing: dict[str, set[str]] = {}
    for name in sorted(mine):
        device = plan.devices.get(name)
        if device is None:
            continue
        for iface in device.interfaces.values():
            peer = iface.peer
            if peer is not None and peer.device not in mine and iface.parent is None:
                facing.setdefault(peer.device, set()).add(peer.port)
    return facing


def baseline_seconds(spec: TelemetryGate, thresholds: Thresholds) -> float:
    """How long the devices are watched before the commit: three intervals (every series
    has a rate), plus the storm time when storms count (a storm already running must have
    been raised by the time the commit is made, or it would look new)."""
    if spec.baseline_s is not None:
        return spec.baseline_s
    extra = thresholds.storm_for_s if conditions.PAUSE_STORM in spec.checks else 0.0
    return 3 * thresholds.interval_s + extra


def _blind(device: str, why: str) -> Finding:
    return Finding(check=conditions.SILENT, severity=Severity.ERROR, device=device,
                   message=f"{device}: the telemetry gate needs its counters: {why}",
                   expected="counters streamed or polled during the gate",
                   actual=why)


class BatchWatch:
    """One batch's telemetry gate: baseline() before the commit, judge() after the gate's
    checks pass, stop() always (a finally)."""

    def __init__(self, source: TelemetrySource, plan: FabricState, spec: TelemetryGate,
                 devices: Sequence[str], event: Event = lambda *_a, **_k: None) -> None:
        self.spec = spec
        self._source = source
        self._plan = plan
        self._event = event
        self._batch = sorted(devices)
        self._checks = frozenset(spec.checks)
        self._lock = threading.Lock()
        self._phase = "idle"  # idle | baseline | between | window
        self._baseline: set[Key] = set()
        self._new: dict[Key, Finding] = {}
        self._heard: set[str] = set()  # devices that delivered during the window
        self._first: set[str] = set()  # batch devices not heard from yet
        self._started = threading.Event()  # every watched batch device delivered once
        self._tripped = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: WatchResult | None = None
        self._changed: set[str] = set(self._batch)
        self._facing: dict[str, set[str]] = {}
        self._watch: Watch | None = None
        self._poller: Poller | None = None
        self.unwatched: list[str] = []  # batch devices with no counters at all
        self._plan_watch()

    # --- what is watched -------------------------------------------------------------------

    def _plan_watch(self) -> None:
        peers = sorted(set(facing_ports(self._plan, self._batch)) - set(self._batch))
        wanted = [*self._batch, *peers]
        targets = [self._source.targets[d] for d in wanted if d in self._source.targets]
        rest = [d for d in wanted if d not in self._source.targets]
        self._poller = self._source.poller(rest) if rest else None
        polled = set(self._poller.devices) if self._poller is not None else set()
        self.unwatched = [d for d in self._batch
                          if d not in self._source.targets and d not in polled]
        if self._poller is not None and not self._poller.devices:
            self._poller = None
        self._first = {d for d in self._batch if d not in self.unwatched}
        if not self._first:
            self._started.set()
        # the gate reads which devices spoke and the findings: no reading is kept
        self._watch = Watch(self._plan, self._source.thresholds, targets,
                            poller=self._poller, backoff_s=self._source.backoff_s,
                            keep_readings=False)

    def _host(self, device: str) -> bool:
        planned = self._plan.devices.get(device)
        return planned is not None and planned.role is Role.HOST

    def blind(self) -> list[Finding]:
        """Switches of the batch the gate cannot watch at all (checked before the commit:
        changing a device the gate could never pass is pointless)."""
        return [_blind(d, "no gNMI target in the inventory and nothing to poll on its "
                       "platform") for d in self.unwatched if not self._host(d)]

    # --- the watch thread ------------------------------------------------------------------

    def _counts(self, finding: Finding) -> bool:
        """A finding of the gate's checks on a changed device, or on a peer's port that
        faces one."""
        if finding.check not in self._checks or finding.device is None:
            return False
        if finding.device in self._changed:
            return True
        return finding.port is not None and finding.port in self._facing.get(
            finding.device, set())

    def _tick(self, view: TickView) -> None:
        with self._lock:
            if self._first:
                self._first -= view.samples.devices()
                if not self._first:
                    self._started.set()
            if self._phase == "baseline":
                self._baseline.update(key_of(f) for f in view.active)
            elif self._phase == "window":
                self._heard.update(view.samples.devices())
                for finding in view.active:
                    key = key_of(finding)
                    if key not in self._baseline and self._counts(finding):
                        self._new[key] = finding
                if self._new:
                    self._tripped.set()

    def _run(self) -> None:
        assert self._watch is not None
        self._result = self._watch.run(on_tick=self._tick, stop=self._stop)

    # --- the gate's steps ------------------------------------------------------------------

    def baseline(self) -> None:
        """Start watching and learn what is active before the commit: `baseline_s` from
        the tick every watched device of the batch first delivered (connecting is not
        watching; a device that never delivers is waited for a while, then judged silent)."""
        seconds = baseline_seconds(self.spec, self._source.thresholds)
        with self._lock:
            self._phase = "baseline"
        begun = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="telemetry-gate", daemon=True)
        self._thread.start()
        self._started.wait(self._source.connect_s + 5 * self._source.thresholds.interval_s)
        self._stop.wait(seconds)
        with self._lock:
            self._phase = "between"
            known = sorted(self._baseline)
        self._event("telemetry-baseline", devices=self._batch,
                    seconds=round(time.monotonic() - begun, 3),
                    active=[list(k) for k in known[:50]],
                    unwatched=[d for d in self.unwatched if self._host(d)])

    def judge(self, changed: Sequence[str]) -> list[Finding]:
        """Watch `quiet_s` seconds: the new findings on the changed devices (at the first
        tick that shows one), and the changed switches not heard from (hosts are not required
        to deliver); [] when quiet."""
        with self._lock:
            self._changed = set(changed)
            self._facing = facing_ports(self._plan, changed)
            self._phase = "window"
        started = time.monotonic()
        self._tripped.wait(self.spec.quiet_s)
        with self._lock:
            self._phase = "between"
            new = sorted(self._new.values(), key=lambda f: f.sort_key)
            heard = set(self._heard)
        lines = self._lines()
        silent = [] if new else [
            _blind(d, "no counters in the gate's window"
                   + (f" ({lines[d]})" if d in lines else ""))
            for d in sorted(self._changed) if d not in heard and not self._host(d)]
        findings = new + silent
        self._event("telemetry-gate", passed=not findings, quiet_s=self.spec.quiet_s,
                    seconds=round(time.monotonic() - started, 3), checks=sorted(self._checks),
                    findings=[f.as_dict() for f in findings[:50]])
        return findings

    def _lines(self) -> dict[str, str]:
        """Each target's last connection line (why a refused target was not heard)."""
        if self._watch is None:
            return {}
        return self._watch.result(0).lines

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self._source.thresholds.interval_s + 10.0)
            self._thread = None
        close: Any = getattr(self._poller, "close", None)
        if callable(close):
            close()
