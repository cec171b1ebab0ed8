"""verify --scheduler / check --scheduler: the scheduler's topology in use (a Slurm
topology.conf, or Kubernetes nodes with flatfab's labels) against the plan and, live, against
where LLDP sees each server.

A scheduler's file is written once from a spreadsheet and drifts from the cabling: a server
recabled to another leaf keeps its old place, and jobs placed "one hop apart" cross the
spines. Statically the file is judged against the plan: each node under the same switch
with the same nodes, each block hanging from the same switches. Live, every node the file
places as planned is also judged against the leaves whose ports LLDP sees it on: a node
cabled elsewhere is named with the leaf and port it was seen on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from flatfab.checks.base import Finding, FindingKind, Scope, Severity, not_judged
from flatfab.cluster import labels as node_labels
from flatfab.cluster import placement, slurm, tree
from flatfab.cluster.hostlist import compress
from flatfab.errors import InputError
from flatfab.model.state import FabricState

PLACEMENT = "sched.placement"
CABLING = "sched.cabling"
LABELS = "sched.labels"

KINDS = (
    FindingKind(PLACEMENT, "The scheduler's topology places every node as the plan does",
                Severity.ERROR, Scope.DEVICE, """
        Reads: a Slurm topology.conf given to `--scheduler`: which nodes each switch holds
        and which switches sit under which; and the plan's blocks (the nodes cabled to the
        same leaves) and the switches above them.
        Expects: every compute node of the plan in the file, under a lowest switch with the
        same nodes as its block in the plan, and every block reaching the same nodes one,
        two, three switch levels up. Switch names do not matter: what places jobs does.
        Fails when: a planned node is missing, the file places a node the plan does not
        know, a node shares its lowest switch with other nodes than planned, or a block
        reaches other nodes at a level above (named once per block and level).
        Fix: Write the file from the plan (`flatfab cluster topology > topology.conf`),
        install it on the Slurm controller and `scontrol reconfigure`."""),
    FindingKind(CABLING, "LLDP sees every node where the scheduler's topology places it",
                Severity.ERROR, Scope.LINK, """
        Reads: live, the LLDP neighbours of every leaf's ports, and the scheduler's topology
        given to `--scheduler` (a topology.conf, or nodes with flatfab's labels).
        Expects: each node the file places as planned is seen on its planned leaves.
        Fails when: LLDP sees the node on other leaves: the server was recabled and the
        scheduler still places it by its old leaf. Named at the node, with the leaf ports it
        was seen on. A node whose leaves were not read, or whose ports show no neighbour, is
        not judged.
        Fix: Cable the server back where the plan puts it, or change the plan (hosts.yaml)
        and write the scheduler's topology again from it (`flatfab cluster topology`,
        `flatfab cluster labels`)."""),
    FindingKind(LABELS, "Every node carries the fabric labels the plan gives it",
                Severity.ERROR, Scope.DEVICE, """
        Reads: Kubernetes nodes given to `--scheduler` (`kubectl get nodes -o json`, or a
        manifest of Node objects): their labels under `fabric.flatfab.io/`; live, the
        leaves LLDP sees each node on.
        Expects: each compute node carries the labels `flatfab cluster labels` writes from
        the plan (fabric, pod, block, su, leaf, rail-<n>), and nothing else under the prefix;
        live, the block and leaf labels agree with where LLDP sees the node.
        Fails when: a node is missing, a label is missing, differs or is extra (one finding
        per node and label); live, a node is seen on other leaves than its labels say.
        Fix: `flatfab cluster labels --apply` (or apply the manifest it writes with
        `kubectl apply --server-side --field-manager=flatfab`)."""),
)
SCHEDULER_CHECKS = tuple(kind.id for kind in KINDS)
_SLURM_LINE = re.compile(r"(?m)^\s*[A-Za-z]+=")


def ids_for(files: Iterable[SchedulerFile], *, live: bool) -> list[str]:
    """The finding ids a run over these files judges (cabling only live)."""
    given = list(files)
    ids = set()
    if any(f.topology is not None for f in given):
        ids |= {PLACEMENT, CABLING} if live else {PLACEMENT}
    if any(f.nodes is not None for f in given):
        ids.add(LABELS)
    return sorted(ids)


@dataclass(frozen=True)
class SchedulerFile:
    """A scheduler topology in use, as given on the command line."""

    path: Path
    topology: slurm.TopologyFile | None = None
    nodes: node_labels.NodesInUse | None = None


def read_files(paths: Iterable[Path], option: str = "--scheduler") -> list[SchedulerFile]:
    """Each file parsed as what it is (a topology.conf has SwitchName lines; anything else is
    read as Kubernetes nodes); a file that is neither is one line naming it."""
    files: list[SchedulerFile] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InputError.single(option, str(path), f"cannot read it: {error}") from None
        try:
            if _SLURM_LINE.search(text):  # Key=Value lines: Slurm's; anything else Kubernetes'
                files.append(SchedulerFile(path, topology=slurm.parse(text)))
            else:
                files.append(SchedulerFile(path, nodes=node_labels.parse_nodes(text)))
        except (slurm.TopologyFileError, node_labels.LabelsError) as error:
            raise InputError.single(option, str(path), str(error)) from None
    return files


def judge(plan: FabricState, files: Iterable[SchedulerFile],
          observed: FabricState | None = None) -> list[Finding]:
    """Findings of every file against the plan, and against LLDP where `observed` is given."""
    planned = tree.planned_tree(plan)
    seen = None if observed is None else tree.seen_tree(plan, observed.devices)
    found: list[Finding] = []
    for given in files:
        if given.topology is not None:
            found += _placement(given, planned, given.topology)
            if seen is not None:
                found += _cabling(given, planned, seen, placement.of_file(given.topology))
        if given.nodes is not None:
            found += _labels(given, plan, planned, seen, given.nodes)
    return sorted(found, key=lambda f: f.sort_key)


def _names(nodes: Iterable[str]) -> str:
    return compress(nodes) or "none"


def _placement(given: SchedulerFile, planned: tree.SchedulerTree,
               topology: slurm.TopologyFile) -> list[Finding]:
    out: list[Finding] = []
    name = given.path.name
    for miss in placement.compare(placement.of_tree(planned), placement.of_file(topology)):
        kind = miss.kind
        if kind is placement.Difference.MISSING:
            message = f"{miss.node} is in no switch of {name}"
        elif kind is placement.Difference.UNKNOWN:
            message = f"{name} places {miss.node}, which the plan does not know"
        elif kind is placement.Difference.BLOCK:
            block = planned.block_of(miss.node)
            where = f" (block {block.name})" if block is not None else ""
            message = (f"{name} puts {miss.node} with {_names(miss.actual - {miss.node})}; "
                       f"the plan with {_names(miss.expected - {miss.node})}{where}")
        else:
            block = planned.block_of(miss.node)
            label = block.name if block is not None else miss.node
            message = (f"{name}: block {label} reaches {_names(miss.actual)} "
                       f"{miss.level} switch level(s) up; the plan {_names(miss.expected)}")
        out.append(Finding(PLACEMENT, Severity.ERROR, miss.node, message,
                           expected=_names(miss.expected), actual=_names(miss.actual)))
    return out


def _cabling(given: SchedulerFile, planned: tree.SchedulerTree, seen: tree.SchedulerTree,
             in_use: placement.Placement) -> list[Finding]:
    """Nodes the file places as planned that LLDP sees on other leaves."""
    out: list[Finding] = []
    want = placement.of_tree(planned)
    for node in planned.nodes:
        if node not in in_use.reach or in_use.reach[node][0] != want.reach[node][0]:
            continue  # placed otherwise than planned: sched.placement says so
        if node in seen.unseen:
            out.append(not_judged(CABLING, node, seen.unseen[node],
                                  what=f"where {given.path.name} places it"))
            continue
        moved = _moved(node, planned, seen)
        if moved is None:
            continue
        block, where = moved
        out.append(Finding(
            CABLING, Severity.ERROR, node,
            f"{node} is cabled to {' '.join(where.leaves)} (LLDP), but {given.path.name} "
            f"places it under {block.name} with {_names(set(block.nodes) - {node})}",
            link=f"{node}--{','.join(where.leaves)}", expected=" ".join(block.leaves),
            actual=" ".join(where.leaves)))
    return out


def _moved(node: str, planned: tree.SchedulerTree, seen: tree.SchedulerTree
           ) -> tuple[tree.Block, tree.Block] | None:
    """(its planned block, the block LLDP puts it in) of a node seen on other leaves than
    planned; None where it is seen where planned."""
    block, where = planned.block_of(node), seen.block_of(node)
    if block is None or where is None or set(where.leaves) == set(block.leaves):
        return None
    return block, where


def _labels(given: SchedulerFile, plan: FabricState, planned: tree.SchedulerTree,
            seen: tree.SchedulerTree | None, in_use: node_labels.NodesInUse) -> list[Finding]:
    out: list[Finding] = []
    name = given.path.name
    want = node_labels.node_labels(plan, planned)
    for node in sorted(want.keys() - in_use.labels.keys()):
        out.append(Finding(LABELS, Severity.ERROR, node, f"{name} has no node {node}",
                           expected="a node with flatfab's labels", actual="no node"))
    for node, labels in in_use.labels.items():
        if node not in want:
            if labels:
                out.append(Finding(LABELS, Severity.ERROR, node,
                                   f"{name}: {node} carries fabric labels but is no compute "
                                   "node of the plan", expected="none",
                                   actual=",".join(sorted(labels))))
            continue
        for key in sorted(want[node].keys() | labels.keys()):
            expected, actual = want[node].get(key), labels.get(key)
            if expected != actual:
                out.append(Finding(LABELS, Severity.ERROR, node,
                                   f"{name}: {node} {key}={actual or '(none)'}, the plan "
                                   f"{expected or '(none)'}", expected=expected or "(none)",
                                   actual=actual or "(none)"))
        if seen is not None and labels == want[node]:
            out += _labels_seen(node, name, planned, seen)
    return out


def _labels_seen(node: str, name: str, planned: tree.SchedulerTree,
                 seen: tree.SchedulerTree) -> list[Finding]:
    if node in seen.unseen:
        return [not_judged(LABELS, node, seen.unseen[node], what=f"its labels in {name}")]
    moved = _moved(node, planned, seen)
    if moved is None:
        return []
    block, where = moved
    return [Finding(LABELS, Severity.ERROR, node,
                    f"{node} is cabled to {' '.join(where.leaves)} (LLDP), but its labels in "
                    f"{name} say block {block.name}", expected=" ".join(block.leaves),
                    actual=" ".join(where.leaves))]
