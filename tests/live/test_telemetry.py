"""Streaming telemetry on the live lab: every switch serves gNMI from its own namespaces,
`flatfab watch` subscribes, and real faults are raised as findings by device, port and queue
within two intervals, then cleared.

The floods are real UDP packets from a lab host; what makes them congest is a real kernel
change on leaf1's port to leaf1-h1 (its traffic class shaped to 10 Mbit/s, as a receiver that
keeps pausing the port would hold it). Drops are the kernel's own; pauses, ECN marks and
watchdog storms are the virtual ASIC's, derived from the kernel queue being held back
(tasks/platforms/frr/asic_telemetry.py). Each test puts back what it changed with a rollout.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from flatfab.lab import gnmi as lab_gnmi
from flatfab.lab.netns import LabPaths, nsenter_args
from flatfab.lab.topology import LabNode
from flatfab.telemetry import conditions
from flatfab.telemetry.samples import Metric
from flatfab.telemetry.tls import make_ca
from tests.support.lab import Lab
from tests.support.telemetry_lab import Recorder, flood, flooding, lab_thresholds, watching

pytestmark = pytest.mark.live

INTERVAL = 1.0
LEAF, PORT, HOST = "leaf1", "swp1", "leaf1-h1"  # leaf1's port to leaf1-h1, in VRF blue
TARGET, SENDER = "10.100.1.11", "leaf2-h1"  # leaf1-h1's address; a host of the same VRF
ASIC = "/var/lib/flatfab/asic/config_db.json"
NIC_STATE = "/var/lib/flatfab/nic/qos.conf"  # a lab host's virtual NIC settings
# the raise must come within two intervals of the fault; the lab's source reuses a reading
# for up to 0.5 s, and the first tick after the fault may be up to one interval away
WITHIN = 2 * INTERVAL + 0.5 + INTERVAL


def _slow(lab: Lab, tc: int, *, limit: int | None = None) -> None:
    """Shape one class of leaf1 swp1 to 10 Mbit/s (and shrink its queue if asked)."""
    lab.sh(LEAF, f"tc -n blue class change dev {PORT} parent 1:1 classid 1:1{tc} htb rate "
                 "10mbit ceil 10mbit burst 15k cburst 15k prio 1 quantum 60000")
    if limit is not None:
        lab.sh(LEAF, f"tc -n blue qdisc change dev {PORT} parent 1:1{tc} handle 1{tc}: bfifo "
                     f"limit {limit}")


def _edit_asic(lab: Lab, node: str, mutation: str) -> None:
    lab.sh(node, f"python3 - <<'EOF'\nimport json\np = {ASIC!r}\nd = json.load(open(p))\n"
                 f"{mutation}\njson.dump(d, open(p, 'w'), indent=1, sort_keys=True)\nEOF")


def _repair(lab: Lab) -> None:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr


@pytest.fixture(scope="module")
def rolled_out(lab: Lab) -> Iterator[Lab]:
    _repair(lab)
    yield lab


def _quiet_start(recorder: Recorder) -> None:
    """Two ticks with every target heard: the baseline a fault is raised against."""
    deadline = time.monotonic() + 20
    while len(recorder.ticks) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(recorder.ticks) >= 3, recorder.lines


def test_watch_streams_every_switch_of_the_lab_over_gnmi(rolled_out: Lab) -> None:
    result = rolled_out.cli("watch", "--interval", "1", "--count", "3", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr
    data = json.loads(result.stdout)
    assert data["passed"], data["findings"]
    switches = {"spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"}
    assert switches <= set(data["streamed"])
    assert result.stderr.count("connected, subscribed") == len(switches)


def test_the_traffic_verify_sends_moves_the_streamed_queue_counters(rolled_out: Lab) -> None:
    limits = lab_thresholds(rolled_out, interval_s=INTERVAL)
    with watching(rolled_out, limits) as (_watch, seen):
        _quiet_start(seen)
        before = seen.values()
        result = rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json")
        assert result.code == 0, result.stdout[-2000:]
        time.sleep(3 * INTERVAL)
        after = seen.values()
        assert not seen.active, seen.active
    moved = {(d, p, k) for (d, p, m, k), v in after.items()
             if m == Metric.QUEUE_TX.value and v > before.get((d, p, m, k), 0)}
    # RoCEv2 in the lossless queue 3 and CNPs in queue 6, on leaves and spines alike
    for queue in (3, 6):
        assert {d for d, _p, k in moved if k == queue} >= {"leaf1", "spine1", "spine2"}, moved


def test_a_flood_into_the_lossless_class_is_named_within_two_intervals_and_cleared(
        rolled_out: Lab) -> None:
    limits = lab_thresholds(rolled_out, interval_s=INTERVAL, storm_pps=500, storm_for_s=2)
    try:
        with watching(rolled_out, limits) as (_watch, seen):
            _quiet_start(seen)
            _slow(rolled_out, 3, limit=200_000)
            # RoCEv2 (UDP 4791): the host marks it into the lossless class itself
            with flooding(rolled_out, SENDER, TARGET, port=4791, tos=26 << 2, pps=3000,
                          seconds=8) as began:
                drops = seen.wait_for(conditions.LOSSLESS_DROPS, LEAF, PORT, after=began)
                storm = seen.wait_for(conditions.PAUSE_STORM, LEAF, PORT, after=began)
                dog = seen.wait_for(conditions.WATCHDOG, LEAF, PORT, after=began)
            ended = time.monotonic()
            assert drops is not None, seen.events
            assert drops.at - began <= WITHIN, drops.at - began
            assert "queue 3" in drops.finding.message
            assert storm is not None and "priority 3" in storm.finding.message
            assert dog is not None
            # ECN marked while the queue was paused: no pause without ECN
            assert seen.first(conditions.PAUSE_WITHOUT_ECN, LEAF, PORT) is None
            cleared = seen.wait_for(conditions.LOSSLESS_DROPS, LEAF, PORT, raised=False,
                                    after=ended, timeout=10)
            assert cleared is not None and cleared.at - ended <= WITHIN
            assert seen.wait_for(conditions.PAUSE_STORM, LEAF, PORT, raised=False,
                                 after=drops.at, timeout=10) is not None
            time.sleep(2 * INTERVAL)
            assert not seen.is_active(conditions.LOSSLESS_DROPS, LEAF, PORT)
            assert not seen.is_active(conditions.PAUSE_STORM, LEAF, PORT)
    finally:
        _repair(rolled_out)


def test_pauses_without_ecn_marks_are_named_when_the_thresholds_sit_too_high(
        rolled_out: Lab) -> None:
    limits = lab_thresholds(rolled_out, interval_s=INTERVAL, pause_without_ecn_pps=100)
    # the lossless queue's ECN minimum above its whole buffer: marking can never act
    _edit_asic(rolled_out, LEAF, "[p.__setitem__('green_min_threshold', '60000000') "
                                 "for p in d['WRED_PROFILE'].values()]")
    try:
        with watching(rolled_out, limits) as (_watch, seen):
            _quiet_start(seen)
            _slow(rolled_out, 3, limit=200_000)  # drains at once when the flood ends
            with flooding(rolled_out, SENDER, TARGET, port=4791, tos=26 << 2, pps=3000,
                          seconds=5) as began:
                found = seen.wait_for(conditions.PAUSE_WITHOUT_ECN, LEAF, PORT, after=began)
            ended = time.monotonic()
            assert found is not None, seen.events
            assert found.at - began <= WITHIN
            assert "priority 3" in found.finding.message
            assert seen.wait_for(conditions.PAUSE_WITHOUT_ECN, LEAF, PORT, raised=False,
                                 after=ended, timeout=10) is not None
    finally:
        _repair(rolled_out)


def test_ecn_marks_on_a_lossy_queue_are_named(rolled_out: Lab) -> None:
    limits = lab_thresholds(rolled_out, interval_s=INTERVAL)
    # the lossless queue's WRED profile given to the best-effort queue too
    _edit_asic(rolled_out, LEAF, "d['QUEUE']['swp1|0'] = {'scheduler': 'SCHED_DWRR_50', "
                                 "'wred_profile': d['QUEUE']['swp1|3']['wred_profile']}")
    try:
        with watching(rolled_out, limits) as (_watch, seen):
            _quiet_start(seen)
            _slow(rolled_out, 0, limit=200_000)
            with flooding(rolled_out, SENDER, TARGET, port=5001, tos=0, pps=3000,
                          seconds=5) as began:
                found = seen.wait_for(conditions.ECN_ON_LOSSY, LEAF, PORT, after=began)
            ended = time.monotonic()
            assert found is not None, seen.events
            assert found.at - began <= WITHIN
            assert "queue 0" in found.finding.message
            assert seen.wait_for(conditions.ECN_ON_LOSSY, LEAF, PORT, raised=False,
                                 after=ended, timeout=10) is not None
    finally:
        _repair(rolled_out)


def test_a_gpu_host_that_receives_cnps_but_never_reacts_is_named(rolled_out: Lab) -> None:
    limits = lab_thresholds(rolled_out, interval_s=INTERVAL, dcqcn_min=10)
    cnps = {"port": 4791, "tos": 0, "pps": 200, "first_byte": 0x81}  # BTH opcode: CNP
    try:
        with watching(rolled_out, limits) as (_watch, seen):
            _quiet_start(seen)
            # DCQCN on: the host's reaction point handles what its leaf port delivers
            with flooding(rolled_out, SENDER, TARGET, seconds=4, **cnps) as began:
                time.sleep(4)
            assert seen.first(conditions.DCQCN_IDLE, HOST, "eth1", after=began) is None, \
                seen.events
            assert seen.values()[(HOST, "eth1", Metric.NIC_CNP_HANDLED.value, None)] > 0
            rolled_out.sh(HOST, f"sed -i 's/ dcqcn on / dcqcn off /' {NIC_STATE}")
            with flooding(rolled_out, SENDER, TARGET, seconds=6, **cnps) as began:
                found = seen.wait_for(conditions.DCQCN_IDLE, HOST, "eth1", after=began)
            ended = time.monotonic()
            assert found is not None, seen.events
            # flat for two intervals running: the leaf's counter and the host's are read apart
            assert found.at - began <= WITHIN + INTERVAL
            # delivered CNPs are counted where they leave leaf1, on the CNP queue
            assert f"counted at {LEAF} {PORT} queue 6" in found.finding.message
            assert seen.wait_for(conditions.DCQCN_IDLE, HOST, "eth1", raised=False,
                                 after=ended, timeout=10) is not None
    finally:
        _repair(rolled_out)


def _storm_when_committed(lab: Lab, device: str, since: float, seconds: float) -> None:
    """Wait for the rollout's commit of `device`, then start a storm on it: its port to
    leaf1-h1 held back and flooded (the change's effect, as a canary that goes wrong)."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        for events in (lab.state_dir / "runs").glob("*-rollout-*/events.jsonl"):
            for line in events.read_text().splitlines():
                record = json.loads(line)
                if (record["event"] == "committed" and record.get("device") == device
                        and record["ts"] >= since):
                    _slow(lab, 3, limit=200_000)
                    flood(lab, SENDER, TARGET, port=4791, tos=26 << 2, pps=3000,
                          seconds=seconds)
                    return
        time.sleep(0.2)


def test_a_canary_that_starts_a_storm_halts_the_rollout_and_is_rolled_back(
        rolled_out: Lab, tmp_path: Path) -> None:
    runbook = tmp_path / "canary.yaml"
    gate = {"checks": ["device.reachable"], "timeout_s": 60,
            "telemetry": {"quiet_s": 40,
                          "checks": ["telemetry.lossless_drops", "telemetry.watchdog"]}}
    runbook.write_text(yaml.safe_dump({
        "name": "canary-telemetry", "revert_in": 180,
        "phases": [{"name": "canary", "select": {"names": [LEAF]}, "gate": gate},
                   {"name": "rest"}],
        "failure": {"rollback": "phase"}}))
    # a drift on the canary only: the rollout has exactly one device to change
    _edit_asic(rolled_out, LEAF, "d['PFC_WD']['swp1']['detection_time'] = '400'")
    storm = threading.Thread(target=_storm_when_committed,
                             args=(rolled_out, LEAF, time.time(), 45), daemon=True)
    storm.start()
    try:
        result = rolled_out.cli("rollout", "--runbook", str(runbook), "--format", "json",
                                timeout=600)
        assert result.code == 1, result.stdout[-3000:] + result.stderr
        summary = json.loads(result.stdout)
        assert summary["status"] == "halted" and LEAF in summary["rolled_back"], summary
        named = {(f["check"], f["device"], f["port"]) for f in summary["gate_findings"]}
        assert (conditions.LOSSLESS_DROPS, LEAF, PORT) in named, summary["gate_findings"]
        assert summary["confirmed"] == []
        # rolled back: the canary holds what it held before the run, drift and all
        held = json.loads(rolled_out.sh(LEAF, f"cat {ASIC}"))
        assert held["PFC_WD"]["swp1"]["detection_time"] == "400"
    finally:
        storm.join(120)
        _repair(rolled_out)


def _target_pid(lab: Lab, node: str) -> int:
    state = json.loads((LabPaths(lab.prefix).state_file).read_text())
    return int(state["nodes"][node]["gnmi_pid"])


def test_a_target_killed_mid_stream_is_named_silent_and_subscribed_again(
        rolled_out: Lab) -> None:
    limits = lab_thresholds(rolled_out, interval_s=INTERVAL, silent_after=3)
    paths = LabPaths(rolled_out.prefix)
    node = "leaf2"
    with watching(rolled_out, limits) as (_watch, seen):
        _quiet_start(seen)
        os.kill(_target_pid(rolled_out, node), signal.SIGKILL)
        killed = time.monotonic()
        silent = seen.wait_for(conditions.SILENT, node, None, after=killed, timeout=15)
        assert silent is not None, seen.lines
        # three intervals without a sample, then the next tick
        assert silent.at - killed <= (limits.silent_after + 1) * INTERVAL + 1.5
        spec = LabNode(name=node, role="leaf", platform="frr",
                       mgmt_ipv4=_mgmt(rolled_out, node))
        pid = lab_gnmi.start(paths.root, spec, nsenter_args(paths, node))
        _record_pid(rolled_out, node, pid)
        back = seen.wait_for(conditions.SILENT, node, None, raised=False, after=silent.at,
                             timeout=20)
        assert back is not None, seen.lines
        assert any(f"{node} " in line and "reconnected" in line for line in seen.lines)


def _mgmt(lab: Lab, node: str) -> str:
    hosts = yaml.safe_load((lab.inventory / "hosts.yaml").read_text())
    return str(hosts[node]["hostname"])


def _record_pid(lab: Lab, node: str, pid: int) -> None:
    """The restarted target is the lab's now (so `lab down` and later tests find it)."""
    path = LabPaths(lab.prefix).state_file
    state = json.loads(path.read_text())
    state["nodes"][node]["gnmi_pid"] = pid
    path.write_text(json.dumps(state, indent=1))


def test_a_target_with_a_certificate_the_watcher_does_not_trust_is_refused_in_one_line(
        rolled_out: Lab, tmp_path: Path) -> None:
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    for name in ("groups.yaml", "defaults.yaml"):
        (inventory / name).write_text((rolled_out.inventory / name).read_text())
    hosts = yaml.safe_load((rolled_out.inventory / "hosts.yaml").read_text())
    stranger = tmp_path / "other-ca.pem"
    stranger.write_bytes(make_ca("some other CA").cert)
    hosts["leaf3"]["connection_options"]["gnmi"]["extras"]["ca_file"] = str(stranger)
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    watched = Lab(prefix=rolled_out.prefix, inventory=inventory,
                  state_dir=rolled_out.state_dir, fabric=rolled_out.fabric)
    result = watched.cli("watch", "--interval", "1", "--count", "3", "--format", "json")
    # never heard, so never judged: incomplete (3), and leaf3 named unread with why
    assert result.code == 3, result.stderr
    refused = [line for line in result.stderr.splitlines() if line.startswith("leaf3 ")]
    assert len(refused) == 1, result.stderr
    assert "certificate" in refused[0].lower(), refused
    unread = [line for line in result.stderr.splitlines() if line.startswith("leaf3: not read")]
    assert len(unread) == 1 and "TLS certificate not trusted" in unread[0], result.stderr
    assert "Handshake failed" not in result.stderr  # gRPC's own log stays quiet
    data = json.loads(result.stdout)
    assert {(f["check"], f["device"]) for f in data["findings"]} == {
        (conditions.SILENT, "leaf3")}
    assert "leaf3" not in data["streamed"] and "leaf4" in data["streamed"]
