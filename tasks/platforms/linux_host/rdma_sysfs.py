"""Sent to a GPU host as a script (python3's standard library only, read-only): its RDMA
devices' GID tables under /sys/class/infiniband, as one JSON object on stdout.

    {"none": why}                                     no RDMA device registered
    {"ports": [{"device", "port", "entries": [...], "unreadable": {path: why}}]}

An entry is {"index", "gid", "type", "ndev"} of a populated GID (all-zero GIDs, unused
entries, are left out); `type` or `ndev` is null where its file could not be read, and the
port's `unreadable` says why (the kernel answers EINVAL for the attributes of an unused
entry: Linux Documentation/ABI/stable/sysfs-class-infiniband).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BASE = "/sys/class/infiniband"


def _read(path: Path) -> str:
    return path.read_text(encoding="ascii").strip()


def _why(error: Exception) -> str:
    return getattr(error, "strerror", None) or str(error)


def _entry(port_dir: Path, name: str, unreadable: dict[str, str]) -> dict[str, Any] | None:
    try:
        gid = _read(port_dir / "gids" / name)
    except (OSError, UnicodeDecodeError) as error:
        unreadable["gids/" + name] = _why(error)
        return None
    if gid and not gid.replace(":", "").strip("0"):
        return None  # all zero: an unused entry
    attrs: dict[str, str | None] = {}
    for kind in ("types", "ndevs"):
        try:
            attrs[kind] = _read(port_dir / "gid_attrs" / kind / name) or None
        except (OSError, UnicodeDecodeError) as error:
            attrs[kind] = None
            unreadable[f"gid_attrs/{kind}/{name}"] = _why(error)
    return {"index": name, "gid": gid, "type": attrs["types"], "ndev": attrs["ndevs"]}


def _port(port_dir: Path) -> dict[str, Any]:
    found: dict[str, Any] = {"device": port_dir.parent.parent.name, "port": port_dir.name}
    gids = port_dir / "gids"
    if not gids.is_dir():
        return {**found, "entries": None, "unreadable": {"gids": "no GID table"}}
    unreadable: dict[str, str] = {}
    entries = [_entry(port_dir, path.name, unreadable) for path in sorted(gids.iterdir())]
    return {**found, "entries": [e for e in entries if e], "unreadable": unreadable}


def main(base: str = BASE) -> dict[str, Any]:
    """`base`: /sys/class/infiniband (another tree only in tests)."""
    root = Path(base)
    if not root.is_dir():
        return {"none": f"no {base}: the kernel registered no RDMA device"}
    devices = sorted(root.iterdir())
    if not devices:
        return {"none": f"{base} is empty: the kernel registered no RDMA device"}
    ports: list[dict[str, Any]] = []
    for device in devices:
        names = sorted((device / "ports").iterdir()) if (device / "ports").is_dir() else []
        ports += [_port(port) for port in names]
    return {"ports": ports}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:2])))
