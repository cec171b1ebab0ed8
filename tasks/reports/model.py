"""What one audit (or one watch) found: the input of every report format.

An audit compares intended with running config per device and section (config drift) and
runs the live check catalog on collected state (state drift). A device it could not read
(its session, or its running config) is unread, with the reason: never drift, never clean.
A watch (`flatfab watch --report-dir`) fills the same report with its live telemetry
findings: those active at the end, plus what was raised and cleared on the way (`watch`,
`events`), and the devices it never heard as unread; it has no config drift. Every renderer
in flatfab.reports is a pure function of an AuditReport, so the same report is
byte-identical in every run that finds the same things (timestamps are fields, never read
from a clock here).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from flatfab import exitcodes
from flatfab.acceptance.run import AcceptanceInfo
from flatfab.checks import Finding, Severity
from flatfab.checks.base import about_read, unread_settings


class AuditStatus(StrEnum):
    CLEAN = "clean"  # exit 0
    DRIFT = "drift"  # config drift or failing findings on what was read: exit 1
    ERROR = "error"  # could not run (no inventory, no broker): exit 2
    INCOMPLETE = "incomplete"  # some devices or settings unread, nothing read is wrong: exit 3

    @property
    def exit_code(self) -> int:
        return {"clean": exitcodes.CLEAN, "drift": exitcodes.FINDINGS,
                "error": exitcodes.COULD_NOT_RUN, "incomplete": exitcodes.INCOMPLETE}[self.value]


@dataclass(frozen=True)
class SectionDrift:
    """One config section of one device whose running text differs from the intended.

    Sections: `links`, `qos`, `frr` on frr switches (the `!! name` blocks of the config);
    the leading keyword of each line on linux_host (`nic`, `address`, `route`, `qos`).
    """

    section: str
    missing: tuple[str, ...]  # intended lines the device lacks
    unexpected: tuple[str, ...]  # running lines the intent lacks
    diff: str  # unified diff of the section, running -> intended


@dataclass(frozen=True)
class DeviceDrift:
    """A device's config drift as a read found it; `error`: its running config could not be
    read (a report holds such a device as unread, never as drift)."""

    device: str
    sections: tuple[SectionDrift, ...] = ()
    error: str | None = None

    @property
    def lines(self) -> int:
        return sum(len(s.missing) + len(s.unexpected) for s in self.sections)


@dataclass(frozen=True)
class DeviceSummary:
    """A device as the reports name and draw it. An AI back-end's devices also say where
    they sit (absent, None, in a classic leaf-spine): the plane and pod of a switch (a
    super-spine has a plane only), the scalable unit of a leaf or server, the rail of a rail
    leaf; the diagram groups and styles by them."""

    name: str
    role: str  # superspine | spine | leaf | host
    platform: str
    reachable: bool
    plane: int | None = None
    pod: int | None = None
    su: int | None = None
    rail: int | None = None
    # false: an unmanaged host, never read (its own state not judged; never unread either)
    managed: bool = True

    @property
    def placement(self) -> dict[str, int]:
        """Where the device sits, the fields that are set only."""
        found = {"plane": self.plane, "pod": self.pod, "su": self.su, "rail": self.rail}
        return {key: value for key, value in found.items() if value is not None}


@dataclass(frozen=True)
class Unjudged:
    """What was not judged on one device (and port), and why, with every check that says so:
    the not-judged findings as a report lists them (one row per unmanaged host, not one per
    host and check)."""

    device: str
    port: str
    message: str
    checks: tuple[str, ...]


def unjudged(findings: Iterable[Finding]) -> list[Unjudged]:
    """The not-judged findings grouped by device, port and message, in a stable order."""
    grouped: dict[tuple[str, str, str], set[str]] = {}
    for f in findings:
        if f.severity is Severity.NOT_JUDGED:
            grouped.setdefault((f.device or "", f.port or "", f.message), set()).add(f.check)
    return [Unjudged(device, port, message, tuple(sorted(checks)))
            for (device, port, message), checks in sorted(grouped.items())]


def judged(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that are a verdict (every severity but not-judged)."""
    return [f for f in findings if f.severity is not Severity.NOT_JUDGED]


@dataclass(frozen=True)
class LinkSummary:
    """A physical link (VRF sub-links are not drawn)."""

    id: str
    kind: str  # fabric | host
    a_device: str
    a_port: str
    b_device: str
    b_port: str


@dataclass(frozen=True)
class FindingEvent:
    """A watch finding raised or cleared at one tick (a cleared one as last seen)."""

    at: str  # ISO 8601 UTC of the tick
    tick: int
    change: Literal["raised", "cleared"]
    finding: Finding


@dataclass(frozen=True)
class WatchInfo:
    """How a watch ran: its ticks and interval, the devices heard, and its history (the
    newest `events`; `events_left_out` older ones were not kept)."""

    ticks: int
    interval_s: float
    streamed: tuple[str, ...] = ()
    interrupted: bool = False
    events: tuple[FindingEvent, ...] = ()
    events_left_out: int = 0


@dataclass(frozen=True)
class LinkVerdict:
    """A burn-in's verdict on one physical link: accepted, rejected (with every reason) or
    not judged (with why: an end not read before or after)."""

    link: str
    a: str  # device:port
    b: str
    verdict: Literal["accepted", "rejected", "not judged"]
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class BurnInInfo:
    """How a burn-in ran (`verify --burn-in`): for how long, the traffic it sent, and its
    verdict per physical link, in the plan's order."""

    duration_s: float
    rounds: int
    packets: int
    links: tuple[LinkVerdict, ...]


@dataclass
class AuditReport:
    fabric: str
    run_id: str
    started: str  # ISO 8601 UTC, e.g. 2026-11-23T09:00:00Z
    duration_s: float
    devices: list[DeviceSummary]
    links: list[LinkSummary]
    checks_run: list[str]
    findings: list[Finding]
    drift: list[DeviceDrift]  # only devices whose config drifts, sorted by name
    started_epoch: float = 0.0  # the same instant as `started`, for metrics
    error: str | None = None  # why the audit could not run at all
    timings: dict[str, float] = field(default_factory=dict)
    watch: WatchInfo | None = None  # a watch's report, not an audit's
    burn_in: BurnInInfo | None = None  # a burn-in's report, not an audit's
    acceptance: AcceptanceInfo | None = None  # an acceptance run's (`flatfab accept`)
    # device -> why it was not read (its session, or its running config: then neither drift
    # nor clean); a watch's: devices watched and never heard
    unread: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a config that could not be read is the device's unread reason, never its drift
        unread = dict(self.unread)
        for entry in self.drift:
            if entry.error is not None:
                unread.setdefault(entry.device, f"running config not read: {entry.error}")
        self.drift = [d for d in self.drift if d.error is None]
        self.unread = dict(sorted(unread.items()))

    @property
    def kind(self) -> str:
        """audit | watch | burnin | acceptance: the reports' titles, file names and metric
        prefix."""
        return "watch" if self.watch is not None else \
            "burnin" if self.burn_in is not None else \
            "acceptance" if self.acceptance is not None else "audit"

    @property
    def status_word(self) -> str:
        """The status as the report says it: a watch has findings, a burn-in accepts or
        rejects, an audit drifts."""
        if self.watch is not None:
            return {"clean": "healthy", "drift": "findings", "error": "error",
                    "incomplete": "incomplete"}[self.status.value]
        if self.burn_in is not None:
            return {"clean": "accepted", "drift": "rejected", "error": "error",
                    "incomplete": "incomplete"}[self.status.value]
        if self.acceptance is not None:
            return {"clean": "passed", "drift": "failed", "error": "error",
                    "incomplete": "incomplete"}[self.status.value]
        return self.status.value

    @property
    def status(self) -> AuditStatus:
        if self.error is not None:
            return AuditStatus.ERROR
        if self.drift or any(f.severity.fails for f in self.judged_findings):
            return AuditStatus.DRIFT
        # an acceptance pair that could not run is never passed
        unrun = self.acceptance is not None and not self.acceptance.complete
        incomplete = self.unread or unread_settings(self.read_findings) or unrun
        return AuditStatus.INCOMPLETE if incomplete else AuditStatus.CLEAN

    @property
    def read_findings(self) -> list[Finding]:
        """The findings on what was read (not those that only say a device was not read),
        verdicts and not-judged alike."""
        return about_read(self.findings, self.unread)

    @property
    def judged_findings(self) -> list[Finding]:
        """The verdicts on what was read: neither a device's "not read" nor what was not
        judged (an unmanaged host, a setting a device does not state)."""
        return judged(self.read_findings)

    def findings_by_severity(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Severity}
        for f in self.findings:
            counts[f.severity.value] += 1
        return counts

    def worst_by_device(self) -> dict[str, str]:
        """Device -> its worst finding severity, or "drift" for config drift with no verdict
        (what was not judged is no verdict: it never hides drift); an unread device's own
        status is "unread", an unmanaged host's "unmanaged" (flatfab.reports.statuses)."""
        worst: dict[str, str] = {}
        for f in self.findings:
            if f.device is None:
                continue
            current = worst.get(f.device)
            if current is None or Severity(current).rank > f.severity.rank:
                worst[f.device] = f.severity.value
        for d in self.drift:
            if worst.get(d.device, Severity.NOT_JUDGED.value) == Severity.NOT_JUDGED.value:
                worst[d.device] = "drift"
        return worst
