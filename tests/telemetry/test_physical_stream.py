"""The physical layer streamed: the gauge a sample carries (the pre-FEC BER, a float, while
counters stay exact integers), its level in the rates, its leaves in every table that has
them, its value through the target and the subscriber in each encoding, and `flatfab watch`
over a target serving a lab node's phy.json, as the lab's switches do, with faults injected
into the file as the live test does: raised by check, device and port, cleared after."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flatfab.checks.base import Finding, Severity
from flatfab.lab import hardware
from flatfab.platforms.frr.asic_telemetry import PhyFile
from flatfab.platforms.registry import PLATFORMS
from flatfab.telemetry import conditions, paths
from flatfab.telemetry.gnmi_encode import Shapes
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from flatfab.telemetry.rates import Level, Rates
from flatfab.telemetry.samples import COUNTERS, GAUGES, Metric, Sample
from flatfab.telemetry.targets import TargetSpec
from flatfab.telemetry.thresholds import Thresholds
from flatfab.workflows.commands.watch import TickView, Watch, WatchResult
from tests.doubles.gnmi import HealthyCounters, LabPki
from tests.support.telemetry_streams import lab_plan
from tests.telemetry.gnmi_support import (
    PASS_ENV,
    USER_ENV,
    Pki,
    Source,
    Watcher,
    start_target,
)

BER = paths.leaf_path(Metric.PRE_FEC_BER, "swp1")
UNCORRECTABLE = paths.leaf_path(Metric.FEC_UNCORRECTABLE, "swp1")


# ---- the sample: counters exact, gauges floats ------------------------------------------

def test_a_gauge_is_a_float_and_a_counter_an_exact_integer() -> None:
    assert {Metric.PRE_FEC_BER, Metric.RX_POWER} == GAUGES and not GAUGES & COUNTERS
    assert paths.sample_value(Metric.RX_POWER, "-12.25") == -12.25  # decimal64 dBm
    assert {Metric.FEC_CORRECTED, Metric.FEC_UNCORRECTABLE,
            Metric.CARRIER_TRANSITIONS} <= COUNTERS
    # a decimal64 comes as a number, or in JSON IETF as a string (RFC 7951 6.1)
    for served in (2.5e-7, "2.5e-07", "0.000000250000000000"):
        value = paths.sample_value(Metric.PRE_FEC_BER, served)
        assert isinstance(value, float) and value == 2.5e-7
    assert paths.sample_value(Metric.PRE_FEC_BER, 0) == 0.0  # error free: 0, a float
    for junk in ("nan", "inf", "N/A"):
        with pytest.raises(ValueError):
            paths.sample_value(Metric.PRE_FEC_BER, junk)
    big = 2**63 + 7  # beyond a float's exactness: a counter stays exact
    assert paths.sample_value(Metric.FEC_CORRECTED, str(big)) == big
    assert paths.sample_value(Metric.FEC_CORRECTED, 12.0) == 12
    with pytest.raises(ValueError):
        paths.sample_value(Metric.FEC_UNCORRECTABLE, 1.5)  # no counter has a fraction
    assert paths.leaf_value(Metric.PRE_FEC_BER, 1) == 1.0
    assert paths.leaf_value(Metric.CARRIER_TRANSITIONS, 4) == 4


def test_a_gauge_has_a_level_per_drain_its_newest_and_its_highest_reading() -> None:
    rates = Rates()
    key = ("leaf1", "swp1", Metric.PRE_FEC_BER, None)
    rates.add(Sample("leaf1", "swp1", Metric.PRE_FEC_BER, None, 1e-9, 10.0))
    assert rates.drain().levels == {key: Level(1e-9, 1e-9, 10.0)}  # a level at once
    for value, time_s in ((4e-7, 20.0), (3e-8, 30.0), (9e-6, 30.0), (2e-8, 25.0)):
        rates.add(Sample("leaf1", "swp1", Metric.PRE_FEC_BER, None, value, time_s))
    drained = rates.drain()
    # a duplicate time and a late reading are ignored, as a counter's are
    assert drained.levels == {key: Level(3e-8, 4e-7, 30.0)}
    assert dict(drained) == {}  # a gauge has no window
    assert rates.drain().levels == {}
    assert len(rates) == 1
    rates.add(Sample("leaf1", "swp1", Metric.PRE_FEC_BER, None, 5e-8, 40.0))
    assert rates.forget("leaf1", Metric.PRE_FEC_BER, "swp1", None) == 1
    assert rates.drain().levels == {} and len(rates) == 0


# ---- the paths ---------------------------------------------------------------------------

@pytest.mark.parametrize(("platform", "path", "metric", "port"), [
    ("frr", "/interfaces/interface[name=swp1]/state/counters/link-transitions",
     Metric.CARRIER_TRANSITIONS, "swp1"),
    ("frr", "/components/component[name=swp1]/transceiver/state/fec-uncorrectable-blocks",
     Metric.FEC_UNCORRECTABLE, "swp1"),
    ("frr", "/components/component[name=swp1]/transceiver/state/pre-fec-ber/instant",
     Metric.PRE_FEC_BER, "swp1"),
    ("frr", "/flatfab-phy/interfaces/interface[name=swp1]/fec/state/corrected-codewords",
     Metric.FEC_CORRECTED, "swp1"),
    ("srlinux", "/interface[name=ethernet-1/1]/statistics/carrier-transitions",
     Metric.CARRIER_TRANSITIONS, "ethernet-1/1"),
    ("srlinux", "/interface[name=ethernet-1/1]/ethernet/forward-error-correction/statistics"
     "/host-if-fec-router/frame-error-count", Metric.FEC_UNCORRECTABLE, "ethernet-1/1"),
    ("srlinux", "/interface[name=ethernet-1/1]/ethernet/forward-error-correction/statistics"
     "/host-if-fec-router/pre-fec-ber/instant", Metric.PRE_FEC_BER, "ethernet-1/1"),
    ("nvue", "/interfaces/interface[name=swp1]/state/counters/carrier-transitions",
     Metric.CARRIER_TRANSITIONS, "swp1"),
    ("nvue", "/interfaces/interface[name=swp1]/phy/fec/state/rs-fec-uncorrectable-blocks",
     Metric.FEC_UNCORRECTABLE, "swp1"),
    ("sonic", "/COUNTERS/Ethernet*/Ethernet8/SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES",
     Metric.FEC_UNCORRECTABLE, "Ethernet8"),
    ("sonic", "/COUNTERS/Ethernet*/Ethernet8/SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES",
     Metric.FEC_CORRECTED, "Ethernet8"),
])
def test_each_table_decodes_its_physical_leaves(platform: str, path: str, metric: Metric,
                                                port: str) -> None:
    table = PLATFORMS[platform].telemetry_paths()
    assert table is not None
    assert table.metric_of(path) == (metric, port, None)


@pytest.mark.parametrize("platform", ["eos", "junos", "nxos"])
def test_an_unverified_physical_path_is_not_subscribed(platform: str) -> None:
    """OpenConfig's carrier-transitions is unverified on these OSes: a path a switch does not
    serve would fail its whole subscription, so it is neither subscribed nor decoded."""
    paths = PLATFORMS[platform].telemetry
    assert paths is not None
    path = "/interfaces/interface[name=Ethernet1/1]/state/counters/carrier-transitions"
    assert paths.table.metric_of(path) is None
    assert "not subscribed" in paths.missing()[Metric.CARRIER_TRANSITIONS]


def test_every_table_names_every_physical_metric_with_a_source() -> None:
    physical = {Metric.FEC_CORRECTED, Metric.FEC_UNCORRECTABLE, Metric.CARRIER_TRANSITIONS,
                Metric.PRE_FEC_BER}
    for platform in PLATFORMS.values():
        found = platform.telemetry
        if found is None:
            continue
        for metric in physical:
            spec = found.metrics[metric]
            assert spec.source.strip() and (spec.path or spec.none), (platform.name, metric)
    # flatfab's own table serves every one of them (the lab does)
    frr = PLATFORMS["frr"].telemetry
    assert frr is not None and not physical & set(frr.missing())


# ---- through the target and the subscriber -----------------------------------------------

@pytest.fixture
def serve(pki: Pki) -> Iterator[Callable[..., GnmiTarget]]:
    started: list[GnmiTarget] = []

    def start(source: Source, **kw: Any) -> GnmiTarget:
        target = start_target(pki, source, **kw)
        started.append(target)
        return target

    yield start
    for target in started:
        target.stop()


@pytest.mark.usefixtures("subscriber_login")
@pytest.mark.parametrize(("encoding", "shapes"), [
    ("PROTO", None), ("JSON", None), ("JSON_IETF", None),
    ("JSON_IETF", Shapes(subtree_depth=3)),  # a transceiver's state as one JSON object
], ids=["proto", "json", "json-ietf", "json-ietf-subtree"])
def test_a_ber_arrives_as_the_float_it_was_and_a_counter_as_its_integer(
        pki: Pki, serve: Callable[..., GnmiTarget], encoding: str,
        shapes: Shapes | None) -> None:
    source = Source({BER: 3.75e-7, UNCORRECTABLE: 2**62 + 3}, step=0)
    target = serve(source, **({"shapes": shapes} if shapes else {}))
    with Watcher(target.port, pki.ca_file, encoding=encoding) as w:
        assert w.wait(lambda: {Metric.PRE_FEC_BER, Metric.FEC_UNCORRECTABLE}
                      <= {s.metric for s in w.samples}), w.states
        got = {s.metric: s.value for s in w.samples}
    assert isinstance(got[Metric.PRE_FEC_BER], float) and got[Metric.PRE_FEC_BER] == 3.75e-7
    assert got[Metric.FEC_UNCORRECTABLE] == 2**62 + 3  # exact, past a float's 53 bits
    assert isinstance(got[Metric.FEC_UNCORRECTABLE], int)


# ---- flatfab watch over a lab node's phy.json --------------------------------------------

INTERVAL = 0.3
LEAF = "leaf1"


class _LabNode:
    """What a lab switch's target serves: its counters, and its phy.json's physical layer."""

    def __init__(self, phy: Path) -> None:
        self.counters = HealthyCounters(("swp1", "swp51"))
        self.phy = PhyFile(phy)

    def __call__(self) -> list[tuple[str, int | float | str]]:
        return [*self.counters(), *self.phy()]


class _Ticks:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ticks: list[TickView] = []

    def tick(self, view: TickView) -> None:
        with self._lock:
            self.ticks.append(view)

    def event(self, check: str, port: str, *, raised: bool = True, after: int = 0,
              timeout: float = 10.0) -> tuple[int, Finding]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                for view in self.ticks[after:]:
                    found = view.changes.raised if raised else view.changes.cleared
                    for f in found:
                        if (f.check, f.device, f.port) == (check, LEAF, port):
                            return view.number, f
            time.sleep(0.02)
        raise AssertionError(f"no {check} {'raised' if raised else 'cleared'} on {port}")

    def count(self) -> int:
        with self._lock:
            return len(self.ticks)


def _edit(file: Path, port: str, change: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads(file.read_text(encoding="utf-8"))
    change(doc["ports"][port])
    file.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def test_watch_names_a_lab_ports_physical_faults_from_its_phy_json_and_clears_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_ENV, "flatfab")
    monkeypatch.setenv(PASS_ENV, "s3cret")
    pki = LabPki(tmp_path)
    phy = tmp_path / hardware.FILE
    text = hardware.node_file(lab_plan(), LEAF)
    assert text is not None
    phy.write_text(hardware.stamped(text, time.time()), encoding="utf-8")
    target = GnmiTarget("127.0.0.1", 0, _LabNode(phy), Credentials("flatfab", "s3cret"),
                        pki.cert, pki.key, name=LEAF, poll_s=0.05)
    target.start()
    # the plan's flap window short enough to see a burst age out
    plan = lab_plan()
    assert plan.physical is not None
    physical = plan.physical.model_copy(update={
        "thresholds": plan.physical.thresholds.model_copy(update={"flap_window_s": 2})})
    watch = Watch(plan.model_copy(update={"physical": physical}),
                  Thresholds(interval_s=INTERVAL),
                  [TargetSpec(LEAF, "127.0.0.1", target.port, pki.ca_file,
                              username_env=USER_ENV, password_env=PASS_ENV)],
                  backoff_s=(0.05, 0.2))
    seen, stop = _Ticks(), threading.Event()
    done: list[WatchResult] = []
    thread = threading.Thread(target=lambda: done.append(watch.run(on_tick=seen.tick,
                                                                   stop=stop)), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while seen.count() < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen.count() >= 3
        # a growing uncorrectable counter on the uplink
        start = seen.count()
        for count in (4, 9, 15):
            _edit(phy, "swp51", lambda e, n=count: e["fec_counters"].update(uncorrectable=n))
            time.sleep(INTERVAL)
        _, lost = seen.event(conditions.FEC_UNCORRECTABLE, "swp51", after=start)
        assert "spine1:swp1" in lost.message and lost.severity is Severity.ERROR
        cleared_after = seen.count()  # the counter stops: the fault is gone
        seen.event(conditions.FEC_UNCORRECTABLE, "swp51", raised=False, after=cleared_after)
        # a BER climbing towards RS(528,514)'s limit over the margin (5e-6) on a host port
        start = seen.count()
        ber = 1e-9
        while True:
            ber *= 10
            _edit(phy, "swp1", lambda e, b=ber: e["fec_counters"].update(pre_fec_ber=b))
            time.sleep(2 * INTERVAL)
            with seen._lock:
                named = [f for v in seen.ticks[start:] for f in v.changes.raised
                         if f.check == conditions.PRE_FEC_BER and f.port == "swp1"]
            if named or ber > 1e-5:
                break
        assert named and ber < 5e-6, ber  # named before it reached the bound
        assert named[0].severity is Severity.WARNING and "leaf1-h1:eth1" in named[0].message
        _edit(phy, "swp1", lambda e: e["fec_counters"].update(pre_fec_ber=1e-9))
        seen.event(conditions.PRE_FEC_BER, "swp1", raised=False, after=start)
        # a flap burst, aged out of the (short) window
        start = seen.count()
        _edit(phy, "swp51", lambda e: e.update(flaps=6))
        _, flaps = seen.event(conditions.LINK_FLAPS, "swp51", after=start)
        assert "6 link state changes" in flaps.message
        seen.event(conditions.LINK_FLAPS, "swp51", raised=False, after=start)
    finally:
        stop.set()
        thread.join(15)
        target.stop()
    assert done and done[0].findings == [], [f.message for f in done[0].findings]
