"""What one audit (or one watch) found: the input of every report format.

An audit compares intended with running config per device and section (config drift) and
runs the live check catalog on collected state (state drift). A watch (`flatfab watch
--report-dir`) fills the same report with its live telemetry findings: those active at the
end, plus what was raised and cleared on the way (`watch`, `events`); it has no config
drift. Every renderer in flatfab.reports is a pure function of an AuditReport, so the same
report is byte-identical in every run that finds the same things (timestamps are fields,
never read from a clock here).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from flatfab.checks import Finding, Severity


class AuditStatus(StrEnum):
    CLEAN = "clean"  # exit 0
    DRIFT = "drift"  # config drift or failing findings: exit 1
    ERROR = "error"  # could not run (no inventory, nothing reachable): exit 2

    @property
    def exit_code(self) -> int:
        return {"clean": 0, "drift": 1, "error": 2}[self.value]


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
    device: str
    sections: tuple[SectionDrift, ...] = ()
    error: str | None = None  # the running config could not be read

    @property
    def lines(self) -> int:
        return sum(len(s.missing) + len(s.unexpected) for s in self.sections)


@dataclass(frozen=True)
class DeviceSummary:
    name: str
    role: str  # spine | leaf | host
    platform: str
    reachable: bool
    managed: bool = True  # false: an unmanaged host, never read (its own state not judged)


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
    drift: list[DeviceDrift]  # only devices with drift or a read error, sorted by name
    started_epoch: float = 0.0  # the same instant as `started`, for metrics
    error: str | None = None  # why the audit could not run at all
    timings: dict[str, float] = field(default_factory=dict)
    watch: WatchInfo | None = None  # a watch's report, not an audit's

    @property
    def kind(self) -> str:
        """audit | watch: the reports' titles, file names and metric prefix."""
        return "audit" if self.watch is None else "watch"

    @property
    def status_word(self) -> str:
        """The status as the report says it: a watch has findings, not drift."""
        if self.watch is None:
            return self.status.value
        return {"clean": "healthy", "drift": "findings", "error": "error"}[self.status.value]

    @property
    def status(self) -> AuditStatus:
        if self.error is not None:
            return AuditStatus.ERROR
        if self.drift or any(f.severity.fails for f in self.findings):
            return AuditStatus.DRIFT
        return AuditStatus.CLEAN

    def findings_by_severity(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Severity}
        for f in self.findings:
            counts[f.severity.value] += 1
        return counts

    def worst_by_device(self) -> dict[str, str]:
        """Device -> its worst finding severity, or "drift" for config drift alone."""
        worst: dict[str, str] = {}
        for f in self.findings:
            if f.device is None:
                continue
            current = worst.get(f.device)
            if current is None or current == "drift" or Severity(current).rank > f.severity.rank:
                worst[f.device] = f.severity.value
        for d in self.drift:
            worst.setdefault(d.device, "drift")
        return worst
