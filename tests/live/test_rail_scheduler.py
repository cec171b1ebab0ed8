"""The scheduler's topology on the live rail lab: the topology.conf and node labels flatfab
writes from the plan pass verify; a server recabled for real to another SU's leaf (two
servers' rail-1 NICs trade cables, each now on the other SU's rail-1 leaf) is named by verify
against both files; cabled back and rolled out, they are clean again."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from flatfab.intent.loader import load_intent
from flatfab.lab.system import run
from flatfab.plan.planner import plan
from tests.support.lab import Lab
from tests.support.paths import ROOT

pytestmark = [pytest.mark.live, pytest.mark.rail]

ONE, OTHER = "su1-s1", "su2-s1"  # servers of two SUs (and pods)
NIC = "eth1"  # rail 1


def _leaf_ports() -> dict[str, tuple[str, str]]:
    """Server -> its rail-1 NIC's planned (leaf, port)."""
    fabric = plan(load_intent(ROOT / "intents" / "rail"))
    out = {}
    for server in (ONE, OTHER):
        peer = fabric.devices[server].interfaces[NIC].peer
        assert peer is not None
        out[server] = (peer.device, peer.port)
    return out


def _trade_cables(lab: Lab) -> None:
    """ONE's and OTHER's rail-1 NICs trade namespaces: each now ends on the other's leaf port
    (a cable moved at the server end)."""
    one, other = f"{lab.prefix}-{ONE}", f"{lab.prefix}-{OTHER}"
    for command in (f"-n {one} link set {NIC} down", f"-n {one} link set {NIC} name ffmove",
                    f"-n {one} link set ffmove netns {other}",
                    f"-n {other} link set {NIC} down", f"-n {other} link set {NIC} netns {one}",
                    f"-n {other} link set ffmove name {NIC}", f"-n {other} link set {NIC} up",
                    f"-n {one} link set {NIC} up"):
        run(["ip", *command.split()])


def _verify(lab: Lab, *files: Path) -> tuple[int, list[dict[str, Any]]]:
    given = [arg for path in files for arg in ("--scheduler", str(path))]
    result = lab.cli("verify", "--no-probes", "--check", "rail.alignment", *given,
                     "--format", "json")
    assert result.code in (0, 1, 3), result.stdout[-2000:] + result.stderr
    return result.code, [f for f in result.json()["findings"]
                         if f["check"].startswith("sched.")]


def test_a_server_recabled_to_another_leaf_is_named_against_the_scheduler(
        rail: Lab, tmp_path: Path) -> None:
    topology, nodes = tmp_path / "topology.conf", tmp_path / "nodes.yaml"
    assert rail.cli("cluster", "topology", "--out", str(topology)).code == 0
    assert rail.cli("cluster", "labels", "--out", str(nodes)).code == 0
    code, found = _verify(rail, topology, nodes)
    assert (code, found) == (0, [])
    ports = _leaf_ports()
    _trade_cables(rail)
    traded = True
    try:
        rail.wait_lldp_heard({ports[ONE]: f"{OTHER}:{NIC}", ports[OTHER]: f"{ONE}:{NIC}"},
                             timeout=40)
        deadline = time.monotonic() + 30
        while True:
            code, found = _verify(rail, topology, nodes)
            named = {(f["check"], f["device"]) for f in found if f["severity"] == "error"}
            if len(named) >= 4 or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert named == {("sched.cabling", ONE), ("sched.cabling", OTHER),
                         ("sched.labels", ONE), ("sched.labels", OTHER)}, found
        assert code == 1
        cabling = {f["device"]: f for f in found if f["check"] == "sched.cabling"}
        assert cabling[ONE]["message"] == (
            f"{ONE} is cabled to su1-leaf2 su1-leaf3 su1-leaf4 su2-leaf1 (LLDP), but "
            "topology.conf places it under su1 with su1-s2")
        _trade_cables(rail)
        traded = False
    finally:
        if traded:
            _trade_cables(rail)
    # the NICs lost their addresses and routes on the move: a rollout puts the servers back
    repaired = rail.cli("rollout", "--format", "json", timeout=900)
    assert repaired.code == 0, repaired.stdout[-3000:] + repaired.stderr
    rail.wait_lldp_heard({ports[ONE]: f"{ONE}:{NIC}", ports[OTHER]: f"{OTHER}:{NIC}"},
                         timeout=40)
    deadline = time.monotonic() + 60
    while True:  # a moved cable's old LLDP entry may linger until its hold time ends
        code, found = _verify(rail, topology, nodes)
        if code == 0 or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert (code, found) == (0, [])
