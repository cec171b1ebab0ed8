"""verify --burn-in: the acceptance of links, the record an operator hands over when a new
pod is cabled.

Every device's physical layer is read (read-only), the test flows `verify --traffic` sends
cross every link for the duration, round after round, and everything is read again and
judged: the physical catalog on what the links show afterwards, and per link what changed
while traffic ran (codewords the FEC could not correct, flaps). Each physical link is then
accepted, rejected with every reason, or not judged with why (an end not read before or
after, a counter it did not state).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from nornir.core import Nornir

from flatfab.checks import CATALOG, Finding, Stage
from flatfab.checks.base import FindingKind, Scope, Severity
from flatfab.model.physical import PortPhysical
from flatfab.model.state import DeviceState, Endpoint, FabricState, Link
from flatfab.reports.model import AuditReport, BurnInInfo, LinkVerdict
from flatfab.workflows.commands.audit import device_summaries, link_summaries
from flatfab.workflows.commands.traffic import TRAFFIC_CHECKS, run_traffic
from flatfab.workflows.commands.verify import Report, verify
from flatfab.workflows.devices.collect import collect
from flatfab.workflows.devices.progress import RichProgress

CHECK = "burnin.link"
Verdict = Literal["accepted", "rejected", "not judged"]

KINDS = (
    FindingKind(CHECK, "Every physical link carries the burn-in's traffic without losing a "
                "frame, flapping or failing a physical check", Severity.ERROR, Scope.LINK, """
        Reads: both ends' physical layer before and after `verify --burn-in DURATION` sent
        the test flows of `verify --traffic` across every link for the duration; the
        physical catalog's and the flows' findings on the link.
        Expects: no codeword the FEC could not correct (beyond `physical.uncorrectable`)
        and no flap while the traffic ran; no physical or traffic finding on the link.
        Fails when: any of these is seen: the link is rejected with every reason. An end
        that was not read before or after, or that does not state a counter the verdict
        needs, leaves the link not judged (the run is incomplete, exit 3).
        Fix: Act on each reason (`flatfab checks phy.ber` and the others say how: clean,
        reseat, replace, re-cable), then run the burn-in again until every link is
        accepted."""),
)


@dataclass
class BurnIn:
    report: Report
    info: BurnInInfo
    started_epoch: float


def run_burn_in(nornir: Nornir, plan: FabricState, duration_s: float, *,
                progress: RichProgress | None = None,
                tell: Callable[[str], None] = lambda _: None) -> BurnIn:
    """Read, send for `duration_s` (at least one round of flows), read again, judge."""
    started_epoch, started = time.time(), time.monotonic()
    tell("reading every device's physical layer")
    before = collect(nornir, plan, probes={}, read_only=True, progress=progress,
                     name="burn-in: before", physical=True).state
    tell(f"sending test traffic for {duration_s:g} s")
    deadline = time.monotonic() + duration_s
    rounds, packets = 0, 0
    sent: list[Finding] = []
    while True:
        flows = run_traffic(nornir, plan)
        rounds, packets, sent = rounds + 1, packets + flows.packets, sent + flows.findings
        if flows.failed or time.monotonic() >= deadline:
            break  # a flow that failed says what it says; more rounds would repeat it
    traffic_s = time.monotonic() - deadline + duration_s
    tell("reading every device's physical layer again")
    checks = sorted(c for c, item in CATALOG.items() if Stage.LIVE in item.stages)
    report = verify(nornir, plan, only_checks=checks, progress=progress,
                    name="burn-in: after")
    assert report.observed is not None
    found = sorted(set(report.findings) | set(sent), key=lambda f: f.sort_key)
    verdicts, rejected = judge_links(plan, before, report.observed, found)
    report.findings = sorted(found + rejected, key=lambda f: f.sort_key)
    report.checks_run = sorted({*report.checks_run, *TRAFFIC_CHECKS, CHECK})
    report.timings.update(traffic_s=round(traffic_s, 3),
                          total_s=round(time.monotonic() - started, 3))
    info = BurnInInfo(duration_s=round(duration_s, 3), rounds=rounds, packets=packets,
                      links=tuple(verdicts))
    return BurnIn(report=report, info=info, started_epoch=started_epoch)


def _phy(state: FabricState, end: Endpoint) -> tuple[PortPhysical | None, str | None]:
    """An end's physical layer as read, or why there is none."""
    device = state.devices.get(end.device)
    if device is None or not device.reachable:
        return None, f"{end.device} not read"
    iface = device.interfaces.get(end.port)
    if iface is None or iface.phy is None:
        return None, f"{end} states no physical layer"
    return iface.phy, None


def _uncorrectable(phy: PortPhysical) -> int | None:
    return phy.fec_counters.uncorrectable if phy.fec_counters is not None else None


def _changes(end: Endpoint, before: PortPhysical, after: PortPhysical, allowed: int,
             device: DeviceState | None) -> tuple[list[str], list[str]]:
    """(reasons to reject, facts not judged) from what one end's counters did meanwhile."""
    reasons, unjudged = [], []
    declared = device.limitations if device is not None else {}
    was, now = _uncorrectable(before), _uncorrectable(after)
    if was is not None and now is not None:
        if now - was > allowed:
            reasons.append(f"{end}: {now - was} uncorrectable FEC codewords during the burn-in")
    elif not any(p.startswith("phy.fec_counters") for p in declared):
        unjudged.append(f"{end}: uncorrectable codewords not stated")
    if before.flaps is not None and after.flaps is not None:
        if after.flaps > before.flaps:
            reasons.append(f"{end}: flapped {after.flaps - before.flaps} times during the "
                           "burn-in")
    elif "phy.flaps" not in declared:
        unjudged.append(f"{end}: link flaps not stated")
    return reasons, unjudged


def judge_links(plan: FabricState, before: FabricState, after: FabricState,
                findings: list[Finding]) -> tuple[list[LinkVerdict], list[Finding]]:
    """Each physical link's verdict, and a finding per link not accepted."""
    allowed = plan.physical.thresholds.uncorrectable if plan.physical is not None else 0
    on_port: dict[tuple[str, str], list[Finding]] = {}
    on_link: dict[str, list[Finding]] = {}
    for f in findings:
        if not f.severity.fails or f.check == CHECK:
            continue
        if f.link is not None:
            on_link.setdefault(f.link, []).append(f)
        elif f.device is not None and f.port is not None:
            on_port.setdefault((f.device, f.port), []).append(f)
    verdicts, raised = [], []
    for link in (lk for lk in plan.links if lk.parent is None):
        reasons, unjudged = _link_facts(plan, before, after, link, allowed)
        seen = on_link.get(link.id, []) + [f for end in (link.a, link.b)
                                          for f in on_port.get((end.device, end.port), [])]
        reasons += [f"{f.check}: {f.message}" for f in sorted(set(seen), key=lambda f: f.sort_key)]
        verdict: Verdict = "rejected" if reasons else "not judged" if unjudged else "accepted"
        told = tuple(reasons or unjudged)
        verdicts.append(LinkVerdict(link=link.id, a=str(link.a), b=str(link.b),
                                    verdict=verdict, reasons=told))
        if verdict != "accepted":
            raised.append(Finding(
                check=CHECK, severity=Severity.ERROR if reasons else Severity.NOT_JUDGED,
                device=link.a.device, port=link.a.port, link=link.id,
                message=f"link {link.a} -- {link.b} {verdict}: {'; '.join(told)}",
                expected="accepted", actual=verdict))
    return verdicts, raised


def _link_facts(plan: FabricState, before: FabricState, after: FabricState, link: Link,
                allowed: int) -> tuple[list[str], list[str]]:
    reasons: list[str] = []
    unjudged: list[str] = []
    for end in (link.a, link.b):
        planned = plan.devices.get(end.device)
        if planned is not None and not planned.managed:
            continue  # never read by design: the switch's end speaks for the link
        was, why_before = _phy(before, end)
        now, why_after = _phy(after, end)
        if was is None or now is None:
            unjudged.append(why_before or why_after or f"{end} not read")
            continue
        found, missing = _changes(end, was, now, allowed, after.devices.get(end.device))
        reasons += found
        unjudged += missing
    return reasons, unjudged


def burn_in_report(plan: FabricState, run: BurnIn) -> AuditReport:
    """The burn-in as a report in every format (flatfab.reports)."""
    stamp = datetime.fromtimestamp(run.started_epoch, UTC)
    report = run.report
    return AuditReport(
        fabric=plan.fabric, run_id=f"{stamp:%Y%m%dT%H%M%SZ}-burnin-{plan.fabric}",
        started=f"{stamp:%Y-%m-%dT%H:%M:%SZ}", started_epoch=round(run.started_epoch, 3),
        duration_s=report.timings.get("total_s", 0.0),
        devices=device_summaries(plan, set(report.unread)), links=link_summaries(plan),
        checks_run=report.checks_run, findings=report.findings, drift=[],
        unread=dict(report.unread), timings=report.timings, burn_in=run.info)
