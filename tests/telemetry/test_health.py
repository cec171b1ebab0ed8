"""The health engine on synthetic streams over the lab plan: each condition raised within one
interval of starting, on the right device, port and priority/queue, and cleared within one
interval of ending; nothing on a healthy stream, a counter reset or a first sample."""

from __future__ import annotations

import gc
import math

import pytest

from flatfab.checks.base import Finding, Severity
from flatfab.telemetry import conditions
from flatfab.telemetry.conditions import Context
from flatfab.telemetry.health import (
    GC_MIDDLE,
    GC_YOUNG,
    Changes,
    HealthEngine,
    collect_less,
)
from flatfab.telemetry.lossless_map import LosslessMap
from flatfab.telemetry.physical_map import PhysicalMap
from flatfab.telemetry.rates import Level, SeriesKey, Window, WindowMap
from flatfab.telemetry.samples import Metric, Sample
from flatfab.telemetry.thresholds import Thresholds
from tests.support.telemetry_streams import Stream, lab_plan

LIMITS = Thresholds()


def _engine(limits: Thresholds = LIMITS) -> tuple[HealthEngine, Stream]:
    engine, stream = HealthEngine(lab_plan(), limits), Stream(lab_plan(), limits.interval_s)
    _run(engine, stream, 2)  # baseline, then one healthy interval
    assert engine.active() == []
    return engine, stream


def _step(engine: HealthEngine, stream: Stream) -> Changes:
    engine.feed(stream.step())
    return engine.tick(stream.time)


def _run(engine: HealthEngine, stream: Stream, steps: int) -> list[Changes]:
    return [_step(engine, stream) for _ in range(steps)]


def _one(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


def test_a_healthy_stream_raises_nothing() -> None:
    engine, stream = _engine()
    assert not any(_run(engine, stream, 20))
    assert engine.active() == []


def test_the_first_sample_of_a_series_never_raises() -> None:
    # a watchdog that fired long ago, drops counted before the engine started: history
    engine, stream = HealthEngine(lab_plan(), LIMITS), Stream(lab_plan())
    stream.values[("leaf1", "swp51", Metric.WATCHDOG, 3)] = 7
    stream.values[("leaf1", "swp51", Metric.QUEUE_DROPS, 3)] = 10**9
    assert not _step(engine, stream)
    assert not _step(engine, stream)
    assert engine.active() == []


def test_pause_storm_raised_once_it_lasted_and_cleared_when_it_ends() -> None:
    engine, stream = _engine()
    stream.set("leaf1", "swp51", Metric.PFC_TX, 3, 20_000)  # 2000 pps
    ticks = math.ceil(LIMITS.storm_for_s / LIMITS.interval_s)
    before = _run(engine, stream, ticks - 1)
    assert not any(before)  # under for_s: a burst, not a storm
    finding = _one(_step(engine, stream).raised)  # the interval the storm reached for_s
    assert (finding.check, finding.device, finding.port) == ("telemetry.pause_storm", "leaf1",
                                                              "swp51")
    assert finding.severity is Severity.ERROR
    assert "priority 3" in finding.actual and "2000 pps sent" in finding.actual
    assert "priority 3" in finding.expected and "1000" in finding.expected
    assert not _step(engine, stream)  # still storming: nothing new
    stream.set("leaf1", "swp51", Metric.PFC_TX, 3, 50)
    cleared = _one(_step(engine, stream).cleared)
    assert cleared.check == "telemetry.pause_storm" and engine.active() == []


def test_pause_storm_received_is_its_own_subject() -> None:
    engine, stream = _engine()
    stream.set("spine1", "swp1", Metric.PFC_RX, 3, 20_000)
    stream.set("spine1", "swp1", Metric.PFC_TX, 3, 20_000)
    raised = [c.raised for c in _run(engine, stream, 3)][-1]
    storms = [f for f in raised if f.check == "telemetry.pause_storm"]
    assert len(storms) == 2
    assert {("received" in f.actual) for f in storms} == {True, False}


def test_a_dip_restarts_the_storm_clock() -> None:
    engine, stream = _engine()
    stream.set("leaf1", "swp51", Metric.PFC_TX, 3, 20_000)
    _run(engine, stream, 2)
    stream.set("leaf1", "swp51", Metric.PFC_TX, 3, 50)
    _step(engine, stream)
    stream.set("leaf1", "swp51", Metric.PFC_TX, 3, 20_000)
    assert not any(_run(engine, stream, 2))
    assert _one(_step(engine, stream).raised).check == "telemetry.pause_storm"


def test_watchdog_raised_in_the_interval_it_fires_and_cleared_after() -> None:
    engine, stream = _engine()
    stream.set("spine2", "swp3", Metric.WATCHDOG, 3, 1)
    finding = _one(_step(engine, stream).raised)
    assert (finding.check, finding.device, finding.port) == ("telemetry.watchdog", "spine2",
                                                              "swp3")
    assert "priority 3" in finding.message and "fired 1" in finding.actual
    stream.set("spine2", "swp3", Metric.WATCHDOG, 3, 0)
    assert _one(_step(engine, stream).cleared).check == "telemetry.watchdog"
    assert engine.active() == []


def test_drops_in_a_lossless_queue_but_not_a_lossy_one() -> None:
    engine, stream = _engine()
    stream.set("leaf2", "swp1", Metric.QUEUE_DROPS, 3, 5)  # queue 3: TC 3, lossless
    stream.set("leaf2", "swp1", Metric.QUEUE_DROPS, 0, 500)  # best effort may drop
    finding = _one(_step(engine, stream).raised)
    assert (finding.check, finding.device, finding.port) == ("telemetry.lossless_drops",
                                                              "leaf2", "swp1")
    assert finding.severity is Severity.CRITICAL
    assert finding.actual == "queue 3: 5 drops per interval"
    stream.set("leaf2", "swp1", Metric.QUEUE_DROPS, 3, 0)
    assert _one(_step(engine, stream).cleared).check == "telemetry.lossless_drops"


def test_drops_at_or_under_the_threshold_are_allowed() -> None:
    engine, stream = _engine(Thresholds(lossless_drops=5))
    stream.set("leaf2", "swp1", Metric.QUEUE_DROPS, 3, 5)
    assert not any(_run(engine, stream, 3))
    stream.set("leaf2", "swp1", Metric.QUEUE_DROPS, 3, 6)
    assert _one(_step(engine, stream).raised).actual == "queue 3: 6 drops per interval"


def test_a_port_the_plan_does_not_name_uses_the_fabric_profile() -> None:
    engine, stream = _engine()
    stream.set("leaf1", "bond0", Metric.QUEUE_DROPS, 3, 0)
    _step(engine, stream)  # the new series' baseline
    stream.set("leaf1", "bond0", Metric.QUEUE_DROPS, 3, 2)
    assert _one(_step(engine, stream).raised).port == "bond0"


def test_pausing_while_the_lossless_queue_marks_no_ecn() -> None:
    engine, stream = _engine()
    stream.set("spine1", "swp2", Metric.PFC_RX, 3, 2_000)  # 200 pps: no storm
    stream.set("spine1", "swp2", Metric.QUEUE_ECN, 3, 0)
    finding = _one(_step(engine, stream).raised)
    assert (finding.check, finding.device, finding.port) == ("telemetry.pause_without_ecn",
                                                              "spine1", "swp2")
    assert "priority 3" in finding.message and "queue 3" in finding.actual
    assert finding.severity is Severity.WARNING
    stream.set("spine1", "swp2", Metric.QUEUE_ECN, 3, 10)  # marking again
    assert _one(_step(engine, stream).cleared).check == "telemetry.pause_without_ecn"


def test_pausing_with_marks_or_few_pauses_is_healthy() -> None:
    engine, stream = _engine()
    stream.set("spine1", "swp2", Metric.PFC_RX, 3, 2_000)  # marks keep coming
    assert not any(_run(engine, stream, 2))
    stream.set("spine1", "swp2", Metric.PFC_RX, 3, 50)
    stream.set("spine1", "swp2", Metric.QUEUE_ECN, 3, 0)  # 5 pps: ordinary back-pressure
    assert not any(_run(engine, stream, 2))


def test_ecn_marks_on_a_lossy_queue() -> None:
    engine, stream = _engine()
    stream.set("leaf3", "swp2", Metric.QUEUE_ECN, 0, 12)
    finding = _one(_step(engine, stream).raised)
    assert (finding.check, finding.device, finding.port) == ("telemetry.ecn_on_lossy",
                                                              "leaf3", "swp2")
    assert finding.actual == "queue 0: 12 ECN marks per interval"
    stream.set("leaf3", "swp2", Metric.QUEUE_ECN, 0, 0)
    assert _one(_step(engine, stream).cleared).check == "telemetry.ecn_on_lossy"


def test_dcqcn_reaction_point_idle() -> None:
    engine, stream = _engine()
    # CNPs keep reaching leaf1-h1 (its leaf port's CNP queue, 6, sends them): none handled
    stream.set("leaf1-h1", "eth1", Metric.NIC_CNP_HANDLED, None, 0)
    # two devices' counters, read apart: one flat interval may be CNPs still in flight
    assert not _step(engine, stream)
    finding = _one(_step(engine, stream).raised)
    assert (finding.check, finding.device, finding.port) == ("telemetry.dcqcn_idle",
                                                              "leaf1-h1", "eth1")
    assert "leaf1 swp1 queue 6" in finding.message and "reaction" in finding.message
    stream.set("leaf1-h1", "eth1", Metric.NIC_CNP_HANDLED, None, 20)
    assert _one(_step(engine, stream).cleared).check == "telemetry.dcqcn_idle"


def test_dcqcn_idle_needs_cnps_to_react_to() -> None:
    engine, stream = _engine()
    stream.set("leaf1-h1", "eth1", Metric.NIC_CNP_HANDLED, None, 0)
    stream.set("leaf1", "swp1", Metric.QUEUE_TX, 6, 3)  # no congestion, no CNPs
    assert not any(_run(engine, stream, 3))


def test_dcqcn_notification_point_idle() -> None:
    engine, stream = _engine()
    stream.set("leaf4-h2", "eth1", Metric.NIC_CNP_SENT, None, 0)
    finding = _one(_step(engine, stream).raised)
    assert (finding.device, finding.port) == ("leaf4-h2", "eth1")
    assert "notification" in finding.message and "nic_cnp_sent" in finding.actual


def test_silent_target_raised_after_silent_after_intervals_and_cleared_on_resume() -> None:
    engine, stream = _engine()
    stream.muted.add("leaf4")
    quiet = _run(engine, stream, LIMITS.silent_after)
    assert not any(quiet)  # late is not silent
    finding = _one(_step(engine, stream).raised)
    assert (finding.check, finding.device, finding.port) == ("telemetry.silent", "leaf4", None)
    assert not _step(engine, stream)
    stream.muted.clear()
    assert _one(_step(engine, stream).cleared).check == "telemetry.silent"
    assert not any(_run(engine, stream, 3))  # the gap's growth is no burst


def test_a_silent_targets_findings_are_held_not_cleared() -> None:
    engine, stream = _engine()
    stream.set("leaf4", "swp1", Metric.QUEUE_DROPS, 3, 9)
    _step(engine, stream)
    stream.muted.add("leaf4")
    changes = _run(engine, stream, LIMITS.silent_after + 3)
    assert [f.check for c in changes for f in c.cleared] == []
    assert [f.check for f in engine.active()] == ["telemetry.lossless_drops",
                                                   "telemetry.silent"]


def test_findings_of_a_series_that_stops_go_stale() -> None:
    engine, stream = _engine()
    stream.set("leaf2", "swp2", Metric.QUEUE_ECN, 1, 3)
    _step(engine, stream)
    del stream.values[("leaf2", "swp2", Metric.QUEUE_ECN, 1)]  # the port's counters vanish
    changes = _run(engine, stream, LIMITS.silent_after + 1)
    assert [f.check for f in changes[-1].cleared] == ["telemetry.ecn_on_lossy"]
    assert not any(changes[:-1])


def test_a_counter_reset_raises_nothing() -> None:
    engine, stream = _engine()
    stream.clear("spine1")
    stream.clear("leaf1-h1")
    assert not any(_run(engine, stream, 5))
    assert engine.rates.resets > 0


def test_a_reset_during_a_condition_does_not_clear_it_early_or_raise_again() -> None:
    engine, stream = _engine()
    stream.set("leaf1", "swp52", Metric.QUEUE_DROPS, 3, 4)
    assert _step(engine, stream).raised
    stream.clear("leaf1")
    assert not _step(engine, stream)  # the reset interval says nothing
    assert not _step(engine, stream)  # still dropping
    stream.set("leaf1", "swp52", Metric.QUEUE_DROPS, 3, 0)
    assert _one(_step(engine, stream).cleared).port == "swp52"


def test_duplicate_and_late_samples_are_ignored() -> None:
    engine, stream = _engine()
    samples = stream.step()
    engine.feed(samples)
    engine.feed(samples)  # delivered twice
    late = Sample("leaf1", "swp51", Metric.WATCHDOG, 3, 99, stream.time - 25)
    engine.feed([late])
    assert not engine.tick(stream.time)
    assert not _step(engine, stream)


def test_active_is_worst_first_and_deterministic() -> None:
    engine, stream = _engine()
    stream.set("leaf3", "swp1", Metric.QUEUE_ECN, 2, 5)
    stream.set("leaf2", "swp1", Metric.QUEUE_ECN, 0, 5)
    stream.set("spine2", "swp4", Metric.QUEUE_DROPS, 3, 1)
    stream.set("spine1", "swp4", Metric.WATCHDOG, 3, 1)
    changes = _step(engine, stream)
    assert [(f.check, f.device) for f in engine.active()] == [
        ("telemetry.lossless_drops", "spine2"),
        ("telemetry.watchdog", "spine1"),
        ("telemetry.ecn_on_lossy", "leaf2"),
        ("telemetry.ecn_on_lossy", "leaf3"),
    ]
    assert changes.raised == engine.active()
    again, other = _engine()
    for device, port, metric, key in [("spine1", "swp4", Metric.WATCHDOG, 3),
                                      ("leaf2", "swp1", Metric.QUEUE_ECN, 0),
                                      ("spine2", "swp4", Metric.QUEUE_DROPS, 3),
                                      ("leaf3", "swp1", Metric.QUEUE_ECN, 2)]:
        other.set(device, port, metric, key, stream.growth[(device, port, metric, key)])
    _step(again, other)
    assert again.active() == engine.active()


def test_findings_fit_the_reports() -> None:
    engine, stream = _engine()
    stream.set("leaf1", "swp1", Metric.QUEUE_DROPS, 3, 1)
    _step(engine, stream)
    data = _one(engine.active()).as_dict()
    assert data["severity"] == "critical" and data["check"] == "telemetry.lossless_drops"
    assert data["device"] == "leaf1" and data["port"] == "swp1" and data["expected"]


@pytest.mark.parametrize("steps", [50])
def test_many_ticks_keep_memory_per_series(steps: int) -> None:
    # performance sanity without timing: a long run keeps one state per series and findings
    # bounded by what is wrong
    engine, stream = _engine()
    series = len(engine.rates)
    stream.set("spine2", "swp1", Metric.WATCHDOG, 3, 1)
    _run(engine, stream, steps)
    assert len(engine.rates) == series
    assert [f.check for f in engine.active()] == ["telemetry.watchdog"]


def test_a_target_with_a_skewed_clock_is_not_silent() -> None:
    # silence goes by arrival: leaf2 stamps its samples an hour behind, and still talks
    engine, stream = HealthEngine(lab_plan(), LIMITS), Stream(lab_plan())
    for _ in range(8):
        samples = [Sample(s.device, s.port, s.metric, s.key, s.value,
                          s.time - 3600 if s.device == "leaf2" else s.time)
                   for s in stream.step()]
        engine.feed(samples)
        assert not engine.tick(stream.time)


def test_ticks_faster_than_samples_hold_state() -> None:
    engine, stream = _engine()
    stream.set("spine1", "swp3", Metric.QUEUE_DROPS, 3, 2)
    assert _step(engine, stream).raised
    # ticks between samples see no data: the finding is neither cleared nor raised again
    assert not engine.tick(stream.time + 3) and not engine.tick(stream.time + 6)
    assert [f.check for f in engine.active()] == ["telemetry.lossless_drops"]
    stream.set("spine1", "swp3", Metric.QUEUE_DROPS, 3, 0)
    assert _one(_step(engine, stream).cleared).port == "swp3"


def test_queues_are_classified_by_the_plans_tc_to_queue_map() -> None:
    # leaf1 swp1 sends TC 3 (lossless) by queue 5 and TC 6 (CNP) by queue 7
    state = lab_plan().model_copy(deep=True)
    port = state.devices["leaf1"].interfaces["swp1"]
    assert port.qos is not None
    port.qos = port.qos.model_copy(deep=True)  # the plan shares one PortQos among ports
    port.qos.maps.tc_to_queue = [0, 1, 2, 5, 4, 3, 7, 6]
    engine, stream = HealthEngine(state, LIMITS), Stream(state)
    stream.set("leaf1", "swp1", Metric.QUEUE_ECN, 3, 0)  # queue 3 carries a lossy TC now
    stream.set("leaf1", "swp1", Metric.QUEUE_ECN, 5, 40)  # and queue 5 the lossless one
    stream.set("leaf1", "swp1", Metric.QUEUE_DROPS, 5, 0)
    _run(engine, stream, 2)
    assert engine.active() == []
    stream.set("leaf1", "swp1", Metric.QUEUE_DROPS, 3, 4)  # lossy: may drop
    stream.set("leaf1", "swp1", Metric.QUEUE_DROPS, 5, 4)
    finding = _one(_step(engine, stream).raised)
    assert (finding.check, finding.port, finding.actual) == (
        "telemetry.lossless_drops", "swp1", "queue 5: 4 drops per interval")
    # the CNPs leaf1-h1 receives leave by queue 7: a flat reaction there is judged
    stream.set("leaf1", "swp1", Metric.QUEUE_TX, 7, 50)
    stream.set("leaf1", "swp1", Metric.QUEUE_TX, 6, 0)
    stream.set("leaf1-h1", "eth1", Metric.NIC_CNP_HANDLED, None, 0)
    assert not _step(engine, stream).raised  # flat once: CNPs may be in flight
    raised = _one(_step(engine, stream).raised)
    assert raised.device == "leaf1-h1" and "leaf1 swp1 queue 7" in raised.message


class _Plain(dict[SeriesKey, Window]):
    """A plain mapping of windows, with a drain's gauge levels beside it."""

    levels: dict[SeriesKey, Level]


def test_conditions_judge_a_drain_as_they_judge_a_plain_mapping() -> None:
    # the drain lists each metric's series apart; a plain dict is looked through whole
    engine, stream = _engine()
    stream.set("leaf1", "swp51", Metric.PFC_TX, 3, 20_000)
    stream.set("leaf1", "swp51", Metric.PFC_RX, 3, 20_000)
    stream.set("leaf1", "swp51", Metric.QUEUE_DROPS, 3, 50)
    stream.set("leaf1", "swp51", Metric.QUEUE_ECN, 0, 500)
    stream.set("leaf1", "swp51", Metric.WATCHDOG, 3, 1)
    stream.set("leaf1", "swp52", Metric.FEC_UNCORRECTABLE, None, 2)
    stream.set("leaf2", "swp51", Metric.CARRIER_TRANSITIONS, None, 2)
    stream.level("leaf3", "swp51", Metric.PRE_FEC_BER, 1e-6)
    engine.feed(stream.step())
    windows = engine.rates.drain()
    assert isinstance(windows, WindowMap)
    plain = _Plain(windows)
    plain.levels = windows.levels
    judged = 0
    for condition in conditions.CONDITIONS:
        def context() -> Context:
            return Context(LIMITS, LosslessMap(lab_plan()), PhysicalMap(lab_plan()))

        by_metric = dict(condition(windows, context()))
        whole = dict(condition(plain, context()))
        assert by_metric == whole
        judged += sum(f is not None for f in whole.values())
    # drops, lossy marks, the watchdog (a storm must last first); uncorrectable codewords, a
    # flap burst, a BER within a decade of its bound
    assert judged == 6


def test_collect_less_makes_young_collections_rarer_and_gives_back_the_old() -> None:
    old = gc.get_threshold()
    try:
        assert collect_less() == old
        assert gc.get_threshold() == (max(old[0], GC_YOUNG), max(old[1], GC_MIDDLE), old[2])
    finally:
        gc.set_threshold(*old)


def test_a_tick_hands_its_windows_over_and_keeps_none() -> None:
    # the live view shows the tick's windows; the engine must not hold them into the next
    # interval (tens of MB a tick at a thousand switches)
    engine, stream = _engine()
    stream.set("leaf1", "swp51", Metric.QUEUE_TX, 3, 5_000)
    engine.feed(stream.step())
    engine.tick(100.0)
    engine.feed(stream.step())
    changes = engine.tick(110.0)
    assert isinstance(changes.windows, WindowMap)
    assert changes.windows[("leaf1", "swp51", Metric.QUEUE_TX, 3)].delta == 5_000
    del changes
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, WindowMap)]
