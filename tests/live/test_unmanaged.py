"""A switch-only team on the live lab: hosts marked `managed: false`, on a lab of its own.

The lab (prefix `fu`, 172.31.237.0/24) runs the `lab` fabric from a project of its own. flatfab
gets an inventory that lists the switches (and, later, the managed hosts) only; the hosts'
own team applies the configs `flatfab render` writes with its own tools (here: the NAPALM
driver, through the lab's full inventory), as a server team would.

1. Every host unmanaged: the switches roll out phase by phase from the factory, verify
   (`--lossless` too) and audit clean, exit 0, every host named not judged in every report;
   a host taking its NIC down is seen from the switches, never judged on the host.
2. leaf1's and leaf2's hosts unmanaged, leaf3's and leaf4's managed: the same fault on an
   unmanaged and a managed host is found on the managed one only, and the rollout that
   repairs it leaves the unmanaged one as it was.

Marked `own_lab`: `make test` runs it in its ownlab session.
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from flatfab.lab.netns import LabPaths, node_exec
from flatfab.model.state import UNMANAGED
from tests.support.flatfab import Run, flatfab
from tests.support.lab import Lab, open_driver
from tests.support.paths import ROOT
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.live, pytest.mark.own_lab]

PREFIX = "fu"
SUBNET = "172.31.237.0/24"
SWITCHES = ["spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"]
HOSTS = [f"leaf{n}-h{h}" for n in range(1, 5) for h in (1, 2)]
ALL_UNMANAGED = "  mtu: 9000\n  managed: false\n"
SOME_UNMANAGED = ("  mtu: 9000\nleaves:\n  leaf1: {count: 2, managed: false}\n"
                  "  leaf2: {count: 2, managed: false}\n")
MIXED_UNMANAGED = HOSTS[:4]
NIC = "/var/lib/flatfab/nic/qos.conf"
RUNBOOK = ROOT / "runbooks" / "first-bring-up.yaml"


@dataclass
class Project:
    """The lab fabric in a project of its own; flatfab sees `inventory`, the hosts' team
    `full` (the lab's own, every node)."""

    root: Path
    full: Path
    inventory: Path
    state_dir: Path

    def cli(self, *args: str, timeout: float = 900) -> Run:
        return flatfab("--root", str(self.root), "--fabric", "lab", "--inventory",
                       str(self.inventory), "--state-dir", str(self.state_dir), *args,
                       timeout=timeout)

    def sh(self, node: str, command: str) -> str:
        return node_exec(LabPaths(PREFIX), node, ["sh", "-c", command])

    def hosts(self, text: str) -> None:
        """hosts.yaml with `mtu: 9000` followed by `text`'s keys."""
        path = self.root / "intents" / "lab" / "hosts.yaml"
        original = (ROOT / "intents" / "lab" / "hosts.yaml").read_text(encoding="utf-8")
        assert "  mtu: 9000\n" in original
        path.write_text(original.replace("  mtu: 9000\n", text), encoding="utf-8")

    def flatfab_sees(self, devices: list[str]) -> None:
        """flatfab's inventory: the lab's, with only `devices` in hosts.yaml."""
        self.inventory.mkdir(exist_ok=True)
        for name in ("groups.yaml", "defaults.yaml"):
            shutil.copy(self.full / name, self.inventory / name)
        every = yaml.safe_load((self.full / "hosts.yaml").read_text(encoding="utf-8"))
        (self.inventory / "hosts.yaml").write_text(
            yaml.safe_dump({n: every[n] for n in devices}), encoding="utf-8")

    def hosts_team_applies(self, hosts: list[str]) -> None:
        """What the hosts' team does: each host's config from `flatfab render`, committed
        with the NAPALM driver over the lab's full inventory."""
        out = self.root / "rendered"
        rendered = self.cli("render", "--out", str(out))
        assert rendered.code == 0, rendered.stderr
        team = Lab(prefix=PREFIX, inventory=self.full, state_dir=self.state_dir)
        for host in hosts:
            driver = open_driver(team, host, read_only=False)
            try:
                driver.load_replace_candidate(config=(out / f"{host}.conf").read_text())
                if driver.compare_config():
                    driver.commit_config()
                else:
                    driver.discard_config()
            finally:
                driver.close()


def _json(run: Run) -> Any:
    assert run.code in (0, 1), run.stdout[-3000:] + run.stderr
    return json.loads(run.stdout)


def _failing(findings: list[dict[str, Any]]) -> set[tuple[str, str, str | None]]:
    return {(f["check"], f["device"], f["port"]) for f in findings
            if f["severity"] not in ("info", "not-judged")}


def _unmanaged(findings: list[dict[str, Any]]) -> set[str]:
    """The devices named not judged because flatfab does not log in to them."""
    return {f["device"] for f in findings
            if f["severity"] == "not-judged" and f["message"].endswith(UNMANAGED)}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    if os.geteuid() != 0:
        pytest.fail("live lab tests need root (network namespaces, mounts, users)")
    work = tmp_path_factory.mktemp("unmanaged")
    root = work / "project"
    shutil.copytree(ROOT / "intents" / "lab", root / "intents" / "lab")
    handle = Project(root, work / "lab-inventory", work / "inventory", work / "state")
    handle.hosts(ALL_UNMANAGED)
    flatfab("lab", "down", "--sweep", "--prefix", PREFIX)
    try:
        generated = flatfab("--root", str(root), "--fabric", "lab", "lab", "generate")
        assert generated.code == 0, generated.stderr
        up = flatfab("--root", str(root), "--fabric", "lab", "--inventory", str(handle.full),
                     "--state-dir", str(handle.state_dir), "lab", "up", "--prefix", PREFIX,
                     "--mgmt-subnet", SUBNET, timeout=300)
        assert up.code == 0, up.stderr
        handle.flatfab_sees(SWITCHES)
        yield handle
    finally:
        down = flatfab("lab", "down", "--sweep", "--prefix", PREFIX)
        assert down.code == 0, down.stderr


@pytest.fixture(scope="module")
def switch_only(project: Project) -> Project:
    """Every host unmanaged: the hosts' team configures them, flatfab rolls the switches
    out from the factory, phase by phase."""
    project.hosts_team_applies(HOSTS)
    rolled = project.cli("rollout", "--runbook", str(RUNBOOK), "--yes", "--format", "json")
    assert rolled.code == 0, rolled.stdout[-3000:] + rolled.stderr
    summary = rolled.json()
    assert summary["ok"] and summary["unmanaged"] == HOSTS
    assert sorted(summary["changed"]) == sorted(SWITCHES)
    assert sorted(summary["confirmed"]) == sorted(SWITCHES)
    assert not {d for p in summary["phases"] for b in p["batches"] for d in b} & set(HOSTS)
    return project


def test_flatfab_is_given_no_host_at_all(switch_only: Project) -> None:
    listed = yaml.safe_load((switch_only.inventory / "hosts.yaml").read_text())
    assert sorted(listed) == sorted(SWITCHES)


def test_every_host_unmanaged_verifies_clean_with_the_lossless_plane(
        switch_only: Project) -> None:
    for extra in ((), ("--lossless",)):
        run = switch_only.cli("verify", *extra, "--format", "json")
        assert run.code == 0, run.stdout[-3000:] + run.stderr
        report = run.json()
        assert report["passed"] and report["unmanaged"] == HOSTS
        assert _failing(report["findings"]) == set()
        assert _unmanaged(report["findings"]) == set(HOSTS)
        checks = {f["check"] for f in report["findings"] if f["device"] == "leaf1-h1"}
        assert {"device.reachable", "interface.up", "tenant.reachability"} <= checks
        if extra:
            assert {"host.intent", "qos.trust", "state.unknown"} <= checks
    table = switch_only.cli("verify")
    assert table.code == 0, table.stdout[-3000:] + table.stderr
    assert "(8 unmanaged hosts never read)" in table.stdout
    assert "not judged (neither passed nor failed)" in table.stdout


def test_every_host_unmanaged_audits_clean_in_every_format(switch_only: Project,
                                                           tmp_path: Path) -> None:
    run = switch_only.cli("audit", "--report-dir", str(tmp_path), "--format", "json")
    assert run.code == 0, run.stdout[-3000:] + run.stderr
    report = run.json()
    assert report["status"] == "clean" and report["drift"] == []
    assert [d["name"] for d in report["devices"] if not d["managed"]] == HOSTS
    assert _failing(report["findings"]) == set()
    assert _unmanaged(report["findings"]) == set(HOSTS)
    files = {p.suffix: p for p in tmp_path.iterdir()}
    junit = ET.parse(files[".xml"]).getroot()
    drift = {c.get("name"): c for s in junit.iter("testsuite")
             if s.get("name") == "config-drift" for c in s.iter("testcase")}
    assert all(drift[h].find("skipped") is not None for h in HOSTS)
    assert all(drift[s].find("skipped") is None and len(drift[s]) == 0 for s in SWITCHES)
    assert junit.get("failures") == "0" and int(junit.get("skipped") or 0) > len(HOSTS)
    markdown = files[".md"].read_text()
    assert "## Not judged" in markdown and "8 unmanaged: never read" in markdown
    assert 'data-status="unmanaged"' in files[".html"].read_text()
    assert 'flatfab_audit_devices_unmanaged{fabric="lab"} 8' in files[".prom"].read_text()


def test_a_host_taking_its_nic_down_is_seen_from_the_switches_only(switch_only: Project) -> None:
    switch_only.sh("leaf2-h1", "ip link set eth1 down")
    try:
        run = switch_only.cli("verify", "--format", "json")
        assert run.code == 1, run.stdout[-3000:] + run.stderr
        failing = _failing(run.json()["findings"])
        assert ("interface.up", "leaf2", "swp1") in failing
        # the switches judge what follows (leaf2's blue subnet is gone from the others'
        # routes); nothing is judged on a host
        assert {device for _, device, _ in failing} <= set(SWITCHES)
    finally:
        switch_only.sh("leaf2-h1", "ip link set eth1 up")
        switch_only.hosts_team_applies(["leaf2-h1"])  # its routes left with the link
    wait_for(lambda: switch_only.cli("verify", "--format", "json").code == 0,
             "verify to pass once leaf2 sees leaf2-h1 again", timeout=90)


@pytest.fixture(scope="module")
def some_managed(switch_only: Project) -> Project:
    """leaf3's and leaf4's hosts handed to flatfab; leaf1's and leaf2's stay their team's."""
    switch_only.hosts(SOME_UNMANAGED)
    switch_only.flatfab_sees(SWITCHES + HOSTS[4:])
    return switch_only


def test_managed_hosts_are_judged_beside_unmanaged_ones(some_managed: Project) -> None:
    run = some_managed.cli("verify", "--lossless", "--format", "json")
    assert run.code == 0, run.stdout[-3000:] + run.stderr
    report = run.json()
    assert report["unmanaged"] == MIXED_UNMANAGED
    assert _unmanaged(report["findings"]) == set(MIXED_UNMANAGED)
    assert _failing(report["findings"]) == set()


def test_the_same_fault_is_judged_and_repaired_on_a_managed_host_only(
        some_managed: Project) -> None:
    faulty = ("leaf1-h1", "leaf3-h1")  # unmanaged, managed
    for host in faulty:
        some_managed.sh(host, f"sed -i 's/ dcqcn on / dcqcn off /' {NIC}")
    try:
        found = _json(some_managed.cli("verify", "--lossless", "--no-probes", "--format",
                                       "json"))
        assert ("host.intent", "leaf3-h1", "eth1") in _failing(found["findings"])
        assert {d for _, d, _ in _failing(found["findings"])} == {"leaf3-h1"}
        audited = _json(some_managed.cli("audit", "--no-probes", "--format", "json"))
        assert [d["device"] for d in audited["drift"]] == ["leaf3-h1"]
        rolled = some_managed.cli("rollout", "--yes", "--format", "json")
        assert rolled.code == 0, rolled.stdout[-3000:] + rolled.stderr
        summary = rolled.json()
        assert summary["changed"] == ["leaf3-h1"]
        assert summary["unmanaged"] == MIXED_UNMANAGED
        # repaired where flatfab manages the host, untouched where it does not
        assert " dcqcn on " in some_managed.sh("leaf3-h1", f"cat {NIC}")
        assert " dcqcn off " in some_managed.sh("leaf1-h1", f"cat {NIC}")
    finally:
        some_managed.sh("leaf1-h1", f"sed -i 's/ dcqcn off / dcqcn on /' {NIC}")
    run = some_managed.cli("verify", "--lossless", "--format", "json")
    assert run.code == 0, run.stdout[-3000:] + run.stderr
