"""Audit report renderers: behaviour of every format, determinism and golden files.

Golden files live in tests/golden/reports/<fixture>/; regenerate them with
`FLATFAB_REGEN_GOLDEN=1 pytest tests/reports/test_reports.py -k golden` and review the diff.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from flatfab import reports
from flatfab.checks import Finding, Severity
from flatfab.checks.base import not_judged, unmanaged_finding
from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from flatfab.reports import html, json_report, junit, markdown, prometheus
from flatfab.reports.html import standalone_diagram
from flatfab.reports.model import (
    AuditReport,
    DeviceSummary,
    LinkSummary,
)
from flatfab.reports.statuses import COLOURS, device_statuses
from flatfab.workflows.commands.audit import planned_report
from tests.support.flatfab import flatfab
from tests.support.paths import ROOT
from tests.support.reports import (
    CHECKS,
    DIRTY_LINKS,
    DIRTY_STATUSES,
    EPOCH,
    FRR_DIFF,
    HOST_SIDE,
    MISSING,
    REPORTS,
    UNEXPECTED,
    UNMANAGED_HOSTS,
    UNREAD_CONFIG,
    UNREAD_HOST,
    UNREAD_SPINE2,
    clean_report,
    dirty_report,
    error_report,
    incomplete_report,
    unmanaged_report,
)

GOLDEN = ROOT / "tests" / "golden" / "reports"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))


def _shuffled(report: AuditReport) -> AuditReport:
    """The same report with every list reversed (renderers must not depend on order)."""
    return dataclasses.replace(
        report, devices=report.devices[::-1], links=report.links[::-1],
        checks_run=report.checks_run[::-1], findings=report.findings[::-1],
        drift=report.drift[::-1], timings=dict(reversed(report.timings.items())))


# ---------------------------------------------------------------- JSON


def test_json_round_trips_with_exit_codes() -> None:
    codes = {}
    for name, make in REPORTS.items():
        data = json.loads(json_report.render(make()))
        codes[name] = (data["status"], data["exit_code"])
    assert codes == {"clean": ("clean", 0), "dirty": ("drift", 1), "error": ("error", 2),
                     "incomplete": ("incomplete", 3), "unmanaged": ("incomplete", 3)}


def test_json_carries_findings_drift_and_counts() -> None:
    report = dirty_report()
    text = json_report.render(report)
    data = json.loads(text)
    assert text.endswith("}\n") and text.startswith("{\n \"")
    assert data["by_severity"] == {"critical": 1, "error": 2, "warning": 1, "info": 1,
                                   "not-judged": 0}
    assert data["checks_run"] == CHECKS and data["timings"] == report.timings
    assert len(data["findings"]) == 5
    assert data["findings"][0] == report.findings[0].as_dict()  # critical sorts first
    assert {f["message"] for f in data["findings"]} == {f.message for f in report.findings}
    assert data["drift"] == [
        {"device": "leaf2", "lines": 2,
         "sections": [{"section": "frr", "missing": [MISSING], "unexpected": [UNEXPECTED],
                       "diff": FRR_DIFF}]}]
    # a device not read is never drift: it is listed with why
    assert data["unread"] == [{"device": "spine2", "reason": UNREAD_SPINE2}]
    assert [d["name"] for d in data["devices"]] == sorted(DIRTY_STATUSES)
    assert data["devices"][-1] == {"name": "spine2", "role": "spine", "platform": "frr",
                                   "reachable": False, "managed": True}
    assert json.loads(json_report.render(error_report()))["error"].startswith("no inventory")


# ---------------------------------------------------------------- JUnit


def _junit(report: AuditReport) -> ET.Element:
    text = junit.render(report)
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>\n')
    return ET.fromstring(text.encode("utf-8"))


def _cases(root: ET.Element, suite: str) -> dict[str, ET.Element]:
    found = root.find(f"testsuite[@name='{suite}']")
    assert found is not None, suite
    return {c.attrib["name"]: c for c in found.findall("testcase")}


def _assert_counts_consistent(root: ET.Element) -> None:
    totals = [0, 0, 0, 0]
    kinds = ("tests", "failures", "errors", "skipped")
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        counts = [len(cases), sum(c.find("failure") is not None for c in cases),
                  sum(c.find("error") is not None for c in cases),
                  sum(c.find("skipped") is not None for c in cases)]
        assert [int(suite.attrib[k]) for k in kinds] == counts
        totals = [t + c for t, c in zip(totals, counts, strict=True)]
    assert [int(root.attrib[k]) for k in kinds] == totals


def test_junit_dirty_counts_and_failure_texts() -> None:
    root = _junit(dirty_report())
    _assert_counts_consistent(root)
    assert root.attrib["name"] == "flatfab audit lab"
    assert (root.attrib["tests"], root.attrib["failures"], root.attrib["errors"]) == (
        "14", "5", "1")
    checks = _cases(root, "checks")
    assert sorted(checks) == CHECKS
    assert all(c.attrib["classname"] == "flatfab.checks" for c in checks.values())
    failing = {n: c.find("failure") for n, c in checks.items() if c.find("failure") is not None}
    assert sorted(failing) == ["interface.mtu", "lossless.ecn", "lossless.pfc",
                               "tenancy.isolation"]
    pfc = failing["lossless.pfc"]
    assert pfc is not None and pfc.attrib == {"message": "1 finding", "type": "error"}
    assert pfc.text is not None
    assert pfc.text.strip() == ("[error] device=leaf1-h1 port=eth1 vrf=-: PFC priorities "
                                "differ: <b>& \"prio 3\" (expected '3', actual 'none')")
    ecn = failing["lossless.ecn"]
    assert ecn is not None and ecn.attrib["type"] == "warning"
    assert "vrf=blue" in (ecn.text or "") and "[virtual ASIC]" in (ecn.text or "")
    # info alone does not fail a check, but its finding is still reported
    ecmp = checks["underlay.ecmp"]
    assert ecmp.find("failure") is None and "one path only" in (ecmp.findtext("system-out")
                                                                   or "")
    assert len(checks["underlay.bgp"]) == 0


def test_junit_drift_suite_fails_and_errors_per_device() -> None:
    root = _junit(dirty_report())
    drift = _cases(root, "config-drift")
    assert sorted(drift) == sorted(DIRTY_STATUSES)
    failure = drift["leaf2"].find("failure")
    assert failure is not None and failure.attrib == {"message": "2 lines differ in frr",
                                                      "type": "drift"}
    assert "-" + UNEXPECTED in (failure.text or "") and "+" + MISSING in (failure.text or "")
    error = drift["spine2"].find("error")
    assert error is not None and error.attrib == {"message": UNREAD_SPINE2,
                                                  "type": "unread"}
    assert [n for n, c in drift.items() if len(c)] == ["leaf2", "spine2"]
    assert root.find("testsuite[@name='audit']") is None


def test_junit_error_report_has_an_audit_suite() -> None:
    root = _junit(error_report())
    _assert_counts_consistent(root)
    audit = _cases(root, "audit")
    error = audit["run"].find("error")
    assert error is not None and error.attrib["message"].startswith("no inventory")
    assert root.attrib["errors"] == "1" and root.attrib["failures"] == "0"


def test_junit_clean_has_no_failures() -> None:
    root = _junit(clean_report())
    _assert_counts_consistent(root)
    assert (root.attrib["tests"], root.attrib["failures"], root.attrib["errors"]) == (
        "14", "0", "0")


def test_junit_survives_control_characters_in_device_output() -> None:
    report = dirty_report()
    report.findings.append(Finding("underlay.bgp", Severity.ERROR, "leaf1", "bell\x07 esc\x1b"))
    assert "bell\ufffd esc\ufffd" in junit.render(report)
    _assert_counts_consistent(_junit(report))


# ---------------------------------------------------------------- Prometheus

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$")
_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def _parse_prom(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """A tiny exposition parser: (name, labels) -> value; HELP/TYPE checked per family."""
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    typed: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            assert kind == "gauge"
            typed.add(name)
            continue
        if line.startswith("# HELP "):
            continue
        match = _SAMPLE.match(line)
        assert match, f"unparsable sample line: {line!r}"
        name, body, value = match.groups()
        assert name in typed, f"{name} has no TYPE line before it"
        pairs = _PAIR.findall(body)
        assert "".join(f'{k}="{v}",' for k, v in pairs).rstrip(",") == body
        labels = {k: re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m[1], m[1]), v)
                  for k, v in pairs}
        key = (name, frozenset(labels.items()))
        assert key not in samples, f"duplicate sample {key}"
        samples[key] = float(value)
    return samples


def _get(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
         **labels: str) -> float | None:
    return samples.get((name, frozenset({"fabric": "lab", **labels}.items())))


def test_prometheus_dirty_values() -> None:
    text = prometheus.render(dirty_report())
    samples = _parse_prom(text)
    assert all(dict(k[1]).get("fabric") == "lab" for k in samples)
    assert _get(samples, "flatfab_audit_up") == 1
    assert {s.value: _get(samples, "flatfab_audit_findings", severity=s.value)
            for s in Severity} == {"critical": 1, "error": 2, "warning": 1, "info": 1,
                                   "not-judged": 0}
    assert _get(samples, "flatfab_audit_check_findings", check="lossless.pfc",
                severity="error") == 1
    assert _get(samples, "flatfab_audit_check_findings", check="underlay.ecmp",
                severity="info") == 1
    assert _get(samples, "flatfab_audit_check_findings", check="underlay.bgp",
                severity="error") is None
    assert _get(samples, "flatfab_audit_device_findings", device="leaf1",
                severity="warning") == 1
    assert sum(1 for k in samples if k[0] == "flatfab_audit_device_findings") == 4
    assert _get(samples, "flatfab_audit_config_drift_lines", device="leaf2", section="frr") == 2
    assert _get(samples, "flatfab_audit_devices_drifted") == 1  # spine2 was not read
    assert _get(samples, "flatfab_audit_devices_unread") == 1
    assert _get(samples, "flatfab_audit_device_unread", device="spine2") == 1
    assert _get(samples, "flatfab_audit_duration_seconds") == 12.5
    assert _get(samples, "flatfab_audit_last_run_timestamp_seconds") == EPOCH
    assert _get(samples, "flatfab_audit_last_success_timestamp_seconds") == EPOCH
    assert _get(samples, "flatfab_audit_devices_unmanaged") == 0
    assert text.count("# HELP ") == text.count("# TYPE ") == 12


def test_prometheus_clean_has_zero_samples_for_every_severity() -> None:
    samples = _parse_prom(prometheus.render(clean_report()))
    assert [_get(samples, "flatfab_audit_findings", severity=s.value) for s in Severity] == [
        0, 0, 0, 0, 0]
    assert _get(samples, "flatfab_audit_devices_drifted") == 0
    assert _get(samples, "flatfab_audit_devices_unread") == 0
    assert not any(k[0] in ("flatfab_audit_config_drift_lines", "flatfab_audit_device_unread")
                   for k in samples)


def test_prometheus_error_keeps_the_last_success() -> None:
    earlier = prometheus.render(dirty_report())
    assert prometheus.previous_success(earlier) == EPOCH
    assert prometheus.previous_success(earlier, fabric="other") is None
    assert prometheus.previous_success("garbage\n{{\n") is None
    failed = _parse_prom(prometheus.render(error_report(),
                                           prometheus.previous_success(earlier, "lab")))
    assert _get(failed, "flatfab_audit_up") == 0
    assert _get(failed, "flatfab_audit_last_success_timestamp_seconds") == EPOCH
    never = _parse_prom(prometheus.render(error_report()))
    assert _get(never, "flatfab_audit_last_success_timestamp_seconds") is None
    assert _get(never, "flatfab_audit_last_run_timestamp_seconds") == EPOCH


def test_prometheus_escapes_label_values() -> None:
    odd = 'sw"1\\a\nb'
    report = dataclasses.replace(
        clean_report(), fabric='lab "x"',
        findings=[Finding("c\\k", Severity.ERROR, odd, "broken")])
    text = prometheus.render(report)
    assert 'device="sw\\"1\\\\a\\nb"' in text and 'fabric="lab \\"x\\""' in text
    samples = _parse_prom(text)
    key = ("flatfab_audit_device_findings",
           frozenset({"fabric": 'lab "x"', "device": odd, "severity": "error"}.items()))
    assert samples[key] == 1
    assert prometheus.previous_success(text, 'lab "x"') == EPOCH


# ---------------------------------------------------------------- Markdown

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def test_markdown_table_escapes_pipes_and_html() -> None:
    text = markdown.render(dirty_report())
    assert text.startswith("# flatfab audit `lab`: drift\n")
    findings = text[text.index("## Findings"):]
    rows = [line for line in findings.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| severity | check | device | port | VRF |")
    assert len(rows) == 1 + 5
    assert all(len(_UNESCAPED_PIPE.split(r)) == 10 for r in rows), "a cell leaked a pipe"
    ecn = next(r for r in rows if "lossless.ecn" in r)
    assert r"min\|max = 2\|1" in ecn and "(virtual ASIC)" in ecn
    assert "&lt;b&gt;&amp; \"prio 3\"" in text and "<b>" not in text
    summary = ("**8 devices** (1 not read) · **6 checks** · findings: 1 critical, 2 error, "
               "1 warning, 1 info, 0 not-judged")
    assert summary in text and "**1 drifted devices** · 12.5 s" in text


def test_markdown_drift_sections() -> None:
    text = markdown.render(dirty_report())
    drift = text[text.index("## Config drift"):]
    assert "### leaf2" in drift and "### spine2" not in drift
    assert "```diff\n" + FRR_DIFF + "```\n" in drift
    unread = text[text.index("## Not read"):text.index("## Findings")]
    assert f"| spine2 | {UNREAD_SPINE2} |" in unread
    assert "No findings, no drift." not in text


def test_json_says_where_an_ai_fabrics_devices_sit() -> None:
    """Plane, pod, SU and rail, where the plan has them; a classic fabric's devices carry
    none of those keys. Whether flatfab manages a device is said of every one."""
    rail = json.loads(json_report.render(planned_report(plan(load_intent(
        ROOT / "intents" / "rail")))))
    devices = {d["name"]: d for d in rail["devices"]}
    assert devices["su1-leaf3"] == {"name": "su1-leaf3", "role": "leaf", "platform": "frr",
                                    "reachable": True, "managed": True, "plane": 2, "pod": 1,
                                    "su": 1, "rail": 3}
    assert devices["p2-ss1"]["plane"] == 2 and "pod" not in devices["p2-ss1"]
    assert devices["su2-s1"]["su"] == 2 and "rail" not in devices["su2-s1"]
    lab = json.loads(json_report.render(dirty_report()))
    assert all(set(d) == {"name", "role", "platform", "reachable", "managed"}
               for d in lab["devices"])


def test_markdown_clean_and_error() -> None:
    clean = markdown.render(clean_report())
    assert clean.startswith("# flatfab audit `lab`: clean\n")
    assert clean.rstrip().endswith("No findings, no drift.") and "## Findings" not in clean
    assert "## Not judged" not in clean
    error = markdown.render(error_report())
    assert "**The audit could not run:** no inventory" in error
    assert "No findings, no drift." not in error


def test_markdown_fence_outgrows_backticks_in_the_diff() -> None:
    assert markdown.fenced("a ```` b", "diff").startswith("`````diff\n")


# ---------------------------------------------------------------- HTML

_NODE = re.compile(r'<g class="device" data-device="([^"]*)" data-status="([^"]*)"')
_LINK = re.compile(r'<line class="link" data-link="([^"]*)" data-status="([^"]*)"')


def test_html_is_self_contained() -> None:
    for make in REPORTS.values():
        text = html.render(make())
        assert "http://" not in text and "https://" not in text
        assert "<link" not in text and " src=" not in text and "@import" not in text
        assert text.startswith("<!DOCTYPE html>\n") and text.endswith("</html>\n")


def test_html_escapes_device_text() -> None:
    text = html.render(dirty_report())
    assert "PFC priorities differ: &lt;b&gt;&amp; &quot;prio 3&quot;" in text
    assert "<b>&" not in text
    assert "description &lt;old&gt; &amp; spare" in text


def test_html_nodes_and_links_carry_status() -> None:
    text = html.render(dirty_report())
    assert dict(_NODE.findall(text)) == DIRTY_STATUSES
    assert len(_NODE.findall(text)) == len(DIRTY_STATUSES)
    assert dict(_LINK.findall(text)) == DIRTY_LINKS
    svg = text[text.index("<svg"):text.index("</svg>") + 6]
    root = ET.fromstring(svg)  # the diagram is well-formed XML
    nodes = [g for g in root.iter("g") if g.get("class") == "device"]
    unread = next(g for g in nodes if g.get("data-device") == "spine2")
    assert f"not read: {UNREAD_SPINE2}" in (unread.findtext("title") or "")
    rect = unread.find("rect")
    assert rect is not None and rect.get("fill") == "#7f7f7f"
    assert rect.get("stroke-dasharray")
    fills = {g.get("data-device"): g.find("rect").get("fill")  # type: ignore[union-attr]
             for g in nodes}
    assert fills == {"spine1": "#d62728", "spine2": "#7f7f7f", "leaf1": "#ff9f1c",
                     "leaf2": "#9467bd", "leaf1-h1": "#d62728", "leaf1-h2": "#2ca02c",
                     "leaf2-h1": "#1f77b4", "leaf2-h2": "#2ca02c"}
    assert all(g.find("title") is not None and g.find("text") is not None for g in nodes)


def test_html_findings_table_and_drift() -> None:
    text = html.render(dirty_report())
    rows = re.findall(r'<tr data-device="([^"]*)" data-severity="([^"]*)">', text)
    assert rows == [("spine1", "critical"), ("leaf1-h1", "error"), ("", "error"),
                    ("leaf1", "warning"), ("leaf2-h1", "info")]
    assert 'id="filter-box" hidden' in text  # shown by the script only
    assert '<span class="add">+ neighbor swp52 interface remote-as external</span>' in text
    assert '<span class="del">- neighbor swp52 description &lt;old&gt;' in text
    assert '<span class="meta-line">--- leaf2 running frr</span>' in text
    clean = html.render(clean_report())
    assert "No findings, no drift." in clean and 'id="findings"' not in clean
    assert set(dict(_NODE.findall(clean)).values()) == {"clean"}


def test_html_big_fabric_stays_drawable() -> None:
    """80 leaves with 6 hosts each: narrow columns, 4 hosts drawn per leaf, "+2" for the rest."""
    leaves = [f"leaf{i:02d}" for i in range(80)]
    devices = [DeviceSummary("spine1", "spine", "frr", True)]
    devices += [DeviceSummary(n, "leaf", "frr", True) for n in leaves]
    links = []
    for leaf in leaves:
        for j in range(6):
            devices.append(DeviceSummary(f"{leaf}-h{j}", "host", "linux_host", True))
            links.append(LinkSummary(f"{leaf}-h{j}:eth1--{leaf}:swp{j}", "host", f"{leaf}-h{j}",
                                     "eth1", leaf, f"swp{j}"))
    bad = Finding("lossless.pfc", Severity.ERROR, "leaf00-h5", "bad")
    report = dataclasses.replace(clean_report(), devices=devices, links=links, findings=[bad])
    text = html.render(report)
    drawn = dict(_NODE.findall(text))
    assert all(leaf in drawn for leaf in leaves)
    assert sum(1 for n in drawn if "-h" in n) == 80 * 4
    assert drawn["leaf00-h5"] == "error"  # the worst hosts are the ones drawn
    assert text.count(">+2</text>") == 80
    assert html.layout(report).narrow


def test_link_status_matches_ports_without_vrf_suffix() -> None:
    report = dataclasses.replace(clean_report(), findings=[
        Finding("x", Severity.WARNING, "spine2", "m", port="swp2.200"),
        Finding("y", Severity.ERROR, None, "m", link="leaf2:swp51.100--spine1:swp2.100")])
    statuses = html.link_statuses(report)
    assert statuses["leaf2:swp52--spine2:swp2"] == "warning"
    assert statuses["leaf2:swp51--spine1:swp2"] == "error"
    assert list(statuses.values()).count("ok") == 6


# ---------------------------------------------------------------- unread devices, every format


def test_an_unread_device_is_incomplete_in_every_format_never_clean_or_drift() -> None:
    report = incomplete_report()
    assert report.unread == {"leaf1-h2": UNREAD_HOST, "spine1": UNREAD_CONFIG}
    data = json.loads(json_report.render(report))
    assert (data["status"], data["exit_code"], data["drift"]) == ("incomplete", 3, [])
    assert data["unread"] == [{"device": "leaf1-h2", "reason": UNREAD_HOST},
                              {"device": "spine1", "reason": UNREAD_CONFIG}]

    root = _junit(report)
    _assert_counts_consistent(root)
    assert (root.attrib["failures"], root.attrib["errors"]) == ("0", "3")
    reachable = _cases(root, "checks")["device.reachable"].find("error")
    assert reachable is not None and reachable.attrib == {"message": "1 device not read",
                                                          "type": "unread"}
    drift = _cases(root, "config-drift")
    for name, why in report.unread.items():
        error = drift[name].find("error")
        assert error is not None and error.attrib == {"message": why,
                                                      "type": "unread"}

    text = markdown.render(report)
    assert text.startswith("# flatfab audit `lab`: incomplete\n") and "(exit code 3)" in text
    assert "**8 devices** (2 not read)" in text and "**0 drifted devices**" in text
    assert f"| leaf1-h2 | {UNREAD_HOST} |" in text and "No findings, no drift." not in text

    samples = _parse_prom(prometheus.render(report))
    assert _get(samples, "flatfab_audit_up") == 1
    assert _get(samples, "flatfab_audit_devices_unread") == 2
    assert _get(samples, "flatfab_audit_devices_drifted") == 0
    assert _get(samples, "flatfab_audit_device_unread", device="spine1") == 1

    page = html.render(report)
    assert '<span class="badge status-incomplete">incomplete</span>' in page
    nodes = dict(_NODE.findall(page))
    assert (nodes["leaf1-h2"], nodes["spine1"]) == ("unread", "unread")
    assert set(nodes.values()) == {"unread", "clean"}
    assert "<b>2</b><span>devices not read</span>" in page
    assert "No findings, no drift." not in page and 'id="unread"' in page


def test_a_finding_on_what_was_read_wins_over_unread_devices() -> None:
    report = dirty_report()
    assert report.unread and report.status.value == "drift" and report.status.exit_code == 1
    only_unread = dataclasses.replace(report, findings=[], drift=[])
    assert only_unread.status.exit_code == 3


# ---------------------------------------------------------------- unmanaged hosts: not judged

UNMANAGED_WHY = "unmanaged: flatfab does not log in to it"


def test_json_names_unmanaged_hosts_and_what_was_not_judged() -> None:
    data = json.loads(json_report.render(unmanaged_report()))
    # a setting a switch did not state leaves the audit incomplete; the unmanaged hosts do not
    assert (data["status"], data["exit_code"]) == ("incomplete", 3)
    assert {d["name"] for d in data["devices"] if not d["managed"]} == set(UNMANAGED_HOSTS)
    assert data["by_severity"] == {"critical": 0, "error": 0, "warning": 0, "info": 0,
                                   "not-judged": 7}
    unmanaged = [f for f in data["findings"] if f["actual"] == "unmanaged"]
    assert sorted((f["check"], f["device"]) for f in unmanaged) == sorted(
        (c, h) for h in UNMANAGED_HOSTS for c in HOST_SIDE)
    assert {f["message"] for f in unmanaged} == {f"{h} is not judged: {UNMANAGED_WHY}"
                                                 for h in UNMANAGED_HOSTS}
    assert {f["severity"] for f in data["findings"]} == {"not-judged"}


def test_junit_skips_what_was_not_judged_never_passes_it() -> None:
    root = _junit(unmanaged_report())
    _assert_counts_consistent(root)
    checks = _cases(root, "checks")
    for host in UNMANAGED_HOSTS:
        for check in HOST_SIDE:
            skipped = checks[f"{check} [{host}]"].find("skipped")
            assert skipped is not None
            assert skipped.attrib["message"] == f"{host} is not judged: {UNMANAGED_WHY}"
    unknown = checks["state.unknown [leaf1]"].find("skipped")
    assert unknown is not None and "PFC_WD|swp1 has no action" in unknown.attrib["message"]
    # a check's own case holds its verdicts: none failed
    assert all(c.find("failure") is None and c.find("error") is None for c in checks.values())
    drift = _cases(root, "config-drift")
    for host in UNMANAGED_HOSTS:
        skipped = drift[host].find("skipped")
        assert skipped is not None and skipped.attrib["message"] == (
            f"config not compared: {UNMANAGED_WHY}")
    assert len(drift["leaf1-h1"]) == 0  # a managed host's clean config passes
    assert (root.attrib["failures"], root.attrib["errors"], root.attrib["skipped"]) == (
        "0", "0", str(2 * len(HOST_SIDE) + 1 + 2))


def test_prometheus_counts_not_judged_and_unmanaged() -> None:
    samples = _parse_prom(prometheus.render(unmanaged_report()))
    assert _get(samples, "flatfab_audit_findings", severity="not-judged") == 7
    assert _get(samples, "flatfab_audit_findings", severity="error") == 0
    assert _get(samples, "flatfab_audit_devices_unmanaged") == 2
    assert _get(samples, "flatfab_audit_device_findings", device="leaf2-h1",
                severity="not-judged") == len(HOST_SIDE)


def test_markdown_lists_not_judged_apart_from_findings() -> None:
    text = markdown.render(unmanaged_report())
    assert text.startswith("# flatfab audit `lab`: incomplete\n")
    assert "(0 not read, 2 unmanaged: never read)" in text
    assert "## Findings" not in text and "No findings, no drift." in text
    section = text[text.index("## Not judged"):]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
    checks = ", ".join(sorted(HOST_SIDE))
    assert rows == [
        r"| leaf1 | swp1 | leaf1:swp1 watchdog.action is not judged: PFC_WD\|swp1 has no "
        "action | state.unknown |",
        *(f"| {h} |  | {h} is not judged: {UNMANAGED_WHY} | {checks} |"
          for h in UNMANAGED_HOSTS)]


def test_html_draws_unmanaged_hosts_and_lists_what_was_not_judged() -> None:
    text = html.render(unmanaged_report())
    statuses = dict(_NODE.findall(text))
    assert {n for n, s in statuses.items() if s == "unmanaged"} == set(UNMANAGED_HOSTS)
    assert statuses["leaf1"] == "not-judged" and statuses["leaf1-h1"] == "clean"
    assert "No findings, no drift." in text and 'id="findings"' not in text
    table = text[text.index('<table id="not-judged">'):]
    rows = re.findall(r'<tr data-device="([^"]*)" data-severity="not-judged">', table)
    assert rows == ["leaf1", *UNMANAGED_HOSTS]
    assert "unmanaged hosts (never read)" in text and UNMANAGED_WHY in text
    svg = text[text.index("<svg"):text.index("</svg>") + 6]
    root = ET.fromstring(svg)
    node = next(g for g in root.iter("g") if g.get("data-device") == "leaf2-h1")
    rect = node.find("rect")
    assert rect is not None and rect.get("stroke-dasharray")
    assert UNMANAGED_WHY in (node.findtext("title") or "")


# ---------------------------------------------------------------- unread beside unmanaged


def _unread_and_unmanaged() -> AuditReport:
    """The incomplete report (leaf1-h2 not read, spine1's config not read) with leaf2's
    hosts unmanaged: two kinds of "nothing of it judged" side by side."""
    report = incomplete_report()
    devices = [dataclasses.replace(d, managed=d.name not in UNMANAGED_HOSTS)
               for d in report.devices]
    findings = [*report.findings, *(unmanaged_finding(check, host) for host in UNMANAGED_HOSTS
                                    for check in ("device.reachable", "interface.up"))]
    return dataclasses.replace(report, devices=devices, findings=findings)


def test_an_unmanaged_host_is_never_unread_and_an_unread_device_never_not_judged() -> None:
    report = _unread_and_unmanaged()
    unread = {"leaf1-h2", "spine1"}
    assert set(report.unread) == unread and report.status.exit_code == 3  # not-judged: no say
    assert {f.device for f in report.findings if f.severity is Severity.NOT_JUDGED} == set(
        UNMANAGED_HOSTS)
    assert COLOURS["unread"] != COLOURS["unmanaged"]

    data = json.loads(json_report.render(report))
    assert (data["status"], data["exit_code"]) == ("incomplete", 3)
    assert {u["device"] for u in data["unread"]} == unread
    assert {d["name"] for d in data["devices"] if not d["managed"]} == set(UNMANAGED_HOSTS)
    assert {d["name"] for d in data["devices"] if not d["reachable"]} == {"leaf1-h2"}

    root = _junit(report)
    _assert_counts_consistent(root)
    checks, drift = _cases(root, "checks"), _cases(root, "config-drift")
    reachable = checks["device.reachable"].find("error")
    assert reachable is not None and reachable.attrib == {"message": "1 device not read",
                                                          "type": "unread"}
    for host in UNMANAGED_HOSTS:
        assert checks[f"device.reachable [{host}]"].find("skipped") is not None
        assert drift[host].find("skipped") is not None and drift[host].find("error") is None
    for name in unread:
        error = drift[name].find("error")
        assert error is not None and error.attrib["type"] == "unread"
        assert drift[name].find("skipped") is None
    assert (root.attrib["errors"], root.attrib["skipped"]) == ("3", str(2 * 2 + 2))

    text = markdown.render(report)
    assert "**8 devices** (2 not read, 2 unmanaged: never read)" in text
    not_read = text[text.index("## Not read"):text.index("## Findings")]
    not_judged = text[text.index("## Not judged"):]
    assert all(f"| {n} |" in not_read for n in unread)
    assert not any(h in not_read for h in UNMANAGED_HOSTS)
    assert all(f"| {h} |" in not_judged for h in UNMANAGED_HOSTS)
    assert not any(n in not_judged for n in unread)

    samples = _parse_prom(prometheus.render(report))
    assert _get(samples, "flatfab_audit_devices_unread") == 2
    assert _get(samples, "flatfab_audit_devices_unmanaged") == 2
    assert not any(k[0] == "flatfab_audit_device_unread" and ("device", h) in k[1]
                   for k in samples for h in UNMANAGED_HOSTS)

    page = html.render(report)
    nodes = dict(_NODE.findall(page))
    assert {n: s for n, s in nodes.items() if s != "clean"} == {
        "leaf1-h2": "unread", "spine1": "unread", "leaf2-h1": "unmanaged",
        "leaf2-h2": "unmanaged"}
    assert "<b>2</b><span>devices not read</span>" in page
    assert "<b>2</b><span>unmanaged hosts (never read)</span>" in page
    unread_table = page[page.index('<section id="unread">'):]
    unread_table = unread_table[:unread_table.index("</section>")]
    assert not any(h in unread_table for h in UNMANAGED_HOSTS)


def test_not_judged_never_hides_drift_in_the_picture() -> None:
    report = dataclasses.replace(dirty_report(), findings=[
        not_judged("state.unknown", "leaf2", "no watchdog action", what="leaf2 watchdog")])
    assert device_statuses(report)["leaf2"] == "drift"
    assert report.status.exit_code == 1  # the drift, not what was not judged


# ---------------------------------------------------------------- package, determinism


@pytest.mark.parametrize("fmt", sorted(reports.FORMATS))
@pytest.mark.parametrize("fixture", sorted(REPORTS))
def test_rendering_is_deterministic(fmt: str, fixture: str) -> None:
    make = REPORTS[fixture]
    first = reports.render(make(), fmt).encode("utf-8")
    assert first == reports.render(make(), fmt).encode("utf-8")
    assert first == reports.render(_shuffled(make()), fmt).encode("utf-8")


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown report format"):
        reports.render(clean_report(), "pdf")


def test_write_all_writes_every_format_atomically(tmp_path: Path) -> None:
    out = tmp_path / "reports" / "nested"
    paths = reports.write_all(dirty_report(), out)
    assert {f: p.name for f, p in paths.items()} == {
        "html": "flatfab-audit-lab.html", "json": "flatfab-audit-lab.json",
        "junit": "flatfab-audit-lab.junit.xml", "markdown": "flatfab-audit-lab.md",
        "prometheus": "flatfab-audit-lab.prom"}
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths.values())
    assert all(p.stat().st_mode & 0o777 == 0o644 for p in paths.values())
    assert paths["json"].read_text(encoding="utf-8") == json_report.render(dirty_report())


def test_write_all_carries_last_success_over_failed_audits(tmp_path: Path) -> None:
    reports.write_all(dirty_report(), tmp_path)
    later = dataclasses.replace(error_report(), started="2026-11-23T10:00:00Z",
                                started_epoch=EPOCH + 3600)
    for _ in range(2):  # and keeps it across more than one failure
        paths = reports.write_all(later, tmp_path)
        samples = _parse_prom(paths["prometheus"].read_text(encoding="utf-8"))
        assert _get(samples, "flatfab_audit_last_success_timestamp_seconds") == EPOCH
        assert _get(samples, "flatfab_audit_last_run_timestamp_seconds") == EPOCH + 3600


def test_write_all_refuses_fabric_names_that_are_paths(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="file name"):
        reports.write_all(dataclasses.replace(clean_report(), fabric="../x"), tmp_path)


# ---------------------------------------------------------------- golden files


def _produced(fixture: str, tmp_path: Path) -> dict[str, str]:
    paths = reports.write_all(REPORTS[fixture](), tmp_path / fixture)
    return {p.name: p.read_text(encoding="utf-8") for p in paths.values()}


@pytest.mark.parametrize("fixture", sorted(REPORTS))
def test_reports_match_golden_files(fixture: str, tmp_path: Path) -> None:
    produced = _produced(fixture, tmp_path)
    directory = GOLDEN / fixture
    if REGEN:
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*"):
            if stale.is_file() and stale.name not in produced:
                stale.unlink()
        for name, text in produced.items():
            (directory / name).write_text(text, encoding="utf-8")
    on_disk = {p.name for p in directory.glob("*") if p.is_file()}
    assert on_disk == set(produced), "report golden files differ in number: regenerate them"
    for name, text in produced.items():
        expected = (directory / name).read_text(encoding="utf-8")
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                f"golden/reports/{fixture}/{name}", "rendered"))
            pytest.fail(f"{fixture}/{name} differs from its golden file (regenerate with "
                        "FLATFAB_REGEN_GOLDEN=1 to accept):\n" + diff[:4000])


def test_plan_diagram_golden_is_the_readme_picture_of_the_rail_lab(tmp_path: Path) -> None:
    """`flatfab --fabric rail plan --diagram docs/rail-lab.svg` draws the README's picture:
    super-spines, pod spines in the order of their leaves, rail leaves, servers."""
    picture = ROOT / "docs" / "rail-lab.svg"
    drawn = standalone_diagram(planned_report(plan(load_intent(ROOT / "intents" / "rail"))))
    if REGEN:
        picture.write_text(drawn, encoding="utf-8")
    assert picture.read_text(encoding="utf-8") == drawn, "make golden, then review docs/"
    rows = [drawn.index(f'data-device="{name}"') for name in ("p1-ss1", "p1-pod1-spine1",
                                                               "su1-leaf1", "su1-s1")]
    assert all(r > 0 for r in rows)
    result = flatfab("--fabric", "rail", "plan", "--diagram", str(tmp_path / "x.svg"))
    assert result.code == 0 and (tmp_path / "x.svg").read_text(encoding="utf-8") == drawn
    refused = flatfab("--fabric", "rail", "plan", "--diagram", str(tmp_path))
    assert refused.code == 2 and "--diagram" in refused.stderr and "Traceback" not in \
        refused.stderr
