"""The cluster's side on the live rail lab: the topology.conf and node labels flatfab writes
from the plan pass verify; a server recabled for real to another SU's leaf (two servers'
rail-1 NICs trade cables, each now on the other SU's rail-1 leaf) is named by verify against
both files; a server's nccl.conf edited by hand is named by host.nccl; cabled back and rolled
out, all are clean again."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from flatfab.lab.system import run
from tests.support.lab import Lab
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.live, pytest.mark.rail]

ONE, OTHER = "su1-s1", "su2-s1"  # servers of two SUs (and pods)
NIC = "eth1"  # rail 1
# where the lab's linux_host driver keeps a server's nccl.conf (its state dir, never /etc)
NCCL_CONF = "/var/lib/flatfab/nccl.conf"


def _lldpd_knows(lab: Lab, node: str, port: str) -> bool:
    socket = lab.paths.lldp_socket(node)
    shown = run(["lldpcli", "-u", str(socket), "-f", "keyvalue", "show", "interfaces"]).stdout
    return f"lldp.{port}." in shown


def _trade_cables(lab: Lab) -> None:
    """ONE's and OTHER's rail-1 NICs trade namespaces: each now ends on the other's leaf port
    (a cable moved at the server end). Each leaves under a name of its own, and takes the
    NIC's name once the server's lldpd has let the old NIC go: a NIC that came back under the
    same name and interface index at once would be taken for the old one (lldpd would keep
    sending on the old one's socket, and nothing would be heard)."""
    one, other = f"{lab.prefix}-{ONE}", f"{lab.prefix}-{OTHER}"
    for command in (f"-n {one} link set {NIC} down", f"-n {one} link set {NIC} name ffmove1",
                    f"-n {other} link set {NIC} down", f"-n {other} link set {NIC} name ffmove2",
                    f"-n {one} link set ffmove1 netns {other}",
                    f"-n {other} link set ffmove2 netns {one}"):
        run(["ip", *command.split()])
    wait_for(lambda: not any(_lldpd_knows(lab, n, NIC) for n in (ONE, OTHER)),
             f"the servers' lldpd letting {NIC} go")
    for command in (f"-n {one} link set ffmove2 name {NIC}",
                    f"-n {other} link set ffmove1 name {NIC}",
                    f"-n {one} link set {NIC} up", f"-n {other} link set {NIC} up"):
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
    _trade_cables(rail)
    traded = True
    try:
        # lldpd sends every 5 s; the leaves' host ports sit in their VRFs' namespaces, whose
        # own lldpd verify reads: poll verify until both moves are heard
        deadline = time.monotonic() + 60
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
    # a server's nccl.conf edited by hand: NCCL would send in another traffic class
    rail.sh("su1-s2", f"sed -i 's/^NCCL_IB_TC=106$/NCCL_IB_TC=0/' {NCCL_CONF}")
    edited = rail.cli("verify", "--no-probes", "--check", "host.nccl", "--format", "json")
    wrong = [(f["check"], f["device"], f["expected"], f["actual"])
             for f in edited.json()["findings"] if f["severity"] == "error"]
    assert (edited.code, wrong) == (1, [("host.nccl", "su1-s2", "106", "0")])
    # the NICs lost their addresses and routes on the move: a rollout puts the servers (and
    # the nccl.conf) back
    repaired = rail.cli("rollout", "--format", "json", timeout=900)
    assert repaired.code == 0, repaired.stdout[-3000:] + repaired.stderr
    deadline = time.monotonic() + 90
    while True:  # until LLDP hears each NIC back where it belongs
        code, found = _verify(rail, topology, nodes)
        if code == 0 or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert (code, found) == (0, [])
