"""A watch's findings as the audit's report (flatfab.reports), so `flatfab watch --report-dir`
writes the same formats as `flatfab audit`: the findings active at the end, and what was
raised and cleared on the way (the newest `keep` changes: a watch may run for weeks)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime

from flatfab.model.state import FabricState
from flatfab.reports.model import AuditReport, FindingEvent, WatchInfo
from flatfab.telemetry import conditions
from flatfab.telemetry.health import Changes
from flatfab.workflows.commands.audit import device_summaries, link_summaries
from flatfab.workflows.commands.watch import WatchResult

CHECKS = sorted((conditions.PAUSE_STORM, conditions.WATCHDOG, conditions.LOSSLESS_DROPS,
                 conditions.PAUSE_WITHOUT_ECN, conditions.ECN_ON_LOSSY, conditions.DCQCN_IDLE,
                 conditions.SILENT, *conditions.PHYSICAL_CONDITIONS))
KEEP = 1000  # changes kept for the report


def iso(epoch: float) -> str:
    return f"{datetime.fromtimestamp(epoch, UTC):%Y-%m-%dT%H:%M:%SZ}"


class History:
    """Every tick's raised and cleared findings, the newest `keep` of them."""

    def __init__(self, keep: int = KEEP) -> None:
        self._events: deque[FindingEvent] = deque(maxlen=keep)
        self.left_out = 0

    def record(self, tick: int, epoch: float, changes: Changes) -> None:
        at = iso(epoch)
        added = [FindingEvent(at, tick, "raised", f) for f in changes.raised]
        added += [FindingEvent(at, tick, "cleared", f) for f in changes.cleared]
        for event in added:
            if len(self._events) == self._events.maxlen:
                self.left_out += 1  # the deque drops the oldest
            self._events.append(event)

    @property
    def events(self) -> tuple[FindingEvent, ...]:
        return tuple(self._events)


def watch_report(plan: FabricState, result: WatchResult, *, watched: Iterable[str],
                 started_epoch: float, duration_s: float, interval_s: float,
                 history: History | None = None) -> AuditReport:
    """The report of one watch run. A device watched but never heard is unread (drawn so,
    with why); one not watched at all (nothing to read on its platform) is not claimed
    either way."""
    heard = set(result.streamed)
    blind: set[str | None] = {d for d in watched if d not in heard}
    stamp = datetime.fromtimestamp(started_epoch, UTC)
    info = WatchInfo(ticks=result.ticks, interval_s=interval_s,
                     streamed=tuple(sorted(heard)), interrupted=result.interrupted,
                     events=history.events if history else (),
                     events_left_out=history.left_out if history else 0)
    return AuditReport(fabric=plan.fabric, run_id=f"{stamp:%Y%m%dT%H%M%SZ}-watch-{plan.fabric}",
                       started=iso(started_epoch), duration_s=round(duration_s, 3),
                       devices=device_summaries(plan, blind), links=link_summaries(plan),
                       checks_run=list(CHECKS), findings=list(result.findings), drift=[],
                       started_epoch=round(started_epoch, 3), watch=info,
                       unread=dict(result.unread))
