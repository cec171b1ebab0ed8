"""An acceptance run in every report format: the pairs as a matrix in HTML (failing cells
marked), the references with their bases, the links failing pairs crossed with their counters
before and after; byte-identical across runs, kept by golden files in
tests/golden/reports/acceptance-<fixture>/ (regenerate with
`FLATFAB_REGEN_GOLDEN=1 pytest tests/acceptance -k golden`, review the diff)."""

from __future__ import annotations

import difflib
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from flatfab import reports
from flatfab.acceptance.results import PairKind
from flatfab.reports.model import AuditReport
from flatfab.workflows.commands import acceptance as acc
from tests.acceptance.support import (
    LAB_INTENT,
    canned_counters,
    fixed,
    lab_plan,
    nornir_of,
    slow_to_and_from,
)
from tests.support.paths import ROOT

GOLDEN = ROOT / "tests" / "golden" / "reports"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))
OPTIONS = acc.AcceptanceOptions(kinds=(PairKind.SAME_RAIL, PairKind.CROSS_RAIL,
                                       PairKind.CROSS_PLANE), per_kind=8)


def _report(monkeypatch: pytest.MonkeyPatch, fixture: str) -> AuditReport:
    state = lab_plan()
    if fixture == "fail":
        canned_counters(monkeypatch, grow={("leaf1", "swp1"): {"drops.tc0": 812}})
        figure = slow_to_and_from(state, "leaf1-h1")
    else:
        canned_counters(monkeypatch)

        def figure(host: str, server: str) -> float:
            return 2.4

    run = acc.run_acceptance(nornir_of(state, {}, figure), state, LAB_INTENT, OPTIONS)
    return acc.acceptance_report(state, fixed(run))


@pytest.mark.parametrize("fixture", ["pass", "fail"])
def test_acceptance_reports_match_golden_files(fixture: str, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    paths = reports.write_all(_report(monkeypatch, fixture), tmp_path)
    produced = {p.name: p.read_text(encoding="utf-8") for p in paths.values()}
    directory = GOLDEN / f"acceptance-{fixture}"
    if REGEN:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in produced.items():
            (directory / name).write_text(text, encoding="utf-8")
    assert {p.name for p in directory.glob("*") if p.is_file()} == set(produced)
    for name, text in produced.items():
        expected = (directory / name).read_text(encoding="utf-8")
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                f"golden/{directory.name}/{name}", "rendered"))
            pytest.fail(f"{name} differs from its golden file (FLATFAB_REGEN_GOLDEN=1 to "
                        "accept):\n" + diff[:4000])


def test_the_html_shows_the_pairs_as_a_matrix_with_failing_cells_marked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    page = reports.render(_report(monkeypatch, "fail"), "html")
    assert page.count('<table class="matrix">') == 1
    assert page.count('class="cell fail"') == 2 and page.count('class="cell pass"') == 6
    assert "<th>leaf1-h1/eth1</th>" in page  # a column per destination
    assert 'id="acceptance-links"' in page and "leaf1:swp1 &lt;-&gt; leaf1-h1:eth1" in page
    assert "cross-plane pairs not run: not allowed" in page


def test_every_format_says_failed_and_names_the_pairs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    report = _report(monkeypatch, "fail")
    data = json.loads(reports.render(report, "json"))
    assert data["kind"] == "acceptance" and data["status"] == "failed" and data["exit_code"] == 1
    assert sum(p["verdict"] == "fail" for p in data["acceptance"]["pairs"]) == 2
    suspect = [link for link in data["acceptance"]["links"] if link["suspect"]]
    assert [link["a"] for link in suspect] == ["leaf1:swp1"]
    root = ET.fromstring(reports.render(report, "junit").encode())
    suite = root.find("testsuite[@name='acceptance']")
    assert suite is not None and suite.get("failures") == "2" and suite.get("tests") == "8"
    prom = reports.render(report, "prometheus")
    assert 'flatfab_acceptance_pair_passed{fabric="lab",source="leaf1-h1/eth1",' in prom
    markdown = reports.render(report, "markdown")
    assert "**0.19 Gb/s fail**" in markdown and "| leaf1:swp1 <-> leaf1-h1:eth1 | 2 | 0 | yes" \
        in markdown
