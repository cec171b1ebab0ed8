"""The loop behind `flatfab watch`: gNMI streams and a polling fallback in, the health engine
ticking once per interval, findings raised and cleared out.

Samples arrive on other threads (the subscriber pool's event loop, the poller); they are
buffered under a lock and fed to the engine only on the ticking thread, so the engine itself
needs no locking. Everything here is read-only: subscriptions and show-type reads.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

from nornir.core import Nornir
from nornir.core.task import Result, Task

from flatfab import exitcodes
from flatfab.checks.base import Finding, Severity, fails, not_judged
from flatfab.extras import require
from flatfab.model.state import UNMANAGED, FabricState, Role
from flatfab.platforms import base as platform_base
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.registry import get as get_platform
from flatfab.telemetry import conditions, memtrim, paths
from flatfab.telemetry.health import Changes, HealthEngine, collect_less
from flatfab.telemetry.layout import Block, Readings
from flatfab.telemetry.rates import SeriesKey, Window
from flatfab.telemetry.samples import Gone, Metric, Sample
from flatfab.telemetry.targets import TargetSpec
from flatfab.telemetry.thresholds import Thresholds
from flatfab.workflows.devices.connections import driver, unread_reason

if TYPE_CHECKING:
    from flatfab.telemetry.gnmi_client import ShardedPool, SubscriberPool

LineCallback = Callable[[str], None]


class Poller(Protocol):
    """A read-only source polled once per interval: samples, and per device what failed."""

    devices: list[str]

    def poll(self) -> tuple[list[Sample], dict[str, str]]: ...


@dataclass
class TickView:
    """What one tick saw, for the live view."""

    number: int
    changes: Changes
    samples: Readings  # iterates as Samples (made on demand); devices() without them
    active: list[Finding]
    gone: list[Gone] = field(default_factory=list)  # series the targets deleted this tick
    # the engine's windows of the tick: what each series counted (the live view's rows)
    windows: Mapping[SeriesKey, Window] = field(default_factory=dict)


@dataclass
class WatchResult:
    ticks: int
    findings: list[Finding]  # active at the end, plus targets never heard from
    streamed: list[str]  # devices that delivered at least one sample
    lines: dict[str, str] = field(default_factory=dict)  # device -> last connection line
    interrupted: bool = False  # ended by Ctrl-C (how an open-ended watch ends)
    # devices watched and never heard from in the whole run, and why (their last line)
    unread: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """A finding on what was heard fails (a device never heard alone does not: exit 3)."""
        return fails(self.findings, self.unread)

    @property
    def exit_code(self) -> int:
        return exitcodes.judged(failed=self.failed, unread=bool(self.unread))


FEED_S: Final = 0.5  # how often `run` hands arrived readings to the engine between ticks


def table_of(platform: str | None) -> paths.PathTable:
    """The gNMI paths a device of this platform serves (its platform's telemetry.yaml);
    flatfab's own (the embedded lab's) for a platform without a table or none known."""
    if platform is None or platform not in PLATFORMS:
        return paths.FLATFAB
    return get_platform(platform).telemetry_paths() or paths.FLATFAB


class Watch:
    def __init__(self, plan: FabricState, thresholds: Thresholds,
                 targets: Sequence[TargetSpec], *, poller: Poller | None = None,
                 on_line: LineCallback = lambda _line: None,
                 backoff_s: tuple[float, float] = (0.5, 30.0), shards: int = 1,
                 keep_readings: bool = True) -> None:
        """`shards` > 1: the gNMI subscribers run in that many worker processes (more
        targets than one core decodes); the samples and lines are the same.
        `keep_readings` False: a tick's view names the devices heard and counts their
        readings, but cannot give them as Samples: what `run` has fed the engine between
        ticks is let go at once (a thousand switches' interval is hundreds of MB)."""
        self.thresholds = thresholds
        self.engine = HealthEngine(plan, thresholds)
        self._on_line = on_line
        self._lock = threading.Lock()
        self._buffer: list[Sample] = []  # polled
        self._blocks: list[Block] = []  # streamed, a notification each
        self._keep = keep_readings
        self._fed = Readings()  # fed to the engine since the last tick
        self._gone: list[Gone] = []
        self._heard: set[str] = set()
        self._lines: dict[str, str] = {}
        self._poller = poller
        self._stop = threading.Event()
        self._poll_thread: threading.Thread | None = None
        self._poll_errors: dict[str, str] = {}
        self._gc_thresholds: tuple[int, int, int] | None = None  # to restore at stop
        interval = thresholds.interval_s
        self.pool: SubscriberPool | ShardedPool | None = None
        self.watched = [t.device for t in targets] + (poller.devices if poller else [])
        # never polled: their NIC counters are not judged (said once, in the result)
        self.unwatched = [n for n in unmanaged_nics(plan) if n not in self.watched]
        if not targets:  # polled only: no gNMI, which a core install may not have
            return
        require("telemetry", "a gNMI subscription")
        from flatfab.telemetry.gnmi_client import (  # noqa: PLC0415 - the telemetry extra
            GnmiSubscriber,
            ShardedPool,
            SubscriberPool,
        )

        subscribers = (
            GnmiSubscriber(t.device, t.host, t.port, ca_file=t.ca_file,
                           on_sample=self._sample, on_samples=self._push,
                           on_block=self._block,
                           on_deletes=self._deleted, on_state=self._state(t.device),
                           interval_s=interval, username_env=t.username_env,
                           password_env=t.password_env, insecure=t.insecure,
                           tls_server_name=t.tls_server_name, backoff_s=backoff_s,
                           table=table_of(t.platform), cert_file=t.cert_file,
                           key_file=t.key_file)
            for t in targets)
        self.pool = (ShardedPool(subscribers, shards) if shards > 1
                     else SubscriberPool(subscribers))

    # --- inputs, from any thread -----------------------------------------------------------

    def _sample(self, sample: Sample) -> None:
        with self._lock:
            self._buffer.append(sample)

    def _push(self, samples: Iterable[Sample]) -> None:
        with self._lock:
            self._buffer.extend(samples)

    def _block(self, block: Block) -> None:
        with self._lock:
            self._blocks.append(block)

    def _deleted(self, gone: list[Gone]) -> None:
        with self._lock:
            self._gone.extend(gone)

    def _state(self, device: str) -> Callable[[str, str], None]:
        def said(state: str, line: str) -> None:
            with self._lock:
                self._lines[device] = line
            self._on_line(line)
        return said

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._gc_thresholds is None:
            self._gc_thresholds = collect_less()
        # a notification's half-megabyte blocks mapped apart: the heap does not keep the
        # most a burst ever held (flatfab.telemetry.memtrim)
        memtrim.map_large_blocks()
        if self.pool is not None:
            self.pool.start()
        if self._poller is not None and self._poller.devices:
            self._poll_thread = threading.Thread(target=self._poll_loop, name="watch-poller",
                                                 daemon=True)
            self._poll_thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self.pool is not None:
            self.pool.stop()
        if self._poll_thread is not None:
            # a poll in flight may sit in an SSH timeout: do not hang the exit on it
            self._poll_thread.join(self.thresholds.interval_s + 5.0)
        if self._gc_thresholds is not None:
            gc.set_threshold(*self._gc_thresholds)
            self._gc_thresholds = None

    def _poll_loop(self) -> None:
        assert self._poller is not None
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                samples, errors = self._poller.poll()
            except Exception as exc:  # noqa: BLE001 - the poller must not take the watch down
                samples, errors = [], dict.fromkeys(self._poller.devices, str(exc))
            self._push(samples)
            self._poll_transitions(errors)
            left = self.thresholds.interval_s - (time.monotonic() - started)
            self._stop.wait(max(left, 0.05))

    def _poll_transitions(self, errors: dict[str, str]) -> None:
        """One line when a polled device starts failing, one when it recovers."""
        assert self._poller is not None
        for device in self._poller.devices:
            now, was = errors.get(device), self._poll_errors.get(device)
            if now is not None and now != was:
                line = f"{device}: poll failed: {now}"
            elif now is None and was is not None:
                line = f"{device}: polled again"
            else:
                continue
            with self._lock:
                self._lines[device] = line
            self._on_line(line)
        self._poll_errors = errors

    # --- the tick --------------------------------------------------------------------------

    def feed(self) -> None:
        """Hand what arrived to the engine now (the tick does too): between ticks, so a
        burst's notifications are not all held until the tick."""
        with self._lock:
            samples, self._buffer = self._buffer, []
            blocks, self._blocks = self._blocks, []
        self.engine.feed_blocks(blocks)
        self.engine.feed(samples)
        self._fed.add(blocks, samples, keep=self._keep)

    def tick(self, now: float | None = None) -> tuple[Changes, Readings, list[Gone]]:
        self.feed()
        with self._lock:
            gone, self._gone = self._gone, []
        readings, self._fed = self._fed, Readings()
        self._heard.update(readings.devices())
        self.engine.forget(gone)
        changes = self.engine.tick(time.time() if now is None else now)
        return changes, readings, gone

    def run(self, *, count: int | None = None, duration_s: float | None = None,
            on_tick: Callable[[TickView], None] | None = None,
            stop: threading.Event | None = None) -> WatchResult:
        """Tick every interval until `count` ticks, `duration_s` seconds, or `stop` is set
        (none of these: until interrupted). Always stops the streams it started."""
        interval = self.thresholds.interval_s
        stop = stop or threading.Event()
        ticks = 0
        interrupted = False
        self.start()
        try:
            begun = time.monotonic()
            due = begun + interval
            while True:
                # sleep to the next due time, not a fixed interval: ticks do not drift;
                # feeding the engine what arrives meanwhile
                if self._wait(stop, due):
                    break
                changes, samples, gone = self.tick()
                ticks += 1
                due += interval
                if on_tick is not None:
                    on_tick(TickView(ticks, changes, samples, self.engine.active(), gone,
                                     changes.windows))
                # the tick's windows and readings are not kept while the next interval
                # arrives; the burst is behind us: what it freed goes back
                del changes, samples, gone
                memtrim.trim()
                if count is not None and ticks >= count:
                    break
                if duration_s is not None and time.monotonic() - begun >= duration_s:
                    break
        except KeyboardInterrupt:
            interrupted = True  # report what is active, as at any other end
        finally:
            self.stop()
        return self.result(ticks, interrupted=interrupted)

    def _wait(self, stop: threading.Event, due: float) -> bool:
        """Until `due` (True: `stop` was set first), feeding the engine every FEED_S (a
        quarter interval, for shorter intervals)."""
        every = min(FEED_S, self.thresholds.interval_s / 4)
        while True:
            left = due - time.monotonic()
            if stop.wait(max(min(left, every), 0.0)):
                return True
            if left <= every:
                return False
            self.feed()

    def result(self, ticks: int, *, interrupted: bool = False) -> WatchResult:
        with self._lock:
            lines = dict(self._lines)
        unread = {d: "no sample in the whole run" + (f" ({_without(d, lines[d])})"
                                                     if d in lines else "")
                  for d in sorted(self.watched) if d not in self._heard}
        never = [Finding(check=conditions.SILENT, severity=Severity.ERROR, device=d,
                         message=f"{d}: {why}", expected="samples every interval",
                         actual="none") for d, why in unread.items()]
        # never polled by design: an unmanaged host is not judged, never unread
        unmanaged = [not_judged(check, d, UNMANAGED, what=f"{d}'s NIC telemetry",
                                expected="polled", actual="unmanaged")
                     for d in self.unwatched for check in conditions.NIC_CONDITIONS]
        findings = sorted([*self.engine.active(), *never, *unmanaged],
                          key=lambda f: f.sort_key)
        return WatchResult(ticks, findings, sorted(self._heard), lines, interrupted, unread)


# --- the polling fallback, through Nornir ----------------------------------------------------

def unmanaged_nics(plan: FabricState) -> list[str]:
    """The unmanaged hosts whose NICs a watch would poll, were they managed."""
    return [d.name for d in plan.devices.values() if not d.managed and d.role is Role.HOST
            and any(i.nic is not None for i in d.interfaces.values())]


def pollable(plan: FabricState, devices: Iterable[str]) -> tuple[list[str], list[str]]:
    """Of `devices` (those without a gNMI target): which can be polled (switches for class
    counters, hosts for NIC counters), and which offer nothing to poll on their platform. An
    unmanaged host is neither: it is never connected to."""
    can: list[str] = []
    cannot: list[str] = []
    for name in sorted(d for d in devices if plan.devices[d].managed):
        (can if _poll_kind(plan, name) else cannot).append(name)
    return can, cannot


def _poll_kind(plan: FabricState, device: str) -> str | None:
    """What a device is polled for: "class" or "nic" counters (None: nothing)."""
    planned = plan.devices[device]
    caps = get_platform(planned.platform).facts.capabilities
    if planned.role is Role.HOST:  # only a host with lossless NICs has them counted
        lossless = any(i.nic is not None for i in planned.interfaces.values())
        return "nic" if caps.nic_counters and lossless else None
    return "class" if caps.class_counters else None


def _counters(task: Task, kinds: dict[str, str]) -> Result:
    """One device's poll, read-only: class counters of a switch or NIC counters of a host
    (a failure: why, in one line)."""
    platform = get_platform(str(task.host.platform))
    read = platform.nic_counters if kinds[task.host.name] == "nic" else platform.class_counters
    try:
        return Result(host=task.host, result=read(driver(task, read_only=True)))
    except Exception as exc:  # noqa: BLE001 - a failed poll is a line, never a traceback
        return Result(host=task.host, result=unread_reason(exc, task), failed=True)


def counter_samples(plan: FabricState, device: str,
                    counters: dict[str, dict[int, dict[str, int]]], stamp: float) -> list[Sample]:
    """Per-port per-TC counters as queue samples: the plan's tc_to_queue says which queue a
    TC leaves by (identity where the plan does not say)."""
    planned = plan.devices.get(device)
    out: list[Sample] = []
    for port, per_tc in counters.items():
        iface = planned.interfaces.get(port) if planned is not None else None
        if iface is not None and iface.qos is None and iface.parent is not None:
            continue  # a VRF sub-port: its parent's counters already hold its packets
        maps = iface.qos.maps.tc_to_queue if iface is not None and iface.qos else []
        for tc, counts in per_tc.items():
            queue = maps[tc] if 0 <= tc < len(maps) else tc
            if "packets" in counts:
                out.append(Sample(device, port, Metric.QUEUE_TX, queue, counts["packets"],
                                  stamp))
            if "drops" in counts:  # absent: the platform keeps none (never read as 0)
                out.append(Sample(device, port, Metric.QUEUE_DROPS, queue, counts["drops"],
                                  stamp))
    return out


NIC_METRICS = {platform_base.NIC_CNP_SENT: Metric.NIC_CNP_SENT,
               platform_base.NIC_CNP_HANDLED: Metric.NIC_CNP_HANDLED,
               platform_base.NIC_ECN_MARKED_RX: Metric.NIC_ECN_MARKED_RX,
               platform_base.NIC_OUT_OF_BUFFER: Metric.NIC_OUT_OF_BUFFER}


def nic_samples(device: str, counters: dict[str, dict[str, int]],
                stamp: float) -> list[Sample]:
    """A host's NIC counters as samples (port = NIC): the DCQCN and buffer counters without a
    key, pause frames per priority as PFC_RX/PFC_TX keyed by the priority. A counter the NIC
    does not keep is absent (never 0); one flatfab has no metric for is left out."""
    out: list[Sample] = []
    for nic, counts in sorted(counters.items()):
        for name, value in sorted(counts.items()):
            pause = platform_base.nic_pfc_key(name)
            if pause is not None:
                metric = Metric.PFC_RX if pause[0] == "rx" else Metric.PFC_TX
                out.append(Sample(device, nic, metric, pause[1], value, stamp))
            elif name in NIC_METRICS:
                out.append(Sample(device, nic, NIC_METRICS[name], None, value, stamp))
    return out


class NornirPoller:
    """Counters of the devices without a gNMI target, read-only, one Nornir run per interval
    (Nornir's runner reads them in parallel): class counters of switches, NIC counters of
    hosts."""

    def __init__(self, nornir: Nornir, plan: FabricState, devices: list[str]) -> None:
        self.devices = devices
        self._plan = plan
        self._kinds = {d: _poll_kind(plan, d) or "class" for d in devices}
        wanted = set(devices)
        self._nornir = nornir.filter(filter_func=lambda h: h.name in wanted)

    def poll(self) -> tuple[list[Sample], dict[str, str]]:
        results = self._nornir.run(task=_counters, kinds=self._kinds, name="watch: counters",
                                   on_failed=True)
        stamp = time.time()
        samples: list[Sample] = []
        errors: dict[str, str] = {}
        for name in self.devices:
            outcome = results.get(name)
            if outcome is None or outcome.failed:
                exc = outcome[0].exception if outcome else None
                errors[name] = (_one_line(exc) if exc is not None else
                                str(outcome[0].result) if outcome else "not in the inventory")
                # a broken session is reopened on the next poll
                self._nornir.inventory.hosts[name].close_connections()
                continue
            if self._kinds[name] == "nic":
                samples += nic_samples(name, outcome[0].result, stamp)
            else:
                samples += counter_samples(self._plan, name, outcome[0].result, stamp)
        return samples, errors

    def close(self) -> None:
        self._nornir.close_connections()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _without(device: str, line: str) -> str:
    """A connection line without its leading device name (the finding names it already)."""
    return line[len(device):].lstrip(" :") if line.startswith(device) else line
