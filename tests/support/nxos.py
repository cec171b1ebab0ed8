"""Planned fabrics for the nxos tests: example intents with their switches on nxos."""

from __future__ import annotations

from pathlib import Path

from flatfab.model.state import DeviceState, FabricState
from tests.support.on_platform import fabric_on, intent_on, switches_on

FAMILY = "generic"  # Cisco Cloud Scale: flatfab's ASIC table names no Cisco silicon


def nxos_intent(source: Path, target: Path, family: str) -> None:
    intent_on(source, target, "nxos", family)


def nxos_fabric(name: str, family: str = FAMILY) -> FabricState:
    """An example intent planned with its switches on nxos."""
    return fabric_on(name, "nxos", family)


def nxos_switches(state: FabricState) -> list[DeviceState]:
    return switches_on(state, "nxos")
