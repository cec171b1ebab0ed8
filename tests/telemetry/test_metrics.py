"""The Prometheus exposition of `flatfab watch`, scraped over HTTP on 127.0.0.1 and parsed with
prometheus_client's own parser: names, labels and values of every counter and state, findings
appearing and disappearing, targets up and silent, and the server's life cycle."""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from flatfab.checks.base import Finding, Severity
from flatfab.errors import FlatfabError
from flatfab.telemetry.health import HealthEngine
from flatfab.telemetry.metrics import MetricsServer, TelemetryMetrics
from flatfab.telemetry.samples import Gone, Metric, Sample
from flatfab.telemetry.thresholds import Thresholds
from tests.support.telemetry_streams import Stream, lab_plan

T0 = 1_764_000_000.0
Labels = frozenset[tuple[str, str]]
Scrape = dict[tuple[str, Labels], float]

# what each Metric becomes: (sample name, the label its key fills or None)
EXPECTED = {
    Metric.PFC_RX: ("flatfab_pfc_pause_frames_received_total", "priority"),
    Metric.PFC_TX: ("flatfab_pfc_pause_frames_sent_total", "priority"),
    Metric.WATCHDOG: ("flatfab_pfc_watchdog_storms_total", "priority"),
    Metric.QUEUE_TX: ("flatfab_queue_transmitted_packets_total", "queue"),
    Metric.QUEUE_DROPS: ("flatfab_queue_dropped_packets_total", "queue"),
    Metric.QUEUE_ECN: ("flatfab_queue_ecn_marked_packets_total", "queue"),
    Metric.NIC_CNP_SENT: ("flatfab_nic_cnp_sent_packets_total", None),
    Metric.NIC_CNP_HANDLED: ("flatfab_nic_cnp_handled_packets_total", None),
    Metric.NIC_ECN_MARKED_RX: ("flatfab_nic_ecn_marked_received_packets_total", None),
    Metric.NIC_OUT_OF_BUFFER: ("flatfab_nic_out_of_buffer_dropped_packets_total", None),
    Metric.FEC_CORRECTED: ("flatfab_port_fec_corrected_codewords_total", None),
    Metric.FEC_UNCORRECTABLE: ("flatfab_port_fec_uncorrectable_codewords_total", None),
    Metric.CARRIER_TRANSITIONS: ("flatfab_port_carrier_transitions_total", None),
    Metric.PRE_FEC_BER: ("flatfab_port_pre_fec_ber_ratio", None),
    Metric.RX_POWER: ("flatfab_port_rx_power_dbm", "lane"),
    Metric.OPER_UP: ("flatfab_port_oper_up", None),
}
GAUGE_FAMILIES = {Metric.OPER_UP, Metric.PRE_FEC_BER, Metric.RX_POWER}
KEYED = {m for m, (_, label) in EXPECTED.items() if label}


def _l(**labels: str) -> Labels:
    return frozenset(labels.items())


def _scrape_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as resp:
        assert resp.status == 200
        return str(resp.read().decode())


def _parse(text: str) -> tuple[Scrape, dict[str, str]]:
    """(sample name, labels) -> value, and family name -> type."""
    values: Scrape = {}
    types: dict[str, str] = {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for s in family.samples:
            key = (s.name, frozenset(s.labels.items()))
            assert key not in values, f"duplicate series {key}"
            values[key] = s.value
    return values, types


@pytest.fixture
def served() -> Iterator[tuple[TelemetryMetrics, MetricsServer]]:
    metrics = TelemetryMetrics()
    server = metrics.serve("127.0.0.1", 0)
    try:
        yield metrics, server
    finally:
        server.stop()


def _scrape(server: MetricsServer) -> Scrape:
    return _parse(_scrape_text(server.url))[0]


def _named(scrape: Scrape, name: str) -> dict[Labels, float]:
    return {labels: v for (n, labels), v in scrape.items() if n == name}


def _one_of_each(device: str = "leaf1", value: int = 42, time: float = T0) -> list[Sample]:
    return [Sample(device, "swp1", m, 3 if m in KEYED else None, 1 if m is Metric.OPER_UP
                   else value, time) for m in Metric]


def _finding(check: str, device: str | None, port: str | None = None,
             severity: Severity = Severity.ERROR, message: str = "x") -> Finding:
    return Finding(check=check, severity=severity, device=device, message=message, port=port)


def test_every_metric_is_exported_with_its_labels_and_the_devices_value(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    metrics.observe(_one_of_each())
    values, types = _parse(_scrape_text(server.url))
    for metric, (name, key_label) in EXPECTED.items():
        labels = {"device": "leaf1", "port": "swp1"} | ({key_label: "3"} if key_label else {})
        want = 1.0 if metric is Metric.OPER_UP else 42.0
        assert values[(name, _l(**labels))] == want, name
        family = name.removesuffix("_total")
        assert types[family] == ("gauge" if metric in GAUGE_FAMILIES else "counter")
    assert all(name.startswith("flatfab_") for name, _ in values)


def test_what_a_device_does_not_serve_is_absent_from_the_scrape_never_zero(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    # as on the lab: a switch counts pauses received and none sent (its virtual ASIC cannot
    # say which ingress it would pause), a veth NIC has no receive buffer to run out of
    metrics.observe([Sample("leaf1", "swp1", Metric.PFC_RX, 3, 9, T0),
                     Sample("leaf1-h1", "eth1", Metric.NIC_CNP_HANDLED, None, 4, T0)])
    text = _scrape_text(server.url)
    values, types = _parse(text)
    assert values[("flatfab_pfc_pause_frames_received_total",
                   _l(device="leaf1", port="swp1", priority="3"))] == 9.0
    assert values[("flatfab_nic_cnp_handled_packets_total",
                   _l(device="leaf1-h1", port="eth1"))] == 4.0
    # neither a zero nor an empty declaration: what nobody serves is not in the scrape at all
    for unserved in ("flatfab_pfc_pause_frames_sent", "flatfab_nic_out_of_buffer",
                     "flatfab_nic_cnp_sent", "flatfab_pfc_watchdog", "flatfab_queue_",
                     "flatfab_port_oper_up", "flatfab_telemetry_finding"):
        assert unserved not in text, unserved
    assert sorted(types) == [
        "flatfab_nic_cnp_handled_packets", "flatfab_pfc_pause_frames_received",
        "flatfab_telemetry_active_findings", "flatfab_telemetry_last_sample_timestamp_seconds",
        "flatfab_telemetry_samples", "flatfab_telemetry_target_up"]
    # served once by another device: the series is that device's alone, no zero for leaf1
    metrics.observe([Sample("leaf2", "swp3", Metric.PFC_TX, 3, 5, T0)])
    assert _named(_scrape(server), "flatfab_pfc_pause_frames_sent_total") == {
        _l(device="leaf2", port="swp3", priority="3"): 5.0}


def test_a_series_a_target_deleted_leaves_the_scrape(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    metrics.observe([Sample("leaf1", port, Metric.PFC_RX, 3, 9, T0) for port in ("swp1", "swp2")]
                    + [Sample("leaf1", "swp1", Metric.OPER_UP, None, 1, T0)])
    metrics.forget([Gone("leaf1", Metric.PFC_RX, "swp1", None, T0 + 1)])
    scrape = _scrape(server)
    assert _named(scrape, "flatfab_pfc_pause_frames_received_total") == {
        _l(device="leaf1", port="swp2", priority="3"): 9.0}
    assert _named(scrape, "flatfab_port_oper_up") == {_l(device="leaf1", port="swp1"): 1.0}


def test_nothing_watched_is_an_empty_scrape() -> None:
    assert TelemetryMetrics().exposition() == b""
    # a declared target never heard: down, and the checks counted (none active) for it
    declared = _parse(TelemetryMetrics(targets=["leaf1"]).exposition().decode())[1]
    assert sorted(declared) == ["flatfab_telemetry_active_findings",
                                "flatfab_telemetry_target_up"]
    everything = TelemetryMetrics(plan=lab_plan())  # the plan: queue 3 marked lossless
    everything.observe(_one_of_each())
    everything.set_findings([_finding("telemetry.watchdog", "leaf1", "swp1")])
    families = everything.families()
    assert sorted(_parse(everything.exposition().decode())[1]) == sorted(families)
    # beside the metrics: the plan's lossless queues and BER bounds, and five of health
    assert len(families) == len(set(families)) == len(EXPECTED) + 7


def test_counters_mirror_the_device_value_including_a_reset(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    series = ("flatfab_queue_dropped_packets_total", _l(device="leaf1", port="swp1", queue="3"))
    metrics.observe([Sample("leaf1", "swp1", Metric.QUEUE_DROPS, 3, 1000, T0)])
    assert _scrape(server)[series] == 1000.0
    metrics.observe([Sample("leaf1", "swp1", Metric.QUEUE_DROPS, 3, 1500, T0 + 10)])
    assert _scrape(server)[series] == 1500.0
    # `clear counters`: exported as is, Prometheus' rate() reads the drop as a reset
    metrics.observe([Sample("leaf1", "swp1", Metric.QUEUE_DROPS, 3, 20, T0 + 20)])
    assert _scrape(server)[series] == 20.0


def test_oper_state_follows_the_newest_sample(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    metrics.observe([Sample("leaf1", "swp2", Metric.OPER_UP, None, 1, T0),
                     Sample("leaf1", "swp2", Metric.OPER_UP, None, 0, T0 + 1)])
    assert _named(_scrape(server), "flatfab_port_oper_up") == {
        _l(device="leaf1", port="swp2"): 0.0}


def test_a_device_wide_sample_and_a_stray_key_do_not_split_series(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    metrics.observe([Sample("host1", "eth0", Metric.NIC_CNP_SENT, 7, 5, T0),
                     Sample("host1", "eth0", Metric.NIC_CNP_SENT, None, 6, T0 + 1),
                     Sample("host1", None, Metric.NIC_OUT_OF_BUFFER, None, 2, T0)])
    scrape = _scrape(server)
    assert _named(scrape, "flatfab_nic_cnp_sent_packets_total") == {
        _l(device="host1", port="eth0"): 6.0}
    # no port: an empty label, which Prometheus reads as absent
    assert _named(scrape, "flatfab_nic_out_of_buffer_dropped_packets_total") == {
        _l(device="host1", port=""): 2.0}


def test_findings_appear_and_disappear(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    metrics.observe(_one_of_each())
    storm = _finding("telemetry.pause_storm", "leaf1", "swp1", message="received 3 at 9000 pps")
    drops = _finding("telemetry.lossless_drops", "leaf2", "swp4", Severity.CRITICAL)
    metrics.set_findings([storm, drops])
    scrape = _scrape(server)
    assert _named(scrape, "flatfab_telemetry_finding") == {
        _l(check="telemetry.pause_storm", device="leaf1", port="swp1", severity="error"): 1.0,
        _l(check="telemetry.lossless_drops", device="leaf2", port="swp4",
           severity="critical"): 1.0,
    }
    per_check = _named(scrape, "flatfab_telemetry_active_findings")
    assert per_check[_l(check="telemetry.pause_storm")] == 1.0
    assert per_check[_l(check="telemetry.lossless_drops")] == 1.0
    assert per_check[_l(check="telemetry.watchdog")] == 0.0  # known checks: a flat zero
    # the message is never a label: cardinality stays bounded by the fabric
    assert all("message" not in dict(labels) for (_, labels) in scrape)

    metrics.set_findings([drops])
    scrape = _scrape(server)
    assert list(_named(scrape, "flatfab_telemetry_finding")) == [
        _l(check="telemetry.lossless_drops", device="leaf2", port="swp4", severity="critical")]
    assert _named(scrape, "flatfab_telemetry_active_findings")[
        _l(check="telemetry.pause_storm")] == 0.0

    metrics.set_findings([])
    scrape = _scrape(server)
    assert _named(scrape, "flatfab_telemetry_finding") == {}
    assert set(_named(scrape, "flatfab_telemetry_active_findings").values()) == {0.0}


def test_findings_sharing_labels_count_together(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    metrics.set_findings([
        _finding("telemetry.pause_storm", "leaf1", "swp1", message="received 3"),
        _finding("telemetry.pause_storm", "leaf1", "swp1", message="sent 3"),
        _finding("fabric.something_static", None, None, Severity.WARNING),
    ])
    scrape = _scrape(server)  # a duplicate series would fail the parse in _parse
    assert _named(scrape, "flatfab_telemetry_finding") == {
        _l(check="telemetry.pause_storm", device="leaf1", port="swp1", severity="error"): 2.0,
        _l(check="fabric.something_static", device="", port="", severity="warning"): 1.0,
    }
    assert _named(scrape, "flatfab_telemetry_active_findings")[
        _l(check="telemetry.pause_storm")] == 2.0


def test_targets_up_silent_and_never_heard() -> None:
    metrics = TelemetryMetrics(targets=["leaf1", "leaf9"])
    with metrics.serve() as server:
        metrics.observe(_one_of_each("leaf1", time=T0 + 5))
        metrics.observe(_one_of_each("leaf1", time=T0))  # late: the newest stamp stays
        scrape = _scrape(server)
        assert _named(scrape, "flatfab_telemetry_target_up") == {
            _l(device="leaf1"): 1.0, _l(device="leaf9"): 0.0}  # declared, never heard
        assert _named(scrape, "flatfab_telemetry_last_sample_timestamp_seconds") == {
            _l(device="leaf1"): T0 + 5}
        assert _named(scrape, "flatfab_telemetry_samples_total") == {
            _l(device="leaf1"): float(2 * len(Metric))}

        metrics.set_findings([_finding("telemetry.silent", "leaf1")])
        scrape = _scrape(server)
        assert _named(scrape, "flatfab_telemetry_target_up")[_l(device="leaf1")] == 0.0
        # blind, not healthy: its frozen counters are withheld rather than shown flat
        assert _named(scrape, "flatfab_queue_dropped_packets_total") == {}
        assert _named(scrape, "flatfab_port_oper_up") == {}
        assert "flatfab_queue_dropped_packets" not in _scrape_text(server.url)

        metrics.set_findings([])
        scrape = _scrape(server)
        assert _named(scrape, "flatfab_telemetry_target_up")[_l(device="leaf1")] == 1.0
        assert _named(scrape, "flatfab_queue_dropped_packets_total") != {}


def test_from_the_health_engine_a_condition_shows_then_clears() -> None:
    limits = Thresholds()
    engine, stream = HealthEngine(lab_plan(), limits), Stream(lab_plan(), limits.interval_s)
    metrics = TelemetryMetrics(plan=lab_plan())

    def step() -> Scrape:
        samples = stream.step()
        engine.feed(samples)
        metrics.observe(samples)
        engine.tick(stream.time)
        metrics.set_findings(engine.active())
        return _parse(metrics.exposition().decode())[0]

    step()
    step()
    stream.set("leaf2", "swp1", Metric.QUEUE_DROPS, 3, 5)  # drops on the lossless queue
    scrape = step()
    assert _named(scrape, "flatfab_telemetry_finding") == {
        _l(check="telemetry.lossless_drops", device="leaf2", port="swp1",
           severity="critical"): 1.0}
    stream.set("leaf2", "swp1", Metric.QUEUE_DROPS, 3, 0)
    scrape = step()
    assert _named(scrape, "flatfab_telemetry_finding") == {}
    ups = _named(scrape, "flatfab_telemetry_target_up")
    assert ups and set(ups.values()) == {1.0}
    assert _l(device="leaf2", port="swp1", queue="3") in _named(scrape, "flatfab_queue_lossless")


def test_the_plan_marks_the_lossless_queues_alone() -> None:
    samples = [Sample("leaf2", "swp1", Metric.QUEUE_DROPS, q, 0, T0) for q in range(8)]
    samples.append(Sample("leaf2", "swp1", Metric.PFC_RX, 3, 0, T0))  # a priority, no queue
    planned = TelemetryMetrics(plan=lab_plan())
    planned.observe(samples)
    scrape = _parse(planned.exposition().decode())[0]
    # lab intent: RoCE on priority 3 -> TC 3 -> queue 3, the only lossless one
    assert _named(scrape, "flatfab_queue_lossless") == {
        _l(device="leaf2", port="swp1", queue="3"): 1.0}
    assert len(_named(scrape, "flatfab_queue_dropped_packets_total")) == 8
    unplanned = TelemetryMetrics()  # no plan: no claim either way
    unplanned.observe(samples)
    assert _named(_parse(unplanned.exposition().decode())[0], "flatfab_queue_lossless") == {}


def test_each_instance_has_its_own_registry() -> None:
    one, two = TelemetryMetrics(), TelemetryMetrics()
    one.observe(_one_of_each("leaf1"))
    assert b"leaf1" in one.exposition()
    assert b"leaf1" not in two.exposition()
    assert one.registry is not REGISTRY and one.registry is not two.registry
    assert REGISTRY.get_sample_value("flatfab_telemetry_samples_total",
                                     {"device": "leaf1"}) is None


def test_serve_binds_the_address_given_and_stop_closes_it() -> None:
    metrics = TelemetryMetrics()
    metrics.observe(_one_of_each())
    server = metrics.serve()  # the default: 127.0.0.1, a free port
    assert server.address == "127.0.0.1" and server.port > 0
    assert server.url == f"http://127.0.0.1:{server.port}/metrics"
    assert "flatfab_port_oper_up" in _scrape_text(server.url)
    server.stop()
    server.stop()  # twice is harmless
    with pytest.raises(urllib.error.URLError):
        _scrape_text(server.url)


def test_a_port_in_use_is_one_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(FlatfabError, match=rf"cannot serve metrics on 127\.0\.0\.1:{port}"):
            TelemetryMetrics().serve("127.0.0.1", port)


def test_scrapes_while_samples_and_findings_arrive_stay_consistent(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    done = threading.Event()

    def feed() -> None:  # the subscriber thread's side
        n = 0
        while not done.is_set():
            n += 1
            metrics.observe(_one_of_each(f"leaf{n % 5}", value=n, time=T0 + n))
            metrics.set_findings([_finding("telemetry.watchdog", f"leaf{n % 5}", "swp1")]
                                 if n % 2 else [])

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        for _ in range(20):
            scrape = _scrape(server)  # parses, no duplicate series, whatever the timing
            assert len(_named(scrape, "flatfab_telemetry_finding")) <= 1
    finally:
        done.set()
        feeder.join()


def test_the_pre_fec_ber_is_a_gauge_of_the_latest_reading_beside_its_bound_by_the_plan(
        served: tuple[TelemetryMetrics, MetricsServer]) -> None:
    metrics, server = served
    metrics.observe([Sample("leaf1", "swp1", Metric.PRE_FEC_BER, None, 2.5e-9, T0),
                     Sample("leaf1", "swp1", Metric.PRE_FEC_BER, None, 3.1e-7, T0 + 10),
                     Sample("leaf1", "swp1", Metric.FEC_UNCORRECTABLE, None, 2**60 + 1, T0)])
    values, types = _parse(_scrape_text(server.url))
    assert types["flatfab_port_pre_fec_ber_ratio"] == "gauge"
    assert values[("flatfab_port_pre_fec_ber_ratio", _l(device="leaf1", port="swp1"))] == 3.1e-7
    assert values[("flatfab_port_fec_uncorrectable_codewords_total",
                   _l(device="leaf1", port="swp1"))] == float(2**60 + 1)
    # without the plan no bound is claimed; with it, the lab's 100G links run RS(528,514):
    # 5e-5 over the default margin 10
    assert not any(name == "flatfab_port_pre_fec_ber_bound_ratio" for name, _ in values)
    planned = TelemetryMetrics(plan=lab_plan())
    planned.observe([Sample("leaf1", "swp1", Metric.PRE_FEC_BER, None, 1e-9, T0),
                     Sample("leaf1", "lo", Metric.PRE_FEC_BER, None, 1e-9, T0)])
    scraped, _ = _parse(planned.exposition().decode())
    assert _named(scraped, "flatfab_port_pre_fec_ber_bound_ratio") == {
        _l(device="leaf1", port="swp1", fec="rs528"): 5e-6}  # a port off the plan: none
