"""An acceptance run on the live lab with iperf3: every pair passes and the run writes its
reports; then one host-facing leaf link shaped for real (tc tbf out of leaf1:swp1 and out
of leaf1-h1:eth1: both directions far under the reference) fails exactly the pairs that
cross it, and names the link; unshaped, the run is clean again. (The file's name keeps it
after test_fabric.py in the session, whose first rollout must find the lab unconfigured.)

The reference is explicit (--reference 1): iperf3 between the lab's namespaces runs over
veth pairs and the kernel's forwarding on one machine's CPUs, so its figure is what those
CPUs give (a few Gb/s), not the planned 100G links' 70 %."""

from __future__ import annotations

import html as markup
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.lab import Lab

pytestmark = pytest.mark.live
SHAPED = "leaf1:swp1 <-> leaf1-h1:eth1"
RATE = "200mbit"  # a fifth of the reference: far under it, whatever the CPUs give
# leaf1-h1 is blue's: its port lives in the VRF's namespace on leaf1. A tbf out of each end
# shapes the link both ways (the lab's kernel has no tc police action for an ingress policer)
IN_BLUE = "ip netns exec blue "
SHAPE = f"tc qdisc replace dev {{}} root tbf rate {RATE} burst 32kb latency 50ms"
UNSHAPE = "tc qdisc del dev {} root 2>/dev/null; true"
ENDS = (("leaf1", f"{IN_BLUE}", "swp1"), ("leaf1-h1", "", "eth1"))


def _shape(lab: Lab, command: str) -> None:
    for node, where, port in ENDS:
        lab.sh(node, where + command.format(port))


def _accept(lab: Lab, report_dir: Path) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    result = lab.cli("accept", "--engine", "iperf3", "--kinds", "same-rail,cross-rail",
                     "--pairs", "8", "--duration", "2", "--reference", "1",
                     "--report-dir", str(report_dir), "--format", "json")
    assert result.code in (0, 1), result.stdout[-2000:] + result.stderr[-2000:]
    return result.code, json.loads(result.stdout), time.monotonic() - started


def _rollout(lab: Lab) -> None:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr


@pytest.fixture(scope="module")
def rolled(lab: Lab) -> Lab:
    _rollout(lab)
    return lab


def _figures(data: dict[str, Any]) -> dict[tuple[str, str], float]:
    return {(p["source"], p["destination"]): p["gbps"] for p in data["pairs"]}


def test_an_iperf3_acceptance_run_passes_and_writes_its_reports(rolled: Lab,
                                                                 tmp_path: Path) -> None:
    code, data, took = _accept(rolled, tmp_path)
    assert code == 0, data["findings"]
    assert data["status"] == "passed" and not data["not_run"]
    assert len(data["pairs"]) == 8  # both tenants' rings of 4 leaves
    assert all(p["verdict"] == "pass" and p["kind"] == "cross-rail" for p in data["pairs"])
    written = {p.name for p in tmp_path.iterdir()}
    assert written == {f"flatfab-acceptance-lab{suffix}" for suffix in
                       (".html", ".json", ".junit.xml", ".md", ".prom")}
    html = (tmp_path / "flatfab-acceptance-lab.html").read_text(encoding="utf-8")
    assert 'class="matrix"' in html and 'class="cell fail"' not in html
    print(f"\nhealthy: {sorted(_figures(data).values())} Gb/s in {took:.1f} s")


def test_a_shaped_port_fails_exactly_the_pairs_that_cross_it_and_names_it(
        rolled: Lab, tmp_path: Path) -> None:
    try:
        _shape(rolled, SHAPE)
        code, data, took = _accept(rolled, tmp_path / "shaped")
    finally:
        _shape(rolled, UNSHAPE)
    assert code == 1, data["findings"]
    failed = {(p["source"], p["destination"]) for p in data["pairs"] if p["verdict"] == "fail"}
    assert failed == {(s, d) for s, d in _figures(data)
                      if "leaf1-h1/eth1" in (s, d)}, data["pairs"]
    assert len(failed) == 2  # leaf4-h1 -> leaf1-h1 and leaf1-h1 -> leaf2-h1
    links = {(f["check"], f["link"]) for f in data["findings"] if f["check"] ==
             "acceptance.link"}
    suspect = [f for f in data["findings"] if f["check"] == "acceptance.link"]
    assert len(links) == 1 and SHAPED in suspect[0]["message"], data["findings"]
    pair_findings = [f for f in data["findings"] if f["check"] == "acceptance.pair"]
    assert all(SHAPED in f["message"] for f in pair_findings)
    html = (tmp_path / "shaped" / "flatfab-acceptance-lab.html").read_text(encoding="utf-8")
    assert html.count('class="cell fail"') == 2 and markup.escape(SHAPED) in html
    shaped = sorted(g for (s, d), g in _figures(data).items() if (s, d) in failed)
    print(f"\nshaped: {shaped} Gb/s in {took:.1f} s")
    # the shaping replaced the port's own queues, if it had any: a rollout puts them back
    assert "tbf" not in rolled.sh("leaf1", f"{IN_BLUE}tc qdisc show dev swp1")
    assert "tbf" not in rolled.sh("leaf1-h1", "tc qdisc show dev eth1")
    _rollout(rolled)
    verified = rolled.cli("verify", "--no-probes", "--format", "json")
    assert verified.code == 0, verified.stdout[-2000:]
    code, data, _ = _accept(rolled, tmp_path / "after")
    assert code == 0, data["findings"]
