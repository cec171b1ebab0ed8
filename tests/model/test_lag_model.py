"""LAGs in the neutral model: observed only (the planner plans none), serialized only when
present, and never a reason for a check to fail or crash."""

from __future__ import annotations

import json

from flatfab.checks import CATALOG, CheckContext, Stage, run_checks
from flatfab.model.state import DeviceState, IfKind, Interface, PortQos, Watchdog
from tests.support.eos import eos_fabric


def test_observed_only_fields_stay_out_of_serialized_plans() -> None:
    plan = eos_fabric("lab")
    interfaces = json.dumps([d.model_dump(mode="json")["interfaces"]
                             for d in plan.devices.values()])
    assert '"members"' not in interfaces and '"lag"' not in interfaces
    assert '"unknown"' not in json.dumps(plan.model_dump(mode="json"))
    lag = Interface(name="Port-Channel1", kind=IfKind.LAG, members=["Ethernet3", "Ethernet4"])
    member = Interface(name="Ethernet3", kind=IfKind.OTHER, lag="Port-Channel1")
    assert lag.model_dump(mode="json")["members"] == ["Ethernet3", "Ethernet4"]
    assert member.model_dump(mode="json")["lag"] == "Port-Channel1"
    assert Interface.model_validate(lag.model_dump(mode="json")) == lag


def test_unknown_reasons_round_trip() -> None:
    dog = Watchdog(priorities=[3], detect_ms=200, restore_ms=0, action=None, poll_ms=0,
                   unknown={"action": "no action line", "restore_ms": "no line", "poll_ms": "x"})
    assert Watchdog.model_validate(dog.model_dump(mode="json")) == dog
    port = eos_fabric("lab").devices["leaf1"].interfaces["Ethernet51"].qos
    assert isinstance(port, PortQos) and port.unknown == {}
    assert "unknown" not in port.model_dump(mode="json")


def test_every_check_runs_on_a_switch_with_lags() -> None:
    """LAGs added to every observed switch (one with addresses and a VRF sub-interface, its
    members unplanned ports): the catalog finds exactly what it finds without them."""
    plan = eos_fabric("lab")
    observed = {}
    for name, device in plan.devices.items():
        copy: DeviceState = device.model_copy(deep=True)
        if device.role.value != "host":
            copy.interfaces["Ethernet40"] = Interface(name="Ethernet40", kind=IfKind.OTHER,
                                                      lag="Port-Channel9", up=True)
            copy.interfaces["Port-Channel9"] = Interface(
                name="Port-Channel9", kind=IfKind.LAG, members=["Ethernet40"], up=False,
                mtu=1500, addresses=["192.0.2.0/31"])
            copy.interfaces["Port-Channel9.10"] = Interface(
                name="Port-Channel9.10", kind=IfKind.OTHER, parent="Port-Channel9",
                vrf="blue", addresses=["192.0.2.2/31"])
        observed[name] = copy
    with_lags = plan.model_copy(update={"devices": observed})
    assert len(CATALOG) > 20
    found = run_checks(CheckContext(state=with_lags, plan=plan, stage=Stage.LIVE))
    before = run_checks(CheckContext(state=plan, plan=plan, stage=Stage.LIVE))
    assert [f.message for f in found] == [f.message for f in before]
    assert not any("Port-Channel9" in f.message for f in found)
