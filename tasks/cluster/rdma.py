"""Readers of a GPU host's RDMA state, and the judge of its RDMA MTU against the fabric's.

Three sources, each as a documented public source describes it:

- the sysfs GID tables, `/sys/class/infiniband/<dev>/ports/<port>/gids/<index>`, with
  `gid_attrs/types/<index>` ("IB/RoCE v1" or "RoCE v2") and `gid_attrs/ndevs/<index>` (the
  netdev the GID belongs to): Linux kernel Documentation/ABI "sysfs-class-infiniband";
  NVIDIA MLNX_OFED / DOCA "RDMA over Converged Ethernet (RoCE)", "GID Table in sysfs";
- `rdma link show` and `rdma -j link show` (iproute2 rdma-link(8)): one line or object per
  device port with its state, physical state and netdev;
- `ibv_devinfo` (rdma-core, libibverbs utilities): per device and port the port state,
  active MTU and link layer.

A host without RDMA devices is `NoRdma`, never an empty reading: its caller reports the host
as not judged, not as passed. Malformed output is one `RdmaOutputError` naming what and where.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flatfab.model.wire import ROCE_HEADER_BYTES

ROCE_V2 = "RoCE v2"
ROCE_V1 = "IB/RoCE v1"  # the kernel's name for an IB or RoCE v1 GID (sysfs-class-infiniband)
PORT_ACTIVE = "PORT_ACTIVE"  # ibv_devinfo's name of an active port
ETHERNET = "Ethernet"  # ibv_devinfo's link layer of a RoCE port


class RdmaOutputError(ValueError):
    """Output of an RDMA tool or sysfs that is not in the shape the tool documents."""


@dataclass(frozen=True)
class NoRdma:
    """The host has no RDMA device: nothing to judge (report it as not judged)."""

    source: str
    why: str

    def __str__(self) -> str:
        return f"no RDMA devices ({self.source}: {self.why})"


@dataclass(frozen=True)
class RdmaPort:
    """One port of an RDMA device; `port` None: every port of the device (NCCL_IB_HCA reads a
    name without `:port` so)."""

    device: str
    port: int | None = None

    def __str__(self) -> str:
        """As NCCL_IB_HCA names it: `mlx5_0:1`."""
        return self.device if self.port is None else f"{self.device}:{self.port}"

    @property
    def name(self) -> str:
        """As `rdma link` names it (and every Mismatch's `rdma`): `mlx5_0/1`."""
        return self.device if self.port is None else f"{self.device}/{self.port}"


@dataclass(frozen=True)
class Mismatch:
    """One setting of a server that does not agree with the fabric: where (server, NIC, RDMA
    device), what (setting), expected and actual, and where the actual value came from."""

    server: str
    setting: str
    expected: str
    actual: str
    nic: str | None = None
    rdma: str | None = None
    where: str | None = None
    why: str = ""

    def __str__(self) -> str:
        on = "".join(f" {part}" for part in (self.nic, self.rdma) if part)
        src = f" ({self.where})" if self.where else ""
        because = f": {self.why}" if self.why else ""
        return (f"{self.server}{on}: {self.setting} is {self.actual}{src}, "
                f"expected {self.expected}{because}")


def _natural(name: str) -> tuple[Any, ...]:
    """Sort key that puts mlx5_2 before mlx5_10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


# --- sysfs GID tables --------------------------------------------------------------------


@dataclass(frozen=True)
class GidEntry:
    """One populated GID table entry. `type` or `netdev` None: unreadable (the table's
    `unreadable` says why)."""

    index: int
    gid: str  # as sysfs prints it: eight groups of four hex digits
    type: str | None
    netdev: str | None

    @property
    def address(self) -> ipaddress.IPv6Address:
        return ipaddress.IPv6Address(self.gid)

    @property
    def ipv4(self) -> str | None:
        """The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), else None."""
        mapped = self.address.ipv4_mapped
        return None if mapped is None else str(mapped)

    @property
    def link_local(self) -> bool:
        """An IPv6 link-local GID (fe80::/10, the default GID made from the MAC) or a mapped
        IPv4 link-local one: neither is routed across an L3 fabric."""
        mapped = self.address.ipv4_mapped
        return self.address.is_link_local or (mapped is not None and mapped.is_link_local)

    @property
    def roce_v2(self) -> bool:
        return self.type == ROCE_V2

    def describe(self) -> str:
        """`3 (RoCE v2 ::ffff:10.0.0.1 on eth1)`: the index with what it holds."""
        shown = f"::ffff:{self.ipv4}" if self.ipv4 else str(self.address)
        kind = self.type or "type unreadable"
        on = f" on {self.netdev}" if self.netdev else ""
        return f"{self.index} ({kind} {shown}{on})"


@dataclass(frozen=True)
class GidTable:
    """The populated GID entries of one device port, and what could not be read there
    (path under the port -> why): named, never guessed."""

    device: str
    port: int
    entries: tuple[GidEntry, ...]
    unreadable: tuple[tuple[str, str], ...] = ()

    def at(self, index: int) -> GidEntry | None:
        return next((e for e in self.entries if e.index == index), None)

    def unread(self, index: int) -> str | None:
        """Why entry `index` (its GID, type or netdev) could not be read, if it could not."""
        found = [f"{path}: {why}" for path, why in self.unreadable
                 if path.rsplit("/", 1)[-1] == str(index)]
        return "; ".join(found) or None

    def roce_v2_of(self, ipv4: str, netdev: str | None = None) -> GidEntry | None:
        """The RoCE v2 entry of an IPv4 address (on `netdev`, when given): what NCCL must use."""
        return next((e for e in self.entries if e.roce_v2 and e.ipv4 == ipv4
                     and (netdev is None or e.netdev == netdev)), None)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except UnicodeDecodeError:
        raise RdmaOutputError(f"{path}: not ASCII text") from None


def _gid(path: Path, text: str) -> str | None:
    """The GID of a sysfs gids/<index> file, None when all zero (an unused entry)."""
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        raise RdmaOutputError(f"{path}: {text!r} is not a GID") from None
    return None if int(address) == 0 else text


def _index(path: Path) -> int:
    if not path.name.isdigit():
        raise RdmaOutputError(f"{path}: not a numbered entry")
    return int(path.name)


def _entry(port_dir: Path, gid_file: Path, unreadable: list[tuple[str, str]]
           ) -> GidEntry | None:
    index = _index(gid_file)
    try:
        gid = _gid(gid_file, _read(gid_file))
    except OSError as error:
        unreadable.append((f"gids/{index}", error.strerror or str(error)))
        return None
    if gid is None:
        return None
    attrs: dict[str, str | None] = {}
    for kind in ("types", "ndevs"):
        try:
            attrs[kind] = _read(port_dir / "gid_attrs" / kind / str(index)) or None
        except OSError as error:
            attrs[kind] = None
            unreadable.append((f"gid_attrs/{kind}/{index}", error.strerror or str(error)))
    return GidEntry(index=index, gid=gid, type=attrs["types"], netdev=attrs["ndevs"])


def _table(device: str, port_dir: Path) -> GidTable:
    gids = port_dir / "gids"
    if not gids.is_dir():
        raise RdmaOutputError(f"{gids}: no GID table")
    unreadable: list[tuple[str, str]] = []
    entries = [_entry(port_dir, f, unreadable) for f in sorted(gids.iterdir(), key=_index)]
    return GidTable(device=device, port=_index(port_dir),
                    entries=tuple(e for e in entries if e is not None),
                    unreadable=tuple(unreadable))


def read_gid_tables(sysfs: Path = Path("/sys")) -> list[GidTable] | NoRdma:
    """Every device port's GID table under `sysfs`/class/infiniband, devices in natural order
    (mlx5_2 before mlx5_10), ports and entries by number; all-zero GIDs (unused entries) are
    left out. Tests pass a fixture tree as `sysfs`."""
    base = sysfs / "class" / "infiniband"
    if not base.is_dir():
        return NoRdma(str(base), "no such directory: the kernel registered no RDMA device")
    devices = sorted(base.iterdir(), key=lambda p: _natural(p.name))
    if not devices:
        return NoRdma(str(base), "empty: the kernel registered no RDMA device")
    tables = []
    for device in devices:
        ports = device / "ports"
        if not ports.is_dir():
            raise RdmaOutputError(f"{ports}: an RDMA device without ports")
        tables += [_table(device.name, p) for p in sorted(ports.iterdir(), key=_index)]
    return tables


# --- rdma link ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RdmaLink:
    """One port as `rdma link` shows it."""

    device: str
    port: int
    state: str  # ACTIVE, DOWN, INIT, ARMED, ...
    physical_state: str  # LINK_UP, DISABLED, POLLING, ...
    netdev: str | None = None  # the Ethernet netdev of a RoCE port

    @property
    def active(self) -> bool:
        return self.state == "ACTIVE"

    @property
    def rdma_port(self) -> RdmaPort:
        return RdmaPort(self.device, self.port)


def _split_name(name: str, where: str) -> tuple[str, int]:
    """`mlx5_0/1` -> ("mlx5_0", 1)."""
    device, slash, port = name.rpartition("/")
    if not slash or not device or not port.isdigit():
        raise RdmaOutputError(f"{where}: {name!r} is not DEVICE/PORT")
    return device, int(port)


def _json_link(item: object, where: str) -> RdmaLink:
    if not isinstance(item, dict):
        raise RdmaOutputError(f"{where}: not an object")
    name, port = item.get("ifname"), item.get("port")
    if not isinstance(name, str):
        raise RdmaOutputError(f"{where}: no 'ifname'")
    if "/" in name:  # iproute2 before its JSON rework printed "mlx5_0/1" as ifname
        name, port = _split_name(name, where)
    if not isinstance(port, int) or isinstance(port, bool):
        raise RdmaOutputError(f"{where} ({name}): no integer 'port'")
    values: dict[str, str | None] = {}
    for key in ("state", "physical_state", "netdev"):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise RdmaOutputError(f"{where} ({name}/{port}): {key!r} is not a string")
        values[key] = value
    state, physical = values["state"], values["physical_state"]
    if state is None or physical is None:
        raise RdmaOutputError(f"{where} ({name}/{port}): no 'state' or 'physical_state'")
    return RdmaLink(name, port, state, physical, values["netdev"])


def parse_rdma_link_json(text: str, source: str = "rdma -j link show"
                         ) -> list[RdmaLink] | NoRdma:
    """The ports of `rdma -j link show` (iproute2 rdma-link(8)): a JSON array of objects
    with `ifname`, `port`, `state`, `physical_state` and, for a RoCE port, `netdev`."""
    if not text.strip():
        return NoRdma(source, "printed nothing")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise RdmaOutputError(f"{source}: not JSON (line {error.lineno}: {error.msg})") from None
    if not isinstance(data, list):
        raise RdmaOutputError(f"{source}: not a JSON array")
    if not data:
        return NoRdma(source, "no links")
    return [_json_link(item, f"{source} [{n}]") for n, item in enumerate(data)]


_OLD_HEAD = re.compile(r"^\d+/\d+:$")  # "0/1:" before the name in iproute2's first releases


def _text_link(line: str, where: str) -> RdmaLink:
    tokens = line.split()
    if len(tokens) >= 2 and tokens[0] == "link":
        name, rest = tokens[1], tokens[2:]
    elif len(tokens) >= 2 and _OLD_HEAD.match(tokens[0]) and tokens[1].endswith(":"):
        name, rest = tokens[1][:-1], tokens[2:]
    else:
        raise RdmaOutputError(f"{where}: {line.strip()!r} is not a link line")
    device, port = _split_name(name, where)
    if len(rest) % 2:
        raise RdmaOutputError(f"{where}: {line.strip()!r}: a key without its value")
    pairs = dict(zip(rest[::2], rest[1::2], strict=True))
    if "state" not in pairs or "physical_state" not in pairs:
        raise RdmaOutputError(f"{where}: {name}: no state or physical_state")
    return RdmaLink(device, port, pairs["state"], pairs["physical_state"], pairs.get("netdev"))


def parse_rdma_link_text(text: str, source: str = "rdma link show"
                         ) -> list[RdmaLink] | NoRdma:
    """The ports of plain `rdma link show`: `link DEV/PORT state S physical_state P netdev N`
    per port (`-d` adds indented `caps:` lines, skipped)."""
    links = [_text_link(line, f"{source} line {number}")
             for number, line in enumerate(text.splitlines(), 1)
             if line.strip() and not line[0].isspace()]
    return links or NoRdma(source, "printed nothing")


def netdev_map(links: Sequence[RdmaLink]) -> dict[str, RdmaPort]:
    """netdev -> its RDMA device port, from `rdma link`: how a planned NIC (the plan knows
    netdevs only) finds its RDMA device. A netdev on two ports keeps the first."""
    found: dict[str, RdmaPort] = {}
    for link in links:
        if link.netdev is not None:
            found.setdefault(link.netdev, link.rdma_port)
    return found


# --- ibv_devinfo -------------------------------------------------------------------------


@dataclass(frozen=True)
class IbvPort:
    """One port as `ibv_devinfo` prints it. `active_mtu` None: the tool printed no number
    ("invalid MTU")."""

    device: str
    port: int
    state: str  # PORT_ACTIVE, PORT_DOWN, PORT_INIT, PORT_ARMED
    active_mtu: int | None
    link_layer: str  # Ethernet (RoCE) or InfiniBand


@dataclass
class _Section:
    device: str
    port: int
    line: int
    values: dict[str, str] = field(default_factory=dict)


_NUMBERED = re.compile(r"^(\S+)\s+\(\d+\)$")  # "PORT_ACTIVE (4)", "4096 (5)"


def _port(section: _Section, source: str) -> IbvPort:
    where = f"{source} line {section.line} ({section.device} port {section.port})"
    missing = [k for k in ("state", "active_mtu", "link_layer") if k not in section.values]
    if missing:
        raise RdmaOutputError(f"{where}: no {', '.join(missing)}")
    state = _NUMBERED.match(section.values["state"])
    if state is None:
        raise RdmaOutputError(f"{where}: state {section.values['state']!r} is not NAME (n)")
    mtu = _NUMBERED.match(section.values["active_mtu"])
    return IbvPort(section.device, section.port, state.group(1),
                   int(mtu.group(1)) if mtu and mtu.group(1).isdigit() else None,
                   section.values["link_layer"])


def parse_ibv_devinfo(text: str, source: str = "ibv_devinfo") -> list[IbvPort] | NoRdma:
    """Every port of `ibv_devinfo` (or `-v`): `hca_id:` opens a device, `port:` one of its
    ports, whose `state:`, `active_mtu:` and `link_layer:` lines are read; other lines are
    skipped. No output (the tool says "No IB devices found" on stderr) is `NoRdma`."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines or lines[0][1].strip() == "No IB devices found":
        return NoRdma(source, "no IB devices found")
    device: str | None = None
    sections: list[_Section] = []
    for number, line in lines:
        key, colon, value = line.strip().partition(":")
        value = value.strip()
        if key == "hca_id" and colon and value:
            device = value
        elif device is None:
            raise RdmaOutputError(f"{source} line {number}: {line.strip()!r} before any hca_id")
        elif key == "port" and colon:
            if not value.isdigit():
                raise RdmaOutputError(f"{source} line {number}: port {value!r} is not a number")
            sections.append(_Section(device, int(value), number))
        elif key in ("state", "active_mtu", "link_layer") and sections and \
                sections[-1].device == device:
            sections[-1].values[key] = value
    if not sections:
        raise RdmaOutputError(f"{source}: devices without any port section")
    return [_port(s, source) for s in sections]


def _ibv_port(ports: Sequence[IbvPort], want: RdmaPort) -> IbvPort | None:
    return next((p for p in ports if p.device == want.device
                 and (want.port is None or p.port == want.port)), None)


def _judge_port(server: str, port: IbvPort, roce_mtu: int, nic: str | None) -> list[Mismatch]:
    rdma = f"{port.device}/{port.port}"
    found = []
    if port.link_layer != ETHERNET:
        found.append(Mismatch(server, "link_layer", ETHERNET, port.link_layer, nic, rdma,
                              "ibv_devinfo", "RoCE runs on an Ethernet port"))
    if port.state != PORT_ACTIVE:
        found.append(Mismatch(server, "state", PORT_ACTIVE, port.state, nic, rdma,
                              "ibv_devinfo", "the port carries no RDMA traffic"))
    if port.active_mtu != roce_mtu:
        found.append(Mismatch(
            server, "active_mtu", str(roce_mtu),
            "not a number" if port.active_mtu is None else str(port.active_mtu), nic, rdma,
            "ibv_devinfo",
            f"the fabric's RoCE MTU (fabric.yaml roce_mtu); the NIC's MTU must hold it and "
            f"{ROCE_HEADER_BYTES} B of RoCEv2 headers"))
    return found


def judge_rdma_mtu(server: str, ports: Sequence[IbvPort] | NoRdma, roce_mtu: int,
                   nics: Mapping[str, RdmaPort] | None = None) -> list[Mismatch] | NoRdma:
    """Each fabric NIC's RDMA port against the fabric: Ethernet, PORT_ACTIVE, and its active
    MTU the fabric's RoCE MTU (a smaller one sends more, smaller packets; a larger one than
    the switches carry is dropped). `nics` (netdev -> RDMA port) names the fabric NICs; without
    it every Ethernet port is judged. NoRdma comes back as it is: the host is not judged."""
    if isinstance(ports, NoRdma):
        return ports
    if nics is None:
        return [m for p in ports if p.link_layer == ETHERNET
                for m in _judge_port(server, p, roce_mtu, None)]
    found = []
    for nic, want in nics.items():
        port = _ibv_port(ports, want)
        if port is None:
            found.append(Mismatch(server, "rdma device", f"{want.name} in ibv_devinfo",
                                  "absent", nic, want.name, "ibv_devinfo"))
        else:
            found += _judge_port(server, port, roce_mtu, nic)
    return found
