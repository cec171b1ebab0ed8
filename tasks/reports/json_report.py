"""The audit (or watch) as JSON: the machine-readable record other tools (CI, dashboards) consume.

`unread` lists every device that was not read, with why (status "incomplete", exit code 3,
when nothing read is wrong); `drift` holds only devices whose config was read and differs.
An unmanaged host (a device's `managed` false) is never read by design: it is not in
`unread`, and what the checks did not judge on it are findings of severity `not-judged`,
which never change the status.

Keys are sorted and every list has a fixed order, so two runs that find the same things
write byte-identical files and a plain `diff` between two audits shows what changed.
"""

from __future__ import annotations

import json
from typing import Any

from flatfab.checks import Finding
from flatfab.reports import acceptance
from flatfab.reports.model import (
    AuditReport,
    BurnInInfo,
    DeviceDrift,
    DeviceSummary,
    FindingEvent,
    WatchInfo,
)


def _finding_key(finding: Finding) -> tuple[Any, ...]:
    """Total order on findings (sort_key alone leaves ties on link, expected, actual)."""
    return (*finding.sort_key, finding.link or "", finding.expected, finding.actual,
            finding.virtual)


def _drift(entry: DeviceDrift) -> dict[str, Any]:
    sections = [{"section": s.section, "missing": list(s.missing),
                 "unexpected": list(s.unexpected), "diff": s.diff}
                for s in sorted(entry.sections, key=lambda s: s.section)]
    return {"device": entry.device, "lines": entry.lines, "sections": sections}


def event_key(event: FindingEvent) -> tuple[Any, ...]:
    """History order: by tick, raised before cleared, then the findings' order."""
    return (event.tick, event.change != "raised", *_finding_key(event.finding))


def _watch(info: WatchInfo) -> dict[str, Any]:
    return {"ticks": info.ticks, "interval_s": info.interval_s,
            "streamed": sorted(info.streamed), "interrupted": info.interrupted,
            "events_left_out": info.events_left_out,
            "events": [{"at": e.at, "tick": e.tick, "change": e.change,
                        "finding": e.finding.as_dict()}
                       for e in sorted(info.events, key=event_key)]}


def burn_in(info: BurnInInfo) -> dict[str, Any]:
    """A burn-in's run and its verdict per physical link (the plan's order)."""
    return {"duration_s": info.duration_s, "rounds": info.rounds, "packets": info.packets,
            "links": [{"link": v.link, "a": v.a, "b": v.b, "verdict": v.verdict,
                       "reasons": list(v.reasons)} for v in info.links]}


def _device(device: DeviceSummary) -> dict[str, Any]:
    """A device's name, role, platform, reachability and whether flatfab manages it, and
    where it sits when the fabric says (a classic leaf-spine's devices have no placement)."""
    return {"name": device.name, "role": device.role, "platform": device.platform,
            "reachable": device.reachable, "managed": device.managed, **device.placement}


def as_dict(report: AuditReport) -> dict[str, Any]:
    """The report as plain JSON-ready data, in a stable order (a watch's adds `kind` and
    `watch`: its ticks and raised/cleared history; an audit's is as it always was)."""
    status = report.status
    extra: dict[str, Any] = {} if report.watch is None else {
        "kind": report.kind, "watch": _watch(report.watch)}
    if report.burn_in is not None:
        extra = {"kind": report.kind, "burn_in": burn_in(report.burn_in)}
    if report.acceptance is not None:
        extra = {"kind": report.kind, "acceptance": acceptance.as_json(report.acceptance)}
    return {
        **extra,
        "fabric": report.fabric,
        "run_id": report.run_id,
        "started": report.started,
        "duration_s": report.duration_s,
        "status": report.status_word,
        "exit_code": status.exit_code,
        "error": report.error,
        "checks_run": sorted(report.checks_run),
        "devices": [_device(d) for d in sorted(report.devices, key=lambda d: d.name)],
        "findings": [f.as_dict() for f in sorted(report.findings, key=_finding_key)],
        "by_severity": report.findings_by_severity(),
        "drift": [_drift(d) for d in sorted(report.drift, key=lambda d: d.device)],
        "unread": [{"device": name, "reason": why} for name, why in sorted(report.unread.items())],
        "timings": dict(report.timings),
    }


def render(report: AuditReport) -> str:
    """JSON text (indent 1, sorted keys, trailing newline)."""
    return json.dumps(as_dict(report), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
