"""The audit (or watch) as Prometheus text exposition, for node_exporter's textfile collector.

Alerts then fire on findings and drift, on devices the audit could not read
(`devices_unread`, and `device_unread` per device: never counted as drift), and on an audit
that stopped running or succeeding. Unmanaged hosts (never read by design, never unread) are
counted apart, `devices_unmanaged`, and what was not judged has its own severity label,
`not-judged`, which no alert on failing severities matches:
a failed audit keeps the previous success time (read back from the last .prom file) so
`time() - flatfab_audit_last_success_timestamp_seconds` keeps growing until one succeeds.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from flatfab.checks import Severity
from flatfab.reports import acceptance
from flatfab.reports.model import AuditReport, AuditStatus

Labels = Mapping[str, str]
Sample = tuple[Labels, float]

LAST_SUCCESS = "flatfab_audit_last_success_timestamp_seconds"
# a watch's file carries the same families under flatfab_watch_ (no drift ones): both files
# can sit in one textfile-collector folder without colliding
_HELP = {
    "up": "1 if the {kind} could run, 0 if it could not.",
    "findings": "Findings of the last {kind} by severity.",
    "check_findings": "Findings of the last {kind} by check and severity.",
    "device_findings": "Findings of the last {kind} by device and severity.",
    "config_drift_lines": "Lines differing between running and intended config.",
    "devices_drifted": "Devices whose running config was read and differs from the intent.",
    "devices_unread": "Devices the last {kind} could not read (judged neither way).",
    "device_unread": "1 for each device the last {kind} could not read.",
    "devices_unmanaged": "Planned hosts flatfab never reads (unmanaged): their own state is "
                         "not judged.",
    "duration_seconds": "How long the last {kind} took.",
    "last_run_timestamp_seconds": "When the last {kind} started (Unix time).",
    "last_success_timestamp_seconds": "When the last {kind} that could run started (Unix "
                                      "time).",
    "link_accepted": "1 for each physical link the last {kind} accepted, 0 for each it "
                     "rejected (a link not judged has no sample).",
    "pair_gbps": "Gb/s each pair of the last {kind} measured (iperf3, ib_write_bw).",
    "pair_passed": "1 for each pair of the last {kind} that reached its reference, 0 for "
                   "each that did not (a pair not run has no sample).",
    "pairs_not_run": "Pairs and collectives the last {kind} could not run (judged neither "
                     "way).",
}
_DRIFT_ONLY = frozenset({"config_drift_lines", "devices_drifted"})
_BURN_IN_ONLY = frozenset({"link_accepted"})
_ACCEPTANCE_ONLY = frozenset({"pair_gbps", "pair_passed", "pairs_not_run"})
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})?"
                     r"\s+(?P<value>\S+)(?:\s+-?\d+)?\s*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def escape_label(value: str) -> str:
    """A label value as the exposition format wants it: backslash, quote, newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _sample_line(name: str, labels: Labels, value: float) -> str:
    body = ",".join(f'{key}="{escape_label(labels[key])}"' for key in labels)
    return f"{name}{{{body}}} {_number(value)}"


def _family(kind: str, short: str, samples: Iterable[Sample]) -> list[str]:
    name = f"flatfab_{kind}_{short}"
    lines = [f"# HELP {name} {_HELP[short].format(kind=kind)}", f"# TYPE {name} gauge"]
    return lines + [_sample_line(name, labels, value) for labels, value in samples]


def _grouped(pairs: Counter[tuple[str, str]], key: str, fabric: str) -> list[Sample]:
    """Counts keyed by (key value, severity), sorted by key then severity rank."""
    ordered = sorted(pairs.items(), key=lambda kv: (kv[0][0], Severity(kv[0][1]).rank))
    return [({"fabric": fabric, key: k, "severity": sev}, float(count))
            for (k, sev), count in ordered]


def _families(report: AuditReport, last_success: float | None) -> dict[str, list[Sample]]:
    fabric = {"fabric": report.fabric}
    by_severity = report.findings_by_severity()
    checks = Counter((f.check, f.severity.value) for f in report.findings)
    devices = Counter((f.device, f.severity.value) for f in report.findings
                      if f.device is not None)
    drift = sorted((d.device, s.section, len(s.missing) + len(s.unexpected))
                   for d in report.drift for s in d.sections)
    return {
        "up": [(fabric, float(report.status is not AuditStatus.ERROR))],
        "findings": [({**fabric, "severity": s.value}, float(by_severity[s.value]))
                                   for s in Severity],
        "check_findings": _grouped(checks, "check", report.fabric),
        "device_findings": _grouped(devices, "device", report.fabric),
        "config_drift_lines": [
            ({**fabric, "device": dev, "section": sec}, float(n)) for dev, sec, n in drift],
        "devices_drifted": [
            (fabric, float(len(report.drift)))],
        "devices_unread": [(fabric, float(len(report.unread)))],
        "device_unread": [({**fabric, "device": name}, 1.0) for name in sorted(report.unread)],
        "devices_unmanaged": [
            (fabric, float(sum(1 for d in report.devices if not d.managed)))],
        "duration_seconds": [(fabric, report.duration_s)],
        "last_run_timestamp_seconds": [(fabric, report.started_epoch)],
        "last_success_timestamp_seconds": [] if last_success is None else [(fabric, last_success)],
        "link_accepted": [] if report.burn_in is None else [
            ({**fabric, "link": v.link, "a": v.a, "b": v.b}, float(v.verdict == "accepted"))
            for v in report.burn_in.links if v.verdict != "not judged"],
        **({} if report.acceptance is None else
           acceptance.prometheus_samples(report.acceptance, report.fabric)),
    }


def render(report: AuditReport, last_success_epoch: float | None = None) -> str:
    """Every metric family with HELP and TYPE; `last_success_epoch` only counts on error."""
    if report.status is not AuditStatus.ERROR:
        last_success_epoch = report.started_epoch
    lines: list[str] = []
    for short, samples in _families(report, last_success_epoch).items():
        if report.kind != "audit" and short in _DRIFT_ONLY:
            continue  # a watch and a burn-in compare no config
        if report.burn_in is None and short in _BURN_IN_ONLY:
            continue
        if not samples and short in _ACCEPTANCE_ONLY:
            continue
        lines += _family(report.kind, short, samples)
    return "\n".join(lines) + "\n"


def parse_labels(text: str) -> dict[str, str] | None:
    """Label pairs of one sample (`a="x",b="y"`), unescaped; None if malformed."""
    labels: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        match = _LABEL.match(text, pos)
        if match is None:
            return None
        raw = match.group(2)
        labels[match.group(1)] = re.sub(r"\\.", lambda m: _UNESCAPE.get(m[0], m[0]), raw)
        pos = match.end()
    return labels


def previous_success(text: str, fabric: str | None = None,
                     kind: str = "audit") -> float | None:
    """The last-success time in an earlier .prom file (of `fabric` if given), else None."""
    wanted = f"flatfab_{kind}_last_success_timestamp_seconds"
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match is None or match["name"] != wanted:
            continue
        labels = parse_labels(match["labels"] or "")
        if labels is None or (fabric is not None and labels.get("fabric") != fabric):
            continue
        try:
            value = float(match["value"])
        except ValueError:
            continue
        if math.isfinite(value):
            return value
    return None
