"""The physical layer streamed on the live lab: every switch's gNMI target serves its ports'
FEC codewords and pre-FEC BER from the node's phy.json (the lab's stand-in for hardware, what
`verify --physical` reads too) and its links' real state changes (the lab's carrier watchers),
and `flatfab watch` names a port losing
codewords, a BER climbing towards what its FEC corrects (before it gets there) and a flap
burst, by check, device and port, then clears each once the fault is gone.

Faults are injected into the nodes' phy.json, as a bad optic would show them; the flap burst
bounces a link for real, twice. The watch judges against the lab's own plan with a short flap
window, so a burst ages out within the test. Lab of its own (prefix `fps`, 172.31.233.0/24),
up but not rolled out: the physical layer needs no configuration.

Marked `own_lab`: `make test` runs it in its ownlab session.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from flatfab.checks.base import Severity
from flatfab.model.state import FabricState
from flatfab.telemetry import conditions
from flatfab.telemetry.samples import Metric
from flatfab.workflows.project.layout import Project
from tests.support.lab import Lab, own_lab
from tests.support.paths import ROOT
from tests.support.telemetry_lab import Recorder, lab_thresholds, watching

pytestmark = [pytest.mark.live, pytest.mark.own_lab]

PREFIX = "fps"
SUBNET = "172.31.233.0/24"
INTERVAL = 1.0
FLAP_WINDOW_S = 6
NODES = ("spine1", "leaf2", "leaf3", "leaf4")
# the lab's 100G links run RS(528,514): it corrects to a pre-FEC BER of 5e-5, and the
# default margin 10 puts the bound `phy.ber` fails at on 5e-6
BOUND = 5e-6


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with own_lab(tmp_path_factory.mktemp("phywatch"), PREFIX, SUBNET,
                 rolled_out=False) as handle:
        yield handle


@pytest.fixture
def pristine(lab: Lab) -> Iterator[None]:
    """Each node's phy.json as the lab came up; put back after the test, whatever it did."""
    files = {node: lab.phy_file(node).read_text(encoding="utf-8") for node in NODES}
    yield
    for node, text in files.items():
        lab.phy_file(node).write_text(text, encoding="utf-8")


def _short_window(lab: Lab) -> FabricState:
    plan = Project(ROOT, lab.fabric, inventory_override=lab.inventory).plan
    assert plan.physical is not None
    thresholds = plan.physical.thresholds.model_copy(update={"flap_window_s": FLAP_WINDOW_S})
    physical = plan.physical.model_copy(update={"thresholds": thresholds})
    return plan.model_copy(update={"physical": physical})


def _fec(**counters: Any) -> Any:
    return lambda entry: entry["fec_counters"].update(**counters)


def _streaming(seen: Recorder, device: str, port: str, metric: Metric) -> None:
    """Wait until the watch has the port's series (a baseline and a first interval)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if (device, port, metric.value, None) in seen.values() and len(seen.ticks) >= 3:
            return
        time.sleep(0.1)
    raise AssertionError(f"{device} {port} {metric.value} never streamed: {seen.lines}")


def test_watch_names_each_physical_fault_and_clears_it(lab: Lab, pristine: None) -> None:
    limits = lab_thresholds(lab, interval_s=INTERVAL)
    # the lab is not rolled out: its data ports are down; the link that flaps comes up first
    lab.sh("spine2", "ip link set swp4 up")
    lab.sh("leaf4", "ip link set swp52 up")
    with watching(lab, limits, poll=False, plan=_short_window(lab)) as (_watch, seen):
        _streaming(seen, "leaf3", "swp1", Metric.PRE_FEC_BER)
        _streaming(seen, "leaf2", "swp51", Metric.FEC_UNCORRECTABLE)
        _streaming(seen, "leaf4", "swp52", Metric.CARRIER_TRANSITIONS)
        # a healthy lab streams no physical finding
        assert not [f for f in seen.active if f.check in conditions.PHYSICAL_CONDITIONS]
        began = time.monotonic()
        # a port losing codewords, more every interval, on a fabric link
        for count in (3, 8, 15):
            lab.edit_phy("leaf2", "swp51", _fec(uncorrectable=count))
            time.sleep(INTERVAL)
        lost = seen.wait_for(conditions.FEC_UNCORRECTABLE, "leaf2", "swp51", after=began)
        assert lost is not None, seen.events
        assert "spine1:swp2" in lost.finding.message  # the link's far end
        assert lost.finding.severity is Severity.ERROR
        # a flap burst: the link bounced for real, twice (four changes of state)
        series = ("leaf4", "swp52", Metric.CARRIER_TRANSITIONS.value, None)
        before = seen.values()[series]
        lab.sh("leaf4", "ip link set swp52 down; ip link set swp52 up; "
                        "ip link set swp52 down; ip link set swp52 up")
        flapped_at = time.monotonic()
        # the uncorrectable counter stops: cleared within two intervals
        stopped = time.monotonic()
        cleared = seen.wait_for(conditions.FEC_UNCORRECTABLE, "leaf2", "swp51", raised=False,
                                after=stopped, timeout=10)
        assert cleared is not None and cleared.at - stopped <= 2 * INTERVAL + 1.5
        flaps = seen.wait_for(conditions.LINK_FLAPS, "leaf4", "swp52", after=flapped_at)
        # named at its first reading after the burst began (a reading may fall inside it);
        # all four real changes are streamed
        assert flaps is not None and "link state changes" in flaps.finding.message
        assert "spine2:swp4" in flaps.finding.message
        deadline = time.monotonic() + 10
        while seen.values()[series] < before + 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert seen.values()[series] == before + 4, seen.values()[series]
        # a BER climbing tenfold an interval towards the limit on a host port
        ber, named = 1e-9, None
        while named is None and ber < BOUND:
            ber *= 10
            lab.edit_phy("leaf3", "swp1", _fec(pre_fec_ber=ber))
            named = seen.wait_for(conditions.PRE_FEC_BER, "leaf3", "swp1",
                                  timeout=2 * INTERVAL + 1.5)
        assert named is not None, seen.events
        assert ber < BOUND, ber  # named before the BER reached what phy.ber fails at
        assert named.finding.severity is Severity.WARNING
        assert "leaf3-h1:eth1" in named.finding.message
        assert not seen.first(conditions.PRE_FEC_BER, "leaf3", "swp1", detail="past the bound")
        repaired = time.monotonic()
        lab.edit_phy("leaf3", "swp1", _fec(pre_fec_ber=1e-9))  # the optic cleaned
        assert seen.wait_for(conditions.PRE_FEC_BER, "leaf3", "swp1", raised=False,
                             after=repaired, timeout=10) is not None
        # the burst ages out of the window
        aged = seen.wait_for(conditions.LINK_FLAPS, "leaf4", "swp52", raised=False,
                             after=flapped_at, timeout=FLAP_WINDOW_S + 10)
        assert aged is not None
        time.sleep(INTERVAL)
        assert not [f for f in seen.active if f.check in conditions.PHYSICAL_CONDITIONS], \
            seen.active


def test_the_watch_command_reports_a_ber_past_its_bound_by_device_and_port(
        lab: Lab, pristine: None) -> None:
    lab.edit_phy("spine1", "swp2", _fec(pre_fec_ber=2e-5))
    result = lab.cli("watch", "--interval", "1", "--count", "5", "--format", "json")
    assert result.code == 1, result.stdout[-3000:] + result.stderr
    found = {(f["check"], f["device"], f["port"], f["severity"])
             for f in result.json()["findings"] if f["check"] in conditions.PHYSICAL_CONDITIONS}
    assert found == {(conditions.PRE_FEC_BER, "spine1", "swp2", "warning"),
                     (conditions.PRE_FEC_BER, "spine1", "swp2", "error")}, found
    past = next(f for f in result.json()["findings"] if f["severity"] == "error")
    assert "leaf2:swp51" in past["message"] and past["link"] == "leaf2:swp51--spine1:swp2"
