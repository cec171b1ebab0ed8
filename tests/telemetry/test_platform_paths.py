"""Each switch platform's telemetry.yaml: every metric a leaf or a reason, every leaf parsed,
round-tripped and sourced, a bad file one line per problem, and a real gNMI target serving a
platform's own paths decoded into samples by a subscriber holding that platform's table."""

from __future__ import annotations

import textwrap
import threading
import time
from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.platforms.base import Platform
from flatfab.platforms.registry import PLATFORMS
from flatfab.telemetry import paths, platform_paths
from flatfab.telemetry.gnmi_client import GnmiSubscriber, SubscriberPool
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from flatfab.telemetry.platform_paths import KEYED, PlatformPaths, Values
from flatfab.telemetry.samples import Metric, Sample
from tests.doubles.gnmi import LabPki

REPO = Path(__file__).resolve().parents[2]
SWITCHES = sorted(n for n, p in PLATFORMS.items() if p.facts.role == "switch")
USER_ENV, PASS_ENV = "TEST_GNMI_USER", "TEST_GNMI_PASS"


def _paths(name: str) -> PlatformPaths:
    found = PLATFORMS[name].telemetry
    assert found is not None, f"tasks/platforms/{name}/ has no telemetry.yaml"
    return found


def _ports(platform: Platform) -> tuple[str, str]:
    return platform.names.physical(1), platform.names.physical(2)


@pytest.mark.parametrize("name", SWITCHES)
def test_every_switch_platform_has_a_telemetry_file(name: str) -> None:
    assert (REPO / "tasks" / "platforms" / name / platform_paths.FILE_NAME).is_file()
    assert _paths(name).table.name in (name, paths.FLATFAB.name)


def test_a_host_platform_has_no_table() -> None:
    hosts = [p for p in PLATFORMS.values() if p.facts.role == "host"]
    assert hosts and all(p.telemetry_paths() is None for p in hosts)


@pytest.mark.parametrize("name", SWITCHES)
def test_every_metric_is_a_leaf_or_a_reason_and_every_entry_has_a_source(name: str) -> None:
    found = _paths(name)
    assert set(found.metrics) == set(Metric)
    for metric, spec in found.metrics.items():
        assert (spec.path is None) != (spec.none is None), metric
        assert spec.source.strip(), metric
        assert spec.verified or spec.note or spec.none, metric
    in_table = {leaf.metric for leaf in found.table.leaves}
    assert in_table == {m for m, s in found.metrics.items() if s.path is not None}
    assert all(w.source.strip() for w in found.watermarks)


@pytest.mark.parametrize("name", SWITCHES)
def test_every_leaf_parses_and_round_trips(name: str) -> None:
    found, platform = _paths(name), PLATFORMS[name]
    for port in _ports(platform):
        for leaf in found.table.leaves:
            for key in ((0, 3, 7) if leaf.keyed else (None,)):
                path = found.table.leaf_path(leaf.metric, port, key)
                assert paths.render(paths.parse(path)) == path
                assert found.table.metric_of(path) == (leaf.metric, port, key), path
                assert leaf.keyed == (leaf.metric in KEYED)


def test_frr_serves_flatfabs_own_table() -> None:
    assert PLATFORMS["frr"].telemetry_paths() == paths.FLATFAB


def test_globs_in_subscriptions_cover_what_the_target_expands() -> None:
    leaf = paths.parse("/COUNTERS/Ethernet8/SAI_PORT_STAT_PFC_3_RX_PKTS")
    assert platform_paths.covers(paths.parse("/COUNTERS/Ethernet*"), leaf)
    assert not platform_paths.covers(paths.parse("/COUNTERS/Port*"), leaf)
    assert not paths.matches(paths.parse("/COUNTERS/Ethernet*"), leaf)  # why covers() exists


def test_the_docs_table_is_made_from_the_files() -> None:
    """The streaming telemetry page shows the table made from the files at every build."""
    page = (REPO / "docs" / "operations" / "telemetry.md").read_text(encoding="utf-8")
    assert "<!-- flatfab:generate telemetry-paths -->" in page
    made = platform_paths.markdown([p.telemetry for p in PLATFORMS.values() if p.telemetry])
    assert made.count("\n") == len(SWITCHES) + 2  # a header, a rule, a row per switch OS
    assert all(f"| {name} |" in made for name in SWITCHES)


# --- a bad file: one line per problem, naming file, key path and why --------------------------

GOOD = """\
description: test
source: test
subscriptions:
  counters: [/q/interfaces/interface]
  state: [/interfaces/interface/state/oper-status]
metrics:
  oper_up: {path: "/interfaces/interface[name={port}]/state/oper-status", source: s, verified: true}
  pfc_rx_frames: {path: "/q/interfaces/interface[name={port}]/p[id={key}]/rx",
                  source: s, verified: true}
  pfc_tx_frames: {none: no leaf, source: s, verified: true}
  queue_tx_packets: {none: no leaf, source: s, verified: true}
  queue_drops: {none: no leaf, source: s, verified: true}
  queue_ecn_marked: {none: no leaf, source: s, verified: true}
  pfc_watchdog_storms: {none: no leaf, source: s, verified: true}
  nic_cnp_sent: {none: no leaf, source: s, verified: true}
  nic_cnp_handled: {none: no leaf, source: s, verified: true}
  nic_ecn_marked_rx: {none: no leaf, source: s, verified: true}
  nic_out_of_buffer: {none: no leaf, source: s, verified: true}
  fec_corrected_codewords: {none: no leaf, source: s, verified: true}
  fec_uncorrectable_codewords: {none: no leaf, source: s, verified: true}
  carrier_transitions: {none: no leaf, source: s, verified: true}
  pre_fec_ber: {none: no leaf, source: s, verified: true}
  rx_power_dbm: {none: no leaf, source: s, verified: true}
"""
RX = ('pfc_rx_frames: {path: "/q/interfaces/interface[name={port}]/p[id={key}]/rx",\n'
      '                  source: s, verified: true}')


def _write(tmp_path: Path, text: str) -> Path:
    file = tmp_path / platform_paths.FILE_NAME
    file.write_text(textwrap.dedent(text), encoding="utf-8")
    return file


def test_a_good_file_loads(tmp_path: Path) -> None:
    found = platform_paths.load(_write(tmp_path, GOOD), "test")
    assert found.table.name == "test" and found.values is Values.SCALAR
    assert found.table.leaf_path(Metric.PFC_RX, "swp1", 3) == (
        "/q/interfaces/interface[name=swp1]/p[id=3]/rx")


@pytest.mark.parametrize(("change", "where", "why"), [
    ((RX, RX.replace("[id={key}]", "")), "metrics.pfc_rx_frames.path", "names {key} once"),
    ((RX, RX.replace("{port}", "{prt}")), "metrics.pfc_rx_frames.path",
     "unknown placeholder {prt}"),
    ((RX, RX.replace("/rx", "/rx}")), "metrics.pfc_rx_frames.path", "not a template"),
    ((RX, RX.replace("/q/", "/r/")), "metrics.pfc_rx_frames.path", "no `subscriptions.counters`"),
    ((RX, RX.replace("p[id", "p[z=1][id")), "metrics.pfc_rx_frames.path",
     "write it as '/q/interfaces/interface[name={port}]/p[id={key}][z=1]/rx'"),
    ((RX, RX.replace("path:", "none: gone, path:")), "metrics.pfc_rx_frames", "not both"),
    ((RX, RX.replace("source: s, ", "")), "metrics.pfc_rx_frames.source", "required key"),
    ((RX, RX.replace("verified: true", "verified: false")), "metrics.pfc_rx_frames",
     "needs a `note:`"),
    ((RX, RX.replace("pfc_rx_frames", "pfc_rx")), "metrics.pfc_rx", "is not a metric"),
    (("  nic_out_of_buffer: {none: no leaf, source: s, verified: true}\n", ""), "metrics",
     "nic_out_of_buffer is missing"),
    (("description: test\n", "description: test\nflavour: x\n"), "flavour", "unknown key"),
])
def test_a_bad_file_is_one_line_naming_file_key_and_reason(
    tmp_path: Path, change: tuple[str, str], where: str, why: str
) -> None:
    assert change[0] in GOOD
    file = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(InputError) as err:
        platform_paths.load(file, "test")
    message = str(err.value)
    assert "\n" not in message, message
    assert message.startswith(f"{file}:") and f" {where}: " in message and why in message, message


def test_malformed_yaml_is_one_line(tmp_path: Path) -> None:
    file = _write(tmp_path, "metrics: [\n")
    with pytest.raises(InputError) as err:
        platform_paths.load(file, "test")
    assert str(err.value).startswith(str(file)) and "\n" not in str(err.value)


# --- end to end: a gNMI target serving the platform's own paths ------------------------------

class PlatformCounters:
    """Every leaf of one platform's table on two ports, growing each read. Values are what
    the platform sends: decimal strings where its target reads a string database."""

    def __init__(self, found: PlatformPaths, ports: tuple[str, str]) -> None:
        self.table, self.ports = found.table, ports
        self.strings = found.values is Values.JSON
        self.reads = 0
        self._lock = threading.Lock()

    def expected(self) -> set[tuple[str, Metric, int | None]]:
        return {(port, leaf.metric, key) for port in self.ports for leaf in self.table.leaves
                for key in ((3, 4) if leaf.keyed else (None,))}

    def __call__(self) -> list[tuple[str, int | str]]:
        with self._lock:
            self.reads += 1
            out: list[tuple[str, int | str]] = []
            for port, metric, key in sorted(self.expected(), key=str):
                path = self.table.leaf_path(metric, port, key)
                value: int | str = (paths.leaf_value(metric, 1) if metric is Metric.OPER_UP
                                    else 10 * self.reads + (key or 0))
                out.append((path, str(value) if self.strings else value))
            return out


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> LabPki:
    return LabPki(tmp_path_factory.mktemp("pki"))


@pytest.mark.parametrize("name", SWITCHES)
def test_a_target_serving_the_platforms_paths_yields_its_samples(
    name: str, pki: LabPki, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(USER_ENV, "flatfab")
    monkeypatch.setenv(PASS_ENV, "s3cret")
    found, platform = _paths(name), PLATFORMS[name]
    counters = PlatformCounters(found, _ports(platform))
    samples: list[Sample] = []
    lock = threading.Lock()

    def seen() -> set[tuple[str, Metric, int | None]]:
        with lock:
            return {(s.port or "", s.metric, s.key) for s in samples}

    def on_sample(s: Sample) -> None:
        with lock:
            samples.append(s)

    target = GnmiTarget("127.0.0.1", 0, counters, Credentials("flatfab", "s3cret"),
                        pki.cert, pki.key, name=name, poll_s=0.02)
    target.start()
    sub = GnmiSubscriber(f"{name}-1", "127.0.0.1", target.port, ca_file=pki.ca_file,
                         on_sample=on_sample, on_state=lambda *_: None, interval_s=0.1,
                         username_env=USER_ENV, password_env=PASS_ENV, backoff_s=(0.05, 0.2),
                         table=found.table)
    pool = SubscriberPool([sub])
    pool.start()
    try:
        end = time.monotonic() + 5.0
        while time.monotonic() < end and seen() != counters.expected():
            time.sleep(0.02)
    finally:
        pool.stop()
        target.stop()
    assert seen() == counters.expected()
    assert sub.unknown_paths == 0
    with lock:
        got = list(samples)
    assert {s.device for s in got} == {f"{name}-1"}
    for s in got:
        if s.metric is Metric.OPER_UP:
            assert s.value == 1
        else:
            assert s.value % 10 == (s.key or 0) and s.value >= 10, s
