"""The EOS platform tests' fabrics and switch: example intents planned with their switches on
eos, and leaf1 read back through NAPALM's real EOSDriver on the eAPI double."""

from __future__ import annotations

from pathlib import Path

from napalm.eos.eos import EOSDriver

from flatfab.model.state import DeviceState, FabricState
from flatfab.platforms.base import ReadOnlyDriver
from flatfab.platforms.eos import PLATFORM
from tests.doubles.eos import EosDouble
from tests.support.on_platform import fabric_on, switches_on
from tests.support.paths import FIXTURES as TEST_FIXTURES

TRIDENT = "trident-4"
FIXTURES = TEST_FIXTURES / "eos" / "leaf1"  # leaf1's recorded shows


def eos_fabric(name: str, family: str = TRIDENT) -> FabricState:
    """An example intent (lab, numbered, lab4x16, rail) planned with its switches on eos."""
    return fabric_on(name, "eos", family)


def eos_switches(state: FabricState) -> list[DeviceState]:
    return switches_on(state, "eos")



def eos_double(running: str, fixtures: Path = FIXTURES) -> EosDouble:
    """An EOS switch holding `running`, answering shows from `fixtures` (leaf1's)."""
    return EosDouble(running=running.splitlines(), fixtures=fixtures)


def eos_collect(double: EosDouble, planned: DeviceState) -> DeviceState:
    """`planned`'s device read back through NAPALM's EOSDriver on `double`, read-only."""
    eos = EOSDriver("leaf1", "admin", "admin", optional_args={"transport": "https"})
    eos.device = double
    eos.open()
    driver = PLATFORM.read_only(eos)
    assert isinstance(driver, ReadOnlyDriver)
    return PLATFORM.collect(driver, planned, [])


def derived_text(path: Path) -> str:
    """A fixture file written from documentation, which it says on its first line."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("! derived from documentation"), path
    return text
