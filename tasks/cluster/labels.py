"""Kubernetes node labels that say where each GPU server sits in the fabric, for schedulers
that place by labels (Kueue's topology-aware scheduling reads one label per level; NVIDIA's
AI-cloud requirements ask for a switch identity per node).

The scheme, every key under `fabric.flatfab.io/`:

| key | value | levels |
| --- | --- | --- |
| `fabric` | the fabric's name | the top |
| `pod` | the pod number (5-stage fabrics) | a pod's spines |
| `block` | the node's block: its leaf, or its scalable unit (`su3`) | one hop apart |
| `su` | the scalable unit's number (rail-optimized fabrics) | |
| `leaf` | the node's one leaf (a single-homed node) | |
| `rail-<n>` | the leaf NIC n is cabled to (rail-optimized servers) | |

flatfab writes them as a manifest of Node objects holding labels only (applied with
`kubectl apply --server-side --field-manager=flatfab`, which leaves every other field and
label alone) or sets them itself with the Kubernetes client when asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from flatfab.cluster.hostlist import natural
from flatfab.cluster.tree import SchedulerTree
from flatfab.model.state import FabricState, Role

PREFIX = "fabric.flatfab.io/"
# a label value: 63 characters at most, alphanumerics at both ends, '-', '_' and '.' inside
# (Kubernetes "Labels and Selectors", syntax and character set)
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class LabelsError(ValueError):
    """Node labels flatfab cannot write or read."""


def _checked(node: str, key: str, value: str) -> str:
    if len(value) > 63 or not _VALUE.match(value):
        raise LabelsError(f"{node}: {PREFIX}{key}={value!r} is not a Kubernetes label value "
                          "(63 characters at most, alphanumerics at both ends, '-', '_', '.')")
    return value


def node_labels(plan: FabricState, tree: SchedulerTree) -> dict[str, dict[str, str]]:
    """Node -> its labels (full keys), from the tree's blocks and the plan's cabling."""
    out: dict[str, dict[str, str]] = {}
    for block in tree.blocks:
        for node in block.nodes:
            device = plan.devices[node]
            labels = {"fabric": plan.fabric, "block": block.name}
            if device.pod is not None:
                labels["pod"] = str(device.pod)
            if device.su is not None:
                labels["su"] = str(device.su)
            if len(block.leaves) == 1:
                labels["leaf"] = block.leaves[0]
            for nic in device.interfaces.values():
                leaf = plan.devices.get(nic.peer.device) if nic.peer is not None else None
                if nic.rail is not None and leaf is not None and leaf.role is Role.LEAF \
                        and leaf.name in block.leaves:
                    labels[f"rail-{nic.rail}"] = leaf.name
            out[node] = {PREFIX + k: _checked(node, k, v) for k, v in sorted(labels.items())}
    return dict(sorted(out.items(), key=lambda item: natural(item[0])))


def manifest(labels: Mapping[str, Mapping[str, str]], fabric: str) -> str:
    """A YAML stream of Node objects with these labels only, for server-side apply."""
    header = (f"# Kubernetes node labels of fabric {fabric}, written by flatfab from its plan\n"
              "# (`flatfab cluster labels`): apply with\n"
              "#   kubectl apply --server-side --field-manager=flatfab -f <this file>\n")
    docs = [{"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": node, "labels": dict(values)}}
            for node, values in labels.items()]
    return header + yaml.safe_dump_all(docs, sort_keys=True, default_flow_style=False)


@dataclass(frozen=True)
class NodesInUse:
    """The flatfab labels each node carries, as read from a file."""

    labels: dict[str, dict[str, str]]


def parse_nodes(text: str) -> NodesInUse:
    """Nodes and their flatfab labels from `kubectl get nodes -o json` (or `-o yaml`), or a
    manifest of Node objects (one document each, or a List)."""
    try:
        documents = ([json.loads(text)] if text.lstrip().startswith("{")
                     else [d for d in yaml.safe_load_all(text) if d is not None])
    except (ValueError, yaml.YAMLError) as error:
        raise LabelsError(f"neither JSON nor YAML: {error}") from None
    nodes: list[Any] = []
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            raise LabelsError(f"document {index + 1} is not a Kubernetes object")
        items = document.get("items")
        nodes.extend(items if isinstance(items, list) else [document])
    found: dict[str, dict[str, str]] = {}
    for index, node in enumerate(nodes):
        metadata = node.get("metadata") if isinstance(node, dict) else None
        if not isinstance(node, dict) or node.get("kind", "Node") != "Node" \
                or not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
            raise LabelsError(f"object {index + 1} is not a Node with a name")
        labels = metadata.get("labels") or {}
        if not isinstance(labels, dict):
            raise LabelsError(f"node {metadata['name']}: labels are not a mapping")
        found[metadata["name"]] = {str(k): str(v) for k, v in labels.items()
                                   if str(k).startswith(PREFIX)}
    return NodesInUse(found)
