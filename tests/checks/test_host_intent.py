"""host.intent: every setting a host NIC carries is compared with the intent, so a NIC that
drifted together with its leaf (where host.agreement sees two ends that agree) is named."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flatfab.checks import Finding
from flatfab.model.state import FabricState, NicQos
from tests.support.lossless import collected, live, nic_of, qos_of


def _intent(state: FabricState) -> list[Finding]:
    return [f for f in live(state) if f.check == "host.intent"]


def _set(field: str, value: object) -> Callable[[NicQos], None]:
    return lambda nic: setattr(nic, field, value)


def _remap(nic: NicQos) -> None:
    nic.dscp_to_priority = list(nic.dscp_to_priority)
    nic.dscp_to_priority[10] = 3
    nic.dscp_to_priority[34] = 3


CASES = [
    ("trust", _set("trust", "pcp"), "has trust pcp, the intent says dscp", "dscp", "pcp"),
    ("pfc vector", _set("pfc", [3, 4]), "has PFC priorities 3,4, the intent says 3", "3", "3,4"),
    ("cnp priority", _set("cnp_priority", 5), "has CNP priority 5, the intent says 6", "6", "5"),
    ("np on a lossy priority", _set("ecn_np", [0, 3]),
     "has ECN notification point priorities 0,3, the intent says 3", "3", "0,3"),
    ("rp off", _set("ecn_rp", []), "has ECN reaction point priorities none, the intent says 3",
     "3", "none"),
    ("dcqcn off", _set("dcqcn", False), "has DCQCN off, the intent says on", "on", "off"),
    ("strict", _set("strict_tcs", [3, 6]), "has strict-priority TCs 3,6, the intent says 6",
     "6", "3,6"),
    ("tc bandwidth", _set("tc_bw", [40, 0, 0, 60, 0, 0, 0, 0]),
     "has TC bandwidth 40,0,0,60,0,0,0,0, the intent says 50,0,0,50,0,0,0,0",
     "50,0,0,50,0,0,0,0", "40,0,0,60,0,0,0,0"),
    ("storm prevention", _set("pfc_prevention_ms", 0),
     "has PFC storm prevention 0 ms, the intent says 100 ms", "100 ms", "0 ms"),
    ("dscp map", _remap, "maps DSCP 10,34 to another priority than the intent",
     "10:0 34:0", "10:3 34:3"),
]


@pytest.mark.parametrize(("mutate", "text", "expected", "actual"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_nic_setting_that_differs_from_the_intent_is_named(
        mutate: Callable[[NicQos], None], text: str, expected: str, actual: str) -> None:
    state = collected()
    mutate(nic_of(state, "leaf3-h2"))
    [finding] = _intent(state)
    assert (finding.device, finding.port) == ("leaf3-h2", "eth1")
    assert finding.message == f"leaf3-h2:eth1 {text}"
    assert (finding.expected, finding.actual) == (expected, actual)
    assert finding.virtual  # the lab's NIC state is virtual


def test_a_nic_and_its_leaf_that_drifted_together_are_named_against_the_intent() -> None:
    state = collected()
    nic_of(state, "leaf2-h1").trust = "pcp"
    qos_of(state, "leaf2", "swp1").trust = "pcp"
    findings = live(state)
    # the two ends agree with each other, so only the intent can tell
    assert not [f for f in findings if f.check == "host.agreement"]
    assert {(f.check, f.device, f.port) for f in findings} >= {
        ("host.intent", "leaf2-h1", "eth1"), ("qos.trust", "leaf2", "swp1")}


def test_a_nic_as_planned_has_no_finding() -> None:
    assert _intent(collected()) == []


def test_a_long_map_difference_is_shortened_but_counted() -> None:
    state = collected()
    nic = nic_of(state, "leaf1-h1")
    nic.dscp_to_priority = [3] * 64
    [finding] = _intent(state)
    assert "(+" in finding.message and "more)" in finding.message
    assert len(finding.expected.split()) == 8
