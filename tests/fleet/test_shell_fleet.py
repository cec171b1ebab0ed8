"""The fleet's frr switches and Linux hosts (tests/doubles/fleet/frr.py, linux_host.py),
read by flatfab's real drivers: a clean fleet of any example fabric reads back as planned
(every live check passes, no config drift), each fault is named by its check, the commit
mechanism (backup, revert timer on the fleet's clock, confirm, revert) behaves as the
embedded lab's does, and over SSH a verify holds no more sessions at once than it has
workers."""

from __future__ import annotations

import difflib
import json
import time
from functools import cache
from pathlib import Path

import pytest
import yaml

from flatfab.checks import CATALOG, CheckContext, Finding, Stage, run_checks
from flatfab.checks.base import Severity
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState, Source
from flatfab.plan.planner import plan
from flatfab.plan.probes import plan_probes
from flatfab.platforms.frr.driver import FrrDriver
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.registry import get as get_platform
from flatfab.platforms.shell_driver import ShellDriver
from tests.doubles.fleet import Fleet
from tests.doubles.fleet.faults import inject
from tests.doubles.fleet.shell import LocalSession
from tests.fleet.served import flatfab, served
from tests.support.paths import ROOT


@cache
def planned(name: str) -> FabricState:
    return plan(load_intent(ROOT / "intents" / name, known_platforms=PLATFORMS))


def _driver(fleet: Fleet, name: str) -> ShellDriver:  # type: ignore[type-arg]
    cls = FrrDriver if fleet.plan.devices[name].platform == "frr" else LinuxHostDriver
    driver = cls(name, "fleet", None, optional_args={"mgmt_interfaces": ["eth0"]})
    driver.session = LocalSession(fleet.device(name))
    return driver


def _verify(fleet: Fleet) -> tuple[list[Finding], dict[str, str]]:
    """Every live check on what the drivers read, and each drifting device's diff."""
    state, probes = fleet.plan, plan_probes(fleet.plan)
    devices, drift = {}, {}
    for name, device in state.devices.items():
        platform = get_platform(device.platform)
        driver = _driver(fleet, name)
        devices[name] = platform.collect(driver, device, probes.get(name, []))
        running, intended = platform.drift_texts(driver, platform.render(device))
        if running != intended:
            drift[name] = "".join(difflib.unified_diff(running.splitlines(True),
                                                       intended.splitlines(True)))
    observed = FabricState(fabric=state.fabric, source=Source.OBSERVED, roce_mtu=state.roce_mtu,
                           devices=devices, links=state.links, tenants=state.tenants)
    return run_checks(CheckContext(state=observed, plan=state, stage=Stage.LIVE)), drift


@pytest.mark.parametrize("name", ["lab", "numbered", "rail"])
def test_a_clean_fleet_reads_back_as_planned(name: str) -> None:
    findings, drift = _verify(Fleet(planned(name)))
    # the fleet's servers have no RDMA devices (as the lab's): those parts say so, unjudged
    rdma = [f for f in findings if f.severity is Severity.NOT_JUDGED
            and "no RDMA devices" in f.message]
    assert all(f.check.startswith("host.") for f in rdma)
    assert [(f.check, f.device, f.message) for f in findings if f not in rdma] == []
    assert drift == {}


@pytest.mark.parametrize("name", ["lab", "rail"])
def test_a_clean_fleets_physical_layer_reads_back_as_planned(name: str) -> None:
    """Each device states the modules the embedded lab would (its phy.json): read through
    the real drivers, every physical check passes on every cabled port of both ends. But
    one: the rail fabric's 50 m super-spine links get optics, which state no length, and
    their headroom, sized for 50 m, is judged at the optic's reach (100 m): named."""
    fleet, checks = Fleet(planned(name)), [i.id for i in CATALOG.values() if i.physical]
    state = fleet.plan
    devices = {}
    for device_name, device in state.devices.items():
        seen = get_platform(device.platform).collect_physical(_driver(fleet, device_name),
                                                              device)
        cabled = {n for n, i in device.interfaces.items() if i.peer and i.parent is None}
        assert set(seen) == cabled, device_name
        devices[device_name] = device.model_copy(deep=True)
        for port, phy in seen.items():
            devices[device_name].interfaces[port].phy = phy
    observed = FabricState(fabric=state.fabric, source=Source.OBSERVED, roce_mtu=state.roce_mtu,
                           devices=devices, links=state.links, tenants=state.tenants,
                           physical=state.physical)
    findings = run_checks(CheckContext(state=observed, plan=state, stage=Stage.LIVE),
                          only=checks)
    if name == "rail":
        assert findings and all(f.check == "phy.headroom" and "its media's reach" in f.message
                                and "-ss" in (f.link or "") for f in findings), findings
        return
    assert [(f.check, f.device, f.port, f.message) for f in findings] == []


@pytest.mark.parametrize(("device", "fault", "check", "port"), [
    ("leaf2", "mtu:swp51=1500", "interface.mtu", "swp51"),
    ("spine1", "port-down:swp3", "interface.up", "swp3"),
    ("leaf3", "session-down:swp52", "bgp.session", "swp52"),
    ("leaf1-h2", "mtu:eth1=1500", "interface.mtu", "eth1"),
])
def test_a_fault_is_named_by_its_check(device: str, fault: str, check: str, port: str) -> None:
    fleet = Fleet(planned("lab"))
    inject(fleet.device(device), fault)
    findings, drift = _verify(fleet)
    named = {(f.check, f.device, f.port) for f in findings}
    assert (check, device, port) in named, sorted(named)
    assert {f.device for f in findings} <= {device, *_peers(fleet.plan, device)}
    if not fault.startswith("session-down"):  # a config change out of band is drift too
        assert set(drift) == {device}


def _peers(state: FabricState, device: str) -> set[str]:
    return {i.peer.device for i in state.devices[device].interfaces.values() if i.peer}


def test_a_commit_reverts_on_the_fleets_clock_unless_confirmed() -> None:
    fleet = Fleet(planned("lab"), factory=True)
    driver = _driver(fleet, "leaf1")
    intended = get_platform("frr").render(fleet.plan.devices["leaf1"])
    factory_text = driver.get_config(retrieve="running")["running"]
    driver.load_replace_candidate(config=intended)
    assert driver.compare_config()
    driver.commit_config(revert_in=60)
    assert driver.has_pending_commit()
    assert driver.get_config(retrieve="running")["running"] == driver.compare_texts()[1]
    fleet.clock.advance(61)
    assert not driver.has_pending_commit()  # the timer ran the revert script
    assert driver.get_config(retrieve="running")["running"] == factory_text
    driver.load_replace_candidate(config=intended)
    driver.commit_config(revert_in=60)
    driver.confirm_commit()
    fleet.clock.advance(120)
    running = driver.get_config(retrieve="running")["running"]
    assert running == driver.compare_texts()[0]
    driver.load_replace_candidate(config=intended)
    assert driver.compare_config() == ""  # confirmed: at intent, and saved
    assert fleet.device("leaf1").files["/var/lib/flatfab/startup.conf"] == running


def test_a_change_the_fleet_does_not_model_is_refused() -> None:
    device = Fleet(planned("lab")).device("leaf1")
    reply = device.execute("sh -s", "set -e\nip link set swp51 mtu 1400\n")
    assert reply.status == 1 and "does not model" in reply.stderr
    assert device.execute("reboot").status == 127  # not simulated: said, never pretended


def test_a_refused_device_is_named_unread_and_sessions_stay_within_workers(
        tmp_path: Path) -> None:
    with served(ROOT / "intents" / "lab", tmp_path / "fleet", "--fault", "leaf4-h2=refuse"
                ) as fleet:
        run = flatfab(fleet, "verify", "--workers", "2", "-f", "json")
        stats = _settled(fleet.folder / "stats.json")
    report = run.json()
    assert run.code == 3  # nothing read is wrong; one device was not read
    assert report["unread"] == {"leaf4-h2": "authentication failed for leaf4-h2 on "
                                f"127.0.0.1:{fleet.ready['port']}"}
    assert {(f["check"], f["device"]) for f in report["findings"]
            if f["check"] == "device.reachable"} == {("device.reachable", "leaf4-h2")}
    # each device's session is closed once it is read, so a run holds about as many as it
    # has workers (the server counts a session until it has seen it close), not all 14
    assert 0 < stats["connections_peak"] <= 3 * 2, stats
    assert stats["connections_total"] >= 13 and stats["logins_refused"] >= 1
    assert stats["handler_errors"] == 0, (fleet.folder / "fleet.log").read_text()


def _settled(path: Path, timeout: float = 10.0) -> dict[str, int]:
    """The fleet's counts once every session has closed (it writes them every second)."""
    deadline = time.monotonic() + timeout
    while True:
        stats: dict[str, int] = json.loads(path.read_text())
        if stats["connections_open"] == 0 or time.monotonic() > deadline:
            return stats
        time.sleep(0.2)


def test_an_audit_reads_each_device_over_one_session(tmp_path: Path) -> None:
    # config drift and live state come over the same session: one SSH handshake per device
    with served(ROOT / "intents" / "lab", tmp_path / "fleet", "--fault", "leaf2=mtu:swp1=1400"
                ) as fleet:
        run = flatfab(fleet, "audit", "--workers", "4", "-f", "json")
        stats = _settled(fleet.folder / "stats.json")
    report = run.json()
    devices = yaml.safe_load((fleet.inventory / "hosts.yaml").read_text(encoding="utf-8"))
    assert [d["device"] for d in report["drift"]] == ["leaf2"]
    assert ("interface.mtu", "leaf2") in {(f["check"], f["device"]) for f in report["findings"]}
    assert stats["connections_total"] == len(devices), stats
    assert stats["handler_errors"] == 0, (fleet.folder / "fleet.log").read_text()
