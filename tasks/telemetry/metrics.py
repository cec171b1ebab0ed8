"""Prometheus metrics for `flatfab watch`: the telemetry stream and the health engine's active
findings, served over HTTP for Prometheus to scrape and Grafana to draw.

    metrics = TelemetryMetrics(targets=["leaf1", "spine1"], plan=plan)
    server = metrics.serve("127.0.0.1", 9464)      # port 0: any free port (server.port)
    ...                                             # per batch of samples, per tick:
    metrics.observe(samples)
    metrics.set_findings(engine.active())
    ...
    server.stop()

Everything lives in the instance's own `CollectorRegistry` (never prometheus_client's global
one), so two instances (or tests) never share series. `observe` and `set_findings` may be
called from the subscriber thread while the HTTP thread scrapes: one lock guards the state
and a scrape reads a consistent copy.

Counters are exposed as Prometheus counters holding the device's own cumulative value, not a
running sum kept here: a device counter can reset (reboot, `clear counters`) and Prometheus'
rate()/increase() already treat any decrease as a reset, so mirroring is both exact and
simpler than re-basing. (Hence a custom collector: prometheus_client's Counter can only inc.)

Label cardinality is bounded by the fabric: labels are inventory names (device, port),
small integers (priority, queue), catalog ids (check) and severities. A finding's message,
expected and actual values are never labels.

With the plan given, `flatfab_queue_lossless{device, port, queue} 1` marks each observed
queue the plan makes lossless, so a panel can keep the lossless queues' drops alone
(`... * on (device, port, queue) flatfab_queue_lossless`) without knowing the QoS maps; and
`flatfab_port_pre_fec_ber_bound_ratio{device, port, fec}` gives each observed port's BER
bound (its link class's FEC limit over `physical.ber_margin`: where `phy.ber` fails), so a
panel shows a port's pre-FEC BER as a share of it.

Gauges (the pre-FEC BER, each transceiver lane's receive power with its `lane` as the device
numbers it) are exported as gauges holding the device's latest reading.

While a target is silent (the engine's `telemetry.silent` finding is active), its counter
and state series are withheld: a frozen counter would read as a healthy zero rate, a gap reads
as what it is, blind. `flatfab_telemetry_target_up{device} 0` says why.

A metric no device serves (pauses sent by the lab's switches, a veth NIC's out-of-buffer
drops) is absent from a scrape, family and all: never a zero, which would claim a reading.
The dashboard (dashboards/flatfab-lossless.json) is written to show what exists: no query
adds one metric to another, which would be empty wherever one of them is absent.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest, start_http_server
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric as Family
from prometheus_client.registry import Collector

from flatfab.checks.base import Finding
from flatfab.errors import FlatfabError
from flatfab.model.state import FabricState
from flatfab.telemetry import conditions
from flatfab.telemetry.lossless_map import LosslessMap
from flatfab.telemetry.physical_map import PhysicalMap
from flatfab.telemetry.samples import Gone, Metric, Number, Sample

DEFAULT_ADDRESS: Final = "127.0.0.1"  # local only unless asked: the counters describe the fabric


@dataclass(frozen=True)
class _Spec:
    name: str  # without `_total`: prometheus_client appends it to counter samples
    help: str
    key_label: str | None  # "priority" or "queue" where the sample's key means one


_COUNTERS: Final[dict[Metric, _Spec]] = {
    Metric.PFC_RX: _Spec("flatfab_pfc_pause_frames_received",
                         "PFC pause frames received, per priority (device counter)", "priority"),
    Metric.PFC_TX: _Spec("flatfab_pfc_pause_frames_sent",
                         "PFC pause frames sent, per priority (device counter)", "priority"),
    Metric.WATCHDOG: _Spec("flatfab_pfc_watchdog_storms",
                           "Times the PFC watchdog fired, per priority (device counter)",
                           "priority"),
    Metric.QUEUE_TX: _Spec("flatfab_queue_transmitted_packets",
                           "Packets transmitted by an egress queue (device counter)", "queue"),
    Metric.QUEUE_DROPS: _Spec("flatfab_queue_dropped_packets",
                              "Packets dropped by an egress queue (device counter)", "queue"),
    Metric.QUEUE_ECN: _Spec("flatfab_queue_ecn_marked_packets",
                            "Packets an egress queue marked ECN-CE (device counter)", "queue"),
    Metric.NIC_CNP_SENT: _Spec("flatfab_nic_cnp_sent_packets",
                               "CNPs the NIC sent as notification point (NIC counter)", None),
    Metric.NIC_CNP_HANDLED: _Spec("flatfab_nic_cnp_handled_packets",
                                  "CNPs the NIC reacted to as reaction point (NIC counter)",
                                  None),
    Metric.NIC_ECN_MARKED_RX: _Spec("flatfab_nic_ecn_marked_received_packets",
                                    "ECN-CE marked packets the NIC received (NIC counter)", None),
    Metric.NIC_OUT_OF_BUFFER: _Spec("flatfab_nic_out_of_buffer_dropped_packets",
                                    "Packets the NIC dropped for lack of receive buffer "
                                    "(NIC counter)", None),
    Metric.FEC_CORRECTED: _Spec("flatfab_port_fec_corrected_codewords",
                                "FEC codewords a port corrected (device counter)", None),
    Metric.FEC_UNCORRECTABLE: _Spec("flatfab_port_fec_uncorrectable_codewords",
                                    "FEC codewords a port could not correct: frames lost on "
                                    "the wire (device counter)", None),
    Metric.CARRIER_TRANSITIONS: _Spec("flatfab_port_carrier_transitions",
                                      "Link state changes of a port, a flap counting two on "
                                      "most OSes (device counter)", None),
}
# gauges: the device's latest reading
_GAUGES: Final[dict[Metric, _Spec]] = {
    Metric.PRE_FEC_BER: _Spec("flatfab_port_pre_fec_ber_ratio",
                              "Pre-FEC bit error ratio of a port (device gauge)", None),
    Metric.RX_POWER: _Spec("flatfab_port_rx_power_dbm",
                           "Optical power a transceiver lane receives, in dBm, the lane as "
                           "the device numbers it (device gauge)", "lane"),
}
_KEYED: Final = frozenset(m for m, spec in (*_COUNTERS.items(), *_GAUGES.items())
                          if spec.key_label)
_QUEUE: Final = frozenset(m for m, spec in _COUNTERS.items() if spec.key_label == "queue")
OPER_UP: Final = "flatfab_port_oper_up"
QUEUE_LOSSLESS: Final = "flatfab_queue_lossless"
BER_BOUND: Final = "flatfab_port_pre_fec_ber_bound_ratio"
FINDING: Final = "flatfab_telemetry_finding"
ACTIVE_FINDINGS: Final = "flatfab_telemetry_active_findings"
TARGET_UP: Final = "flatfab_telemetry_target_up"
LAST_SAMPLE: Final = "flatfab_telemetry_last_sample_timestamp_seconds"
SAMPLES: Final = "flatfab_telemetry_samples"  # counter: exposed as ..._samples_total

# the engine's checks: always exported in the per-check count (0 included), so a panel shows
# a flat zero instead of "no data" while all is well
_KNOWN_CHECKS: Final = tuple(sorted({*conditions.SEVERITY, conditions.SILENT}))

# (device, port or "", metric, key or -1): one series
_Series = tuple[str, str, Metric, int]
# (check, device, port, severity): one finding series
_FindingLabels = tuple[str, str, str, str]


@dataclass(frozen=True)
class _Snapshot:
    values: dict[_Series, Number]
    findings: dict[_FindingLabels, int]
    targets: dict[str, bool]  # device -> up
    silent: frozenset[str]
    last_time: dict[str, float]
    samples: dict[str, int]
    lossless: frozenset[tuple[str, str, int]]  # observed (device, port, queue) planned lossless
    bounds: dict[tuple[str, str], tuple[str, float]]  # (device, port) with a BER -> fec, bound


_EMPTY: Final = _Snapshot({}, {}, {}, frozenset(), {}, {}, frozenset(), {})


class TelemetryMetrics:
    """The exported state. `observe` samples, `set_findings` the engine's active findings,
    `serve` it; `exposition()` is the same text a scrape returns."""

    def __init__(self, targets: Iterable[str] = (), plan: FabricState | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self._lock = threading.Lock()
        self._values: dict[_Series, Number] = {}
        self._findings: dict[_FindingLabels, int] = {}
        # declared targets show as down until their first sample: configured but never heard
        self._targets: dict[str, None] = dict.fromkeys(targets)
        self._heard: set[str] = set()
        self._silent: frozenset[str] = frozenset()
        self._last_time: dict[str, float] = {}
        self._samples: dict[str, int] = {}
        self._map = LosslessMap(plan) if plan is not None else None
        self._lossless: set[tuple[str, str, int]] = set()
        self._physical = PhysicalMap(plan) if plan is not None else None
        self._bounds: dict[tuple[str, str], tuple[str, float]] = {}
        self._collector = _Collector(self)
        self.registry.register(self._collector)

    def families(self) -> list[str]:
        """Every family this exporter can show; a scrape shows those with a series."""
        return [family.name for family in self._collector.describe()]

    def add_target(self, device: str) -> None:
        """Declare a target (reported down until it sends its first sample)."""
        with self._lock:
            self._targets.setdefault(device, None)

    def forget(self, gone: Iterable[Gone]) -> None:
        """Stop exposing the series a target deleted: Prometheus then marks them stale
        rather than scraping a last value for ever."""
        ended = list(gone)
        with self._lock:
            for g in ended:
                for series in [k for k in self._values if k[0] == g.device and k[2] is g.metric
                               and (g.port is None or k[1] == g.port)
                               and (g.key is None or k[3] in (g.key, -1))]:
                    del self._values[series]

    def observe(self, samples: Iterable[Sample]) -> None:
        """Take samples as they arrive: the newest value of each series wins."""
        batch = list(samples)  # outside the lock: `samples` may be a slow generator
        with self._lock:
            for s in batch:
                # a key only where the metric has one, so stray keys cannot split a series
                key = -1 if s.key is None or s.metric not in _KEYED else s.key
                series = (s.device, s.port or "", s.metric, key)
                if series not in self._values:
                    if key >= 0 and s.metric in _QUEUE:
                        self._classify(s.device, s.port, key)
                    elif s.metric is Metric.PRE_FEC_BER:
                        self._bound(s.device, s.port)
                self._values[series] = s.value
                self._targets.setdefault(s.device, None)
                self._heard.add(s.device)
                self._samples[s.device] = self._samples.get(s.device, 0) + 1
                if s.time > self._last_time.get(s.device, float("-inf")):
                    self._last_time[s.device] = s.time

    def set_findings(self, findings: Iterable[Finding]) -> None:
        """Replace the exported findings with `findings` (the engine's `active()`): what is
        not in the list any more disappears from the next scrape."""
        counted: dict[_FindingLabels, int] = {}
        silent: set[str] = set()
        for f in findings:
            labels = (f.check, f.device or "", f.port or "", f.severity.value)
            # two findings of one check on one port (pauses received and sent) share their
            # labels: the series counts them rather than emitting a duplicate
            counted[labels] = counted.get(labels, 0) + 1
            if f.check == conditions.SILENT and f.device:
                silent.add(f.device)
        with self._lock:
            self._findings = counted
            self._silent = frozenset(silent)
            for device in silent:
                self._targets.setdefault(device, None)

    def _classify(self, device: str, port: str | None, queue: int) -> None:
        """Once per new queue series: is it lossless by the plan (unknown: not marked)."""
        classes = self._map.classes(device, port) if self._map is not None else None
        if classes is not None and queue in classes.lossless_queues:
            self._lossless.add((device, port or "", queue))

    def _bound(self, device: str, port: str | None) -> None:
        """Once per new BER series: its port's bound by the plan (unknown: none exported)."""
        end = self._physical.port(device, port) if self._physical is not None else None
        if end is not None and end.fec is not None and end.bound is not None:
            self._bounds[(device, port or "")] = (end.fec.value, end.bound)

    def exposition(self) -> bytes:
        """The text format a scrape returns."""
        return generate_latest(self.registry)

    def serve(self, address: str = DEFAULT_ADDRESS, port: int = 0) -> MetricsServer:
        """Serve `/metrics` (any path, in fact) on `address:port` from a daemon thread; port 0
        takes a free port. Returns the handle to stop it."""
        try:
            httpd, thread = start_http_server(port, addr=address, registry=self.registry)
        except OSError as exc:
            raise FlatfabError(f"cannot serve metrics on {address}:{port}: "
                               f"{exc.strerror or exc}") from None
        return MetricsServer(httpd, thread)

    def _snapshot(self) -> _Snapshot:
        with self._lock:
            targets = {d: d in self._heard and d not in self._silent for d in self._targets}
            return _Snapshot(dict(self._values), dict(self._findings), targets, self._silent,
                             dict(self._last_time), dict(self._samples),
                             frozenset(self._lossless), dict(self._bounds))


class MetricsServer:
    """A running metrics endpoint. `stop()` (or leaving a `with` block) shuts it down."""

    def __init__(self, httpd: WSGIServer, thread: threading.Thread) -> None:
        self._httpd = httpd
        self._thread = thread
        self.address: str = str(httpd.server_address[0])
        self.port: int = int(httpd.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"http://{host}:{self.port}/metrics"

    def stop(self) -> None:
        if not self._thread.is_alive():
            return  # stopped already
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5.0)

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


class _Collector(Collector):
    """Builds the families from a snapshot at each scrape (series sorted: stable output)."""

    def __init__(self, owner: TelemetryMetrics) -> None:
        self._owner = owner

    def collect(self) -> Iterator[Family]:
        snap = self._owner._snapshot()
        # a family without a series is left out: what no device serves is not in the scrape
        for family in (*self._counters(snap), *self._health(snap)):
            if family.samples:
                yield family

    def describe(self) -> Iterator[Family]:
        """Every family with no samples: the registry learns the names without a scrape."""
        yield from self._counters(_EMPTY)
        yield from self._health(_EMPTY)

    @staticmethod
    def _counters(snap: _Snapshot) -> Iterator[Family]:
        families: dict[Metric, CounterMetricFamily | GaugeMetricFamily] = {}
        for metric, spec in _COUNTERS.items():
            labels = ["device", "port"] + ([spec.key_label] if spec.key_label else [])
            families[metric] = CounterMetricFamily(spec.name, spec.help, labels=labels)
        for metric, spec in _GAUGES.items():
            labels = ["device", "port"] + ([spec.key_label] if spec.key_label else [])
            families[metric] = GaugeMetricFamily(spec.name, spec.help, labels=labels)
        oper = GaugeMetricFamily(OPER_UP, "Port operational state: 1 up, 0 down",
                                 labels=["device", "port"])
        for (device, port, metric, key), value in sorted(snap.values.items()):
            if device in snap.silent:
                continue
            if metric is Metric.OPER_UP:
                oper.add_metric([device, port], 1.0 if value else 0.0)
                continue
            spec = _COUNTERS.get(metric) or _GAUGES[metric]
            values = [device, port] + ([str(key) if key >= 0 else ""] if spec.key_label else [])
            families[metric].add_metric(values, float(value))
        lossless = GaugeMetricFamily(QUEUE_LOSSLESS, "1 for each queue the plan makes lossless "
                                     "(PFC); absent for the others", labels=["device", "port",
                                                                             "queue"])
        for device, port, queue in sorted(snap.lossless):
            if device not in snap.silent:
                lossless.add_metric([device, port, str(queue)], 1.0)
        bound = GaugeMetricFamily(BER_BOUND, "The pre-FEC BER a port's link may reach before "
                                  "phy.ber fails: its FEC's correction limit over the plan's "
                                  "physical.ber_margin; absent where the plan does not say",
                                  labels=["device", "port", "fec"])
        for (device, port), (fec, value) in sorted(snap.bounds.items()):
            if device not in snap.silent:
                bound.add_metric([device, port, fec], value)
        yield from families.values()
        yield oper
        yield lossless
        yield bound

    @staticmethod
    def _health(snap: _Snapshot) -> Iterator[Family]:
        finding = GaugeMetricFamily(
            FINDING, "An active health finding: 1 per finding (findings of one check on one "
            "port count together)", labels=["check", "device", "port", "severity"])
        per_check: dict[str, int] = dict.fromkeys(_KNOWN_CHECKS, 0)
        for labels, count in sorted(snap.findings.items()):
            finding.add_metric(list(labels), float(count))
            per_check[labels[0]] = per_check.get(labels[0], 0) + count
        active = GaugeMetricFamily(ACTIVE_FINDINGS, "Active health findings per check",
                                   labels=["check"])
        if snap.targets or snap.findings:  # nothing watched yet: no zeros to claim
            for check, count in sorted(per_check.items()):
                active.add_metric([check], float(count))
        up = GaugeMetricFamily(TARGET_UP, "Telemetry target: 1 sending, 0 silent or never "
                               "heard", labels=["device"])
        for device, is_up in sorted(snap.targets.items()):
            up.add_metric([device], 1.0 if is_up else 0.0)
        last = GaugeMetricFamily(LAST_SAMPLE, "Time stamp of the newest sample from a target, "
                                 "as the target stamped it", labels=["device"])
        for device, when in sorted(snap.last_time.items()):
            last.add_metric([device], when)
        samples = CounterMetricFamily(SAMPLES, "Samples received from a target",
                                      labels=["device"])
        for device, count in sorted(snap.samples.items()):
            samples.add_metric([device], float(count))
        yield from (finding, active, up, last, samples)
