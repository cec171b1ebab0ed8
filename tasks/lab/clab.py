"""The containerlab runtime: hand the same topology file to containerlab, where installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from flatfab.lab.system import LabError, run


def available() -> bool:
    return shutil.which("containerlab") is not None


def _containerlab(*args: str, timeout: float = 900) -> str:
    if not available():
        raise LabError("containerlab is not on PATH; use the embedded runtime (the default)")
    return run(["containerlab", *args], timeout=timeout).stdout


def up(topology: Path) -> None:
    _containerlab("deploy", "--topo", str(topology), "--reconfigure")


def down(topology: Path) -> None:
    _containerlab("destroy", "--topo", str(topology), "--cleanup")


def status(topology: Path) -> list[dict[str, Any]]:
    out = _containerlab("inspect", "--topo", str(topology), "--format", "json", timeout=60)
    try:
        data = json.loads(out or "{}")
    except ValueError as exc:
        raise LabError(f"containerlab inspect did not return JSON: {exc}") from None
    containers = data.get("containers", []) if isinstance(data, dict) else []
    if isinstance(data, dict) and not containers:  # newer releases key by lab name
        containers = [c for v in data.values() if isinstance(v, list) for c in v]
    return [{"node": c.get("name", ""), "role": c.get("kind", ""), "netns": c.get("name", ""),
             "mgmt_ipv4": str(c.get("ipv4_address", "")).split("/")[0],
             "healthy": c.get("state") == "running", "processes": {}, "ssh": None}
            for c in containers]
