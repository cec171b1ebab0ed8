"""Planned fabrics for the nxos tests: example intents with their switches on nxos."""

from __future__ import annotations

from pathlib import Path

import yaml

from flatfab.model.state import DeviceState, FabricState
from tests.support.on_platform import fabric_on, intent_on, switches_on
from tests.support.paths import ROOT

FAMILY = "generic"  # Cisco Cloud Scale: flatfab's ASIC table names no Cisco silicon


def nxos_intent(source: Path, target: Path, family: str) -> None:
    intent_on(source, target, "nxos", family)


def nxos_fabric(name: str, family: str = FAMILY) -> FabricState:
    """An example intent planned with its switches on nxos."""
    return fabric_on(name, "nxos", family)


def nxos_switches(state: FabricState) -> list[DeviceState]:
    return switches_on(state, "nxos")


def nxos_balanced(tmp: Path, balancing: dict[str, object]) -> Path:
    """intents/lab on nxos (generic family) in `tmp`, with `balancing` as its load_balancing."""
    tmp.mkdir(exist_ok=True)
    nxos_intent(ROOT / "intents" / "lab", tmp, FAMILY)
    fabric = yaml.safe_load((tmp / "fabric.yaml").read_text())
    fabric["load_balancing"] = balancing
    (tmp / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    return tmp
