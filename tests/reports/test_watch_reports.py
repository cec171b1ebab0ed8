"""A watch's report in every format: built from a WatchResult and its history as `flatfab
watch --report-dir` builds it, byte-identical across runs, and kept by golden files in
tests/golden/reports/watch-<fixture>/ (regenerate with `make golden`, review the diff)."""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from flatfab import reports
from flatfab.checks import Finding, Severity
from flatfab.reports import html, json_report, junit, markdown, prometheus
from flatfab.reports.model import AuditReport
from flatfab.telemetry import conditions
from flatfab.telemetry.health import Changes
from flatfab.workflows.commands.watch import WatchResult
from flatfab.workflows.commands.watch_report import History, watch_report
from tests.support.paths import ROOT
from tests.support.telemetry_streams import lab_plan

GOLDEN = ROOT / "tests" / "golden" / "reports"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))
EPOCH = 1795424400.0  # 2026-11-23T09:00:00Z
INTERVAL = 10.0

STORM = Finding(conditions.PAUSE_STORM, Severity.ERROR, "leaf1",
                "leaf1 swp51 priority 3: received PFC pauses at 4200 pps for 40 s (storm above "
                "1000 pps for 30 s)", port="swp51", expected="priority 3: <= 1000 pps received",
                actual="priority 3: 4200 pps received for 40 s")
DROPS = Finding(conditions.LOSSLESS_DROPS, Severity.CRITICAL, "leaf2",
                "leaf2 swp1 lossless queue 3 dropped 12 packets in an interval (allowed 0)",
                port="swp1", expected="queue 3: <= 0 drops per interval",
                actual="queue 3: 12 drops per interval")
ECN = Finding(conditions.ECN_ON_LOSSY, Severity.WARNING, "spine1",
              "spine1 swp2 lossy queue 0 marked 7 packets ECN-CE in an interval: marking "
              "belongs to the lossless queues", port="swp2",
              expected="queue 0: <= 0 ECN marks per interval",
              actual="queue 0: 7 ECN marks per interval")
SILENT = Finding(conditions.SILENT, Severity.ERROR, "spine2",
                 "spine2: no sample in the whole run (connect failed: certificate not "
                 "trusted <ca.pem>)", expected="samples every interval", actual="none")
SWITCHES = ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]


def findings_report() -> AuditReport:
    """Six ticks: drops on leaf2 raised and cleared, a storm on leaf1 raised and still on,
    ECN on a lossy queue raised at the last tick; spine2 never heard."""
    history = History()
    history.record(2, EPOCH + 20, Changes([DROPS], []))
    history.record(3, EPOCH + 30, Changes([STORM], []))
    history.record(5, EPOCH + 50, Changes([], [DROPS]))
    history.record(6, EPOCH + 60, Changes([ECN], []))
    result = WatchResult(6, [STORM, ECN, SILENT],
                         [d for d in SWITCHES if d != "spine2"],
                         unread={"spine2": SILENT.message.split(": ", 1)[1]})
    return watch_report(lab_plan(), result, watched=SWITCHES, started_epoch=EPOCH,
                        duration_s=61.5, interval_s=INTERVAL, history=history)


def healthy_report() -> AuditReport:
    result = WatchResult(3, [], list(SWITCHES), interrupted=True)
    return watch_report(lab_plan(), result, watched=SWITCHES, started_epoch=EPOCH,
                        duration_s=31.0, interval_s=INTERVAL, history=History())


FIXTURES: dict[str, Callable[[], AuditReport]] = {
    "watch-findings": findings_report, "watch-healthy": healthy_report}


def test_json_carries_the_active_findings_and_the_history() -> None:
    data = json.loads(json_report.render(findings_report()))
    assert (data["kind"], data["status"], data["exit_code"]) == ("watch", "findings", 1)
    assert data["run_id"] == "20261123T090000Z-watch-lab"
    assert [(f["check"], f["device"]) for f in data["findings"]] == [
        (conditions.PAUSE_STORM, "leaf1"), (conditions.SILENT, "spine2"),
        (conditions.ECN_ON_LOSSY, "spine1")]
    events = [(e["tick"], e["change"], e["finding"]["device"]) for e in data["watch"]["events"]]
    assert events == [(2, "raised", "leaf2"), (3, "raised", "leaf1"), (5, "cleared", "leaf2"),
                      (6, "raised", "spine1")]
    assert data["watch"]["events"][0]["at"] == "2026-11-23T09:00:20Z"
    assert data["drift"] == [] and conditions.PAUSE_STORM in data["checks_run"]
    devices = {d["name"]: d["reachable"] for d in data["devices"]}
    assert not devices["spine2"] and devices["leaf1"] and devices["leaf1-h1"]  # not watched
    assert data["unread"] == [{"device": "spine2", "reason": "no sample in the whole run "
                               "(connect failed: certificate not trusted <ca.pem>)"}]


def test_healthy_watch_exits_0_and_says_so() -> None:
    report = healthy_report()
    assert report.status.exit_code == 0 and report.status_word == "healthy"
    assert markdown.render(report).startswith("# flatfab watch `lab`: healthy\n")
    assert "stopped by Ctrl-C" in markdown.render(report)
    assert "No findings." in html.render(report)


def test_markdown_and_html_show_raised_and_cleared() -> None:
    text = markdown.render(findings_report())
    assert "## Findings active at the end" in text and "## Raised and cleared" in text
    assert "| 5 | 2026-11-23T09:00:50Z | cleared | critical | telemetry.lossless_drops |" \
        in text
    page = html.render(findings_report())
    assert "<h2>Raised and cleared</h2>" in page and "&lt;ca.pem&gt;" in page
    assert "<title>flatfab watch lab: findings</title>" in page


def test_junit_has_one_case_per_telemetry_check_and_no_drift_suite() -> None:
    root = ET.fromstring(junit.render(findings_report()))
    assert root.get("name") == "flatfab watch lab"
    assert [s.get("name") for s in root.findall("testsuite")] == ["checks"]
    failed = sorted(c.get("name") or "" for c in root.iter("testcase")
                    if c.find("failure") is not None)
    assert failed == [conditions.ECN_ON_LOSSY, conditions.PAUSE_STORM]
    # spine2, never heard, is not read: an error, neither a failure nor a pass
    unread = [c for c in root.iter("testcase") if c.find("error") is not None]
    assert [c.get("name") for c in unread] == [conditions.SILENT]
    assert unread[0].find("error").attrib == {  # type: ignore[union-attr]
        "message": "1 device not read", "type": "unread"}
    passed = [c for c in root.iter("testcase") if len(c) == 0]
    assert len(passed) == 7  # the other telemetry checks ran and found nothing


def test_prometheus_uses_its_own_prefix() -> None:
    text = prometheus.render(findings_report())
    assert "flatfab_audit_" not in text and "drift" not in text
    assert 'flatfab_watch_check_findings{fabric="lab",check="telemetry.pause_storm",' \
        'severity="error"} 1' in text
    assert prometheus.previous_success(text, "lab", "watch") == EPOCH


def test_history_keeps_the_newest_changes() -> None:
    history = History(keep=2)
    for tick in range(1, 4):
        history.record(tick, EPOCH + tick, Changes([STORM], []))
    assert [e.tick for e in history.events] == [2, 3] and history.left_out == 1
    text = markdown.render(dataclasses.replace(findings_report(), watch=dataclasses.replace(
        findings_report().watch, events=history.events, events_left_out=1)))
    assert "The 1 oldest changes are left out." in text


@pytest.mark.parametrize("fmt", sorted(reports.FORMATS))
def test_watch_rendering_is_deterministic(fmt: str) -> None:
    assert reports.render(findings_report(), fmt) == reports.render(findings_report(), fmt)


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_watch_reports_match_golden_files(fixture: str, tmp_path: Path) -> None:
    paths = reports.write_all(FIXTURES[fixture](), tmp_path / fixture)
    produced = {p.name: p.read_text(encoding="utf-8") for p in paths.values()}
    directory = GOLDEN / fixture
    if REGEN:
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*"):
            if stale.is_file() and stale.name not in produced:
                stale.unlink()
        for name, text in produced.items():
            (directory / name).write_text(text, encoding="utf-8")
    on_disk = {p.name for p in directory.glob("*") if p.is_file()}
    assert on_disk == set(produced), "watch report golden files differ in number: make golden"
    for name, text in produced.items():
        expected = (directory / name).read_text(encoding="utf-8")
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                f"golden/reports/{fixture}/{name}", "rendered"))
            pytest.fail(f"{fixture}/{name} differs from its golden file (`make golden` to "
                        "accept):\n" + diff[:4000])
