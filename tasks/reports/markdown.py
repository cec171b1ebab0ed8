"""The audit (or watch) as Markdown, for a CI job summary, a pull request comment or a ticket.

A device that was not read has a row of its own, with why, under "Not read" (a watch's: "Not
heard"); it is never counted as drift. What was not judged (an unmanaged host, which flatfab
never reads, or a setting a device does not state) is listed apart under "Not judged": never
a finding, never a pass.

Cells are escaped (pipes, HTML, line breaks) because findings quote device output verbatim,
and diffs are fenced with a fence longer than any backtick run inside them.
"""

from __future__ import annotations

import re

from flatfab.checks import Finding, Severity
from flatfab.reports import acceptance
from flatfab.reports.json_report import event_key
from flatfab.reports.model import (
    AuditReport,
    BurnInInfo,
    DeviceDrift,
    WatchInfo,
    judged,
    unjudged,
)

_BACKTICKS = re.compile(r"`+")
_HEADER = "| severity | check | device | port | VRF | expected | actual | finding |"


def cell(text: str) -> str:
    """Text safe inside one GFM table cell: no pipe, HTML or line break leaks out."""
    text = text.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;")
    text = text.replace(">", "&gt;").replace("|", "\\|")
    return "<br>".join(text.splitlines()) if text else ""


def fenced(body: str, info: str = "") -> str:
    """A fenced code block whose fence no backtick run in `body` can close."""
    longest = max((len(m) for m in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body.rstrip(chr(10))}\n{fence}\n"


def _counts(report: AuditReport) -> str:
    by_severity = report.findings_by_severity()
    return ", ".join(f"{by_severity[s.value]} {s.value}" for s in Severity)


def _summary(report: AuditReport) -> str:
    if report.watch is not None:
        info = report.watch
        stopped = " (stopped by Ctrl-C)" if info.interrupted else ""
        return (f"**{len(report.devices)} devices** ({len(info.streamed)} heard) · "
                f"**{len(set(report.checks_run))} checks** · findings: {_counts(report)} · "
                f"**{info.ticks} intervals** of {info.interval_s:g} s{stopped} · "
                f"{report.duration_s:.1f} s")
    unmanaged = sum(1 for d in report.devices if not d.managed)
    never = f", {unmanaged} unmanaged: never read" if unmanaged else ""
    compared = (f"**{len(report.drift)} drifted devices**" if report.burn_in is None else
                f"**{sum(v.verdict == 'accepted' for v in report.burn_in.links)} of "
                f"{len(report.burn_in.links)} links accepted**")
    if report.acceptance is not None:
        pairs = report.acceptance.results.pairs
        compared = f"**{sum(p.verdict.passed for p in pairs)} of {len(pairs)} pairs passed**"
    return (f"**{len(report.devices)} devices** ({len(report.unread)} not read{never}) · "
            f"**{len(set(report.checks_run))} checks** · findings: {_counts(report)} · "
            f"{compared} · {report.duration_s:.1f} s")


def _row(finding: Finding) -> str:
    message = finding.message + (" (virtual ASIC)" if finding.virtual else "")
    cells = [finding.severity.value, finding.check, finding.device or "", finding.port or "",
             finding.vrf or "", finding.expected, finding.actual, message]
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def _findings(report: AuditReport) -> list[str]:
    ordered = sorted(judged(report.findings),
                     key=lambda f: (*f.sort_key, f.link or "", f.expected, f.actual))
    title = "## Findings" if report.watch is None else "## Findings active at the end"
    return [title, "", _HEADER, "|" + "---|" * 8, *(_row(f) for f in ordered), ""]


def _not_judged(report: AuditReport) -> list[str]:
    """What was not judged: one row per device (and port) and reason, with its checks."""
    lines = ["## Not judged", "", "Neither passed nor failed: flatfab could not judge these.",
             "", "| device | port | why | checks |", "|" + "---|" * 4]
    for row in unjudged(report.findings):
        cells = [row.device, row.port, row.message, ", ".join(row.checks)]
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return [*lines, ""]


def _events(info: WatchInfo) -> list[str]:
    lines = ["## Raised and cleared", ""]
    if info.events_left_out:
        lines += [f"The {info.events_left_out} oldest changes are left out.", ""]
    lines += ["| tick | at | change | severity | check | device | port | finding |",
              "|" + "---|" * 8]
    for event in sorted(info.events, key=event_key):
        f = event.finding
        cells = [str(event.tick), event.at, event.change, f.severity.value, f.check,
                 f.device or "", f.port or "", f.message]
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return [*lines, ""]


def _unread(report: AuditReport) -> list[str]:
    """The devices not read, with why: never judged, never drift."""
    what = "heard" if report.watch is not None else "read"
    lines = [f"## Not {what}", "", "Nothing of these devices was judged: neither a pass nor "
             "drift.", "", "| device | why |", "|---|---|"]
    lines += [f"| {cell(name)} | {cell(why)} |" for name, why in sorted(report.unread.items())]
    return [*lines, ""]


def _device_drift(entry: DeviceDrift) -> list[str]:
    lines = [f"### {cell(entry.device)}", ""]
    for section in sorted(entry.sections, key=lambda s: s.section):
        lines += [f"`{section.section}`: {len(section.missing)} missing, "
                  f"{len(section.unexpected)} unexpected", "", fenced(section.diff, "diff")]
    return lines


def _drift(report: AuditReport) -> list[str]:
    lines = ["## Config drift", ""]
    for entry in sorted(report.drift, key=lambda d: d.device):
        lines += _device_drift(entry)
    return lines


def _links(info: BurnInInfo) -> list[str]:
    """A burn-in's verdict on every physical link, in the plan's order."""
    counts = {w: sum(v.verdict == w for v in info.links)
              for w in ("accepted", "rejected", "not judged")}
    lines = ["## Links", "",
             f"{counts['accepted']} accepted, {counts['rejected']} rejected, "
             f"{counts['not judged']} not judged, after {info.rounds} rounds of test flows "
             f"({info.packets} packets) in {info.duration_s:g} s.", "",
             "| link | verdict | why |", "|---|---|---|"]
    lines += [f"| {cell(v.a)} -- {cell(v.b)} | {v.verdict} | {cell('; '.join(v.reasons))} |"
              for v in info.links]
    return [*lines, ""]


def render(report: AuditReport) -> str:
    """Title, summary line, a burn-in's links, findings table and per-device config
    drift."""
    status = report.status
    lines = [f"# flatfab {report.kind} `{report.fabric}`: {report.status_word}", "",
             f"Run `{report.run_id}` started {report.started} (exit code {status.exit_code})",
             "", _summary(report), ""]
    if report.error is not None:
        lines += [f"**The {report.kind} could not run:** {cell(report.error)}", ""]
    if report.unread:
        lines += _unread(report)
    if report.burn_in is not None:
        lines += _links(report.burn_in)
    if report.acceptance is not None:
        lines += acceptance.markdown_lines(report.acceptance)
    verdicts = judged(report.findings)
    if verdicts:
        lines += _findings(report)
    if len(verdicts) < len(report.findings):
        lines += _not_judged(report)
    if report.drift:
        lines += _drift(report)
    if (not verdicts and not report.drift and not report.unread
            and report.error is None):
        lines += ["No findings, no drift." if report.kind == "audit" else "No findings.", ""]
    if report.watch is not None and (report.watch.events or report.watch.events_left_out):
        lines += _events(report.watch)
    return "\n".join(lines).rstrip("\n") + "\n"
