"""The rail lab (intents/rail): a rail-optimized 5-stage fabric in two planes, GPU servers
with four NICs and a storage server, rolled out by its runbook (the session fixture). It
verifies clean end to end (lossless catalog on every tier, each NIC probed from its own
address, RoCE and CNP flows followed hop by hop across five stages, same-rail, cross-rail and
GPU to storage) and audits clean; then a fault matrix: each fault is named by check, device
and port, and a rollout (after the cable is put back, for the cabling faults) repairs it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from flatfab.lab.system import run
from tests.support.lab import Lab

pytestmark = [pytest.mark.live, pytest.mark.rail]
ASIC = "/var/lib/flatfab/asic/config_db.json"
LLDP_SETTLE_S = 12  # lldpd sends every 5 s: a moved cable is seen within two intervals


def _json(lab: Lab, *args: str, settling: bool = False) -> dict[str, Any]:
    """A run's JSON report (`settling`: exit 3 too, a run that names something not settled
    yet, such as a moved cable's old LLDP entry before its hold time ends)."""
    result = lab.cli(*args, "--format", "json")
    assert result.code in ((0, 1, 3) if settling else (0, 1)), \
        result.stdout[-2000:] + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _named(data: dict[str, Any], check: str) -> set[tuple[str, str | None]]:
    return {(f["device"], f["port"]) for f in data["findings"] if f["check"] == check}


def _rollout(lab: Lab) -> None:
    result = lab.cli("rollout", "--format", "json", timeout=900)
    assert result.code == 0, result.stdout[-3000:] + result.stderr


def _verify_until(lab: Lab, done: Callable[[dict[str, Any]], bool], *extra: str,
                  timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        data = _json(lab, "verify", *extra, settling=True)
        if done(data) or time.monotonic() > deadline:
            return data
        time.sleep(3)


def test_the_rail_lab_verifies_clean_across_five_stages(rail: Lab) -> None:
    data = _json(rail, "verify", "--lossless", "--traffic")
    assert data["passed"], [f["message"] for f in data["findings"]]
    checks = set(data["checks"])
    assert {"rail.alignment", "plane.independence", "ecmp.pod_paths", "host.routing",
            "traffic.class", "traffic.lossless_drops", "buffer.headroom"} <= checks
    assert data["timings"]["traffic_packets"] > 0


def test_the_rail_lab_audits_clean(rail: Lab) -> None:
    result = rail.cli("audit", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr


def _move(lab: Lab, node: str, port: str, into: str) -> None:
    """Move the cable on `node`'s `port` to the same port number of switch `into`."""
    # from the host: a switch's own /run/netns holds only its VRFs
    run(["ip", "-n", lab.paths.netns(node), "link", "set", port, "netns",
         lab.paths.netns(into)])
    lab.sh(into, f"ip link set {port} up")


@dataclass(frozen=True)
class RailFault:
    name: str
    inject: Callable[[Lab], None]
    check: str
    named: set[tuple[str, str | None]]
    undo: Callable[[Lab], None] | None = None  # put the cable back before the rollout
    settle_s: float = 0


def _edit_asic(node: str, mutation: str) -> Callable[[Lab], None]:
    def apply(lab: Lab) -> None:
        lab.sh(node, f"python3 - <<'EOF'\nimport json\np = {ASIC!r}\nd = json.load(open(p))\n"
                     f"{mutation}\njson.dump(d, open(p, 'w'), indent=1, sort_keys=True)\nEOF")
    return apply


def _shell(node: str, command: str) -> Callable[[Lab], None]:
    def apply(lab: Lab) -> None:
        lab.sh(node, command)
    return apply


RAIL_FAULTS = [
    # NIC 1 and NIC 2 of su1-s2 cabled to each other's rail leaf: both leaves name it
    RailFault("nics-swapped-between-rails", lambda lab: lab.swap_ports("su1-s2", "eth1", "eth2"),
              "rail.alignment", {("su1-leaf1", "swp2"), ("su1-leaf2", "swp2")},
              undo=lambda lab: lab.swap_ports("su1-s2", "eth1", "eth2"), settle_s=LLDP_SETTLE_S),
    # the rule of NIC 3 is gone: its traffic (an RDMA QP bound to its GID) leaves by eth1
    RailFault("nic-traffic-leaves-by-another-nic",
              _shell("su2-s1", "ip rule del from 10.100.11.11 table 103"),
              "host.routing", {("su2-s1", "eth3")}),
    # a pod spine shuts its sessions to both super-spines: pod 2 of plane 2 is cut off
    RailFault("pod-spine-lost-its-super-spines",
              _shell("p2-pod2-spine1", "vtysh -c 'configure terminal' -c 'router bgp 65002' "
                                       "-c 'neighbor swp33 shutdown' "
                                       "-c 'neighbor swp34 shutdown'"),
              "ecmp.pod_paths", {("p2-pod2-spine1", "swp33,swp34")}),
    # su2-leaf2's uplink re-cabled from its plane 1 pod spine into plane 2's
    RailFault("leaf-cabled-into-the-other-plane",
              lambda lab: _move(lab, "p1-pod2-spine1", "swp2", "p2-pod2-spine1"),
              "plane.independence", {("su2-leaf2", "swp51")},
              undo=lambda lab: _move(lab, "p2-pod2-spine1", "swp2", "p1-pod2-spine1"),
              settle_s=LLDP_SETTLE_S),
    # a super-spine port runs the headroom of a 3 m fabric-class link on its 50 m optics
    # (what a plan with the wrong link class would push)
    RailFault("super-spine-link-with-the-wrong-cable-class",
              _edit_asic("p1-ss1", "short = dict(d['BUFFER_PROFILE']"
                                   "['pg_lossless_400000_50m_mtu9216_profile'])\n"
                                   "short.update(size='247808', xoff='228352')\n"
                                   "d['BUFFER_PROFILE']['pg_lossless_400000_3m_mtu9216_profile']"
                                   " = short\n"
                                   "d['BUFFER_PG']['swp1|3']['profile'] = "
                                   "'pg_lossless_400000_3m_mtu9216_profile'"),
              "buffer.headroom", {("p1-ss1", "swp1")}),
]


@pytest.mark.parametrize("fault", RAIL_FAULTS, ids=[f.name for f in RAIL_FAULTS])
def test_each_rail_fault_is_named_and_repaired(rail: Lab, fault: RailFault) -> None:
    fault.inject(rail)
    undone = False
    try:
        time.sleep(fault.settle_s)
        data = _verify_until(rail, lambda d: fault.named <= _named(d, fault.check),
                             "--lossless")
        assert fault.named <= _named(data, fault.check), \
            [(f["check"], f["device"], f["port"], f["message"]) for f in data["findings"]]
        if fault.undo is not None:
            fault.undo(rail)
            undone = True
        _rollout(rail)
    finally:
        if fault.undo is not None and not undone:
            fault.undo(rail)
            _rollout(rail)
    clean = _verify_until(rail, lambda d: bool(d["passed"]), "--lossless", timeout=90)
    assert clean["passed"], [f["message"] for f in clean["findings"]]


def test_a_mis_marked_nic_beside_a_correct_neighbour_is_named_at_its_hops(rail: Lab) -> None:
    """su1-s1's NIC 1 marks its RoCE AF11 (DSCP 10): its flows cross su1-leaf1's uplink in a
    lossy class, beside su1-s2's correctly marked ones on the same uplink; verify --traffic
    names the mis-marked flows at each hop they crossed, never the neighbour's."""
    rail.sh("su1-s1", "nft insert rule inet flatfab roce_marking oifname eth1 udp dport 4791 "
                      "ip dscp set 10 accept")
    try:
        data = _json(rail, "verify", "--traffic", "--no-probes")
        assert not data["passed"]
        wrong = [f for f in data["findings"] if f["check"] == "traffic.class"]
        assert ("su1-leaf1", "swp51.100") in {(f["device"], f["port"]) for f in wrong}
        assert all("su1-s1 eth1 -> " in f["message"] for f in wrong), wrong
    finally:
        _rollout(rail)
    clean = _json(rail, "verify", "--traffic", "--no-probes")
    assert clean["passed"], [f["message"] for f in clean["findings"]]
