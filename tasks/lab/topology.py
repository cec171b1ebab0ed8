"""labs/<fabric>.clab.yml: a genuine containerlab topology generated from the plan.

containerlab deploys it with Docker; flatfab's embedded runtime realizes the same file with
network namespaces. Bound files (FRR daemons, day-0 frr.conf) sit next to it in labs/<fabric>/.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasks.errors import InputError
from tasks.model.state import DeviceState, FabricState, LinkKind, Role
from tasks.yamlio import dump_yaml, format_path, line_of, load_yaml

SWITCH_IMAGE = "quay.io/frrouting/frr:8.4.4"
HOST_IMAGE = "flatfab/gpu-host:latest"  # any image with sshd, iproute2 and ping
LABEL_ROLE = "flatfab.role"
LABEL_PLATFORM = "flatfab.platform"
LABEL_VRFS = "flatfab.vrfs"
PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,7}$")


@dataclass(frozen=True)
class LabOptions:
    prefix: str = "ff"
    mgmt_subnet: str = "172.31.255.0/24"
    switch_image: str = SWITCH_IMAGE
    host_image: str = HOST_IMAGE


def check_prefix(prefix: str) -> str:
    if not PREFIX_RE.match(prefix):
        raise InputError.single("--prefix", "", f"{prefix!r} is not a valid lab prefix "
                                "(1-8 lowercase letters or digits, starting with a letter)")
    return prefix


def check_mgmt_subnet(subnet: str) -> ipaddress.IPv4Network:
    try:
        net = ipaddress.IPv4Network(subnet, strict=True)
    except ValueError as exc:
        raise InputError.single("--mgmt-subnet", "", f"not an IPv4 subnet: {exc}") from None
    if net.prefixlen > 26:
        raise InputError.single("--mgmt-subnet", "", f"{net} is too small; use /26 or larger")
    return net


def mgmt_addresses(state: FabricState, subnet: ipaddress.IPv4Network) -> dict[str, str]:
    """Node -> management address: .1 is the controller, nodes from .11 in plan order."""
    names = list(state.devices)
    if 11 + len(names) >= subnet.num_addresses - 1:
        raise InputError.single("--mgmt-subnet", "", f"{subnet} has no room for "
                                f"{len(names)} lab nodes")
    return {name: str(subnet[11 + index]) for index, name in enumerate(names)}


def daemons_file() -> str:
    return "\n".join([
        "# FRR daemons for a flatfab lab switch",
        "zebra=yes",
        "bgpd=yes",
        "staticd=yes",
        "vtysh_enable=yes",
        'frr_profile="datacenter"',
        'zebra_options="  -A 127.0.0.1 -s 90000000"',
        'bgpd_options="   -A 127.0.0.1"',
        'staticd_options="-A 127.0.0.1"',
        'watchfrr_options=""',
        "",
    ])


def day0_frr_conf(hostname: str) -> str:
    """The configuration a switch boots with: only what the lab needs before any rollout."""
    return "\n".join([
        "frr defaults datacenter",
        f"hostname {hostname}",
        "log file /var/log/frr/frr.log informational",
        "service integrated-vtysh-config",
        "!",
        "end",
        "",
    ])


SWITCH_SYSCTLS = (
    "net.ipv4.ip_forward=1",
    "net.ipv6.conf.all.forwarding=1",
    "net.ipv4.fib_multipath_hash_policy=1",
)


def _switch_exec(device: DeviceState) -> list[str]:
    """What a container switch runs after deploy: the kernel objects FRR expects."""
    cmds = [f"sysctl -w {s}" for s in SWITCH_SYSCTLS]
    for vrf, vrf_id in device.vrfs.items():
        cmds.append(f"ip link add {vrf} type vrf table {vrf_id}")
        cmds.append(f"ip link set {vrf} up")
    for sub in device.interfaces.values():
        if sub.parent is not None:
            vrf_id = device.vrfs[sub.vrf]
            cmds.append(f"ip link add link {sub.parent} name {sub.name} type vlan id {vrf_id}")
            cmds.append(f"ip link set {sub.name} master {sub.vrf}")
    return cmds


def generate(state: FabricState, options: LabOptions) -> tuple[dict[str, Any], dict[str, str]]:
    """Build the topology document and the files it binds (relative path -> content)."""
    check_prefix(options.prefix)
    subnet = check_mgmt_subnet(options.mgmt_subnet)
    mgmt = mgmt_addresses(state, subnet)
    fabric = state.fabric
    nodes: dict[str, Any] = {}
    files: dict[str, str] = {}
    for name, device in state.devices.items():
        labels = {LABEL_ROLE: device.role.value, LABEL_PLATFORM: device.platform}
        node: dict[str, Any] = {"kind": "linux", "mgmt-ipv4": mgmt[name]}
        if device.role is Role.HOST:
            node["image"] = options.host_image
        else:
            node["image"] = options.switch_image
            if device.vrfs:
                labels[LABEL_VRFS] = ",".join(f"{v}:{i}" for v, i in device.vrfs.items())
            files[f"{fabric}/{name}/daemons"] = daemons_file()
            files[f"{fabric}/{name}/frr.conf"] = day0_frr_conf(name)
            files[f"{fabric}/{name}/vtysh.conf"] = "service integrated-vtysh-config\n"
            node["binds"] = [f"{fabric}/{name}/{f}:/etc/frr/{f}"
                             for f in ("daemons", "frr.conf", "vtysh.conf")]
            node["exec"] = _switch_exec(device)
        node["labels"] = labels
        nodes[name] = node
    links = []
    for link in state.links:
        if link.parent is not None:
            continue  # VRF sub-links ride on their physical link
        ends = (link.a, link.b) if link.kind is LinkKind.FABRIC else (link.b, link.a)
        links.append({"endpoints": [f"{e.device}:{e.port}" for e in ends]})
    doc = {
        "name": fabric,
        "prefix": options.prefix,
        "mgmt": {"network": f"{options.prefix}-mgmt", "ipv4-subnet": str(subnet)},
        "topology": {"nodes": nodes, "links": links},
    }
    return doc, files


HEADER = ("# Generated by `flatfab lab generate` from intents/{fabric}/; do not edit.\n"
          "# containerlab deploys it as is; `flatfab lab up` realizes it without Docker.\n")


def write(doc: dict[str, Any], files: dict[str, str], labs_dir: Path) -> Path:
    labs_dir.mkdir(parents=True, exist_ok=True)
    path = labs_dir / f"{doc['name']}.clab.yml"
    path.write_text(HEADER.format(fabric=doc["name"]) + dump_yaml(doc), encoding="utf-8")
    for relative, content in files.items():
        target = labs_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return path


# ---- reading a topology back: what a runtime needs ------------------------------------


@dataclass(frozen=True)
class LabNode:
    name: str
    role: str
    platform: str
    mgmt_ipv4: str
    vrfs: dict[str, int] = field(default_factory=dict)
    binds: dict[str, Path] = field(default_factory=dict)  # container path -> host file


@dataclass(frozen=True)
class LabLink:
    a: tuple[str, str]
    b: tuple[str, str]


@dataclass(frozen=True)
class LabSpec:
    name: str
    prefix: str
    mgmt_subnet: ipaddress.IPv4Network
    nodes: dict[str, LabNode]
    links: list[LabLink]
    file: Path


def read(path: Path, prefix: str | None = None, mgmt_subnet: str | None = None) -> LabSpec:
    """Parse a topology; --prefix / --mgmt-subnet override the file so two labs can coexist."""
    shown = str(path)
    doc = load_yaml(path)

    def bad(keys: tuple[str | int, ...], reason: str) -> InputError:
        return InputError.single(shown, format_path(keys), reason, line_of(doc, keys))

    if not isinstance(doc, dict) or not isinstance(doc.get("topology"), dict):
        raise bad((), "not a containerlab topology (no 'topology' mapping)")
    file_subnet = check_mgmt_subnet(str((doc.get("mgmt") or {}).get("ipv4-subnet",
                                                                     "172.20.20.0/24")))
    subnet = check_mgmt_subnet(mgmt_subnet) if mgmt_subnet else file_subnet
    lab_prefix = check_prefix(prefix or str(doc.get("prefix", "ff")))
    nodes: dict[str, LabNode] = {}
    raw_nodes = doc["topology"].get("nodes") or {}
    for name, raw in raw_nodes.items():
        keys: tuple[str | int, ...] = ("topology", "nodes", name)
        if not isinstance(raw, dict):
            raise bad(keys, "node must be a mapping")
        labels = raw.get("labels") or {}
        role = str(labels.get(LABEL_ROLE, ""))
        if role not in {"spine", "leaf", "host"}:
            raise bad((*keys, "labels"), f"needs label {LABEL_ROLE}: spine, leaf or host")
        if "mgmt-ipv4" not in raw:
            raise bad(keys, "needs mgmt-ipv4")
        address = ipaddress.IPv4Address(str(raw["mgmt-ipv4"]))
        if address not in file_subnet:
            raise bad((*keys, "mgmt-ipv4"), f"{address} is outside {file_subnet}")
        offset = int(address) - int(file_subnet.network_address)
        if offset >= subnet.num_addresses - 1:
            raise bad((*keys, "mgmt-ipv4"), f"does not fit --mgmt-subnet {subnet}")
        vrfs: dict[str, int] = {}
        for item in filter(None, str(labels.get(LABEL_VRFS, "")).split(",")):
            vrf, _, vrf_id = item.partition(":")
            if not vrf_id.isdigit():
                raise bad((*keys, "labels", LABEL_VRFS), f"expected name:id, got {item!r}")
            vrfs[vrf] = int(vrf_id)
        binds: dict[str, Path] = {}
        for index, bind in enumerate(raw.get("binds") or []):
            source, _, target = str(bind).partition(":")
            if not target:
                raise bad((*keys, "binds", index), "expected source:target")
            binds[target.split(":")[0]] = (path.parent / source).resolve()
        nodes[name] = LabNode(name=name, role=role,
                              platform=str(labels.get(LABEL_PLATFORM, "")),
                              mgmt_ipv4=str(subnet[offset]), vrfs=vrfs, binds=binds)
    links: list[LabLink] = []
    for index, raw in enumerate(doc["topology"].get("links") or []):
        endpoints = raw.get("endpoints") if isinstance(raw, dict) else None
        if not isinstance(endpoints, list) or len(endpoints) != 2:
            raise bad(("topology", "links", index), "expected two endpoints")
        ends = []
        for end in endpoints:
            node, _, port = str(end).partition(":")
            if node not in nodes or not port:
                raise bad(("topology", "links", index), f"unknown endpoint {end!r}")
            ends.append((node, port))
        links.append(LabLink(a=ends[0], b=ends[1]))
    return LabSpec(name=str(doc.get("name", path.stem)), prefix=lab_prefix, mgmt_subnet=subnet,
                   nodes=nodes, links=links, file=path)
