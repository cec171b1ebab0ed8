"""Live telemetry on the embedded lab as the tests drive it: a watcher running in a thread
that records every tick, and floods of real UDP packets sent from a lab host."""

from __future__ import annotations

import shlex
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from flatfab.checks.base import Finding
from flatfab.intent.thresholds import thresholds_of
from flatfab.lab.netns import node_exec, nsenter_args
from flatfab.model.state import FabricState
from flatfab.sot import inventory as sot_inventory
from flatfab.telemetry.targets import gnmi_targets
from flatfab.telemetry.thresholds import Thresholds
from flatfab.workflows.commands.watch import NornirPoller, TickView, Watch, pollable
from flatfab.workflows.project.layout import Project
from tests.support.lab import Lab
from tests.support.paths import ROOT

# A paced sender (python3 standard library only; it runs on the lab host): ADDRESS PORT TOS
# PPS SECONDS FIRST_BYTE. Bursts every 10 ms keep the rate even. The payload's first byte is
# where RoCEv2's BTH opcode sits (0x81: a CNP).
SENDER = """
import socket, sys, time
address, port, tos, pps, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    int(sys.argv[4]), float(sys.argv[5])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
payload, burst, sent = bytes([int(sys.argv[6])]) + bytes(999), max(pps // 100, 1), 0
start = time.monotonic()
while time.monotonic() - start < seconds:
    for _ in range(burst):
        s.sendto(payload, (address, port))
        sent += 1
    if sent == burst:
        print("sending", flush=True)  # the fault begins now, not when the process was asked
    time.sleep(max(0.0, start + sent / pps - time.monotonic()))
print(sent)
"""


@dataclass
class Event:
    at: float  # time.monotonic() of the tick
    finding: Finding
    raised: bool


@dataclass
class Recorder:
    """Every tick's raised and cleared findings, with when."""

    events: list[Event] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    ticks: list[float] = field(default_factory=list)
    active: list[Finding] = field(default_factory=list)
    # (device, port, metric, key) -> latest value streamed
    latest: dict[tuple[str, str | None, str, int | None], int | float] = field(
        default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tick(self, view: TickView) -> None:
        now = time.monotonic()
        with self.lock:
            self.ticks.append(now)
            for s in view.samples:
                self.latest[(s.device, s.port, s.metric.value, s.key)] = s.value
            self.events += [Event(now, f, True) for f in view.changes.raised]
            self.events += [Event(now, f, False) for f in view.changes.cleared]
            self.active = list(view.active)

    def first(self, check: str, device: str, port: str | None, *, raised: bool = True,
              after: float = 0.0, detail: str = "") -> Event | None:
        with self.lock:
            return next((e for e in self.events if e.raised is raised and e.at >= after
                         and e.finding.check == check and e.finding.device == device
                         and e.finding.port == port and detail in e.finding.message), None)

    def wait_for(self, check: str, device: str, port: str | None, *, raised: bool = True,
                 after: float = 0.0, timeout: float = 20.0, detail: str = "") -> Event | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.first(check, device, port, raised=raised, after=after, detail=detail)
            if found is not None:
                return found
            time.sleep(0.1)
        return None

    def values(self) -> dict[tuple[str, str | None, str, int | None], int | float]:
        with self.lock:
            return dict(self.latest)

    def is_active(self, check: str, device: str, port: str | None) -> bool:
        with self.lock:
            return any(f.check == check and f.device == device and f.port == port
                       for f in self.active)


def lab_thresholds(lab: Lab, **changes: float) -> Thresholds:
    project = Project(ROOT, lab.fabric, inventory_override=lab.inventory)
    return replace(thresholds_of(project.intent.qos.telemetry), **changes)


@contextmanager
def watching(lab: Lab, thresholds: Thresholds, *, poll: bool = True,
             plan: FabricState | None = None) -> Iterator[tuple[Watch, Recorder]]:
    """A Watch over the lab's gNMI targets (and its polled devices), ticking in a thread;
    judged against `plan` where given (the lab's own plan with other thresholds)."""
    project = Project(ROOT, lab.fabric, inventory_override=lab.inventory)
    nornir = sot_inventory.build(project.inventory_dir, project.plan, 20,
                                 project.address_spaces)
    targets = gnmi_targets(nornir, project.inventory_dir)
    others = [d for d in project.plan.devices if d not in targets]
    polled, _blind = pollable(project.plan, others)
    poller = NornirPoller(nornir, project.plan, polled) if poll and polled else None
    recorder = Recorder()
    watch = Watch(plan or project.plan, thresholds, list(targets.values()), poller=poller,
                  on_line=recorder.lines.append, backoff_s=(0.2, 1.0))
    stop = threading.Event()
    thread = threading.Thread(target=watch.run, kwargs={"on_tick": recorder.tick,
                                                        "stop": stop}, daemon=True)
    thread.start()
    try:
        yield watch, recorder
    finally:
        stop.set()
        thread.join(30)
        if poller is not None:
            poller.close()


def flood(lab: Lab, host: str, address: str, *, port: int, tos: int, pps: int,
          seconds: float, first_byte: int = 0) -> int:
    """Send UDP packets of 1000 bytes from a lab host; how many were sent."""
    args = " ".join(shlex.quote(str(a)) for a in (address, port, tos, pps, seconds,
                                                   first_byte))
    out = node_exec(lab.paths, host, ["sh", "-c", f"python3 -c {shlex.quote(SENDER)} {args}"],
                    timeout=seconds + 30)
    return int(out.split()[-1]) if out.split() else 0


@contextmanager
def flooding(lab: Lab, host: str, address: str, *, port: int, tos: int, pps: int,
             seconds: float, first_byte: int = 0) -> Iterator[float]:
    """A flood from a lab host; yields when its first packets left (monotonic: what a
    deadline counts from, however long the sender took to start), waits for it on exit."""
    args = [str(a) for a in (address, port, tos, pps, seconds, first_byte)]
    sender = subprocess.Popen([*nsenter_args(lab.paths, host), "python3", "-c", SENDER, *args],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert sender.stdout is not None
        first = sender.stdout.readline()
        assert first.strip() == "sending", f"the flood from {host} did not start: {first!r}"
        yield time.monotonic()
    finally:
        try:
            sender.wait(seconds + 30)
        except subprocess.TimeoutExpired:
            sender.kill()
            sender.wait()
