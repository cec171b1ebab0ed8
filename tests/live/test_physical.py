"""The physical layer on the live lab: `verify --physical` judges what each port's module
states, names every physical fault by check, device and port, and says what it could not read.

The lab's ports are veths; the lab states the module the plan's link class calls for in each
node's phy.json (flatfab.lab.hardware), which its switches' and hosts' drivers read as a
switch's OS states its modules. Faults are injected there, as a bad optic would show them;
a flap is the link bounced for real, counted by the lab's carrier watchers. Lab of its own
(prefix `fph`, 172.31.234.0/24), rolled out from the factory, its counters then cleared.

Marked `own_lab`: `make test` runs it in its ownlab session.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.flatfab import FLATFAB
from tests.support.lab import Lab, own_lab

pytestmark = [pytest.mark.live, pytest.mark.own_lab]

PREFIX = "fph"
SUBNET = "172.31.234.0/24"
PHY_CHECKS = ("phy.ber", "phy.fec", "phy.flaps", "phy.headroom", "phy.media", "phy.optics",
              "phy.speed", "phy.unread")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with own_lab(tmp_path_factory.mktemp("phy"), PREFIX, SUBNET, rolled_out=True) as handle:
        yield handle


@pytest.fixture
def pristine(lab: Lab) -> Iterator[dict[str, str]]:
    """Each node's phy.json as the lab came up; put back after the test, whatever it did."""
    files = {node: lab.phy_file(node).read_text(encoding="utf-8")
             for node in ("spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4",
                          "leaf3-h1", "leaf4-h2")}
    yield files
    for node, text in files.items():
        lab.phy_file(node).write_text(text, encoding="utf-8")
    assert lab.cli("lab", "clear-counters", "--prefix", PREFIX).code == 0


def _phy(result: Any) -> list[tuple[str, str, str | None]]:
    return sorted((f["check"], f["device"], f["port"]) for f in result.json()["findings"]
                  if f["check"].startswith("phy."))


def test_a_healthy_lab_verifies_clean_with_its_physical_layer(lab: Lab) -> None:
    result = lab.cli("verify", "--physical", "--format", "json")
    assert result.code == 0, result.stdout[-3000:] + result.stderr
    report = result.json()
    assert set(PHY_CHECKS) <= set(report["checks"])
    assert report["findings"] == []
    # without --physical, the physical catalog does not run
    plain = lab.cli("verify", "--format", "json")
    assert plain.code == 0
    assert not set(PHY_CHECKS) & set(plain.json()["checks"])


def _optic(entry: dict[str, Any], *, rx_lane3: float) -> None:
    """An SR4 optic with diagnostics where a DAC was, its third lane's rx power as given."""
    lane = {"rx_power_dbm": -1.5, "tx_power_dbm": 0.5, "bias_ma": 7.0}
    lanes = [dict(lane) for _ in range(entry["lanes"])]
    lanes[2]["rx_power_dbm"] = rx_lane3
    band = {"low_alarm": -9.0, "low_warning": -7.0, "high_warning": 3.5, "high_alarm": 4.5}
    entry["module"] = {**entry["module"], "media": "sr", "compliance": "100GBASE-SR4"}
    entry["module"].pop("cable_m", None)
    entry["diagnostics"] = {"temperature_c": 40.0, "voltage_v": 3.3, "lanes": lanes,
                            "thresholds": {"rx_power_dbm": band, "tx_power_dbm": band}}


def test_each_physical_fault_is_named_by_check_device_and_port(
        lab: Lab, pristine: dict[str, str]) -> None:
    def aoc_30m(entry: dict[str, Any]) -> None:
        entry["module"].update(media="aoc", compliance="100G AOC", cable_m=30.0)

    def empty_cage(entry: dict[str, Any]) -> None:
        entry["present"] = False
        entry.pop("module")

    def bad_fec_counters(entry: dict[str, Any]) -> None:
        entry["fec_counters"].update(uncorrectable=12, pre_fec_ber=3e-5)

    lab.edit_phy("leaf1", "swp51", aoc_30m)
    lab.edit_phy("spine2", "swp3", lambda e: _optic(e, rx_lane3=-10.2))
    lab.edit_phy("spine1", "swp2", lambda e: _optic(e, rx_lane3=-7.5))  # under its warning
    lab.edit_phy("leaf2", "swp52", lambda e: e.update(fec="rs544"))
    lab.edit_phy("leaf2", "swp1", empty_cage)
    lab.edit_phy("leaf3-h1", "eth1", bad_fec_counters)
    lab.bounce("leaf4", "swp51", far=("spine1", "swp4"))  # the flap, for real
    lab.edit_phy("leaf4-h2", "eth1", lambda e: e.update(lanes=2))

    result = lab.cli("verify", "--physical", "--format", "json")
    assert result.code == 1, result.stdout[-3000:] + result.stderr
    found = _phy(result)
    assert found == [
        ("phy.ber", "leaf3-h1", "eth1"),  # uncorrectable codewords
        ("phy.ber", "leaf3-h1", "eth1"),  # pre-FEC BER above RS(528,514)'s limit / 10
        ("phy.fec", "leaf2", "swp52"),
        ("phy.flaps", "leaf4", "swp51"),  # both ends lost carrier
        ("phy.flaps", "spine1", "swp4"),
        ("phy.headroom", "leaf1", "swp51"),
        ("phy.headroom", "spine1", "swp2"),  # an SR optic may carry up to 100 m
        ("phy.headroom", "spine2", "swp3"),
        ("phy.media", "leaf1", "swp51"),  # the cable is longer than planned
        ("phy.media", "leaf2", "swp1"),  # empty cage
        ("phy.optics", "spine1", "swp2"),
        ("phy.optics", "spine2", "swp3"),
        ("phy.speed", "leaf4-h2", "eth1"),
    ], found
    by_key = {(f["check"], f["device"], f["port"]): f for f in result.json()["findings"]}
    optics = by_key[("phy.optics", "spine2", "swp3")]
    assert "lane 3 rx power" in optics["message"] and "low alarm -9" in optics["message"]
    assert "spine2:swp3 -- leaf3:swp52" in optics["message"]
    assert optics["severity"] == "error" and optics["virtual"] is True
    warned = by_key[("phy.optics", "spine1", "swp2")]
    assert "lane 3 rx power" in warned["message"] and "low warning -7" in warned["message"]
    assert warned["severity"] == "warning"
    headroom = by_key[("phy.headroom", "leaf1", "swp51")]
    assert "30 m" in headroom["message"] and headroom["severity"] == "error"
    bound = by_key[("phy.headroom", "spine2", "swp3")]
    assert "may be up to" in bound["message"] and bound["severity"] == "warning"
    flap = by_key[("phy.flaps", "leaf4", "swp51")]
    assert "(1 changes so far" in flap["message"], flap
    assert by_key[("phy.fec", "leaf2", "swp52")]["actual"] == "rs544"
    assert by_key[("phy.fec", "leaf2", "swp52")]["expected"] == "rs528"
    # the physical layer is judged only when asked
    assert lab.cli("verify", "--format", "json").code == 0


def test_a_fact_a_port_does_not_state_is_named_and_the_run_is_incomplete(
        lab: Lab, pristine: dict[str, str]) -> None:
    def no_fec_counters(entry: dict[str, Any]) -> None:
        entry.pop("fec_counters")
        entry["unknown"] = {"fec_counters": "the OS keeps no FEC counters on this port"}

    lab.edit_phy("spine1", "swp1", no_fec_counters)
    result = lab.cli("verify", "--physical", "--format", "json")
    assert result.code == 3, result.stdout[-3000:] + result.stderr
    assert _phy(result) == [("phy.unread", "spine1", "swp1")]
    finding = result.json()["findings"][0]
    assert "keeps no FEC counters" in finding["message"]
    assert finding["severity"] == "not-judged"


def test_a_repaired_port_verifies_clean_at_once(lab: Lab, pristine: dict[str, str]) -> None:
    lab.edit_phy("leaf2", "swp52", lambda e: e.update(fec="none"))
    assert lab.cli("verify", "--physical", "--format", "json").code == 1
    lab.phy_file("leaf2").write_text(pristine["leaf2"], encoding="utf-8")
    result = lab.cli("verify", "--physical", "--format", "json")
    assert result.code == 0, result.stdout[-3000:]
    audit = lab.cli("audit", "--physical", "--format", "json")
    assert audit.code == 0, audit.stdout[-3000:] + audit.stderr


def test_a_phy_file_that_is_not_json_is_named_not_passed(
        lab: Lab, pristine: dict[str, str], tmp_path: Path) -> None:
    lab.phy_file("leaf3").write_text("{ not json", encoding="utf-8")
    result = lab.cli("verify", "--physical", "--format", "json")
    assert result.code == 3, result.stdout[-3000:] + result.stderr
    unread = [f for f in result.json()["findings"] if f["check"] == "phy.unread"]
    # each of leaf3's cabled ports is named with why; the rest of leaf3 is read and judged
    assert {(f["device"], f["port"]) for f in unread} == {
        ("leaf3", p) for p in ("swp1", "swp2", "swp51", "swp52")}
    assert all("phy.json is not JSON" in f["message"] for f in unread)
    assert not [f for f in result.json()["findings"] if f["check"] == "device.reachable"]


def test_a_burn_in_accepts_every_healthy_link_and_writes_its_record(
        lab: Lab, tmp_path: Path) -> None:
    result = lab.cli("verify", "--burn-in", "3s", "--report-dir", str(tmp_path), "--format",
                     "json", timeout=300)
    assert result.code == 0, result.stdout[-3000:] + result.stderr
    info = result.json()["burn_in"]
    assert info["rounds"] >= 1 and info["packets"] > 0
    assert {link["verdict"] for link in info["links"]} == {"accepted"}
    assert len(info["links"]) == 16
    record = json.loads((tmp_path / "flatfab-burnin-lab.json").read_text(encoding="utf-8"))
    assert record["status"] == "accepted" and record["kind"] == "burnin"


def test_a_burn_in_rejects_a_link_that_lost_frames_while_the_flows_ran(
        lab: Lab, pristine: dict[str, str], tmp_path: Path) -> None:
    """The optic starts losing codewords once the flows run: the burn-in names it; a link
    that had lost some before the burn-in and lost none during it is not held to that."""
    def losing(count: int) -> Any:
        return lambda entry: entry["fec_counters"].update(uncorrectable=count)

    lab.edit_phy("spine2", "swp2", losing(7))  # old errors: they do not grow
    command = [FLATFAB, "--fabric", lab.fabric, "--inventory", str(lab.inventory),
               "--state-dir", str(lab.state_dir), "verify", "--burn-in", "4s",
               "--report-dir", str(tmp_path), "--format", "json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as run:
        assert run.stderr is not None
        told = []
        for line in run.stderr:  # the "before" reads are done once the flows start
            told.append(line)
            if "sending test traffic" in line:
                break
        lab.edit_phy("leaf3", "swp51", losing(40))
        out, err = run.communicate(timeout=300)
    assert run.returncode == 1, "".join(told) + err + out[-3000:]
    links = {link["link"]: link for link in json.loads(out)["burn_in"]["links"]}
    bad = links["leaf3:swp51--spine1:swp3"]
    assert bad["verdict"] == "rejected"
    assert "leaf3:swp51: 40 uncorrectable FEC codewords during the burn-in" in bad["reasons"]
    assert links["leaf2:swp52--spine2:swp2"]["verdict"] == "rejected"  # phy.ber: 7 so far
    assert sum(link["verdict"] == "accepted" for link in links.values()) == 14
    record = (tmp_path / "flatfab-burnin-lab.md").read_text(encoding="utf-8")
    assert "| leaf3:swp51 -- spine1:swp3 | rejected |" in record
