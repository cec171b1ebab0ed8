"""The physical layer on synthetic streams over the lab plan: uncorrectable codewords, a
pre-FEC BER climbing towards what its FEC corrects, flap bursts. Each raised within one
interval, on the right device and port with the link's far end, and cleared once it no
longer holds; nothing on a healthy stream, on history counted before the watch, or on a
port the plan has no physical link for (its FEC is not known).

The lab's links are 100G on 4 lanes: RS(528,514), which corrects a pre-FEC BER of 5e-5; the
default margin 10 puts the bound `phy.ber` fails at on 5e-6, the early warning at 5e-7 and
the floor of a tenfold climb at 5e-8."""

from __future__ import annotations

from dataclasses import replace

import pytest

from flatfab.checks.base import Finding, Severity
from flatfab.model.state import FabricState
from flatfab.telemetry import conditions
from flatfab.telemetry.health import Changes, HealthEngine
from flatfab.telemetry.physical_map import PhysicalMap
from flatfab.telemetry.samples import Metric
from flatfab.telemetry.thresholds import Thresholds
from tests.support.telemetry_streams import Stream, lab_plan

LIMITS = Thresholds()
LEAF, UPLINK, FAR = "leaf1", "swp51", "spine1:swp1"
BOUND, EARLY, FLOOR = 5e-6, 5e-7, 5e-8


def _plan(**thresholds: float) -> FabricState:
    plan = lab_plan()
    if not thresholds:
        return plan
    assert plan.physical is not None
    physical = plan.physical.model_copy(update={
        "thresholds": plan.physical.thresholds.model_copy(update=thresholds)})
    return plan.model_copy(update={"physical": physical})


def _engine(plan: FabricState | None = None,
            limits: Thresholds = LIMITS) -> tuple[HealthEngine, Stream]:
    engine = HealthEngine(plan or lab_plan(), limits)
    stream = Stream(lab_plan(), limits.interval_s)
    for _ in range(2):  # a baseline, then a healthy interval
        assert not _step(engine, stream)
    return engine, stream


def _step(engine: HealthEngine, stream: Stream) -> Changes:
    engine.feed(stream.step())
    return engine.tick(stream.time)


def _of(findings: list[Finding], check: str) -> list[Finding]:
    return [f for f in findings if f.check == check]


def _one(findings: list[Finding], check: str) -> Finding:
    found = _of(findings, check)
    assert len(found) == 1, findings
    return found[0]


def test_the_plan_gives_each_end_of_a_physical_link_its_far_end_fec_and_bound() -> None:
    ends = PhysicalMap(lab_plan())
    uplink = ends.port(LEAF, UPLINK)
    assert uplink is not None and uplink.far == FAR and uplink.link == "leaf1:swp51--spine1:swp1"
    assert uplink.fec is not None and uplink.fec.value == "rs528"
    assert uplink.limit == 5e-5 and uplink.bound == pytest.approx(BOUND)
    far = ends.port("spine1", "swp1")
    assert far is not None and far.far == f"{LEAF}:{UPLINK}"
    assert ends.port(LEAF, "lo") is None and ends.port(LEAF, None) is None


def test_uncorrectable_codewords_are_named_with_the_far_end_and_cleared() -> None:
    engine, stream = _engine()
    stream.set(LEAF, UPLINK, Metric.FEC_UNCORRECTABLE, None, 3)
    finding = _one(_step(engine, stream).raised, conditions.FEC_UNCORRECTABLE)
    assert (finding.device, finding.port, finding.severity) == (LEAF, UPLINK, Severity.ERROR)
    assert finding.link == "leaf1:swp51--spine1:swp1"
    assert "3 uncorrectable FEC codewords" in finding.message and FAR in finding.message
    assert finding.actual == "3 per interval" and "<= 0" in finding.expected
    assert not _step(engine, stream)  # still losing: nothing new
    stream.set(LEAF, UPLINK, Metric.FEC_UNCORRECTABLE, None, 0)
    cleared = _one(_step(engine, stream).cleared, conditions.FEC_UNCORRECTABLE)
    assert (cleared.device, cleared.port) == (LEAF, UPLINK)
    assert engine.active() == []


def test_uncorrectable_codewords_within_the_plans_allowance_are_not_named() -> None:
    engine, stream = _engine(_plan(uncorrectable=2))
    stream.set(LEAF, UPLINK, Metric.FEC_UNCORRECTABLE, None, 2)
    assert not _step(engine, stream)
    stream.set(LEAF, UPLINK, Metric.FEC_UNCORRECTABLE, None, 3)
    assert "(allowed 2)" in _one(_step(engine, stream).raised,
                                 conditions.FEC_UNCORRECTABLE).message


def test_codewords_lost_before_the_watch_are_history() -> None:
    engine, stream = HealthEngine(lab_plan(), LIMITS), Stream(lab_plan(), LIMITS.interval_s)
    stream.values[(LEAF, UPLINK, Metric.FEC_UNCORRECTABLE, None)] = 10**6
    stream.values[(LEAF, UPLINK, Metric.CARRIER_TRANSITIONS, None)] = 40
    for _ in range(3):
        assert not _step(engine, stream)


def test_a_ber_climbing_tenfold_is_named_before_it_nears_the_bound() -> None:
    engine, stream = _engine()
    stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, 1e-8)  # tenfold, but below the floor
    assert not _step(engine, stream)
    stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, 1e-7)  # tenfold again, above the floor
    warning = _one(_step(engine, stream).raised, conditions.PRE_FEC_BER)
    assert warning.severity is Severity.WARNING and (warning.device, warning.port) == (
        LEAF, UPLINK)
    assert "rose 100-fold from 1.0e-09" in warning.message and FAR in warning.message
    assert "rs528 corrects to 5.0e-05" in warning.message and "5.0e-06" in warning.message
    assert warning.actual == "1.00e-07 (from 1.0e-09)"
    # it stays tenfold above where it came from: held, however long
    for _ in range(5):
        assert not _step(engine, stream)
    # back below the floor: the climb is over
    stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, 2e-8)
    cleared = _one(_step(engine, stream).cleared, conditions.PRE_FEC_BER)
    assert cleared.port == UPLINK and engine.active() == []


def test_a_climb_from_an_error_free_link_is_named_from_zero() -> None:
    engine, stream = _engine()
    stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, 0.0)  # below 1e-18: stated as 0
    assert not _step(engine, stream)
    stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, 6e-8)
    warning = _one(_step(engine, stream).raised, conditions.PRE_FEC_BER)
    assert "rose from 0.0e+00 within 3 intervals" in warning.message


def test_a_slow_climb_is_named_a_decade_below_the_bound_and_an_error_past_it() -> None:
    engine, stream = _engine()
    level = 1e-9
    named: Finding | None = None
    while named is None:  # doubling every interval: never tenfold within three
        level *= 2
        stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, level)
        raised = _of(_step(engine, stream).raised, conditions.PRE_FEC_BER)
        named = raised[0] if raised else None
    assert EARLY <= level < BOUND  # named before it reaches what phy.ber fails at
    assert named.severity is Severity.WARNING and "is within 10x of 5.0e-06" in named.message
    assert named.expected == "pre-FEC BER below 5.0e-07 and not climbing tenfold"
    stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, 8e-6)
    error = _one(_step(engine, stream).raised, conditions.PRE_FEC_BER)
    assert error.severity is Severity.ERROR and "past the bound" in error.message
    assert error.expected == "pre-FEC BER <= 5.00e-06" and error.actual == "8.00e-06"
    assert len(_of(engine.active(), conditions.PRE_FEC_BER)) == 2  # climbing, and past it
    stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, 1e-9)  # the optic replaced
    assert len(_of(_step(engine, stream).cleared, conditions.PRE_FEC_BER)) == 2
    assert engine.active() == []


def test_a_spike_between_two_ticks_counts() -> None:
    engine, stream = _engine()
    key = (LEAF, UPLINK, Metric.PRE_FEC_BER, None)
    high = stream.step()
    high = [s if (s.device, s.port, s.metric, s.key) != key else replace(s, value=2e-6)
            for s in high]
    engine.feed(high)
    stream.time += 1
    engine.feed(s for s in stream.step() if (s.device, s.port, s.metric, s.key) == key)
    raised = engine.tick(stream.time).raised
    assert "2.00e-06" in _one(raised, conditions.PRE_FEC_BER).message


def test_a_ber_off_the_plans_physical_links_is_not_judged() -> None:
    engine, stream = _engine()
    stream.level(LEAF, "swp9", Metric.PRE_FEC_BER, 1e-3)
    stream.level(LEAF, None, Metric.PRE_FEC_BER, 1e-3)
    assert not _step(engine, stream)


def test_a_flap_burst_is_named_and_held_for_the_window() -> None:
    engine, stream = _engine(_plan(flap_window_s=60))
    stream.set(LEAF, UPLINK, Metric.CARRIER_TRANSITIONS, None, 6)  # three flaps
    finding = _one(_step(engine, stream).raised, conditions.LINK_FLAPS)
    assert (finding.device, finding.port, finding.severity) == (LEAF, UPLINK, Severity.ERROR)
    assert "6 link state changes in the last 60 s (allowed 0)" in finding.message
    assert FAR in finding.message and finding.link == "leaf1:swp51--spine1:swp1"
    stream.set(LEAF, UPLINK, Metric.CARRIER_TRANSITIONS, None, 0)  # quiet from now on
    ticks = 0
    while not (changes := _step(engine, stream)).cleared:
        assert not changes.raised
        ticks += 1
        assert ticks < 10
    # held while the burst is inside the window (60 s, six 10 s intervals), not longer
    assert ticks == 5
    assert _one(changes.cleared, conditions.LINK_FLAPS).port == UPLINK


def test_flaps_within_the_plans_allowance_are_not_named() -> None:
    engine, stream = _engine(_plan(flaps=4, flap_window_s=60))
    stream.set(LEAF, UPLINK, Metric.CARRIER_TRANSITIONS, None, 2)
    assert not _step(engine, stream)
    assert not _step(engine, stream)  # 4 in the window: allowed
    stream.set(LEAF, UPLINK, Metric.CARRIER_TRANSITIONS, None, 1)
    raised = _one(_step(engine, stream).raised, conditions.LINK_FLAPS)
    assert "5 link state changes" in raised.message and "(allowed 4)" in raised.message


def test_without_a_physical_policy_the_physical_layer_is_not_judged() -> None:
    plan = lab_plan().model_copy(update={"physical": None})
    engine, stream = _engine(plan)
    stream.set(LEAF, UPLINK, Metric.FEC_UNCORRECTABLE, None, 5)
    stream.set(LEAF, UPLINK, Metric.CARRIER_TRANSITIONS, None, 2)
    stream.level(LEAF, UPLINK, Metric.PRE_FEC_BER, 1e-3)
    assert not _step(engine, stream)
