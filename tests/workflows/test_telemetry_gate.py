"""The rollout's telemetry gate against real gNMI targets on 127.0.0.1 (TLS + password)
standing in for the switches, and fake config drivers standing in for their commits: a quiet
canary is confirmed; a storm or lossless drops that start with the commit halt the run and
revert the canary, named by check, device and port; what was active before the commit is
not new; a switch without counters fails the gate before anything is committed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from nornir.core import Nornir
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.core.task import Task
from nornir.plugins.runners import ThreadedRunner

from flatfab.checks import CATALOG, Finding
from flatfab.model.state import FabricState
from flatfab.runbook.loader import check_against_fabric, load_runbook
from flatfab.telemetry import conditions
from flatfab.telemetry.gnmi_target import Credentials, GnmiTarget
from flatfab.telemetry.samples import Metric
from flatfab.telemetry.targets import TargetSpec
from flatfab.telemetry.thresholds import Thresholds
from flatfab.workflows.commands import rollout as rollout_mod
from flatfab.workflows.commands.rollout import DeviceOutcome, RolloutResult
from flatfab.workflows.commands.telemetry_gate import TelemetrySource, facing_ports
from flatfab.workflows.runs.journal import Journal
from tests.doubles.gnmi import LAB_LOSSLESS_Q as LOSSLESS_Q
from tests.doubles.gnmi import HealthyCounters as Counters
from tests.doubles.gnmi import LabPki
from tests.doubles.rollout import FakeDevice
from tests.support.telemetry_streams import lab_plan

USER_ENV, PASS_ENV = "TEST_GATE_USER", "TEST_GATE_PASS"
PRIORITY = LOSSLESS_Q  # the lab maps RoCE's priority to its queue one to one
PORTS = {"leaf1": ("swp1", "swp51"), "spine1": ("swp1", "swp2")}
LIMITS = Thresholds(interval_s=0.2, storm_pps=50, storm_for_s=0.4)

RUNBOOK = """\
name: gated
revert_in: 60
phases:
  - name: canary
    select: {names: [leaf1]}
    gate:
      checks: []
      telemetry: {quiet_s: 1.5}
  - name: rest
    select: {names: [leaf2]}
    gate: {checks: []}
failure: {rollback: phase}
"""


@dataclass
class Lab:
    pki: LabPki
    tmp: Path
    plan: FabricState = field(default_factory=lab_plan)
    counters: dict[str, Counters] = field(default_factory=dict)
    targets: dict[str, GnmiTarget] = field(default_factory=dict)
    devices: dict[str, FakeDevice] = field(default_factory=dict)
    on_commit: dict[str, Callable[[], None]] = field(default_factory=dict)

    def serve(self, device: str) -> None:
        self.counters[device] = Counters(PORTS[device])
        target = GnmiTarget("127.0.0.1", 0, self.counters[device],
                            Credentials("flatfab", "s3cret"), self.pki.cert, self.pki.key,
                            name=device, poll_s=0.05)
        target.start()
        self.targets[device] = target

    def source(self, devices: list[str] | None = None) -> TelemetrySource:
        specs = {d: TargetSpec(d, "127.0.0.1", t.port, self.pki.ca_file,
                               username_env=USER_ENV, password_env=PASS_ENV)
                 for d, t in self.targets.items() if devices is None or d in devices}
        return TelemetrySource(LIMITS, specs, backoff_s=(0.05, 0.2), connect_s=1.0)

    def configs(self) -> dict[str, str]:
        configs = rollout_mod.render_all(self.plan)
        for name, text in configs.items():  # leaf1 and leaf2 differ from their intent
            running = "old\n" if name in ("leaf1", "leaf2") else text
            self.devices[name] = FakeDevice(running, lambda n=name: self.on_commit.get(
                n, lambda: None)())
        return configs

    def rollout(self, source: TelemetrySource | None, runbook: str = RUNBOOK,
                ) -> tuple[RolloutResult, list[dict[str, Any]]]:
        file = self.tmp / "gated.yaml"
        file.write_text(runbook, encoding="utf-8")
        plan_doc, doc = load_runbook(file)
        found = check_against_fabric(plan_doc, doc, str(file), self.plan, {}, CATALOG)
        journal = Journal.start(self.tmp / "state", "rollout", self.plan.fabric)
        result = rollout_mod.rollout(_nornir(self.plan), self.plan, plan_doc, found, journal,
                                     telemetry=source)
        events = [json.loads(line) for line in
                  (journal.directory / "events.jsonl").read_text().splitlines()]
        return result, events


def _nornir(plan: FabricState) -> Nornir:
    hosts = Hosts({name: Host(name=name, hostname="127.0.0.1", platform=d.platform)
                   for name, d in plan.devices.items()})
    return Nornir(inventory=Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()),
                  runner=ThreadedRunner(num_workers=8))


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> LabPki:
    return LabPki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def lab(pki: LabPki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    monkeypatch.setenv(USER_ENV, "flatfab")
    monkeypatch.setenv(PASS_ENV, "s3cret")
    fab = Lab(pki, tmp_path)
    for device in PORTS:
        fab.serve(device)
    configs = fab.configs()
    assert configs

    def fake_driver(task: Task, *, read_only: bool) -> FakeDevice:
        return fab.devices[task.host.name]

    def fake_diff(task: Task, configs: dict[str, str], read_only: bool) -> Any:
        device = fab.devices[task.host.name]
        device.load_replace_candidate(configs[task.host.name])
        diff = device.compare_config()
        device.discard_config()
        return rollout_mod.Result(host=task.host, result=DeviceOutcome(diff=diff))

    # the config path is the doubles'; the gate's own checks pass (what they test is not
    # this): what is left is the telemetry gate, against real gNMI targets
    monkeypatch.setattr(rollout_mod, "driver", fake_driver)
    monkeypatch.setattr(rollout_mod, "_diff", fake_diff)
    monkeypatch.setattr(rollout_mod, "run_gate", lambda *_a, **_k: [])
    yield fab
    for target in fab.targets.values():
        target.stop()


def _gate(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "telemetry-gate"]


def _where(findings: list[Finding]) -> list[tuple[str, str | None, str | None]]:
    return [(f.check, f.device, f.port) for f in findings]


def test_a_quiet_canary_passes_the_telemetry_gate_and_is_confirmed(lab: Lab) -> None:
    result, events = lab.rollout(lab.source())
    assert result.ok, (result.reason, [f.message for f in result.gate_findings])
    assert result.confirmed == ["leaf1", "leaf2"]
    assert lab.devices["leaf1"].history == ["commit", "confirm"]
    gate = _gate(events)
    assert len(gate) == 1 and gate[0]["passed"] and gate[0]["quiet_s"] == 1.5
    # the watch started before the commit: the baseline is journaled first
    order = [e["event"] for e in events]
    assert order.index("telemetry-baseline") < order.index("commit")


@pytest.mark.parametrize(("metric", "port", "key", "growth", "check"), [
    (Metric.PFC_RX, "swp1", PRIORITY, 100, conditions.PAUSE_STORM),  # 500 pps > 50
    (Metric.QUEUE_DROPS, "swp51", LOSSLESS_Q, 7, conditions.LOSSLESS_DROPS),
])
def test_a_canary_that_starts_a_storm_or_drops_halts_and_is_rolled_back(
        lab: Lab, metric: Metric, port: str, key: int, growth: int, check: str) -> None:
    lab.on_commit["leaf1"] = lambda: lab.counters["leaf1"].grow(metric, port, key, growth)
    result, events = lab.rollout(lab.source())
    assert result.status == "halted" and not result.ok
    assert (check, "leaf1", port) in _where(result.gate_findings)
    assert "telemetry gate" in result.reason and "phase canary" in result.reason
    assert result.rolled_back == ["leaf1"] and result.confirmed == []
    assert lab.devices["leaf1"].history == ["commit", "revert"]
    assert lab.devices["leaf2"].history == []  # the rest phase never ran
    gate = _gate(events)
    assert len(gate) == 1 and not gate[0]["passed"]
    assert (check, "leaf1", port) in {(f["check"], f["device"], f["port"])
                                      for f in gate[0]["findings"]}


def test_a_storm_on_a_peer_port_facing_the_canary_fails_the_gate(lab: Lab) -> None:
    assert "swp1" in facing_ports(lab.plan, ["leaf1"])["spine1"]  # spine1 swp1 -- leaf1
    lab.on_commit["leaf1"] = lambda: lab.counters["spine1"].grow(
        Metric.PFC_TX, "swp1", PRIORITY, 100)
    result, _ = lab.rollout(lab.source())
    assert (conditions.PAUSE_STORM, "spine1", "swp1") in _where(result.gate_findings)
    assert result.rolled_back == ["leaf1"]


def test_a_peer_port_facing_another_device_does_not_count(lab: Lab) -> None:
    lab.on_commit["leaf1"] = lambda: lab.counters["spine1"].grow(
        Metric.PFC_TX, "swp2", PRIORITY, 100)  # spine1 swp2 faces leaf2, not the canary
    result, _ = lab.rollout(lab.source())
    assert result.ok, [f.message for f in result.gate_findings]


def test_drops_already_active_before_the_commit_are_not_new(lab: Lab) -> None:
    lab.counters["leaf1"].grow(Metric.QUEUE_DROPS, "swp1", LOSSLESS_Q, 7)  # before, and on
    result, events = lab.rollout(lab.source())
    assert result.ok, [f.message for f in result.gate_findings]
    baseline = next(e for e in events if e["event"] == "telemetry-baseline")
    assert [conditions.LOSSLESS_DROPS, "leaf1", "swp1"] in [a[:3] for a in baseline["active"]]


def test_a_switch_without_counters_fails_the_gate_before_its_commit(lab: Lab) -> None:
    result, _ = lab.rollout(lab.source(devices=["spine1"]))  # leaf1 has no target now
    assert result.status == "halted"
    assert _where(result.gate_findings) == [(conditions.SILENT, "leaf1", None)]
    assert "no gNMI target" in result.gate_findings[0].message
    assert lab.devices["leaf1"].history == []  # nothing was committed


def test_a_target_that_never_answers_fails_the_gate(lab: Lab) -> None:
    lab.targets["leaf1"].stop()
    result, _ = lab.rollout(lab.source())
    assert _where(result.gate_findings) == [(conditions.SILENT, "leaf1", None)]
    assert "no counters in the gate's window" in result.gate_findings[0].message
    assert result.rolled_back == ["leaf1"]


def test_without_a_counter_source_a_telemetry_gate_fails(lab: Lab) -> None:
    result, _ = lab.rollout(None)
    assert result.status == "halted" and "no counter source" in result.reason
    assert lab.devices["leaf1"].history == []


def test_hosts_without_counters_ride_along_with_a_watched_leaf(lab: Lab) -> None:
    for host in ("leaf1-h1", "leaf1-h2"):  # the hosts differ too: they are in the batch
        lab.devices[host].running = "old\n"
    runbook = RUNBOOK.replace("select: {names: [leaf1]}",
                              "select: {names: [leaf1], attached_hosts: true}")
    result, events = lab.rollout(lab.source(), runbook)
    assert result.ok, (result.reason, [f.message for f in result.gate_findings])
    assert result.confirmed == ["leaf1", "leaf1-h1", "leaf1-h2", "leaf2"]
    baseline = next(e for e in events if e["event"] == "telemetry-baseline")
    assert baseline["unwatched"] == ["leaf1-h1", "leaf1-h2"]


PHYSICAL_RUNBOOK = RUNBOOK.replace(
    "telemetry: {quiet_s: 1.5}",
    "telemetry: {quiet_s: 1.5, checks: [telemetry.fec_uncorrectable, telemetry.pre_fec_ber, "
    "telemetry.link_flaps]}")


@pytest.mark.parametrize(("change", "check"), [
    (lambda c: c.grow(Metric.FEC_UNCORRECTABLE, "swp51", 0, 3), conditions.FEC_UNCORRECTABLE),
    (lambda c: c.grow(Metric.CARRIER_TRANSITIONS, "swp51", 0, 2), conditions.LINK_FLAPS),
    (lambda c: c.level("swp51", 1e-6), conditions.PRE_FEC_BER),  # a decade below the bound
], ids=["uncorrectable", "flaps", "ber"])
def test_a_canary_whose_link_degrades_with_the_commit_halts_on_its_physical_checks(
        lab: Lab, change: Callable[[Counters], None], check: str) -> None:
    for counters in lab.counters.values():
        counters.add_physical()
    assert PHYSICAL_RUNBOOK != RUNBOOK
    lab.on_commit["leaf1"] = lambda: change(lab.counters["leaf1"])
    result, _ = lab.rollout(lab.source(), PHYSICAL_RUNBOOK)
    assert result.status == "halted", result.reason
    assert (check, "leaf1", "swp51") in _where(result.gate_findings)
    assert "spine1:swp1" in next(f.message for f in result.gate_findings if f.check == check)
    assert result.rolled_back == ["leaf1"]


def test_a_quiet_physical_layer_passes_its_gate(lab: Lab) -> None:
    for counters in lab.counters.values():
        counters.add_physical()
    result, _ = lab.rollout(lab.source(), PHYSICAL_RUNBOOK)
    assert result.ok, [f.message for f in result.gate_findings]
