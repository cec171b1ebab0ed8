"""The audit (or watch) as JUnit XML, so any CI system shows failing checks and drifted
devices as tests.

One testcase per check (fails on a finding that fails verify: info does not) and one per
One testcase per check (fails on a finding that fails verify: info does not) and one per
device (fails on config drift); a device that was not read is an error, never a pass or a
failure: its testcase in the drift suite errors with why (type "unread"), and so does the
check that names unread devices when that is all it found. What a check could not judge on
a device (an unmanaged host, a setting a device does not state) is a skipped testcase of its
own, `<check> [<device>]`, and an unmanaged host's config-drift case is skipped: never a pass,
never a failure, never an error (flatfab never reads it by design). A watch has the checks
suite only (its findings are the telemetry checks'). Built with ElementTree so device output
with `<` or `&` is escaped correctly.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from flatfab.checks import Finding, Severity
from flatfab.checks.base import about_read
from flatfab.model.state import UNMANAGED
from flatfab.reports import acceptance
from flatfab.reports.model import AuditReport, BurnInInfo, DeviceDrift, DeviceSummary

HEADER = '<?xml version="1.0" encoding="utf-8"?>\n'
# Characters XML 1.0 cannot carry at all, even escaped (device output may hold them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def finding_line(finding: Finding) -> str:
    """One finding on one line: severity, device, port, vrf, message, expected, actual."""
    message = " ".join(finding.message.split("\n"))
    parts = [f"[{finding.severity.value}]", f"device={finding.device or '-'}",
             f"port={finding.port or '-'}", f"vrf={finding.vrf or '-'}:", message]
    if finding.expected or finding.actual:
        parts.append(f"(expected {finding.expected!r}, actual {finding.actual!r})")
    if finding.virtual:
        parts.append("[virtual ASIC]")
    return " ".join(parts)


def _ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (*f.sort_key, f.link or "", f.expected, f.actual))


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", {"classname": classname, "name": _clean(name)})


def _check_case(suite: ET.Element, check_id: str, findings: list[Finding],
                unread: dict[str, str]) -> None:
    case = _case(suite, "flatfab.checks", check_id)
    text = "\n".join(finding_line(f) for f in findings)
    failing = [f for f in about_read(findings, unread) if f.severity.fails]
    if findings and not about_read(findings, unread):
        error = ET.SubElement(case, "error", {
            "message": f"{_plural(len(findings), 'device')} not read", "type": "unread"})
        error.text = _clean(text + "\n")
    elif failing:
        worst = min((f.severity for f in failing), key=lambda s: s.rank)
        failure = ET.SubElement(case, "failure", {"message": _plural(len(failing), "finding"),
                                                  "type": worst.value})
        failure.text = _clean(text + "\n")
    elif findings:
        ET.SubElement(case, "system-out").text = _clean(text + "\n")


def _unjudged_case(suite: ET.Element, check_id: str, device: str,
                   findings: list[Finding]) -> None:
    """What `check_id` did not judge on `device`: skipped, with each reason."""
    case = _case(suite, "flatfab.checks", f"{check_id} [{device}]")
    reasons = sorted({f.message for f in findings})
    message = reasons[0] if len(reasons) == 1 else _plural(len(reasons), "setting") + \
        " not judged"
    skipped = ET.SubElement(case, "skipped", {"message": _clean(message)})
    skipped.text = _clean("\n".join(finding_line(f) for f in findings) + "\n")


def _checks_suite(root: ET.Element, report: AuditReport) -> ET.Element:
    by_check: dict[str, list[Finding]] = defaultdict(list)
    unjudged: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in report.findings:
        if finding.severity is Severity.NOT_JUDGED:
            unjudged[(finding.check, finding.device or "")].append(finding)
        else:
            by_check[finding.check].append(finding)
    suite = ET.SubElement(root, "testsuite", {"name": "checks"})
    skipped_by = defaultdict(list)
    for check_id, device in sorted(unjudged):
        skipped_by[check_id].append(device)
    for check_id in sorted(set(report.checks_run) | set(by_check) | set(skipped_by)):
        _check_case(suite, check_id, _ordered(by_check.get(check_id, [])), report.unread)
        for device in skipped_by.get(check_id, []):
            _unjudged_case(suite, check_id, device, _ordered(unjudged[(check_id, device)]))
    return suite


def drift_text(entry: DeviceDrift) -> str:
    """A device's section diffs, each under a one-line heading."""
    blocks = []
    for section in sorted(entry.sections, key=lambda s: s.section):
        heading = (f"== {section.section}: {len(section.missing)} missing, "
                   f"{len(section.unexpected)} unexpected")
        blocks.append(heading + "\n" + section.diff.rstrip("\n") + "\n")
    return "".join(blocks)


def _drift_case(suite: ET.Element, device: str, entry: DeviceDrift | None,
                unread: str | None, summary: DeviceSummary | None) -> None:
    case = _case(suite, "flatfab.drift", device)
    if summary is not None and not summary.managed:
        ET.SubElement(case, "skipped", {"message": f"config not compared: {UNMANAGED}"})
    elif unread is not None:
        error = ET.SubElement(case, "error", {"message": _clean(unread),
                                              "type": "unread"})
        error.text = _clean(unread + "\n")
    elif entry is not None and entry.sections:
        message = (f"{_plural(entry.lines, 'line')} differ in "
                   f"{', '.join(sorted(s.section for s in entry.sections))}")
        failure = ET.SubElement(case, "failure", {"message": message, "type": "drift"})
        failure.text = _clean(drift_text(entry))


def _drift_suite(root: ET.Element, report: AuditReport) -> ET.Element:
    drift = {d.device: d for d in report.drift}
    devices = {d.name: d for d in report.devices}
    suite = ET.SubElement(root, "testsuite", {"name": "config-drift"})
    for device in sorted(set(devices) | set(drift) | set(report.unread)):
        _drift_case(suite, device, drift.get(device), report.unread.get(device),
                    devices.get(device))
    return suite


def _links_suite(root: ET.Element, info: BurnInInfo) -> ET.Element:
    """A burn-in: one case per physical link, failed when rejected, skipped when not
    judged."""
    suite = ET.SubElement(root, "testsuite", {"name": "links"})
    for v in info.links:
        case = _case(suite, "flatfab.burnin", f"{v.a} -- {v.b}")
        why = "; ".join(v.reasons)
        if v.verdict == "rejected":
            failure = ET.SubElement(case, "failure", {"message": _clean(why),
                                                      "type": "rejected"})
            failure.text = _clean("\n".join(v.reasons) + "\n")
        elif v.verdict == "not judged":
            ET.SubElement(case, "skipped", {"message": _clean(f"not judged: {why}")})
    return suite


def _audit_suite(root: ET.Element, error: str, kind: str) -> ET.Element:
    suite = ET.SubElement(root, "testsuite", {"name": kind})
    case = _case(suite, f"flatfab.{kind}", "run")
    ET.SubElement(case, "error", {"message": _clean(error), "type": kind}).text = (
        _clean(error))
    return suite


def _count(suite: ET.Element) -> tuple[int, int, int, int]:
    """(tests, failures, errors, skipped) of a suite, also written onto it."""
    cases = suite.findall("testcase")
    failures = sum(1 for c in cases if c.find("failure") is not None)
    errors = sum(1 for c in cases if c.find("error") is not None)
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    return len(cases), failures, errors, skipped


def render(report: AuditReport) -> str:
    """JUnit XML with suites `audit` (only on error), `checks` and `config-drift`."""
    root = ET.Element("testsuites", {"name": _clean(f"flatfab {report.kind} "
                                                   f"{report.fabric}")})
    suites = []
    if report.error is not None:
        suites.append(_audit_suite(root, report.error, report.kind))
    suites.append(_checks_suite(root, report))
    if report.burn_in is not None:
        suites.append(_links_suite(root, report.burn_in))
    elif report.acceptance is not None:
        suites.append(acceptance.junit_suite(root, report.acceptance))
    elif report.watch is None:
        suites.append(_drift_suite(root, report))
    totals = [0, 0, 0, 0]
    for suite in suites:
        suite.set("timestamp", report.started)
        for i, value in enumerate(_count(suite)):
            totals[i] += value
    root.set("tests", str(totals[0]))
    root.set("failures", str(totals[1]))
    root.set("errors", str(totals[2]))
    root.set("skipped", str(totals[3]))
    root.set("time", f"{report.duration_s:.3f}")
    ET.indent(root, space=" ")
    return HEADER + ET.tostring(root, encoding="unicode") + "\n"

