"""audit: strictly read-only drift detection, once or on a schedule.

Config drift: every device's running config against the rendered intent, per section.
State drift: the same live checks verify runs (underlay, tenancy and, by default, the
lossless catalog). Drivers are opened read-only, so the transport itself refuses any
command that could change a device. An unmanaged host is never read: its config is not
compared and its own state is not judged (the reports say so).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Collection
from datetime import UTC, datetime

from nornir.core import Nornir
from nornir.core.task import Task

from flatfab.checks import CATALOG, Finding, Stage
from flatfab.errors import InputError
from flatfab.model.state import FabricState, LinkKind
from flatfab.platforms.registry import get as get_platform
from flatfab.reports.model import AuditReport, DeviceDrift, DeviceSummary, LinkSummary
from flatfab.workflows.commands.verify import Report, verify
from flatfab.workflows.devices import device_io
from flatfab.workflows.devices.connections import ConnectError, unread_reason
from flatfab.workflows.devices.drift import device_drift
from flatfab.workflows.devices.progress import RichProgress

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h)?$")
_UNIT = {"s": 1, "m": 60, "h": 3600, None: 1}


def parse_duration(text: str, option: str) -> float:
    """'90', '30s', '15m', '1h' -> seconds; anything else is one clear input error."""
    match = _DURATION.match(text.strip())
    if not match or float(match.group(1)) <= 0:
        raise InputError.single(option, "", f"{text!r} is not a duration like 30s, 15m or 1h")
    return float(match.group(1)) * _UNIT[match.group(2)]


class DriftRead:
    """Config drift read on the session a device's collect opens, before its state (one
    session per device, not a drift pass and a collect: that cost 26-29 ms of controller CPU
    per device, a second SSH handshake each): the running config against the rendered
    intent, read-only (load + compare, never commit). Only devices that drift or could not
    be read are kept."""

    def __init__(self, plan: FabricState) -> None:
        self.plan = plan
        self.found: dict[str, DeviceDrift] = {}

    def __call__(self, task: Task) -> None:
        name = task.host.name
        planned = self.plan.devices[name]
        try:
            intended = get_platform(planned.platform).render(planned)
            running, intended = device_io.config_texts(task, intended)
            drift = device_drift(name, running, intended,
                                 get_platform(str(task.host.platform)).sections)
        except ConnectError as exc:
            self.found[name] = DeviceDrift(device=name, error=str(exc))
            raise  # the collect on this session would only try again
        except Exception as exc:  # noqa: BLE001 - an unread config is named, not a crash
            drift = DeviceDrift(device=name, error=unread_reason(exc, task))
        if drift is not None:
            self.found[name] = drift

    def drift(self) -> list[DeviceDrift]:
        """What was found, by device name."""
        return [self.found[name] for name in sorted(self.found)]


def audit_checks(lossless: bool, physical: bool = False) -> list[str]:
    return sorted(c for c, item in CATALOG.items()
                  if Stage.LIVE in item.stages and (lossless or not item.lossless)
                  and (physical or not item.physical))


# what a source of truth adds to an audit: its check ids, and findings on the observed state
SotChecks = tuple[list[str], Callable[[FabricState], list[Finding]]]


def audit(nornir: Nornir, plan: FabricState, *, lossless: bool = True, physical: bool = False,
          probes: bool = True,
          progress: RichProgress | None = None, sot: SotChecks | None = None,
          clock: Callable[[], float] = time.time, close: bool = True) -> AuditReport:
    started_epoch = clock()
    started = time.monotonic()
    drift = DriftRead(plan)
    report = verify(nornir, plan, probes=probes, only_checks=audit_checks(lossless, physical),
                    progress=progress, close=close, before=drift, name="audit: read")
    return audit_report(plan, drift.drift(), report, sot=sot, started_epoch=started_epoch,
                        started=started)


def audit_report(plan: FabricState, drift: list[DeviceDrift], report: Report, *,
                 sot: SotChecks | None, started_epoch: float,
                 started: float) -> AuditReport:
    """The audit of the whole fabric from its config drift and its judged live state
    (`report`: verify's judgement with the audit's checks), plus the source of truth's
    checks on the observed state."""
    stamp = datetime.fromtimestamp(started_epoch, UTC)
    findings, checks_run = report.findings, report.checks_run
    if sot is not None and report.observed is not None:
        sot_ids, judge = sot
        checks_run = sorted({*checks_run, *sot_ids})
        findings = sorted([*findings, *judge(report.observed)], key=lambda f: f.sort_key)
    return AuditReport(
        fabric=plan.fabric,
        run_id=f"{stamp:%Y%m%dT%H%M%SZ}-audit-{plan.fabric}",
        started=f"{stamp:%Y-%m-%dT%H:%M:%SZ}", started_epoch=round(started_epoch, 3),
        duration_s=round(time.monotonic() - started, 3),
        devices=device_summaries(plan, set(report.unread)), links=link_summaries(plan),
        checks_run=checks_run, findings=findings, drift=drift, unread=dict(report.unread),
        timings=report.timings)


def device_summaries(plan: FabricState,
                     unreachable: Collection[str | None]) -> list[DeviceSummary]:
    return [DeviceSummary(name=d.name, role=d.role.value, platform=d.platform,
                          reachable=d.name not in unreachable, managed=d.managed,
                          plane=d.plane, pod=d.pod, su=d.su, rail=d.rail)
            for d in plan.devices.values()]


def link_summaries(plan: FabricState) -> list[LinkSummary]:
    """The physical links a report draws (VRF sub-links ride on them)."""
    return [LinkSummary(id=link.id, kind=link.kind.value, a_device=link.a.device,
                        a_port=link.a.port, b_device=link.b.device, b_port=link.b.port)
            for link in plan.links if link.parent is None
            and link.kind in (LinkKind.FABRIC, LinkKind.HOST)]


def planned_report(plan: FabricState) -> AuditReport:
    """The plan as a report with nothing found: what `plan --diagram` draws."""
    return AuditReport(fabric=plan.fabric, run_id=f"plan-{plan.fabric}", started="",
                       duration_s=0.0, devices=device_summaries(plan, set()),
                       links=link_summaries(plan), checks_run=[], findings=[], drift=[])


def scheduled(run_once: Callable[[], int], every_s: float, jitter_s: float, count: int | None,
              sleep: Callable[[float], None] = time.sleep,
              rng: random.Random | None = None) -> int:
    """Run `run_once` every `every_s` seconds plus up to `jitter_s` of random delay (so many
    fabrics on one schedule do not all poll at once), `count` times or for ever; returns the
    last exit code."""
    draw = rng or random.Random()
    done, code = 0, 0
    while True:
        begun = time.monotonic()
        code = run_once()
        done += 1
        if count is not None and done >= count:
            return code
        delay = max(0.0, every_s - (time.monotonic() - begun)) + draw.uniform(0, jitter_s)
        sleep(delay)
