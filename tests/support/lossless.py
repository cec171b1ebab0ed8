"""The lossless part of the check catalog, on the lab as its collectors read it."""

from __future__ import annotations

from flatfab.checks import CATALOG, CheckContext, Finding, Stage, run_checks
from flatfab.model.state import FabricState, NicQos, PortQos
from tests.support.checks import PLAN, healthy

LOSSLESS = sorted(c for c, item in CATALOG.items() if item.lossless)


def live(state: FabricState) -> list[Finding]:
    """The lossless checks' live findings on `state` against the lab's plan."""
    return run_checks(CheckContext(state=state, plan=PLAN, stage=Stage.LIVE), only=LOSSLESS)


def collected() -> FabricState:
    """The lab as the collectors read it: every port its own copy of its state (VRF
    sub-interfaces too, with their own kernel DSCP map), ASIC and NIC state virtual."""
    state = healthy()
    for device in state.devices.values():
        if device.qos is not None:
            device.qos = device.qos.model_copy(update={"virtual": True}, deep=True)
        for iface in device.interfaces.values():
            if iface.qos is not None:
                iface.qos = iface.qos.model_copy(deep=True)
            if iface.nic is not None:
                iface.nic = iface.nic.model_copy(update={"virtual": True}, deep=True)
        for iface in device.interfaces.values():
            parent = device.interfaces.get(iface.parent or "")
            if parent is not None and parent.qos is not None:
                iface.qos = parent.qos.model_copy(deep=True)
    return state


def qos_of(state: FabricState, device: str, port: str) -> PortQos:
    qos = state.devices[device].interfaces[port].qos
    assert qos is not None
    return qos


def nic_of(state: FabricState, device: str) -> NicQos:
    nic = state.devices[device].interfaces["eth1"].nic
    assert nic is not None
    return nic
