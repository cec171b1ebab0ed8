"""The sonic platform tests' fabrics and switches: example intents planned with their
switches on sonic, and a planned switch as the SONiC double (tests/doubles/sonic.py)."""

from __future__ import annotations

import re
import shutil
from functools import cache
from pathlib import Path

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.configdb import json_fields
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.sonic import PLATFORM, changes
from flatfab.platforms.sonic.driver import SonicDriver
from flatfab.platforms.sonic.render import config_db
from tests.doubles.sonic import SonicDouble, factory_config_db, healthy_outputs, recorded
from tests.support.on_platform import fabric_text_on
from tests.support.paths import ROOT

# what apply-patch cannot create: on day 0 they come with `config load` + `config qos reload`
DAY0_TABLES = ("BUFFER_POOL", "PFC_WD")


@cache
def fabric(name: str, tmp: Path) -> FabricState:
    """An example intent with its switches on platform sonic (unless a device says else)."""
    folder = tmp / name
    shutil.copytree(ROOT / "intents" / name, folder)
    text = (folder / "fabric.yaml").read_text()
    (folder / "fabric.yaml").write_text(fabric_text_on(text, "sonic"))
    qos = folder / "qos.yaml"
    if qos.exists() and not re.search(r"(?m)^  sonic:", qos.read_text()):
        body = qos.read_text()
        if "asics:" in body:
            body = re.sub(r"(?m)^asics:\n", "asics:\n  sonic: {family: spectrum-4}\n", body)
        else:
            body += "asics:\n  sonic: {family: spectrum-4}\n"
        qos.write_text(body)
    return plan(load_intent(folder, known_platforms=PLATFORMS))


def switches(state: FabricState) -> list[DeviceState]:
    return [d for d in state.devices.values() if d.platform == "sonic"]


def sonic_double(device: DeviceState, *, pushed: bool = False) -> SonicDouble:
    """`device`'s switch at day 0 with its recorded outputs (pushed: after a push of its
    plan, FRR config included)."""
    db = factory_config_db(device.name)
    planned = config_db(device, PLATFORM.names)
    db.update({t: planned[t] for t in DAY0_TABLES if t in planned})  # lossy: no watchdog
    if pushed:  # the state after a successful push of the plan, list fields as JSON lists
        db = changes.target(db, planned)  # (as apply-patch leaves them and the switch prints)
        db = {t: {k: json_fields(row) for k, row in rows.items()} for t, rows in db.items()}
    frr = PLATFORM.sections(PLATFORM.render(device))["frr"] if pushed else []
    if not frr:
        return SonicDouble(db, outputs=recorded(device.name))
    return SonicDouble(db, "\n".join(frr) + "\n", recorded(device.name))


def sonic_driver(double: SonicDouble, *, read_only: bool = False) -> SonicDriver:
    """flatfab's SONiC driver on `double`, on the double's clock."""
    driver = PLATFORM.adapt(double, read_only=read_only)
    assert isinstance(driver, SonicDriver)
    driver.clock = lambda: 1_795_000_000 + double.now
    return driver


def pushed_double(fabric: FabricState, name: str) -> SonicDouble:
    """Switch `name` after a push of its plan, its show outputs those of a healthy fabric."""
    double = sonic_double(fabric.devices[name], pushed=True)
    double.outputs = healthy_outputs(fabric, name, PLATFORM.names.vrf)
    return double


def collected(planned: DeviceState, double: SonicDouble) -> DeviceState:
    """What collect reads from the double, read-only."""
    return PLATFORM.collect(PLATFORM.read_only(sonic_driver(double, read_only=True)),
                            planned, [])
