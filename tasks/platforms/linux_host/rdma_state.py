"""A GPU host's NCCL and RDMA reads as observed state (HostRdma): the nccl.conf in use, and
per RDMA device port what sysfs (its GID table, rdma_sysfs.py), `rdma -j link show` and
`ibv_devinfo` state. The readers of the tools' output are flatfab.cluster.rdma's.

A tool that is not installed, or that fails, is a fact named in `unread`, never a crash and
never an empty reading; a host whose sources all say it has no RDMA device gets `none_why`
(its RDMA settings are then not judged, and its report says why).
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flatfab.cluster.rdma import (
    IbvPort,
    NoRdma,
    RdmaLink,
    RdmaOutputError,
    parse_ibv_devinfo,
    parse_rdma_link_json,
)
from flatfab.model.state import HostRdma, RdmaGid, RdmaPortState

MISSING = "@@flatfab-missing"  # the batch's word for a tool that is not installed
FAILED = "@@flatfab-failed"  # ... and for one that exited non-zero (its status follows)
NO_FILE = "@@flatfab-no-file"
SYSFS = "sysfs"
RDMA_LINK = "rdma link"
IBV_DEVINFO = "ibv_devinfo"
_INSTALLED_BY = {RDMA_LINK: "iproute2's rdma tool", IBV_DEVINFO: "rdma-core's ibv_devinfo "
                 "(ibverbs-utils)"}


def tool_command(name: str, command: str) -> str:
    """A read-only command that says so when its tool is missing or fails (its stderr
    joins its stdout, so the reason is kept)."""
    return (f"if command -v {name} >/dev/null 2>&1; then {{ {command} || echo \"{FAILED} $?\"; "
            f"}} 2>&1; else echo '{MISSING}'; fi")


def file_command(path: str) -> str:
    """The file's text, or a word that says there is none."""
    quoted = shlex.quote(path)
    return f"if [ -e {quoted} ]; then cat {quoted}; else echo '{NO_FILE}'; fi"


def file_text(output: str) -> str | None:
    """What file_command printed: the file's text, None when there is no such file."""
    return None if output.strip() == NO_FILE else output


@dataclass(frozen=True)
class RdmaReads:
    """What the driver read, as printed: the nccl.conf (`nccl` None: no such file), the
    sysfs script's JSON (`sysfs_error`: why it did not run), and the tools' output."""

    nccl_path: str
    nccl: str | None
    sysfs: str
    rdma_link: str
    ibv_devinfo: str
    sysfs_error: str | None = None


@dataclass
class _Found:
    ports: dict[tuple[str, int], RdmaPortState]
    none: dict[str, str]  # source -> why it found no RDMA device
    unread: dict[str, str]  # source -> why it was not read

    def port(self, device: str, port: int) -> RdmaPortState:
        key = (device, port)
        if key not in self.ports:
            self.ports[key] = RdmaPortState(device=device, port=port)
        return self.ports[key]


def _tool_output(source: str, text: str, found: _Found) -> str | None:
    """The tool's output to parse, or None (its absence or failure recorded)."""
    lines = text.strip().splitlines()
    if lines == [MISSING]:
        found.unread[source] = f"not installed ({_INSTALLED_BY[source]})"
        return None
    if lines and lines[-1].startswith(FAILED):
        said = "; ".join(line.strip() for line in lines[:-1] if line.strip())
        if source == IBV_DEVINFO and said == "No IB devices found":
            found.none[source] = "no IB devices found"
            return None
        status = lines[-1].removeprefix(FAILED).strip()
        found.unread[source] = f"exit {status}" + (f": {said}" if said else "")
        return None
    return text


def _gid(item: Any, where: str) -> RdmaGid:
    if not isinstance(item, dict) or not str(item.get("index", "")).isdigit():
        raise RdmaOutputError(f"{where}: an entry without a numbered index")
    gid = item.get("gid")
    try:
        ipaddress.IPv6Address(str(gid))
    except ValueError:
        raise RdmaOutputError(f"{where}: {gid!r} is not a GID") from None
    kind, netdev = item.get("type"), item.get("ndev")
    return RdmaGid(index=int(item["index"]), gid=str(gid),
                   type=kind if isinstance(kind, str) else None,
                   netdev=netdev if isinstance(netdev, str) else None)


def _sysfs(reads: RdmaReads, found: _Found) -> None:
    if reads.sysfs_error is not None:
        found.unread[SYSFS] = reads.sysfs_error
        return
    try:
        data = json.loads(reads.sysfs)
        if not isinstance(data, dict):
            raise RdmaOutputError("not a JSON object")
        if isinstance(data.get("none"), str):
            found.none[SYSFS] = data["none"]
            return
        for item in data.get("ports") or []:
            where = f"{item.get('device')}/{item.get('port')}"
            if not str(item.get("port", "")).isdigit() or not isinstance(item.get("device"), str):
                raise RdmaOutputError(f"{where}: not DEVICE/PORT")
            port = found.port(item["device"], int(item["port"]))
            entries = item.get("entries")
            port.gids = None if entries is None else sorted(
                (_gid(e, where) for e in entries), key=lambda g: g.index)
            port.unread = {str(k): str(v) for k, v in (item.get("unreadable") or {}).items()}
    except (ValueError, RdmaOutputError, AttributeError) as error:
        found.unread[SYSFS] = f"the GID tables' reader printed what flatfab cannot read: {error}"


def _links(links: list[RdmaLink], found: _Found) -> None:
    for link in links:
        port = found.port(link.device, link.port)
        port.state, port.physical_state, port.netdev = link.state, link.physical_state, \
            link.netdev


def _ibv(ports: list[IbvPort], found: _Found) -> None:
    for item in ports:
        port = found.port(item.device, item.port)
        port.ibv_state, port.active_mtu, port.link_layer = item.state, item.active_mtu, \
            item.link_layer


def _tool(source: str, output: str, parse: Callable[[str], list[Any] | NoRdma],
          take: Callable[[Any, _Found], None], found: _Found) -> None:
    """One tool's output into `found`: its ports, its word that there are none, or why it
    was not read."""
    text = _tool_output(source, output, found)
    try:
        parsed = None if text is None else parse(text)
    except RdmaOutputError as error:
        found.unread[source] = str(error)
        return
    if isinstance(parsed, NoRdma):
        found.none[source] = parsed.why
    elif parsed is not None:
        take(parsed, found)


def _tools(reads: RdmaReads, found: _Found) -> None:
    _tool(RDMA_LINK, reads.rdma_link, parse_rdma_link_json, _links, found)
    _tool(IBV_DEVINFO, reads.ibv_devinfo, parse_ibv_devinfo, _ibv, found)


def _natural(key: tuple[str, int]) -> tuple[Any, ...]:
    """mlx5_2 before mlx5_10."""
    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key[0]))
    return (*parts, key[1])


def host_rdma(reads: RdmaReads) -> HostRdma:
    """The observed HostRdma of one host's reads."""
    found = _Found({}, {}, {})
    _sysfs(reads, found)
    _tools(reads, found)
    ports = [found.ports[key] for key in sorted(found.ports, key=_natural)]
    unread = dict(found.unread)
    none_why = None
    if not ports and found.none:
        none_why = "; ".join(f"{source}: {why}" for source, why in found.none.items())
        if SYSFS in found.none:  # the kernel lists no device: a tool not installed is moot
            unread = {s: why for s, why in unread.items() if not why.startswith("not installed")}
    else:  # one source lists devices another says are not there: that one is not read
        unread.update({source: f"says there is no RDMA device ({why}), while another "
                       "source lists some" for source, why in found.none.items()})
    return HostRdma(nccl_path=reads.nccl_path, nccl_conf=reads.nccl, ports=ports,
                    none_why=none_why, unread=dict(sorted(unread.items())))
