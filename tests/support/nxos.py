"""Planned fabrics for the nxos tests: example intents with their switches on nxos."""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory

import yaml

from tasks.intent.loader import load_intent
from tasks.model.state import DeviceState, FabricState
from tasks.plan.planner import plan
from tasks.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

FAMILY = "generic"  # Cisco Cloud Scale: flatfab's ASIC table names no Cisco silicon


def nxos_intent(source: Path, target: Path, family: str) -> None:
    for file in source.glob("*.yaml"):
        shutil.copy(file, target / file.name)
    fabric = yaml.safe_load((target / "fabric.yaml").read_text())
    fabric["platform"] = "nxos"  # a switch naming its own platform keeps it (mixed)
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    qos_file = target / "qos.yaml"
    qos = yaml.safe_load(qos_file.read_text()) if qos_file.exists() else {}
    qos = qos or {}
    qos.setdefault("asics", {})["nxos"] = {"family": family}
    # NX-OS reserves no-drop headroom itself: an intent setting buffers is refused at load
    qos.pop("buffers", None)
    qos_file.write_text(yaml.safe_dump(qos))


@cache
def nxos_fabric(name: str, family: str = FAMILY) -> FabricState:
    """An example intent planned with its switches on nxos, as test_platform_sonic does."""
    with TemporaryDirectory() as tmp:
        nxos_intent(ROOT / "intents" / name, Path(tmp), family)
        return plan(load_intent(Path(tmp), known_platforms=PLATFORMS))


def nxos_switches(state: FabricState) -> list[DeviceState]:
    return [d for d in state.devices.values() if d.platform == "nxos"]
