"""labs/<fabric>.clab.yml: a genuine containerlab topology generated from the plan.

containerlab deploys it with Docker; flatfab's embedded runtime realizes the same file with
network namespaces. Bound files (FRR daemons, day-0 frr.conf) sit next to it in labs/<fabric>/.
"""

from __future__ import annotations

import ipaddress
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flatfab.errors import InputError
from flatfab.lab import hardware
from flatfab.model.state import FabricState, LinkKind, Role
from flatfab.platforms.registry import get as get_platform
from flatfab.yamlio import dump_yaml, format_path, line_of, load_yaml

# what a routed lab node needs from its kernel (the embedded runtime sets it per namespace)
SWITCH_SYSCTLS = (
    "net.ipv4.ip_forward=1",
    "net.ipv6.conf.all.forwarding=1",
    "net.ipv4.fib_multipath_hash_policy=1",
)
LABEL_ROLE = "flatfab.role"
LABEL_PLATFORM = "flatfab.platform"
LABEL_VRFS = "flatfab.vrfs"
PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,7}$")


@dataclass(frozen=True)
class LabOptions:
    prefix: str = "ff"
    mgmt_subnet: str = "172.31.255.0/24"
    images: dict[str, str] = field(default_factory=dict)  # platform -> image override


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


# (intent file stem, key path, network): flatfab.intent.semantics.AddressSpace
Pool = tuple[str, tuple[str | int, ...], ipaddress.IPv4Network]


def check_mgmt_overlap(state: FabricState, subnet: ipaddress.IPv4Network,
                       pools: Sequence[Pool] = ()) -> None:
    """The management subnet must not overlap any address the fabric plans, nor any pool it
    allocates from (tomorrow's leaf takes its addresses there): the lab's controller routes
    it, so an overlap would steer fabric or tenant traffic to management."""
    for name, device in state.devices.items():
        for iface in device.interfaces.values():
            for address in iface.addresses:
                net = ipaddress.ip_interface(address).network
                if net.version == 4 and net.overlaps(subnet):
                    raise InputError.single("--mgmt-subnet", "", (
                        f"{subnet} overlaps {net} of {name} {iface.name}; choose a "
                        "management subnet outside the fabric's pools"))
    for file, keys, net in pools:
        if net.overlaps(subnet):
            where = "lies inside" if subnet.subnet_of(net) else "overlaps"
            raise InputError.single("--mgmt-subnet", "", (
                f"{subnet} {where} {net}, the fabric's {format_path(keys)} "
                f"(intents/{state.fabric}/{file}.yaml); choose a management subnet outside "
                "the fabric's pools"))


def mgmt_addresses(state: FabricState, subnet: ipaddress.IPv4Network) -> dict[str, str]:
    """Node -> management address: .1 is the controller, nodes from .11 in plan order."""
    names = list(state.devices)
    if 11 + len(names) >= subnet.num_addresses - 1:
        raise InputError.single("--mgmt-subnet", "", f"{subnet} has no room for "
                                f"{len(names)} lab nodes")
    return {name: str(subnet[11 + index]) for index, name in enumerate(names)}


def generate(state: FabricState, options: LabOptions,
             pools: Sequence[Pool] = ()) -> tuple[dict[str, Any], dict[str, str]]:
    """Build the topology document and the files it binds (relative path -> content);
    `pools` are the intent's address spaces, which the management subnet must avoid."""
    check_prefix(options.prefix)
    subnet = check_mgmt_subnet(options.mgmt_subnet)
    check_mgmt_overlap(state, subnet, pools)
    mgmt = mgmt_addresses(state, subnet)
    fabric = state.fabric
    nodes: dict[str, Any] = {}
    files: dict[str, str] = {}
    for name, device in state.devices.items():
        labels = {LABEL_ROLE: device.role.value, LABEL_PLATFORM: device.platform}
        spec = get_platform(device.platform).lab_node(device)
        node: dict[str, Any] = {"kind": spec.kind, "mgmt-ipv4": mgmt[name]}
        image = options.images.get(device.platform, spec.image)
        node["image"] = image
        if spec.type is not None:
            node["type"] = spec.type
        if device.role is not Role.HOST and device.vrfs:
            labels[LABEL_VRFS] = ",".join(f"{v}:{i}" for v, i in device.vrfs.items())
        bound = dict(spec.files)
        phy = hardware.node_file(state, name)
        if phy is not None:  # the lab's stand-in for the modules in its ports
            bound[hardware.TARGET] = phy
        for target, content in bound.items():
            files[f"{fabric}/{name}/{target.rsplit('/', 1)[-1]}"] = content
        if bound:
            node["binds"] = [f"{fabric}/{name}/{t.rsplit('/', 1)[-1]}:{t}" for t in bound]
        if spec.exec:
            node["exec"] = list(spec.exec)
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


def _refuse_blocked(labs_dir: Path, targets: list[Path]) -> None:
    """Refuse, before anything is written, when a file to write is taken by something that
    is not a regular file, or a folder on its way is a file: labs/ is never half-written."""
    folders = {labs_dir} | {t.parent for t in targets}
    folders |= {f for folder in list(folders) for f in folder.parents
                if labs_dir in f.parents}
    for path in sorted(folders | set(targets)):
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            if path.is_symlink():
                raise InputError.single(str(path), "", "is a dangling symbolic link "
                                        "(nothing was written)") from None
            continue
        except OSError as exc:
            raise InputError.single(str(path), "", f"cannot write: {exc.strerror or exc} "
                                    "(nothing was written)") from None
        want_dir = path in folders
        if want_dir and not stat.S_ISDIR(mode):
            raise InputError.single(str(path), "", "is a file where `lab generate` keeps a "
                                    "folder (nothing was written)")
        if not want_dir and not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise InputError.single(str(path), "", f"is {kind} where `lab generate` writes "
                                    "a file (nothing was written)")


def write(doc: dict[str, Any], files: dict[str, str], labs_dir: Path) -> Path:
    path = labs_dir / f"{doc['name']}.clab.yml"
    _refuse_blocked(labs_dir, [path, *(labs_dir / relative for relative in files)])
    labs_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER.format(fabric=doc["name"]) + dump_yaml(doc), encoding="utf-8")
    for relative, content in files.items():
        target = labs_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    _remove_stale_nodes(labs_dir / str(doc["name"]), set(doc["topology"]["nodes"]))
    return path


def _remove_stale_nodes(folder: Path, nodes: set[str]) -> None:
    """A node the fabric no longer has (renamed, or removed) leaves no bound files behind,
    which a runtime would otherwise mount into nothing. Only folders holding nothing but
    regular files are generated ones; anything else is left alone."""
    if not folder.is_dir():
        return
    for child in sorted(folder.iterdir()):
        if child.name in nodes or child.is_symlink() or not child.is_dir():
            continue
        entries = list(child.iterdir())
        if all(e.is_file() and not e.is_symlink() for e in entries):
            for entry in entries:
                entry.unlink()
            child.rmdir()


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
        if role not in set(Role):
            raise bad((*keys, "labels"), f"needs label {LABEL_ROLE}: "
                      f"{', '.join(r.value for r in Role)}")
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
