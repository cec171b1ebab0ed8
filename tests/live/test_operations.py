"""Operations on the live lab: phased rollouts that fail for real, recovery, audits.

Runs after test_fabric/test_lossless on the same session lab (fully rolled out). Changes
come from a copy of the lab intent with one value changed; every test puts the lab back
to the original intent and waits until verify passes before it ends.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flatfab.lab.netns import node_exec
from tests.support.flatfab import FLATFAB
from tests.support.lab import Lab
from tests.support.paths import ROOT

pytestmark = pytest.mark.live

SWITCHES = ["spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"]
LEAVES = ["leaf1", "leaf2", "leaf3", "leaf4"]


def _changed_root(tmp: Path, edit: tuple[str, str, str]) -> Path:
    """A project root whose lab intent has one text replaced in one file."""
    shutil.copytree(ROOT / "intents" / "lab", tmp / "intents" / "lab")
    name, old, new = edit
    path = tmp / "intents" / "lab" / name
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return tmp


ECN = ("qos.yaml", "default: {min_bytes: 150000, max_bytes: 1500000",
       "default: {min_bytes: 160000, max_bytes: 1400000")


@pytest.fixture
def ecn_root(tmp_path: Path) -> Path:
    return _changed_root(tmp_path / "ecn", ECN)


def _runbook(tmp: Path, text: str) -> Path:
    path = tmp / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _running(lab: Lab, devices: list[str]) -> dict[str, str]:
    from tests.support.lab import open_driver  # noqa: PLC0415

    out = {}
    for name in devices:
        driver = open_driver(lab, name, read_only=True)
        try:
            out[name] = driver.get_config(retrieve="running")["running"]
        finally:
            driver.close()
    return out


def _restore(lab: Lab) -> None:
    """Back to the original intent; verify must pass."""
    back = lab.cli("rollout", "--format", "json")
    assert back.code == 0, back.stdout + back.stderr
    assert lab.wait_verified().code == 0


@pytest.fixture
def restored(lab: Lab) -> Iterator[None]:
    """The lab is back on its intent after the test, passed or failed: a later test's
    rollout must not find this one's change."""
    yield
    _restore(lab)


def _newest_run(lab: Lab) -> Path:
    return sorted((lab.state_dir / "runs").iterdir())[-1]


def _wait_event(lab: Lab, after: set[str], predicate: Any, timeout: float = 60) -> Path:
    """The newest run directory not in `after` once one of its events matches."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = [p for p in (lab.state_dir / "runs").iterdir() if p.name not in after]
        for run in runs:
            events = run / "events.jsonl"
            if events.exists():
                for line in events.read_text(encoding="utf-8").splitlines():
                    if predicate(json.loads(line)):
                        return run
        time.sleep(0.2)
    raise AssertionError("the awaited journal event never came")


def _existing_runs(lab: Lab) -> set[str]:
    root = lab.state_dir / "runs"
    return {p.name for p in root.iterdir()} if root.is_dir() else set()


@pytest.fixture
def sshd_restart(lab: Lab) -> Iterator[list[str]]:
    """Nodes whose sshd a test stopped get it back afterwards."""
    stopped: list[str] = []
    yield stopped
    for node in stopped:
        conf = lab.paths.node_dir(node) / "sshd_config"
        node_exec(lab.paths, node, ["/usr/sbin/sshd", "-f", str(conf)])
    time.sleep(1)


def test_audit_of_the_clean_lab_reports_nothing(lab: Lab, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    result = lab.cli("audit", "--report-dir", str(reports), "--format", "json")
    assert result.code == 0, result.stdout + result.stderr
    report = result.json()
    assert report["status"] == "clean"
    assert report["findings"] == [] and report["drift"] == []
    assert len(report["devices"]) == 14
    assert "pfc.link_symmetry" in report["checks_run"]  # the lossless catalog is in
    names = sorted(p.name for p in reports.iterdir())
    assert names == sorted(f"flatfab-audit-lab{s}" for s in
                           (".html", ".json", ".junit.xml", ".md", ".prom"))
    prom = (reports / "flatfab-audit-lab.prom").read_text(encoding="utf-8")
    assert 'flatfab_audit_up{fabric="lab"} 1' in prom
    assert 'flatfab_audit_devices_drifted{fabric="lab"} 0' in prom


def test_audit_runs_no_mutating_command(lab: Lab) -> None:
    """Read-only is enforced in the driver layer: audit's sessions log no changing command
    and never enter FRR's configuration mode."""
    from flatfab.workflows.commands.audit import audit  # noqa: PLC0415
    from flatfab.workflows.devices import inventory  # noqa: PLC0415
    from flatfab.workflows.project.layout import Project  # noqa: PLC0415

    project = Project(root=ROOT, fabric="lab", inventory_override=lab.inventory)
    nornir = inventory.build(lab.inventory, project.plan, 20)
    try:
        report = audit(nornir, project.plan, probes=False, close=False)  # keeps their logs
        assert report.status.value == "clean"
        commands = [c for host in nornir.inventory.hosts.values()
                    for c in host.connections["napalm"].connection.command_log]
    finally:
        nornir.close_connections()
    assert len(commands) > 14
    assert not [c.command for c in commands if c.mutating]
    text = "\n".join(c.command for c in commands)
    for forbidden in ("configure terminal", "conf t", "--reload", "ip link set", "tc qdisc add",
                      "nft add", "revert.sh"):
        assert forbidden not in text


def test_out_of_band_edit_is_reported_by_audit(lab: Lab) -> None:
    lab.sh("leaf2", "vtysh -c 'configure terminal' -c 'ip prefix-list oob seq 5 permit "
           "10.9.9.0/24'")
    result = lab.cli("audit", "--no-probes", "--format", "json")
    assert result.code == 1, result.stdout + result.stderr
    drift = result.json()["drift"]
    assert [d["device"] for d in drift] == ["leaf2"]
    sections = drift[0]["sections"]
    assert [s["section"] for s in sections] == ["frr"]
    assert sections[0]["unexpected"] == ["ip prefix-list oob seq 5 permit 10.9.9.0/24"]
    assert sections[0]["missing"] == []
    table = lab.cli("audit", "--no-probes")
    assert table.code == 1 and "config drift on 1 devices: leaf2" in table.stdout
    fixed = lab.cli("rollout", "--format", "json")
    assert fixed.code == 0 and fixed.json()["changed"] == ["leaf2"]
    assert lab.cli("audit", "--no-probes", "--format", "json").code == 0


def test_wrong_neighbour_asn_fails_the_gate_and_rolls_back(lab: Lab, tmp_path: Path) -> None:
    """The spines get a new ASN the leaves do not expect: sessions drop, the gate fails
    and the run is rolled back to exactly what was running."""
    root = _changed_root(tmp_path / "asn", ("fabric.yaml", "spine_asn: 65000",
                                            "spine_asn: 65009"))
    plan = _runbook(tmp_path, """
name: spines-first
phases:
  - name: spines
    select: {role: spine}
    batch: 1
    gate: {checks: [device.reachable, bgp.session], timeout_s: 15, interval_s: 2}
failure: {rollback: run}
""")
    before = _running(lab, SWITCHES)
    result = lab.cli("--root", str(root), "rollout", "--runbook", str(plan), "--format", "json")
    assert result.code == 1, result.stdout + result.stderr
    report = result.json()
    assert report["status"] == "halted"
    assert "gate did not pass" in report["reason"]
    assert report["rolled_back"] == ["spine1"]  # the first batch; spine2 was never touched
    assert {f["check"] for f in report["gate_findings"]} == {"bgp.session"}
    assert {f["device"] for f in report["gate_findings"]} >= {"spine1", "leaf1"}
    assert _running(lab, SWITCHES) == before
    assert lab.wait_verified().code == 0


def _rollout_losing_sshd(lab: Lab, root: Path, plan: Path, node: str,
                         sshd_restart: list[str]) -> tuple[int, dict[str, Any]]:
    """Roll out `plan`; while the first batch's gate waits, `node` loses its sshd (and the
    session the run holds to it). Its sshd comes back before this returns."""
    seen = _existing_runs(lab)
    proc = subprocess.Popen([FLATFAB, "--root", str(root), "--inventory", str(lab.inventory),
                             "--state-dir", str(lab.state_dir), "rollout", "--runbook",
                             str(plan), "--format", "json"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_event(lab, seen, lambda e: e["event"] == "committed")
        sshd_restart.append(node)
        # this node's sshd only (the lab shares one PID namespace), with its sessions
        pidfile = lab.paths.node_dir(node) / "sshd.pid"
        lab.sh(node, f"p=$(cat {pidfile}); pkill -P $p; kill $p")
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert out, err
    for stopped in sshd_restart:
        conf = lab.paths.node_dir(stopped) / "sshd_config"
        node_exec(lab.paths, stopped, ["/usr/sbin/sshd", "-f", str(conf)])
    sshd_restart.clear()
    time.sleep(1)
    return proc.returncode, json.loads(out)


CANARY_THEN_LEAVES = """
name: canary-then-leaves
phases:
  - name: canary
    select: {names: [spine1]}
    gate: {checks: [device.reachable], wait_s: 6}
  - name: leaves
    select: {role: leaf}
    gate: {checks: [device.reachable, bgp.session]}
"""


def test_unreachable_device_mid_phase_halts_and_rolls_the_phase_back(
        lab: Lab, tmp_path: Path, ecn_root: Path, restored: None,
        sshd_restart: list[str]) -> None:
    plan = _runbook(tmp_path, CANARY_THEN_LEAVES
                    + "failure: {max_failed_devices: 0, rollback: phase}\n")
    before = _running(lab, LEAVES)
    code, report = _rollout_losing_sshd(lab, ecn_root, plan, "leaf3", sshd_restart)
    assert code == 1, report
    assert report["status"] == "halted"
    assert "leaf3" in report["errors"] and "leaf3" in report["reason"]
    assert report["rolled_back"] == ["leaf1", "leaf2", "leaf4"]
    assert report["confirmed"] == ["spine1"]  # the canary phase stands
    after = _running(lab, ["leaf1", "leaf2", "leaf4"])
    assert after == {n: before[n] for n in after}
    events = (lab.state_dir / "runs" / report["run_id"] / "events.jsonl").read_text()
    assert '"event": "halt"' in events and '"scope": "phase"' in events


def test_a_tolerated_failure_lets_the_run_finish_without_that_device(
        lab: Lab, tmp_path: Path, ecn_root: Path, restored: None,
        sshd_restart: list[str]) -> None:
    """max_failed_devices: 1 - leaf3 fails, the others land and are confirmed; the run says
    done but not ok (exit 1), and a later rollout brings leaf3 along."""
    plan = _runbook(tmp_path, CANARY_THEN_LEAVES
                    + "failure: {max_failed_devices: 1, rollback: device}\n")
    before = _running(lab, ["leaf3"])
    code, report = _rollout_losing_sshd(lab, ecn_root, plan, "leaf3", sshd_restart)
    assert code == 1, report
    assert report["status"] == "done" and report["ok"] is False
    assert list(report["tolerated"]) == ["leaf3"] and "leaf3" in report["errors"]
    assert "max_failed_devices 1" in report["reason"]
    assert report["rolled_back"] == []
    assert report["confirmed"] == ["leaf1", "leaf2", "leaf4", "spine1"]
    assert _running(lab, ["leaf3"]) == before  # it never got the change
    [listed] = [r for r in lab.cli("runs", "--format", "json").json()["runs"]
                if r["run_id"] == report["run_id"]]
    assert listed["status"] == "done"
    # once leaf3 is reachable again, the same change lands on it (and on spine2, which the
    # plan left alone)
    again = lab.cli("--root", str(ecn_root), "rollout", "--format", "json")
    assert again.code == 0, again.stdout + again.stderr
    assert sorted(again.json()["changed"]) == ["leaf3", "spine2"]


def _answer_prompt(args: list[str], prompt: str, answer: str,
                   timeout: float = 300) -> tuple[int, str]:
    """Run flatfab on a pseudo-terminal, as an operator would, and answer one question."""
    pid, fd = pty.fork()
    if pid == 0:  # the child becomes flatfab
        os.chdir(ROOT)
        os.execv(FLATFAB, [FLATFAB, *args])
    seen, answered = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child is gone and its terminal closed
                break
            if not chunk:
                break
            seen += chunk
            if not answered and prompt.encode() in seen:
                os.write(fd, answer.encode() + b"\n")
                answered = True
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert answered, seen.decode(errors="replace")
    return os.waitstatus_to_exitcode(status), seen.decode(errors="replace")


def test_a_pause_asks_the_operator_and_no_stops_the_run(lab: Lab, tmp_path: Path,
                                                         ecn_root: Path, restored: None) -> None:
    plan = _runbook(tmp_path, """
name: canary-pause
phases:
  - name: canary
    select: {names: [spine1]}
    gate: {checks: [device.reachable]}
    pause: true
  - name: rest
    select: {role: [spine, leaf]}
failure: {rollback: run}
""")
    seen = _existing_runs(lab)
    code, shown = _answer_prompt(
        ["--root", str(ecn_root), "--inventory", str(lab.inventory), "--state-dir",
         str(lab.state_dir), "rollout", "--runbook", str(plan)],
        "continue with phase rest?", "n")
    assert code == 1, shown
    assert "rollout stopped: stopped by the operator after phase canary" in shown
    [run_id] = [p.name for p in (lab.state_dir / "runs").iterdir() if p.name not in seen]
    [listed] = [r for r in lab.cli("runs", "--format", "json").json()["runs"]
                if r["run_id"] == run_id]
    assert listed["status"] == "stopped" and listed["changed"] == ["spine1"]
    # without a terminal, the pause cannot be answered: refused before anything is read
    refused = lab.cli("--root", str(ecn_root), "rollout", "--runbook", str(plan))
    assert refused.code == 2 and "--yes" in refused.stderr
    assert _existing_runs(lab) == seen | {run_id}  # no journal for a refused run
    # resumed past its pause, nothing is left to ask: no terminal and no --yes needed
    resumed = lab.cli("--root", str(ecn_root), "rollout", "--resume", run_id, "--format",
                      "json")
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert resumed.json()["status"] == "done"
    assert sorted(resumed.json()["confirmed"]) == sorted(SWITCHES)


def _start_and_kill(lab: Lab, root: Path, plan: Path) -> tuple[str, subprocess.Popen[str]]:
    """Start a rollout, wait until its first commit, return its run id (still running)."""
    seen = _existing_runs(lab)
    proc = subprocess.Popen([FLATFAB, "--root", str(root), "--inventory", str(lab.inventory),
                             "--state-dir", str(lab.state_dir), "rollout", "--runbook",
                             str(plan), "--format", "json"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    run = _wait_event(lab, seen, lambda e: e["event"] == "committed")
    return run.name, proc


SLOW_PLAN = """
name: slow-canary
phases:
  - name: canary
    select: {names: [spine1]}
    gate: {checks: [device.reachable], wait_s: 30}
  - name: rest
    select: {role: [spine, leaf]}
failure: {rollback: run}
"""


def test_killed_rollout_is_reported_and_rolled_back(lab: Lab, tmp_path: Path,
                                                    ecn_root: Path) -> None:
    plan = _runbook(tmp_path, SLOW_PLAN)
    before = _running(lab, ["spine1"])
    run_id, proc = _start_and_kill(lab, ecn_root, plan)
    # a second rollout while the first holds the lock is refused
    second = lab.cli("--root", str(ecn_root), "rollout", "--format", "json")
    assert second.code == 2
    assert "locked by rollout" in second.stderr and f"pid {proc.pid}" in second.stderr
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    refused = lab.cli("--root", str(ecn_root), "rollout")
    assert refused.code == 2
    assert f"run {run_id}" in refused.stderr and "interrupted" in refused.stderr
    assert f"--resume {run_id}" in refused.stderr and f"--run {run_id}" in refused.stderr
    runs = lab.cli("runs", "--format", "json").json()["runs"]
    assert runs[0]["run_id"] == run_id and runs[0]["status"] == "interrupted"
    assert runs[0]["changed"] == ["spine1"]
    back = lab.cli("rollback", "--run", run_id, "--yes", "--format", "json")
    assert back.code == 0, back.stdout + back.stderr
    assert back.json()["restored"] == ["spine1"]
    assert _running(lab, ["spine1"]) == before
    assert lab.cli("runs", "--format", "json").json()["runs"][1]["status"] == "rolled-back"
    assert lab.wait_verified().code == 0


def test_killed_rollout_can_be_resumed(lab: Lab, tmp_path: Path, ecn_root: Path,
                                       restored: None) -> None:
    plan = _runbook(tmp_path, SLOW_PLAN)
    run_id, proc = _start_and_kill(lab, ecn_root, plan)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    resumed = lab.cli("--root", str(ecn_root), "rollout", "--resume", run_id, "--format",
                      "json", timeout=900)
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    report = resumed.json()
    assert report["run_id"] == run_id and report["status"] == "done"
    assert sorted(report["confirmed"]) == sorted(SWITCHES)
    again = lab.cli("--root", str(ecn_root), "rollout", "--dry-run", "--format", "json")
    assert again.json()["diffs"] == {}
