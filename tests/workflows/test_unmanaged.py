"""Unmanaged hosts (hosts.yaml `managed: false`), without a lab.

An unmanaged host is planned, rendered and checked statically like any other; it need not be
in the inventory (an entry for one is ignored), no rollout, collect, traffic run or watch ever
connects to it, and every host-side check reports it not judged, naming why. What the
switches show of it (the leaf port facing it, probes towards it from managed hosts) stays
judged. The live proof is tests/live/test_unmanaged.py; the simulated fleet's, counting
logins, tests/fleet/test_unmanaged_fleet.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from nornir.core import Nornir
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.core.task import Result, Task
from nornir.plugins.runners import ThreadedRunner

from flatfab.checks import CATALOG, CheckContext, Finding, Severity, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.intent.thresholds import thresholds_of
from flatfab.model.state import UNMANAGED, DeviceState, FabricState, IfKind, Role
from flatfab.plan.planner import plan
from flatfab.runbook.loader import check_against_fabric, load_runbook
from flatfab.runbook.model import Gate, whole_fabric
from flatfab.runbook.schedule import schedule
from flatfab.telemetry import conditions
from flatfab.workflows.commands import rollout as rollout_mod
from flatfab.workflows.commands import traffic as traffic_mod
from flatfab.workflows.commands.rollout import DeviceOutcome
from flatfab.workflows.commands.verify import judge, verify_probes
from flatfab.workflows.commands.watch import Watch, pollable
from flatfab.workflows.devices import collect as collect_mod
from flatfab.workflows.devices import inventory
from flatfab.workflows.devices.credentials import Credentials
from flatfab.workflows.runs.journal import Journal
from tests.doubles.rollout import FakeDevice
from tests.support.checks import healthy
from tests.support.inventory import login_defaults
from tests.support.paths import ROOT

LAB = ROOT / "intents" / "lab"
RAIL = ROOT / "intents" / "rail"
# leaf1: its first host unmanaged, its second managed by its own key; leaf2: both unmanaged
MIXED_HOSTS = """defaults:
  count: 2
leaves:
  leaf1:
    managed: false
    hosts:
      - {}
      - {managed: true}
  leaf2: {managed: false, count: 2}
"""
UNMANAGED_HOSTS = ["leaf1-h1", "leaf2-h1", "leaf2-h2"]


def _intent(tmp_path: Path, source: Path, **files: str) -> Path:
    """`source` copied, with whole files replaced (`hosts="..."`)."""
    target = tmp_path / source.name
    shutil.copytree(source, target)
    for stem, text in files.items():
        (target / f"{stem}.yaml").write_text(text, encoding="utf-8")
    return target


def _edited(tmp_path: Path, source: Path, file: str, old: str, new: str) -> Path:
    target = tmp_path / source.name
    shutil.copytree(source, target)
    path = target / file
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {file}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> FabricState:
    """The lab with three of its eight hosts unmanaged."""
    return plan(load_intent(_intent(tmp_path_factory.mktemp("mixed"), LAB,
                                    hosts=MIXED_HOSTS)))


def _observed(planned: FabricState) -> FabricState:
    """What a verify reads of a healthy fabric: every device but the unmanaged hosts."""
    state = healthy(planned)
    for name in planned.unmanaged():
        del state.devices[name]
    return state


def _nornir(planned: FabricState) -> Nornir:
    """Every planned device as an inventory host (unmanaged ones included, as an inventory
    may list them): what flatfab must still never connect to."""
    hosts = Hosts({name: Host(name=name, hostname="127.0.0.1", platform=d.platform)
                   for name, d in planned.devices.items()})
    return Nornir(inventory=Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()),
                  runner=ThreadedRunner(num_workers=4))


# ---------------------------------------------------------------- intent and plan


def test_managed_is_set_by_defaults_leaf_and_host(mixed: FabricState) -> None:
    assert mixed.unmanaged() == UNMANAGED_HOSTS
    assert [d.name for d in mixed.devices.values() if d.role is Role.HOST and d.managed] == [
        "leaf1-h2", "leaf3-h1", "leaf3-h2", "leaf4-h1", "leaf4-h2"]
    assert all(d.managed for d in mixed.devices.values() if d.role is not Role.HOST)
    assert list(mixed.managed()) == [n for n in mixed.devices if n not in UNMANAGED_HOSTS]


def test_every_host_unmanaged_by_the_defaults(tmp_path: Path) -> None:
    state = plan(load_intent(_edited(tmp_path, LAB, "hosts.yaml", "  count: 2\n",
                                     "  count: 2\n  managed: false\n")))
    assert state.unmanaged() == [d.name for d in state.of_role(Role.HOST)]
    assert len(state.unmanaged()) == 8


def test_a_profile_makes_its_servers_unmanaged_and_a_server_its_own(tmp_path: Path) -> None:
    rail = _edited(tmp_path, RAIL, "hosts.yaml",
                   "  gpu: {role: gpu, nics: {count: 4, name: \"eth{n}\"}}",
                   "  gpu: {role: gpu, nics: {count: 4, name: \"eth{n}\"}, managed: false}")
    state = plan(load_intent(rail))
    assert state.unmanaged() == ["su1-s1", "su1-s2", "su2-s1", "su2-s2"]
    assert state.devices["store1"].managed  # storage profile: the defaults' (managed)
    # a server placed by hand: its own key wins over its profile's
    placed = _edited(tmp_path / "b", RAIL, "hosts.yaml", "    profile: storage\n",
                     "    profile: storage\n    managed: false\n")
    assert plan(load_intent(placed)).unmanaged() == ["store1"]


def test_a_server_in_an_su_slot_takes_its_profile_unless_it_says(tmp_path: Path) -> None:
    extra = ("  - name: su2-spare1\n    profile: gpu\n    su: 2\n    port: 3\n    managed: false\n"
             "  - name: su2-spare2\n    profile: gpu\n    su: 2\n    port: 4\n")
    rail = _edited(tmp_path, RAIL, "hosts.yaml", "servers:\n", "servers:\n" + extra)
    state = plan(load_intent(rail))
    assert state.unmanaged() == ["su2-spare1"]
    assert state.devices["su2-spare2"].managed


def test_the_plan_records_unmanaged_hosts_only(mixed: FabricState) -> None:
    data = json.loads(mixed.model_dump_json())
    marked = {name for name, device in data["devices"].items() if "managed" in device}
    assert marked == set(UNMANAGED_HOSTS)
    assert {data["devices"][n]["managed"] for n in marked} == {False}
    assert FabricState.model_validate(data).unmanaged() == UNMANAGED_HOSTS


def test_a_plan_without_unmanaged_hosts_is_as_it_was() -> None:
    assert "managed" not in plan(load_intent(LAB)).model_dump_json()


@pytest.mark.parametrize(("hosts", "path", "reason"), [
    ("defaults: {count: 2, managed: no}\n", "defaults.managed", "'no' is not true or false"),
    ("defaults: {count: 2, managed: null}\n", "defaults.managed", "null is not true or false"),
    ("leaves:\n  leaf1: {count: 2, managed: 0}\n", "leaves.leaf1.managed",
     "0 is not true or false"),
    ("leaves:\n  leaf1:\n    hosts:\n      - {managed: \"false\"}\n",
     "leaves.leaf1.hosts[0].managed", "'false' is not true or false"),
    ("leaves:\n  leaf1: {count: 1, managed: [false]}\n", "leaves.leaf1.managed",
     "[False] is not true or false"),
    ("defaults: {count: 1, manage: false}\n", "defaults.manage", "unknown key 'manage'"),
])
def test_a_managed_that_is_not_a_boolean_is_refused(tmp_path: Path, hosts: str, path: str,
                                                    reason: str) -> None:
    with pytest.raises(InputError) as info:
        load_intent(_intent(tmp_path, LAB, hosts=hosts))
    [problem] = info.value.problems
    assert problem.file.endswith("hosts.yaml") and problem.line is not None
    assert (problem.path, problem.reason) == (path, reason)


@pytest.mark.parametrize(("old", "new", "path"), [
    ("  gpu: {role: gpu, nics: {count: 4, name: \"eth{n}\"}}",
     "  gpu: {role: gpu, nics: {count: 4, name: \"eth{n}\"}, managed: 'yes'}",
     "profiles.gpu.managed"),
    ("    profile: storage\n", "    profile: storage\n    managed: 1\n", "servers[0].managed"),
])
def test_a_clos_managed_that_is_not_a_boolean_is_refused(tmp_path: Path, old: str, new: str,
                                                         path: str) -> None:
    with pytest.raises(InputError) as info:
        load_intent(_edited(tmp_path, RAIL, "hosts.yaml", old, new))
    [problem] = info.value.problems
    assert problem.path == path and problem.reason.endswith("is not true or false")


def test_static_checks_judge_an_unmanaged_host_like_any_other(mixed: FabricState) -> None:
    faulty = mixed.model_copy(deep=True)
    nic = faulty.devices["leaf2-h1"].interfaces["eth1"]
    nic.mtu = 1500  # below a RoCE frame: the plan the server team would apply is wrong
    found = run_checks(CheckContext(state=faulty, plan=mixed, stage=Stage.STATIC))
    assert ("mtu.roce_chain", "leaf2-h1", Severity.ERROR) in {
        (f.check, f.device, f.severity) for f in found}
    assert not [f for f in found if f.severity is Severity.NOT_JUDGED]


# ---------------------------------------------------------------- inventory


def _inventory(tmp_path: Path, planned: FabricState, extra: dict[str, Any],
               groups: dict[str, Any] | None = None) -> Path:
    """Every managed device with an address, a user, a key and its host key (the defaults'),
    complete as flatfab checks it before any connection; no unmanaged host unless `extra`
    adds one."""
    hosts = {name: {"hostname": f"192.0.2.{i}", "platform": device.platform}
             for i, (name, device) in enumerate(planned.managed().items(), 1)}
    addresses = [entry["hostname"] for entry in hosts.values()]
    hosts.update(extra)
    folder = tmp_path / "inventory"
    folder.mkdir()
    (folder / "hosts.yaml").write_text(json.dumps(hosts), encoding="utf-8")
    (folder / "groups.yaml").write_text(json.dumps(groups or {}), encoding="utf-8")
    (folder / "defaults.yaml").write_text(
        json.dumps(login_defaults(tmp_path / "ssh", addresses)), encoding="utf-8")
    return folder


def test_the_inventory_need_not_list_unmanaged_hosts(tmp_path: Path,
                                                    mixed: FabricState) -> None:
    assert list(inventory.required_devices(mixed)) == list(mixed.managed())
    folder = _inventory(tmp_path, mixed, {})
    inventory.validate(folder, mixed)
    assert sorted(inventory.build(folder, mixed).inventory.hosts) == sorted(mixed.managed())


def test_an_unmanaged_hosts_entry_is_ignored_never_validated(tmp_path: Path,
                                                            mixed: FabricState) -> None:
    # no address, another platform, an address with no host key in known_hosts, a user of
    # its own with no way to log in: refused for a managed host, ignored for an unmanaged one
    folder = _inventory(tmp_path, mixed, {"leaf1-h1": {"platform": "eos"},
                                          "leaf2-h1": {"hostname": "192.0.2.200",
                                                       "username": "gpu-team"},
                                          "leaf2-h2": {"hostname": "not a name!"}})
    inventory.validate(folder, mixed)
    built = inventory.build(folder, mixed).inventory.hosts
    assert "leaf1-h1" not in built and "leaf2-h1" not in built and "leaf2-h2" not in built


def test_ask_pass_asks_no_password_an_unmanaged_host_alone_would_need(
        tmp_path: Path, mixed: FabricState) -> None:
    """The credential sets asked for are those of the devices flatfab logs in to: a group
    only unmanaged hosts are in is never asked, and its hosts get no password."""
    servers = {"leaf1-h1": {"hostname": "192.0.2.201", "groups": ["gpu-team"]},
               "leaf2-h1": {"hostname": "192.0.2.202", "groups": ["gpu-team"]}}
    folder = _inventory(tmp_path, mixed, servers, groups={"gpu-team": {"username": "gpu"}})
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "typed-secret"

    built = inventory.build(folder, mixed, credentials=Credentials(ask=ask, environ={}))
    assert len(asked) == 1 and "defaults" in asked[0] and "gpu" not in asked[0]
    assert set(built.inventory.hosts) == set(mixed.managed())
    assert all(host.password == "typed-secret" for host in built.inventory.hosts.values())


def test_a_managed_host_missing_from_the_inventory_is_still_refused(
        tmp_path: Path, mixed: FabricState) -> None:
    folder = _inventory(tmp_path, mixed, {})
    text = json.loads((folder / "hosts.yaml").read_text(encoding="utf-8"))
    del text["leaf1-h2"]
    (folder / "hosts.yaml").write_text(json.dumps(text), encoding="utf-8")
    with pytest.raises(InputError) as info:
        inventory.validate(folder, mixed)
    assert [p.path for p in info.value.problems] == ["leaf1-h2"]


# ---------------------------------------------------------------- rollouts


def test_no_phase_ever_takes_an_unmanaged_host(mixed: FabricState) -> None:
    runbook, doc = load_runbook(ROOT / "runbooks" / "first-bring-up.yaml")
    found = check_against_fabric(runbook, doc, "first-bring-up.yaml", mixed, {}, CATALOG)
    scheduled = {d for phase in found.phases for d in phase.devices}
    assert scheduled == set(mixed.managed())
    assert found.unmanaged == tuple(UNMANAGED_HOSTS)
    assert found.unselected == ()
    canary = found.phases[0].batches[0]
    assert canary == ("leaf1", "leaf1-h2")  # attached hosts: the managed one rides along


def test_a_phase_that_selects_only_unmanaged_hosts_is_refused(tmp_path: Path,
                                                              mixed: FabricState) -> None:
    file = tmp_path / "hosts.yaml"
    file.write_text("name: hosts-first\nphases:\n  - name: leaf2-hosts\n"
                    "    select: {names: [leaf2-h*]}\n  - name: rest\n    select: {}\n",
                    encoding="utf-8")
    runbook, doc = load_runbook(file)
    with pytest.raises(InputError) as info:
        check_against_fabric(runbook, doc, str(file), mixed, {}, CATALOG)
    [problem] = info.value.problems
    assert problem.path == "phases[0].select"
    assert "no rollout takes an unmanaged host" in problem.reason


class _Fleet:
    """Fake config drivers, recording every device a run opens one for."""

    def __init__(self, planned: FabricState) -> None:
        self.opened: set[str] = set()
        self.devices = {n: FakeDevice("factory\n", lambda: None) for n in planned.devices}

    def driver(self, task: Task, *, read_only: bool) -> FakeDevice:
        self.opened.add(task.host.name)
        return self.devices[task.host.name]

    def diff(self, task: Task, configs: dict[str, str], read_only: bool) -> Result:
        device = self.driver(task, read_only=read_only)
        device.load_replace_candidate(configs[task.host.name])
        diff = device.compare_config()
        device.discard_config()
        return Result(host=task.host, result=DeviceOutcome(diff=diff))


@pytest.fixture
def fleet(mixed: FabricState, monkeypatch: pytest.MonkeyPatch) -> _Fleet:
    fake = _Fleet(mixed)
    monkeypatch.setattr(rollout_mod, "driver", fake.driver)
    monkeypatch.setattr(rollout_mod, "_diff", fake.diff)
    return fake


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_rollout_never_touches_an_unmanaged_host(
        tmp_path: Path, mixed: FabricState, fleet: _Fleet, monkeypatch: pytest.MonkeyPatch,
        dry_run: bool) -> None:
    gated: list[set[str]] = []

    def gate(_nornir: Nornir, _plan: FabricState, _gate: Gate, ready: set[str],
             *_args: Any, **_kwargs: Any) -> list[Finding]:
        gated.append(set(ready))
        return []

    monkeypatch.setattr(rollout_mod, "run_gate", gate)
    runbook = whole_fabric()
    journal = Journal.start(tmp_path, "rollout", mixed.fabric)
    result = rollout_mod.rollout(_nornir(mixed), mixed, runbook, schedule(runbook, mixed, {}),
                                 journal, dry_run=dry_run)
    assert result.ok and fleet.opened == set(mixed.managed())
    assert sorted(result.devices) == sorted(mixed.managed())
    assert result.unmanaged == UNMANAGED_HOSTS
    summary = result.summary()
    assert summary["unmanaged"] == UNMANAGED_HOSTS
    assert not set(summary["diffs"]) & set(UNMANAGED_HOSTS)
    configs = {p.stem for p in (journal.directory / "configs").glob("*.conf")}
    assert configs == set(mixed.managed())  # the journal holds what a rollout may push
    if dry_run:
        assert gated == [] and all(not d.history for d in fleet.devices.values())
    else:
        assert sorted(result.confirmed) == sorted(mixed.managed())
        assert gated and all(not ready & set(UNMANAGED_HOSTS) for ready in gated)
        assert all(fleet.devices[n].history == [] for n in UNMANAGED_HOSTS)


def test_a_gate_waits_on_failures_never_on_what_it_could_not_judge(
        tmp_path: Path, mixed: FabricState, monkeypatch: pytest.MonkeyPatch) -> None:
    observed = _observed(mixed)
    monkeypatch.setattr(rollout_mod, "collect",
                        lambda *_a, **_k: collect_mod.Collection(observed, 0.0))
    gate = Gate(checks=["device.reachable", "interface.up", "interface.mtu"], timeout_s=5,
                wait_s=0)
    journal = Journal.start(tmp_path, "rollout", mixed.fabric)
    ready = set(mixed.devices)  # as if the unmanaged hosts were waited on too
    assert rollout_mod.run_gate(_nornir(mixed), mixed, gate, ready, journal) == []
    # the leaf port facing an unmanaged host is the leaf's own: a fault there holds the gate
    observed.devices["leaf2"].interfaces["swp1"].up = False
    found = rollout_mod.run_gate(_nornir(mixed), mixed, gate.model_copy(update={
        "timeout_s": 0}), ready, journal)
    assert {(f.check, f.device, f.port) for f in found} == {("interface.up", "leaf2", "swp1")}


# ---------------------------------------------------------------- verify and audit


def test_a_collect_never_reads_an_unmanaged_host(mixed: FabricState,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []

    def observe(task: Task, planned: DeviceState, _probes: Any, _ro: bool,
                _physical: bool = False) -> DeviceState:
        read.append(task.host.name)
        return planned.model_copy(deep=True)

    monkeypatch.setattr(collect_mod.device_io, "observe", observe)
    monkeypatch.setattr(collect_mod, "release", lambda _task: None)
    devices = collect_mod.collect_devices(_nornir(mixed), mixed, close=True)
    assert sorted(read) == sorted(devices) == sorted(mixed.managed())
    state = collect_mod.observed_state(mixed, devices)
    assert not set(state.devices) & set(UNMANAGED_HOSTS)


def test_unmanaged_hosts_send_no_probes_but_are_probed(mixed: FabricState) -> None:
    probes = verify_probes(mixed)
    assert not set(probes) & set(UNMANAGED_HOSTS)
    assert {p.target for sent in probes.values() for p in sent} & set(UNMANAGED_HOSTS)
    assert verify_probes(mixed, probes=False) == {}


def _host_side(planned: FabricState, host: str) -> set[str]:
    device = planned.devices[host]
    return {c for c, item in CATALOG.items() if Stage.LIVE in item.stages
            and item.hosts is not None and item.hosts(planned, device)}


def test_every_host_side_check_reports_an_unmanaged_host_not_judged(
        mixed: FabricState) -> None:
    report = judge(mixed, _observed(mixed), None, collect_s=0.0, started=0.0)
    assert not report.failed, [f.message for f in report.findings if f.severity.fails]
    assert report.unmanaged == UNMANAGED_HOSTS
    assert {f.severity for f in report.findings} == {Severity.NOT_JUDGED}
    expected = {(check, host) for host in UNMANAGED_HOSTS for check in _host_side(mixed, host)}
    assert {(f.check, f.device) for f in report.findings} == expected
    # what a check reads on hosts: reachability, interfaces, probes, NIC settings
    assert {"device.reachable", "interface.up", "link.mtu_match", "tenant.reachability",
            "host.intent", "qos.trust", "state.unknown"} <= _host_side(mixed, "leaf1-h1")
    for finding in report.findings:
        assert finding.message == f"{finding.device} is not judged: {UNMANAGED}"
        assert (finding.expected, finding.actual) == ("read from the device", "unmanaged")


def test_only_checks_that_would_judge_the_host_report_it(tmp_path: Path) -> None:
    """A one-NIC host is not what host.routing judges, nor one outside a plane what
    plane.independence does; a rail server is both."""
    lab = plan(load_intent(_edited(tmp_path, LAB, "hosts.yaml", "  count: 2\n",
                                   "  count: 2\n  managed: false\n")))
    assert not {"host.routing", "plane.independence"} & _host_side(lab, "leaf1-h1")
    rail = plan(load_intent(_edited(tmp_path / "rail", RAIL, "hosts.yaml", "defaults:\n",
                                    "defaults:\n  managed: false\n")))
    assert rail.unmanaged() == ["su1-s1", "su1-s2", "store1", "su2-s1", "su2-s2"]
    assert {"host.routing", "plane.independence"} <= _host_side(rail, "su1-s1")


def test_what_the_switches_show_of_an_unmanaged_host_stays_judged(
        mixed: FabricState) -> None:
    observed = _observed(mixed)
    leaf2 = observed.devices["leaf2"].interfaces
    leaf2["swp1"].up = False  # the port facing leaf2-h1
    leaf2["swp2"].mtu = 1500  # the port facing leaf2-h2
    # a managed host's probe towards an unmanaged one goes unanswered
    source = next(d for d in observed.devices.values() if any(
        p.target == "leaf2-h1" and p.expect_reply for p in d.probes))
    probe = next(p for p in source.probes if p.target == "leaf2-h1" and p.expect_reply)
    probe.replied, probe.detail = False, "100% packet loss"
    found = run_checks(CheckContext(state=observed, plan=mixed, stage=Stage.LIVE))
    failing = {(f.check, f.device, f.port) for f in found if f.severity.fails}
    assert ("interface.up", "leaf2", "swp1") in failing
    assert ("interface.mtu", "leaf2", "swp2") in failing
    assert ("tenant.reachability", source.name, probe.nic or "eth1") in failing
    assert not {f.device for f in found if f.severity.fails} & set(UNMANAGED_HOSTS)


def test_the_switches_carry_an_unmanaged_hosts_planned_mtu(mixed: FabricState) -> None:
    """mtu.roce_chain, live: the largest host MTU a switch port must carry counts the
    unmanaged hosts as planned (they are never read)."""
    bigger = mixed.model_copy(deep=True)
    bigger.devices["leaf2-h1"].interfaces["eth1"].mtu = 9100
    for device in bigger.of_role(Role.LEAF):
        for iface in device.interfaces.values():
            if iface.kind is IfKind.HOST_PORT:
                iface.mtu = 9100
    observed = _observed(bigger)
    observed.devices["leaf3"].interfaces["swp1"].mtu = 9000  # fits every managed host
    found = run_checks(CheckContext(state=observed, plan=bigger, stage=Stage.LIVE),
                       only=["mtu.roce_chain"])
    assert [(f.device, f.port, f.expected) for f in found if f.severity.fails] == [
        ("leaf3", "swp1", ">= 9100")]


# ---------------------------------------------------------------- traffic and watch


def test_flows_from_an_unmanaged_host_are_neither_sent_nor_judged(
        mixed: FabricState, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []

    def send(task: Task, groups: Any) -> Result:
        sent.append(task.host.name)
        return Result(host=task.host, result=0)

    monkeypatch.setattr(traffic_mod, "_send", send)
    monkeypatch.setattr(traffic_mod, "_counters", lambda task: Result(host=task.host,
                                                                      result={}))
    monkeypatch.setattr(traffic_mod, "SETTLE_S", 0.0)
    planned = traffic_mod.plan_flows(mixed)
    sources = {g.source for g in planned}
    unsent = sources & set(UNMANAGED_HOSTS)
    assert unsent  # the lab's first host of a leaf sends: leaf1-h1, leaf2-h1
    report = traffic_mod.run_traffic(_nornir(mixed), mixed)
    assert set(sent) == sources - unsent
    assert {g.source for g in report.groups} == sources - unsent
    skipped = {(f.check, f.device) for f in report.findings
               if f.severity is Severity.NOT_JUDGED and f.actual == "unmanaged"}
    assert skipped == {(check, host) for host in unsent for check in traffic_mod.TRAFFIC_CHECKS}


def test_a_watch_never_polls_an_unmanaged_host_and_says_so(mixed: FabricState) -> None:
    polled, nothing = pollable(mixed, list(mixed.devices))
    assert not (set(polled) | set(nothing)) & set(UNMANAGED_HOSTS)
    assert "leaf1-h2" in polled  # a managed host's NIC counters are
    limits = thresholds_of(load_intent(LAB).qos.telemetry)
    result = Watch(mixed, limits, []).result(0)
    assert {(f.check, f.device) for f in result.findings} == {
        (check, host) for host in UNMANAGED_HOSTS for check in conditions.NIC_CONDITIONS}
    assert not result.failed
    assert all(f.message == f"{f.device}'s NIC telemetry is not judged: {UNMANAGED}"
               for f in result.findings)
