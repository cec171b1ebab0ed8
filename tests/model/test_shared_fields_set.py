"""Observed states share one set of fields set per model class (memory of a fleet's read)."""

from __future__ import annotations

from flatfab.intent.loader import load_intent
from flatfab.model.build import share_fields_set
from flatfab.model.state import DeviceState
from flatfab.plan.planner import plan
from tests.support.paths import ROOT

LAB = plan(load_intent(ROOT / "intents" / "lab"))


def _validated(name: str) -> DeviceState:
    return DeviceState.model_validate(LAB.devices[name].model_dump())


def test_sharing_changes_no_value_and_no_dump() -> None:
    for name in ("spine1", "leaf1", "leaf1-h1"):
        device = _validated(name)
        before = device.model_dump_json()
        share_fields_set(device)
        assert device.model_dump_json() == before
        assert device == _validated(name)


def test_every_model_inside_gets_its_class_set_and_assignment_keeps_it() -> None:
    device, other = _validated("leaf1"), _validated("leaf2")
    share_fields_set(device)
    share_fields_set(other)
    port, far = device.interfaces["swp1"], other.interfaces["swp1"]
    assert port.model_fields_set is far.model_fields_set  # one set for the class
    assert port.model_fields_set == set(type(port).model_fields)
    port.mtu = 1500  # an assignment adds a name the shared set already holds
    assert far.model_fields_set == set(type(far).model_fields)
    assert device.model_fields_set is other.model_fields_set
