"""qos.dscp_map and the strict-RoCE rule of sched.lossless_bandwidth: every port and NIC maps
all 64 code points, RoCE's and CNP's alone in their classes, the default class lossy, and the
RoCE class never strict priority."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flatfab.model.state import FabricState
from tests.support.checks import static_findings


def _switch_map(state: FabricState, dscp: int, tc: int) -> None:
    port = state.devices["leaf2"].interfaces["swp51"].qos
    assert port is not None
    state.devices["leaf2"].interfaces["swp51"].qos = port.model_copy(update={
        "maps": port.maps.model_copy(update={"dscp_to_tc": [
            tc if d == dscp else t for d, t in enumerate(port.maps.dscp_to_tc)]})})


def _nic_map(state: FabricState, table: list[int]) -> None:
    nic = state.devices["leaf1-h2"].interfaces["eth1"].nic
    assert nic is not None
    state.devices["leaf1-h2"].interfaces["eth1"].nic = nic.model_copy(
        update={"dscp_to_priority": table})


def test_the_plan_maps_every_code_point_cleanly() -> None:
    assert static_findings(lambda _: None, "qos.dscp_map") == []


@pytest.mark.parametrize(("mutate", "device", "phrase"), [
    (lambda s: _switch_map(s, 24, 3), "leaf2", "swp51 maps DSCP 24 into lossless TC 3"),
    (lambda s: _switch_map(s, 46, 6), "leaf2", "swp51 maps DSCP 46 into CNP TC 6"),
    (lambda s: _nic_map(s, [d >> 3 for d in range(64)]), "leaf1-h2",
     "maps DSCP 24,25,27,28,29,30,31 into lossless TC 3"),
    (lambda s: _nic_map(s, [3] * 63 + [0]), "leaf1-h2", "the default class (TC 3"),
    (lambda s: _nic_map(s, [0] * 40), "leaf1-h2", "maps 40 DSCP code points, not all 64"),
])
def test_a_bad_map_is_named(mutate: Callable[[FabricState], None], device: str,
                            phrase: str) -> None:
    found = static_findings(mutate, "qos.dscp_map")
    assert found and all(d == device for d, _ in found), found
    assert any(phrase in message for _, message in found), found


def test_a_strict_roce_class_is_named() -> None:
    def strict(state: FabricState) -> None:
        port = state.devices["spine1"].interfaces["swp1"].qos
        assert port is not None
        queues = dict(port.queues)
        queues[3] = queues[3].model_copy(update={"strict": True, "weight": None})
        state.devices["spine1"].interfaces["swp1"].qos = port.model_copy(
            update={"queues": queues})

    found = static_findings(strict, "sched.lossless_bandwidth")
    assert ("spine1", "spine1:swp1 RoCE queue 3 (TC 3) is strict priority") in found, found
