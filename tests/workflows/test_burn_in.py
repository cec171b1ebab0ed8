"""verify --burn-in's verdict per link, from the physical layer read before and after the
flows and the findings on each link; and the verdicts in every report format."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

from flatfab import reports
from flatfab.checks import Finding, Severity
from flatfab.lab.hardware import port as lab_port
from flatfab.model.physical import FecCounters
from flatfab.model.state import FabricState
from flatfab.reports.model import AuditStatus, BurnInInfo, LinkVerdict
from flatfab.workflows.commands.burnin import CHECK, judge_links
from tests.support.checks import PLAN, healthy
from tests.support.reports import clean_report

FABRIC_LINK = "leaf1:swp51--spine1:swp1"


def _with_modules(state: FabricState, uncorrectable: int = 0, flaps: int = 0) -> FabricState:
    """Every planned physical port with a healthy module; leaf1:swp51's counters as given."""
    assert PLAN.physical is not None
    observed = state.model_copy(deep=True)
    for link in (lk for lk in PLAN.links if lk.parent is None):
        expect = PLAN.physical.classes[link.link_class]
        for end in (link.a, link.b):
            phy = lab_port(expect, link.cable_m, end.device, end.port)
            if (end.device, end.port) == ("leaf1", "swp51"):
                phy = phy.model_copy(update={"flaps": flaps, "fec_counters": FecCounters(
                    corrected=0, uncorrectable=uncorrectable, symbol_errors=0,
                    pre_fec_ber=1e-9, post_fec_ber=0.0)})
            observed.devices[end.device].interfaces[end.port].phy = phy
    return observed


def _verdicts(before: FabricState, after: FabricState,
              findings: list[Finding] | None = None) -> dict[str, LinkVerdict]:
    verdicts, _ = judge_links(PLAN, before, after, findings or [])
    return {v.link: v for v in verdicts}


def test_every_link_that_kept_its_counters_is_accepted() -> None:
    before = _with_modules(healthy())
    verdicts = _verdicts(before, _with_modules(healthy()))
    assert len(verdicts) == len([lk for lk in PLAN.links if lk.parent is None])
    assert {v.verdict for v in verdicts.values()} == {"accepted"}


def test_codewords_lost_and_a_flap_while_traffic_ran_reject_the_link() -> None:
    before = _with_modules(healthy(), uncorrectable=5, flaps=1)
    after = _with_modules(healthy(), uncorrectable=45, flaps=2)
    verdicts, raised = judge_links(PLAN, before, after, [])
    link = {v.link: v for v in verdicts}[FABRIC_LINK]
    assert link.verdict == "rejected"
    assert link.reasons == ("leaf1:swp51: 40 uncorrectable FEC codewords during the burn-in",
                            "leaf1:swp51: flapped 1 times during the burn-in")
    assert [(f.check, f.severity, f.device, f.port, f.link) for f in raised] == [
        (CHECK, Severity.ERROR, "leaf1", "swp51", FABRIC_LINK)]
    # counters that only stood where they were (errors from before the burn-in) do not
    assert _verdicts(before, _with_modules(healthy(), uncorrectable=5, flaps=1))[
        FABRIC_LINK].verdict == "accepted"


def test_a_finding_on_a_link_or_its_ports_rejects_it_with_the_finding() -> None:
    state = _with_modules(healthy())
    on_link = Finding("phy.optics", Severity.ERROR, "spine1", "lane 3 rx power low",
                      port="swp1", link=FABRIC_LINK)
    on_port = Finding("traffic.lossless_drops", Severity.ERROR, "leaf2", "12 drops",
                      port="swp52")
    info = Finding("phy.unread", Severity.INFO, None, "a limitation")
    verdicts = _verdicts(state, state, [on_link, on_port, info])
    assert verdicts[FABRIC_LINK].reasons == ("phy.optics: lane 3 rx power low",)
    assert verdicts["leaf2:swp52--spine2:swp2"].reasons == ("traffic.lossless_drops: 12 drops",)
    assert verdicts["leaf3:swp51--spine1:swp3"].verdict == "accepted"


def test_an_end_not_read_before_or_after_leaves_its_links_not_judged() -> None:
    before = _with_modules(healthy())
    after = _with_modules(healthy())
    after.devices["spine2"].reachable = False
    verdicts, raised = judge_links(PLAN, before, after, [])
    by_link = {v.link: v for v in verdicts}
    assert by_link["leaf1:swp52--spine2:swp1"].verdict == "not judged"
    assert by_link["leaf1:swp52--spine2:swp1"].reasons == ("spine2 not read",)
    unread = [f for f in raised if f.severity is Severity.NOT_JUDGED]
    assert len(unread) == 4 and {f.check for f in unread} == {CHECK}
    # a counter an end does not state is not judged either, named
    silent = _with_modules(healthy())
    phy = silent.devices["leaf1"].interfaces["swp51"].phy
    assert phy is not None
    silent.devices["leaf1"].interfaces["swp51"].phy = phy.model_copy(update={"flaps": None})
    assert _verdicts(before, silent)[FABRIC_LINK].reasons == (
        "leaf1:swp51: link flaps not stated",)


def _burn_in_report() -> reports.AuditReport:
    links = (LinkVerdict("a--b", "leaf1:swp51", "spine1:swp1", "accepted"),
             LinkVerdict("c--d", "leaf2:swp51", "spine1:swp2", "rejected",
                         ("leaf2:swp51: 40 uncorrectable FEC codewords during the burn-in",)),
             LinkVerdict("e--f", "leaf3:swp51", "spine1:swp3", "not judged",
                         ("spine1 not read",)))
    rejected = Finding(CHECK, Severity.ERROR, "leaf2", "link rejected", port="swp51",
                       link="c--d")
    return replace(clean_report(), findings=[rejected],
                   burn_in=BurnInInfo(duration_s=600.0, rounds=12, packets=15360, links=links))


def test_the_burn_in_report_says_every_links_verdict_in_every_format() -> None:
    report = _burn_in_report()
    assert report.kind == "burnin" and report.status is AuditStatus.DRIFT
    assert report.status_word == "rejected"
    doc = json.loads(reports.render(report, "json"))
    assert doc["kind"] == "burnin" and doc["status"] == "rejected"
    assert [(lk["link"], lk["verdict"]) for lk in doc["burn_in"]["links"]] == [
        ("a--b", "accepted"), ("c--d", "rejected"), ("e--f", "not judged")]
    markdown = reports.render(report, "markdown")
    assert "| leaf2:swp51 -- spine1:swp2 | rejected | leaf2:swp51: 40 uncorrectable" in markdown
    assert "drifted" not in markdown
    html = reports.render(report, "html")
    assert 'id="links"' in html and 'data-verdict="not judged"' in html
    suite = ET.fromstring(reports.render(report, "junit")).find("testsuite[@name='links']")
    assert suite is not None and suite.get("failures") == "1" and suite.get("skipped") == "1"
    prom = reports.render(report, "prometheus")
    assert 'flatfab_burnin_link_accepted{fabric="lab",link="a--b"' in prom
    assert 'link="e--f"' not in prom  # not judged: no sample, never a 0 or a 1
    assert "flatfab_burnin_config_drift_lines" not in prom
    # an audit's files never carry the burn-in's family
    assert "link_accepted" not in reports.render(clean_report(), "prometheus")


def test_the_burn_in_writes_its_files_beside_an_audits(tmp_path: Path) -> None:
    written = reports.write_all(_burn_in_report(), tmp_path)
    assert sorted(p.name for p in written.values()) == [
        "flatfab-burnin-lab.html", "flatfab-burnin-lab.json", "flatfab-burnin-lab.junit.xml",
        "flatfab-burnin-lab.md", "flatfab-burnin-lab.prom"]
