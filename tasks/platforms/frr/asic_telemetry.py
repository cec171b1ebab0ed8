"""What an embedded-lab switch's gNMI target serves: its kernel queues, and the counters its
virtual ASIC would keep.

Real, read from the kernel every sample (`tc`, `ip link`): per port and queue the packets
sent and dropped (the bfifo under each traffic class's HTB class), and each port's oper
state. A VRF sub-link's queues (`swp51.100`, a veth of its own in the lab) are added to its
port's, as a switch counts a sub-interface's packets in the port's queues.

Virtual, derived from the kernel and the virtual ASIC's tables (`asic/config_db.json`), since
veth ports have no PFC, ECN marking or watchdog. The signal is HTB's `overlimits`: each time
a class held a packet back because it was over its rate, which is what a queue whose
egress is paused looks like from the inside. Per port and traffic class, per sample:
- PFC pauses received on each PFC-enabled priority that maps to the class's queue
  (`PORT_QOS_MAP.pfc_enable`, `MAP_PFC_PRIORITY_TO_QUEUE`): one per overlimit;
- ECN marks on the queue, one per overlimit, when its `QUEUE` entry has a WRED profile with
  ECN on and a green minimum threshold below the queue's limit (marking above the point
  where the queue is full could never happen: the thresholds are too high);
- a PFC watchdog storm when pauses run on through two samples at least `detection_time`
  apart on a priority the watchdog covers (`pfcwd_sw_enable`); it ends with a quiet sample.
PFC pauses sent are not modelled (the lab cannot say which ingress port a real switch would
pause), so that leaf is not served rather than served as a made-up zero.

The physical layer, from the lab's stand-in for hardware (`phy.json`, flatfab.lab.hardware:
what `verify --physical` reads too): per port its FEC's corrected and uncorrectable codewords,
its pre-FEC BER and each lane's receive power (lanes from 1), each only where the file states
it (a fact it does not state is not served,
never as zero; a file that does not read serves no physical leaf at all, the rest as ever).
Tests inject physical faults by editing it. A link's state changes are the real link's, from
the lab's carrier watchers (flatfab.platforms.lab_carrier), or the file's `flaps` where none ran.

Read-only: `ip`, `tc` and file reads. The reader runs in the switch's own namespaces.
"""

from __future__ import annotations

import json
import logging
import math
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flatfab.platforms import lab_carrier, lab_phy
from flatfab.telemetry import paths
from flatfab.telemetry.samples import Metric

log = logging.getLogger(__name__)

ASIC_FILE = "asic/config_db.json"
TRAFFIC_CLASSES = range(8)
# `tc -s class show` (text: iproute2 prints no JSON for classes): the per-class statistics
_CLASS = re.compile(r"^class htb 1:1([0-7]) parent 1:1\b")
_ANY_CLASS = re.compile(r"^class \S+ (\S+) ")
_STATS = re.compile(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)")
_SKIP_KINDS = frozenset({"bridge", "vrf", "dummy"})

Run = Callable[[list[str], str | None], str]  # argv, stdin -> stdout
Leaves = list[tuple[str, int | float | str]]


@dataclass(frozen=True)
class ClassStats:
    """One traffic class of one link as the kernel counts it."""

    packets: int = 0
    drops: int = 0
    overlimits: int = 0
    limit: int = 0  # the bfifo's byte limit (0: not read)

    def __add__(self, other: ClassStats) -> ClassStats:
        return ClassStats(self.packets + other.packets, self.drops + other.drops,
                          self.overlimits + other.overlimits, max(self.limit, other.limit))


@dataclass(frozen=True)
class KernelReading:
    """One sample of a lab switch: oper state per port, class stats per port (sub-links
    already added to their port)."""

    oper_up: dict[str, bool]
    classes: dict[str, dict[int, ClassStats]]


def _run(args: list[str], stdin: str | None = None) -> str:
    return subprocess.run(args, input=stdin, capture_output=True, text=True, check=True,
                          timeout=10).stdout


def _port_of(link: str) -> str:
    return link.split(".", 1)[0]


def parse_classes(text: str) -> dict[int, tuple[int, int, int]]:
    """`tc -s class show dev X` -> TC -> (packets, drops, overlimits) of flatfab's classes."""
    found: dict[int, tuple[int, int, int]] = {}
    current: int | None = None
    for line in text.splitlines():
        head = _CLASS.match(line)
        if head is not None:
            current = int(head.group(1))
            continue
        stats = _STATS.search(line)
        if stats is not None and current is not None:
            found[current] = (int(stats.group(2)), int(stats.group(3)), int(stats.group(4)))
            current = None
    return found


def parse_limits(qdisc_json: str) -> dict[str, dict[int, int]]:
    """`tc -j qdisc show` (all links) -> link -> TC -> bfifo limit, for links with flatfab's
    HTB root."""
    data = json.loads(qdisc_json or "[]")
    roots = {q.get("dev") for q in data if q.get("root") and q.get("kind") == "htb"}
    limits: dict[str, dict[int, int]] = {}
    for q in data:
        match = re.fullmatch(r"1:1([0-7])", str(q.get("parent", "")))
        if match and q.get("kind") == "bfifo" and q.get("dev") in roots:
            limit = (q.get("options") or {}).get("limit", 0)
            limits.setdefault(str(q["dev"]), {})[int(match.group(1))] = int(limit or 0)
    return limits


def class_stats(run: Run, netns: list[str], limits_of: dict[str, dict[int, int]]
                ) -> dict[str, dict[int, tuple[int, int, int]]]:
    """`parse_classes` of each link with flatfab's queues, every link in one `tc -batch`
    (a lab's gNMI targets read several times a second; one `tc` per port was most of their
    CPU); output that does not split by link (`_split_classes`) is read link by link."""
    devs = sorted(limits_of)
    if len(devs) > 1:
        text = run(["tc", *netns, "-s", "-batch", "-"],
                   "".join(f"class show dev {dev}\n" for dev in devs))
        found = _split_classes(text, {dev: {"1:1", *(f"1:1{tc}" for tc in limits_of[dev])}
                                      for dev in devs})
        if found is not None:
            return found
    return {dev: parse_classes(run(["tc", *netns, "-s", "class", "show", "dev", dev], None))
            for dev in devs}


def _split_classes(text: str, wanted: dict[str, set[str]]
                   ) -> dict[str, dict[int, tuple[int, int, int]]] | None:
    """tc's batch output names no link: each link's classes come in the order asked, each
    with flatfab's ids (`wanted`: the root 1:1, a leaf 1:1N per bfifo). None unless every
    link's classes are exactly those."""
    blocks: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        head = _ANY_CLASS.match(line)
        if head is not None:
            blocks.append((head.group(1), [line]))
        elif blocks:
            blocks[-1][1].append(line)
    found: dict[str, dict[int, tuple[int, int, int]]] = {}
    for dev, ids in wanted.items():
        mine, blocks = blocks[:len(ids)], blocks[len(ids):]
        if {classid for classid, _ in mine} != ids:
            return None
        found[dev] = parse_classes("\n".join(line for _, lines in mine for line in lines))
    return found if not blocks else None


def read_kernel(run: Run = _run, mgmt: Iterable[str] = ("eth0",)) -> KernelReading:
    """Every namespace of the switch (the default one and each VRF's)."""
    skip = {"lo", *mgmt}
    vrfs = sorted(line.split()[0] for line in run(["ip", "netns", "list"], None).splitlines()
                  if line.strip())
    namespaces = ["", *vrfs]
    oper: dict[str, bool] = {}
    classes: dict[str, dict[int, ClassStats]] = {}
    for ns in namespaces:
        netns = ["-n", ns] if ns else []
        for link in json.loads(run(["ip", *netns, "-j", "-d", "link", "show"], None) or "[]"):
            name = str(link.get("ifname", ""))
            kind = (link.get("linkinfo") or {}).get("info_kind")
            if not name or name in skip or "." in name or kind in _SKIP_KINDS:
                continue
            oper[name] = link.get("operstate") == "UP"
        limits_of = parse_limits(run(["tc", *netns, "-j", "qdisc", "show"], None))
        for dev, stats in class_stats(run, netns, limits_of).items():
            limits = limits_of[dev]
            port = classes.setdefault(_port_of(dev), {})
            for tc, (packets, drops, over) in stats.items():
                seen = ClassStats(packets, drops, over, limits.get(tc, 0))
                port[tc] = port[tc] + seen if tc in port else seen
    return KernelReading(oper, classes)


# --- the virtual ASIC's view of its tables ------------------------------------------------

def _ints(text: str) -> set[int]:
    return {int(t) for t in str(text).replace(" ", "").split(",") if t.isdigit()}


def _queue_entry(db: dict[str, Any], port: str, queue: int) -> dict[str, Any]:
    """The QUEUE entry covering `port|queue` (keys are single queues or ranges `0-2`)."""
    for key, entry in db.get("QUEUE", {}).items():
        name, _, span = key.partition("|")
        low, _, high = span.partition("-")
        if name == port and low.isdigit() and int(low) <= queue <= int(high or low):
            return dict(entry)
    return {}


def _map(db: dict[str, Any], table: str, name: str | None) -> dict[int, int]:
    found = db.get(table, {}).get(name or "", {})
    return {int(k): int(v) for k, v in found.items()} or {i: i for i in TRAFFIC_CLASSES}


@dataclass(frozen=True)
class PortTables:
    tc_to_queue: dict[int, int]
    pfc: set[int]
    watchdog: set[int]
    priority_to_queue: dict[int, int]
    marks: set[int]  # queues whose ECN marking can act (profile on, threshold below limit)
    detection_s: float


def port_tables(db: dict[str, Any], port: str, limits: dict[int, int]) -> PortTables:
    qos = db.get("PORT_QOS_MAP", {}).get(port, {})
    tc_to_queue = _map(db, "TC_TO_QUEUE_MAP", qos.get("tc_to_queue_map"))
    marks: set[int] = set()
    for tc, queue in tc_to_queue.items():
        profile = db.get("WRED_PROFILE", {}).get(_queue_entry(db, port, queue)
                                                 .get("wred_profile", ""), {})
        if profile.get("ecn", "ecn_none") == "ecn_none":
            continue
        low = int(profile.get("green_min_threshold", 0) or 0)
        if not limits.get(tc) or low < limits[tc]:
            marks.add(queue)
    wd = db.get("PFC_WD", {}).get(port, {})
    return PortTables(
        tc_to_queue=tc_to_queue, pfc=_ints(qos.get("pfc_enable", "")),
        watchdog=_ints(qos.get("pfcwd_sw_enable", "")) if wd else set(),
        priority_to_queue=_map(db, "MAP_PFC_PRIORITY_TO_QUEUE", qos.get("pfc_to_queue_map")),
        marks=marks, detection_s=int(wd.get("detection_time", 200) or 200) / 1000)


@dataclass
class _Watchdog:
    last_paused: float | None = None  # time of the last sample that saw pauses
    in_storm: bool = False
    storms: int = 0


@dataclass
class VirtualAsic:
    """Cumulative virtual counters across samples (they start at 0 with the target, as a
    switch's do after a reboot)."""

    pauses: dict[tuple[str, int], int] = field(default_factory=dict)
    marks: dict[tuple[str, int], int] = field(default_factory=dict)
    watchdogs: dict[tuple[str, int], _Watchdog] = field(default_factory=dict)
    _last: dict[tuple[str, int], int] = field(default_factory=dict)  # overlimits seen

    def step(self, reading: KernelReading, db: dict[str, Any], now: float) -> Leaves:
        leaves: Leaves = [(paths.leaf_path(Metric.OPER_UP, port),
                           paths.leaf_value(Metric.OPER_UP, int(up)))
                          for port, up in sorted(reading.oper_up.items())]
        for port, per_tc in sorted(reading.classes.items()):
            tables = port_tables(db, port, {tc: s.limit for tc, s in per_tc.items()})
            paused: dict[int, int] = {}
            queues: dict[int, ClassStats] = {}
            for tc, stats in sorted(per_tc.items()):
                queue = tables.tc_to_queue.get(tc, tc)
                queues[queue] = queues[queue] + stats if queue in queues else stats
                before = self._last.get((port, tc), stats.overlimits)
                self._last[(port, tc)] = stats.overlimits
                held = max(stats.overlimits - before, 0)  # a reset counter starts again
                if queue in tables.marks:
                    self.marks[(port, queue)] = self.marks.get((port, queue), 0) + held
                for prio in tables.pfc:
                    if tables.priority_to_queue.get(prio, prio) == queue:
                        paused[prio] = paused.get(prio, 0) + held
            for queue, stats in sorted(queues.items()):
                leaves += [(paths.leaf_path(Metric.QUEUE_TX, port, queue), stats.packets),
                           (paths.leaf_path(Metric.QUEUE_DROPS, port, queue), stats.drops),
                           (paths.leaf_path(Metric.QUEUE_ECN, port, queue),
                            self.marks.get((port, queue), 0))]
            for prio in sorted(tables.pfc):
                total = self.pauses.get((port, prio), 0) + paused.get(prio, 0)
                self.pauses[(port, prio)] = total
                leaves.append((paths.leaf_path(Metric.PFC_RX, port, prio), total))
                if prio in tables.watchdog:
                    dog = self.watchdogs.setdefault((port, prio), _Watchdog())
                    self._watch(dog, paused.get(prio, 0) > 0, now, tables.detection_s)
                    leaves.append((paths.leaf_path(Metric.WATCHDOG, port, prio), dog.storms))
        return leaves

    @staticmethod
    def _watch(dog: _Watchdog, paused: bool, now: float, detection_s: float) -> None:
        if not paused:
            dog.last_paused, dog.in_storm = None, False  # restored
            return
        if dog.last_paused is None:
            dog.last_paused = now
            return
        if not dog.in_storm and now - dog.last_paused >= detection_s:
            dog.in_storm = True
            dog.storms += 1


def phy_leaves(text: str, carrier: dict[str, lab_carrier.Carrier] | None = None) -> Leaves:
    """The physical-layer leaves of a lab node's phy.json (lab_phy.LabPhyError if it does
    not read): per port what the file states of its FEC counters and BER, each lane's
    receive power, and its link's state changes: the watchers' count (`carrier`), else the
    file's `flaps`."""
    leaves: Leaves = []
    for port, phy in sorted(lab_phy.read(text, 0.0).items()):
        counters = phy.fec_counters
        if counters is not None:
            if counters.corrected is not None:
                leaves.append((paths.leaf_path(Metric.FEC_CORRECTED, port), counters.corrected))
            if counters.uncorrectable is not None:
                leaves.append((paths.leaf_path(Metric.FEC_UNCORRECTABLE, port),
                               counters.uncorrectable))
            ber = counters.pre_fec_ber
            if ber is not None and math.isfinite(ber):
                leaves.append((paths.leaf_path(Metric.PRE_FEC_BER, port), float(ber)))
        if phy.diagnostics is not None:  # each lane's receive power, lanes from 1
            for lane, diag in enumerate(phy.diagnostics.lanes, start=1):
                power = diag.rx_power_dbm
                if power is not None and math.isfinite(power):
                    leaves.append((paths.leaf_path(Metric.RX_POWER, port, lane), float(power)))
        changes = phy.flaps if carrier is None else (
            seen.transitions if (seen := carrier.get(port)) is not None else 0)
        if changes is not None:
            leaves.append((paths.leaf_path(Metric.CARRIER_TRANSITIONS, port), changes))
    return leaves


class PhyFile:
    """A node's phy.json (and its carrier watchers' logs beside it) as leaves, parsed again
    only when a file changed."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._logs = path.parent / lab_carrier.DIR
        self._seen: tuple[tuple[str, int, int, int], ...] | None = None  # files at the parse
        self._leaves: Leaves = []
        self._said = ""  # the last problem logged (one line per new problem)

    def __call__(self) -> Leaves:
        logs = sorted(self._logs.iterdir()) if self._logs.is_dir() else None
        try:
            stamp = tuple((f.name, (i := f.stat()).st_ino, i.st_size, i.st_mtime_ns)
                          for f in [self._path, *(logs or [])])
        except FileNotFoundError:
            self._seen, self._leaves = None, []
            return []  # a node without physical links, or an older lab: nothing stated
        if stamp == self._seen:
            return self._leaves
        try:
            carrier = None if logs is None else lab_carrier.history(
                [f.read_text(encoding="utf-8", errors="replace") for f in logs
                 if f.suffix == ".log"],
                lab_carrier.parse_cleared(_text(self._logs / lab_carrier.CLEARED)))
            self._leaves = phy_leaves(self._path.read_text(encoding="utf-8"), carrier)
            self._said = ""
        except (OSError, lab_phy.LabPhyError) as exc:
            self._leaves = []  # unread: the physical leaves go, never as zeros
            if str(exc) != self._said:
                self._said = str(exc)
                log.warning("%s: not served: %s", self._path, exc)
        self._seen = stamp
        return self._leaves


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


class LabSwitchCounters:
    """The `CounterSource` of a lab switch's gNMI target (`source: ...:source`).

    A reading is reused for `min_age_s`: ON_CHANGE streams compare state every 100 ms and
    each read runs `tc` once per port."""

    def __init__(self, state_dir: str = "/var/lib/flatfab", min_age_s: float = 0.5,
                 run: Run = _run) -> None:
        self._asic = Path(state_dir) / ASIC_FILE
        self._phy = PhyFile(Path(state_dir) / lab_phy.FILE)
        self._min_age_s = min_age_s
        self._run = run
        self._model = VirtualAsic()
        self._cached: tuple[float, Leaves] | None = None

    def __call__(self) -> Leaves:
        now = time.monotonic()
        if self._cached is not None and now - self._cached[0] < self._min_age_s:
            return self._cached[1]
        reading = read_kernel(self._run)
        try:
            db = json.loads(self._asic.read_text(encoding="utf-8"))
        except FileNotFoundError:
            db = {}  # a factory-fresh switch: no virtual ASIC tables yet
        leaves = self._model.step(reading, db if isinstance(db, dict) else {}, time.time())
        leaves += self._phy()
        self._cached = (now, leaves)
        return leaves


def source(state_dir: str = "/var/lib/flatfab", min_age_s: float = 0.5) -> LabSwitchCounters:
    return LabSwitchCounters(state_dir, min_age_s)
