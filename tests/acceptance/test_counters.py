"""The switch port counters an acceptance run takes before and after: pauses and ECN marks
as collect reads them, and their growth on a link named as trouble."""

from __future__ import annotations

from flatfab.acceptance import counters as ctr
from flatfab.model.state import DeviceState, IfKind, Interface, PortCounters, Role


def _switch(pfc_rx: int | None, marked: int) -> DeviceState:
    return DeviceState(name="leaf1", role=Role.LEAF, platform="frr", interfaces={
        "swp1": Interface(name="swp1", kind=IfKind.HOST_PORT, counters=PortCounters(
            pfc_rx_frames=pfc_rx, pfc_tx_frames=7, ecn_marked={3: marked})),
        "swp2": Interface(name="swp2", kind=IfKind.HOST_PORT)})


def test_pauses_and_ecn_marks_are_taken_and_their_growth_is_trouble() -> None:
    before = {"leaf1": ctr.from_ports(_switch(10, 100))}
    after = {"leaf1": ctr.from_ports(_switch(25, 100))}
    assert before["leaf1"] == {"swp1": {"pfc_rx": 10, "pfc_tx": 7, "ecn_marked.q3": 100}}
    assert ctr.delta(before, after, "leaf1:swp1").grew() == {"pfc_rx": 15}
    # a counter the switch does not state is absent, never 0
    assert ctr.from_ports(_switch(None, 0))["swp1"] == {"pfc_tx": 7, "ecn_marked.q3": 0}
