"""The example fabrics with their switches on platform nvue (as the sonic suite does it)."""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from functools import cache
from pathlib import Path

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.nvue import PLATFORM
from flatfab.platforms.nvue.driver import NvueDriver
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.nvue import NvueDouble
from tests.support.on_platform import fabric_text_on
from tests.support.paths import ROOT

FABRICS = ("lab", "numbered", "mixed", "rail")
ASIC = "  nvue: {family: spectrum-4}\n"


@cache
def _workdir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="nvue-intents-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def copy_intent(name: str, target: Path) -> Path:
    """An example intent with its switches on platform nvue (unless a switch says else)."""
    folder = target / name
    shutil.copytree(ROOT / "intents" / name, folder, dirs_exist_ok=True)
    fabric = folder / "fabric.yaml"
    fabric.write_text(fabric_text_on(fabric.read_text(), "nvue"))
    qos = folder / "qos.yaml"
    if qos.exists():
        body = qos.read_text()
        if not re.search(r"(?m)^  nvue:", body):
            body = (re.sub(r"(?m)^asics:\n", "asics:\n" + ASIC, body) if "asics:" in body
                    else body + "asics:\n" + ASIC)
        qos.write_text(body)
    else:
        qos.write_text("asics:\n" + ASIC)
    return folder


@cache
def fabric(name: str) -> FabricState:
    return plan(load_intent(copy_intent(name, _workdir()), known_platforms=PLATFORMS))


def switches(state: FabricState) -> list[DeviceState]:
    return [d for d in state.devices.values() if d.platform == "nvue"]


def collected(device: DeviceState, double: NvueDouble) -> DeviceState:
    """What collect reads from the double, read-only."""
    return PLATFORM.collect(PLATFORM.read_only(PLATFORM.adapt(double, read_only=True)),
                            device, [])


def writable_driver(double: NvueDouble) -> NvueDriver:
    """A driver that may change the double, on the double's clock (commit timers)."""
    driver = PLATFORM.adapt(double, read_only=False)
    assert isinstance(driver, NvueDriver)
    driver.clock = lambda: 1_795_000_000 + double.now
    return driver


def push(double: NvueDouble, intended: str) -> None:
    """A replace of the double's config with `intended`, committed."""
    driver = writable_driver(double)
    driver.load_replace_candidate(config=intended)
    driver.commit_config()
