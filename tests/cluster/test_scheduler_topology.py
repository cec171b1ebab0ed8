"""The scheduler's topology from the plan: Slurm's topology.conf (judged by Debian's slurmctld,
which parses it and shows the hierarchy it built) and Kubernetes node labels; and the judge of
a topology in use against the plan and against where LLDP sees each server."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from flatfab.checks.base import Severity
from flatfab.cluster import hostlist, placement, slurm, tree
from flatfab.cluster import labels as node_labels
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import Endpoint, FabricState
from flatfab.plan.planner import plan
from flatfab.workflows.commands import scheduler
from tests.support import slurm as slurm_judge
from tests.support.inprocess import in_process
from tests.support.paths import ROOT

EXAMPLES = sorted(p.name for p in (ROOT / "intents").iterdir() if (p / "fabric.yaml").exists())


@cache
def _plan(example: str) -> FabricState:
    return plan(load_intent(ROOT / "intents" / example))


def _file(tmp_path: Path, text: str, name: str = "topology.conf") -> list[scheduler.SchedulerFile]:
    path = tmp_path / name
    path.write_text(text)
    return scheduler.read_files([path])


@pytest.mark.parametrize(("expression", "names"), [
    ("su1-s[1-3,7]", ["su1-s1", "su1-s2", "su1-s3", "su1-s7"]),
    ("leaf[08-11]", ["leaf08", "leaf09", "leaf10", "leaf11"]),
    ("a,b[1-2],c", ["a", "b1", "b2", "c"]),
    ("r[1-2]-n[1-2]", ["r1-n1", "r1-n2", "r2-n1", "r2-n2"]),
])
def test_host_lists_expand_as_slurm_reads_them_and_compress_back(expression: str,
                                                                 names: list[str]) -> None:
    assert hostlist.expand(expression) == names
    assert sorted(hostlist.expand(hostlist.compress(names))) == sorted(names)


@pytest.mark.parametrize("bad", ["leaf[1-", "leaf]1", "leaf[a-b]", "leaf[3-1]"])
def test_a_host_list_slurm_would_not_read_is_refused(bad: str) -> None:
    with pytest.raises(hostlist.HostlistError, match="leaf"):
        hostlist.expand(bad)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_s_topology_passes_slurmctld_and_equals_the_plan(
        example: str, tmp_path: Path) -> None:
    """Slurm's controller reads the file and builds the plan's tree: each block's nodes under
    it, each spine and super-spine over the nodes its downlinks reach, nothing it complains
    of."""
    why = slurm_judge.missing()
    if why is not None:
        pytest.skip(why)
    fabric = _plan(example)
    planned = tree.planned_tree(fabric)
    text = slurm.render(planned)
    assert slurm.render(tree.planned_tree(fabric)) == text  # deterministic
    judged = slurm_judge.judge(text, planned.nodes, tmp_path / "slurm")
    assert judged.errors == []
    shown = judged.switches
    assert set(shown) == {b.name for b in planned.blocks} | {s.name for s in planned.switches}
    for block in planned.blocks:
        assert shown[block.name].level == 0 and shown[block.name].nodes == set(block.nodes)
    reach = placement.of_tree(planned).reach
    for switch in planned.switches:
        under = {n for n in planned.nodes if any(
            switch.name in _ancestors(planned, b) for b in planned.blocks if n in b.nodes)}
        assert shown[switch.name].nodes == under, switch.name
        assert shown[switch.name].level == switch.level
    assert set(reach) == set(planned.nodes) == set(tree.compute_nodes(fabric))
    assert placement.compare(placement.of_tree(planned),
                             placement.of_file(slurm.parse(text))) == []


def _ancestors(planned: tree.SchedulerTree, block: tree.Block) -> set[str]:
    found: set[str] = set()
    ring = {block.name}
    while ring:
        ring = {s.name for s in planned.switches if ring & {*s.blocks, *s.switches}} - found
        found |= ring
    return found


def test_a_rail_optimized_block_is_its_scalable_unit_and_a_plane_has_its_own_tree() -> None:
    fabric = _plan("rail")
    whole = tree.planned_tree(fabric)
    assert [(b.name, b.nodes) for b in whole.blocks] == [("su1", ("su1-s1", "su1-s2")),
                                                          ("su2", ("su2-s1", "su2-s2"))]
    assert "store1" not in whole.nodes  # storage servers run no jobs
    two = tree.planned_tree(fabric, plane=2)
    assert two.blocks[0].leaves == ("su1-leaf3", "su1-leaf4")
    assert {s.name for s in two.switches} == {"p2-pod1-spine1", "p2-pod2-spine1", "p2-ss1",
                                              "p2-ss2"}
    assert "# su1: su1-leaf3 su1-leaf4\nSwitchName=su1 Nodes=su1-s[1-2]\n" in slurm.render(two)


LAB_FILE = """# the lab, as an operator wrote it
SwitchName=rack1 Nodes=leaf1-h[1-2]
SwitchName=rack2 Nodes=leaf2-h1,leaf3-h1
SwitchName=rack3 Nodes=leaf3-h2,leaf2-h2,ghost1
SwitchName=rack4 Nodes=leaf4-h1
SwitchName=core Switches=rack[1-4] \\
    LinkSpeed=1
"""


def test_a_topology_in_use_is_judged_against_the_plan_whatever_its_names(
        tmp_path: Path) -> None:
    fabric = _plan("lab")
    found = scheduler.judge(fabric, _file(tmp_path, LAB_FILE))
    named = {(f.check, f.device) for f in found}
    assert named == {
        ("sched.placement", "leaf4-h2"),  # in no switch
        ("sched.placement", "ghost1"),  # not a node of the plan
        ("sched.placement", "leaf2-h1"), ("sched.placement", "leaf3-h1"),  # traded places
        ("sched.placement", "leaf3-h2"), ("sched.placement", "leaf2-h2")}
    by_node = {f.device: f.message for f in found}
    assert by_node["leaf4-h2"] == "leaf4-h2 is in no switch of topology.conf"
    assert by_node["ghost1"] == "topology.conf places ghost1, which the plan does not know"
    assert by_node["leaf2-h1"] == ("topology.conf puts leaf2-h1 with leaf3-h1; the plan with "
                                   "leaf2-h2 (block leaf2)")
    # written from the plan, the same switches and names: nothing
    (tmp_path / "clean").mkdir()
    clean = slurm.render(tree.planned_tree(fabric))
    assert scheduler.judge(fabric, _file(tmp_path / "clean", clean)) == []


def test_a_block_hung_from_other_switches_is_named_once_per_level(tmp_path: Path) -> None:
    fabric = _plan("rail")
    text = slurm.render(tree.planned_tree(fabric)).replace(
        "SwitchName=p1-pod2-spine1 Switches=su2", "SwitchName=p1-pod2-spine1 Switches=su1,su2")
    found = scheduler.judge(fabric, _file(tmp_path, text))
    # both blocks now meet one level up, under p1-pod2-spine1: each named once
    assert [(f.check, f.device, f.expected, f.actual) for f in found] == [
        ("sched.placement", "su1-s1", "su1-s[1-2]", "su1-s[1-2],su2-s[1-2]"),
        ("sched.placement", "su2-s1", "su2-s[1-2]", "su1-s[1-2],su2-s[1-2]")]
    assert found[0].message.startswith("topology.conf: block su1 reaches su1-s[1-2],su2-s[1-2] "
                                       "1 switch level(s) up")


@pytest.mark.parametrize(("text", "reason"), [
    ("SwitchName=a Nodes=x\nSwitchName=b Switches=a,c\n",
     "line 2: switch b lists c, which no SwitchName line defines"),
    ("SwitchName=a Nodes=x Parent=b\n", "line 1: unknown key 'Parent'"),
    ("SwitchName=a Nodes=x[1-\n", "line 1: 'x[1-': '[' without ']'"),
    ("SwitchName=a Nodes=x\nSwitchName=a Nodes=y\n",
     "line 2: switch a is listed twice (first on line 1)"),
    ("Nodes=x\n", "line 1: a line without SwitchName"),
])
def test_a_topology_file_flatfab_cannot_read_is_one_line(tmp_path: Path, text: str,
                                                          reason: str) -> None:
    with pytest.raises(InputError) as caught:
        _file(tmp_path, text)
    [problem] = caught.value.problems
    assert problem.path == str(tmp_path / "topology.conf") and reason in problem.reason


def _recabled(fabric: FabricState, one: tuple[str, str], other: tuple[str, str]) -> FabricState:
    """What LLDP shows after two hosts' cables traded leaf ports."""
    seen = fabric.model_copy(deep=True)
    a, b = seen.devices[one[0]].interfaces[one[1]], seen.devices[other[0]].interfaces[other[1]]
    a.peer, b.peer = (Endpoint(device=b.peer.device, port=b.peer.port) if b.peer else None,
                      Endpoint(device=a.peer.device, port=a.peer.port) if a.peer else None)
    return seen


def test_a_server_recabled_to_another_leaf_is_named_against_the_file(tmp_path: Path) -> None:
    fabric = _plan("lab")
    given = _file(tmp_path, slurm.render(tree.planned_tree(fabric)))
    assert scheduler.judge(fabric, given, fabric) == []
    seen = _recabled(fabric, ("leaf1", "swp1"), ("leaf2", "swp1"))  # leaf1-h1 <-> leaf2-h1
    found = scheduler.judge(fabric, given, seen)
    assert [(f.check, f.device, f.expected, f.actual) for f in found] == [
        ("sched.cabling", "leaf1-h1", "leaf1", "leaf2"),
        ("sched.cabling", "leaf2-h1", "leaf2", "leaf1")]
    assert found[0].message == ("leaf1-h1 is cabled to leaf2 (LLDP), but topology.conf "
                                "places it under leaf1 with leaf1-h2")


def test_a_server_whose_leaf_was_not_read_is_not_judged(tmp_path: Path) -> None:
    fabric = _plan("lab")
    given = _file(tmp_path, slurm.render(tree.planned_tree(fabric)))
    seen = fabric.model_copy(deep=True)
    seen.devices["leaf3"].reachable = False
    silent = seen.devices["leaf4"].interfaces["swp2"]
    silent.peer = None
    found = scheduler.judge(fabric, given, seen)
    assert {(f.check, f.severity, f.device) for f in found} == {
        ("sched.cabling", Severity.NOT_JUDGED, node)
        for node in ("leaf3-h1", "leaf3-h2", "leaf4-h2")}


def test_node_labels_follow_the_plan_and_every_difference_is_named(tmp_path: Path) -> None:
    fabric = _plan("rail")
    planned = tree.planned_tree(fabric)
    wanted = node_labels.node_labels(fabric, planned)
    assert wanted["su1-s2"] == {
        "fabric.flatfab.io/block": "su1", "fabric.flatfab.io/fabric": "rail",
        "fabric.flatfab.io/pod": "1", "fabric.flatfab.io/rail-1": "su1-leaf1",
        "fabric.flatfab.io/rail-2": "su1-leaf2", "fabric.flatfab.io/rail-3": "su1-leaf3",
        "fabric.flatfab.io/rail-4": "su1-leaf4", "fabric.flatfab.io/su": "1"}
    text = node_labels.manifest(wanted, fabric.fabric)
    assert node_labels.parse_nodes(text).labels == wanted
    assert scheduler.judge(fabric, _file(tmp_path, text, "nodes.yaml")) == []
    # as kubectl get nodes -o json shows them: other labels kept, one drifted, one missing
    items = [{"kind": "Node", "metadata": {"name": n, "labels": {
        **values, "kubernetes.io/hostname": n}}} for n, values in wanted.items()]
    items[0]["metadata"]["labels"]["fabric.flatfab.io/block"] = "su9"
    del items[-1]
    found = scheduler.judge(fabric, _file(tmp_path, json.dumps({"kind": "List",
                                                                "items": items}), "n.json"))
    assert [(f.check, f.device, f.expected, f.actual) for f in found] == [
        ("sched.labels", "su1-s1", "su1", "su9"),
        ("sched.labels", "su2-s2", "a node with flatfab's labels", "no node")]


def test_labels_are_judged_live_against_lldp(tmp_path: Path) -> None:
    fabric = _plan("lab")
    wanted = node_labels.node_labels(fabric, tree.planned_tree(fabric))
    given = _file(tmp_path, node_labels.manifest(wanted, "lab"), "nodes.yaml")
    seen = _recabled(fabric, ("leaf1", "swp1"), ("leaf2", "swp1"))
    found = scheduler.judge(fabric, given, seen)
    assert [(f.check, f.device, f.actual) for f in found] == [
        ("sched.labels", "leaf1-h1", "leaf2"), ("sched.labels", "leaf2-h1", "leaf1")]


def test_the_cli_writes_the_topology_and_check_judges_one(tmp_path: Path) -> None:
    root = ["--root", str(ROOT), "--fabric", "rail"]
    run = in_process(*root, "cluster", "topology", "--plane", "1")
    assert run.code == 0 and "SwitchName=p1-ss1 " in run.stdout and "p2-" not in run.stdout
    bad = in_process(*root, "cluster", "topology", "--plane", "3")
    assert bad.code == 2 and bad.stderr.strip() == (
        "error: --plane: 3: not a plane of fabric rail (its planes are 1, 2)")
    out = tmp_path / "topology.conf"
    assert in_process(*root, "cluster", "topology", "--out", str(out)).code == 0
    assert in_process(*root, "check", "--scheduler", str(out)).code == 0
    out.write_text(out.read_text().replace("su1-s[1-2]", "su1-s1"))
    judged = in_process(*root, "check", "--scheduler", str(out), "--format", "json")
    assert judged.code == 1
    found = [f for f in json.loads(judged.stdout)["findings"] if f["check"].startswith("sched")]
    assert [(f["check"], f["device"]) for f in found] == [("sched.placement", "su1-s2")]
    labels = in_process(*root, "cluster", "labels")
    assert labels.code == 0 and "fabric.flatfab.io/rail-4: su2-leaf4" in labels.stdout


def test_a_move_heard_at_one_end_only_is_not_judged_until_heard_where_it_went(
        tmp_path: Path) -> None:
    """leaf1:swp1 already hears leaf2-h1; leaf2:swp1 still hears it too (its old entry): where
    leaf1-h1 went is not known yet, so it is not judged; leaf2-h1 is heard on leaf1."""
    fabric = _plan("lab")
    given = _file(tmp_path, slurm.render(tree.planned_tree(fabric)))
    seen = fabric.model_copy(deep=True)
    seen.devices["leaf1"].interfaces["swp1"].peer = Endpoint(device="leaf2-h1", port="eth1")
    found = scheduler.judge(fabric, given, seen)
    assert [(f.check, f.severity, f.device) for f in found] == [
        ("sched.cabling", Severity.ERROR, "leaf2-h1"),
        ("sched.cabling", Severity.NOT_JUDGED, "leaf1-h1")]
    assert "LLDP hears leaf2-h1 on leaf1:swp1" in found[1].message
