"""The EOS platform tests' fabrics and switch: example intents planned with their switches on
eos, and leaf1 read back through NAPALM's real EOSDriver on the eAPI double."""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory

import yaml
from napalm.eos.eos import EOSDriver

from tasks.intent.loader import load_intent
from tasks.model.state import DeviceState, FabricState
from tasks.plan.planner import plan
from tasks.platforms.base import ReadOnlyDriver
from tasks.platforms.eos import PLATFORM
from tasks.platforms.registry import PLATFORMS
from tests.doubles.eos import EosDouble
from tests.support.paths import FIXTURES as TEST_FIXTURES
from tests.support.paths import ROOT

TRIDENT = "trident-4"
FIXTURES = TEST_FIXTURES / "eos" / "leaf1"  # leaf1's recorded shows


def _eos_intent(source: Path, target: Path, family: str) -> None:
    for file in source.glob("*.yaml"):
        shutil.copy(file, target / file.name)
    fabric = yaml.safe_load((target / "fabric.yaml").read_text())
    fabric["platform"] = "eos"
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    qos_file = target / "qos.yaml"
    qos = yaml.safe_load(qos_file.read_text()) if qos_file.exists() else {}
    qos.setdefault("asics", {})["eos"] = {"family": family}
    if "buffers" in PLATFORMS["eos"].facts.capabilities.family_limits(family):
        qos.pop("buffers", None)  # refused at load there: the switch keeps its defaults
    qos_file.write_text(yaml.safe_dump(qos))


@cache
def eos_fabric(name: str, family: str = TRIDENT) -> FabricState:
    """An example intent (lab, numbered, lab4x16, rail) planned with its switches on eos."""
    with TemporaryDirectory() as tmp:
        _eos_intent(ROOT / "intents" / name, Path(tmp), family)
        return plan(load_intent(Path(tmp), known_platforms=PLATFORMS))


def eos_switches(state: FabricState) -> list[DeviceState]:
    return [d for d in state.devices.values() if d.platform == "eos"]


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
