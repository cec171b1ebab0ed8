"""Counter deltas per series: baselines, resets, duplicates, and one window per drain."""

from __future__ import annotations

import pytest

from flatfab.telemetry.rates import Rates, Window
from flatfab.telemetry.samples import Metric, Sample


def _pfc(value: int, time: float, port: str = "swp1") -> Sample:
    return Sample("leaf1", port, Metric.PFC_RX, 3, value, time)


def test_the_first_reading_is_a_baseline() -> None:
    rates = Rates()
    rates.add(_pfc(10**9, 0))
    assert rates.drain() == {}
    rates.add(_pfc(10**9 + 50, 10))
    assert rates.drain() == {("leaf1", "swp1", Metric.PFC_RX, 3): Window(50, 0, 10)}


def test_a_drain_gives_only_what_moved_since_the_last() -> None:
    rates = Rates()
    for t, port in [(0, "swp1"), (0, "swp2"), (10, "swp1"), (10, "swp2"), (20, "swp1")]:
        rates.add(_pfc(int(t) * 3, t, port))
    rates.drain()
    rates.add(_pfc(90, 30))
    assert list(rates.drain()) == [("leaf1", "swp1", Metric.PFC_RX, 3)]
    assert rates.drain() == {}
    assert len(rates) == 2


def test_a_window_spans_every_reading_since_the_last_drain() -> None:
    rates = Rates()
    for t, v in [(0, 0), (10, 100), (20, 300)]:
        rates.add(_pfc(v, t))
    window = rates.drain()[("leaf1", "swp1", Metric.PFC_RX, 3)]
    assert (window.delta, window.span, window.rate) == (300, 20, 15.0)
    assert window.per_interval(10) == 150.0


def test_a_reset_counts_nothing_and_the_next_reading_counts_from_it() -> None:
    rates = Rates()
    for t, v in [(0, 500), (10, 600), (20, 5)]:
        rates.add(_pfc(v, t))
    assert rates.resets == 1
    assert rates.drain()[("leaf1", "swp1", Metric.PFC_RX, 3)].delta == 100
    rates.add(_pfc(25, 30))
    assert rates.drain()[("leaf1", "swp1", Metric.PFC_RX, 3)] == Window(20, 20, 30)


def test_duplicates_and_late_readings_are_ignored() -> None:
    rates = Rates()
    for t, v in [(0, 0), (10, 100), (10, 100), (5, 7000)]:
        rates.add(_pfc(v, t))
    assert rates.drain()[("leaf1", "swp1", Metric.PFC_RX, 3)] == Window(100, 0, 10)


def test_state_is_not_a_counter() -> None:
    rates = Rates()
    for t, v in [(0, 1), (10, 0), (20, 1)]:
        rates.add(Sample("leaf1", "swp1", Metric.OPER_UP, None, v, t))
    assert rates.drain() == {} and len(rates) == 0


@pytest.mark.parametrize(("span", "expected"), [(5.0, 7.0), (10.0, 7.0), (20.0, 3.5)])
def test_per_interval_never_scales_a_short_window_up(span: float, expected: float) -> None:
    assert Window(7, 100.0, 100.0 + span).per_interval(10) == expected


def test_a_drain_lists_each_metrics_series_in_order() -> None:
    rates = Rates()
    keys = [("leaf1", "swp1", Metric.PFC_RX, 3), ("leaf1", "swp1", Metric.QUEUE_TX, 0),
            ("leaf1", "swp2", Metric.PFC_RX, 3), ("leaf1", "swp1", Metric.OPER_UP, None)]
    for t in (0, 10):
        for device, port, metric, key in keys:
            rates.add(Sample(device, port, metric, key, 5 * t, t))
    windows = rates.drain()
    assert windows.by_metric == {Metric.PFC_RX: [keys[0], keys[2]], Metric.QUEUE_TX: [keys[1]]}
    assert list(windows) == keys[:3]


def test_add_all_names_the_devices_it_heard() -> None:
    rates, heard = Rates(), {}
    rates.add_all([_pfc(1, 0), Sample("leaf2", "swp1", Metric.OPER_UP, None, 1, 0)], heard)
    assert list(heard) == ["leaf1", "leaf2"]  # a state sample is heard from too
    assert len(rates) == 1


def test_a_deleted_series_ends_and_comes_back_from_a_new_baseline() -> None:
    rates = Rates()
    for port in ("swp1", "swp2"):
        rates.add(_pfc(100, 0, port))
        rates.add(_pfc(150, 10, port))  # pending: 50 each
    assert rates.forget("leaf1", Metric.PFC_RX, "swp1", None) == 1
    assert list(rates.drain()) == [("leaf1", "swp2", Metric.PFC_RX, 3)]  # swp1's 50 dropped
    rates.add(_pfc(7, 20))  # swp1 again, its counter new: a baseline, not a reset
    rates.add(_pfc(9, 30))
    assert rates.drain() == {("leaf1", "swp1", Metric.PFC_RX, 3): Window(2, 20, 30)}
    assert rates.resets == 0
    # a port of None ends the metric on every port; another metric stays
    rates.add(Sample("leaf1", "swp1", Metric.QUEUE_TX, 3, 1, 40))
    assert rates.forget("leaf1", Metric.PFC_RX, None, None) == 2
    assert len(rates) == 1
