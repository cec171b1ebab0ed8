"""verify --traffic's judgement of per-class counters (tasks/workflows/commands/traffic.py),
offline: a counter a switch does not keep is unknown and said so, never read as zero."""

from __future__ import annotations

from flatfab.checks.base import Severity
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.plan.traffic import FlowGroup, hops, plan_flows
from flatfab.workflows.commands.traffic import (
    CHECK,
    DROPS,
    SPREAD,
    Counters,
    _judge,
    chance_floor,
    spread_summary,
    waves,
)
from tests.support.paths import ROOT

PLAN: FabricState = plan(load_intent(ROOT / "intents" / "lab"))
GROUP: FlowGroup = plan_flows(PLAN)[0]


def _counters(packets: int) -> tuple[Counters, Counters]:
    """Before and after: every hop port counted `packets` RoCE and CNP packets, no drops.
    (Spines each carry their whole share, which is more than the group's ECMP share.)"""
    before: Counters = {}
    after: Counters = {}
    assert PLAN.lossless is not None
    for hop in hops(PLAN, GROUP):
        for port in hop.ports:
            for tc in range(8):
                count = packets if tc in (PLAN.lossless.roce_priority,
                                          PLAN.lossless.cnp_priority) else 0
                before.setdefault(hop.device, {}).setdefault(port, {})[tc] = {
                    "packets": 0, "drops": 0}
                after.setdefault(hop.device, {}).setdefault(port, {})[tc] = {
                    "packets": count, "drops": 0}
    return before, after


def test_a_path_that_queued_every_packet_in_its_class_is_clean() -> None:
    assert _judge(PLAN, GROUP, *_counters(GROUP.roce_packets + GROUP.cnp_packets)) == []


def test_too_few_packets_and_lossless_drops_are_named() -> None:
    before, after = _counters(GROUP.roce_packets + GROUP.cnp_packets)
    last = hops(PLAN, GROUP)[-1]
    after[last.device][last.ports[0]][3] = {"packets": 1, "drops": 5}
    found = {(f.check, f.device, f.severity) for f in _judge(PLAN, GROUP, before, after)}
    assert (CHECK, last.device, Severity.ERROR) in found
    assert (DROPS, last.device, Severity.ERROR) in found


def test_a_counter_the_switch_does_not_keep_is_unknown_not_zero() -> None:
    before, after = _counters(GROUP.roce_packets + GROUP.cnp_packets)
    last = hops(PLAN, GROUP)[-1]
    for counters in (before, after):
        del counters[last.device][last.ports[0]][3]  # no RoCE-class counter on that port
    found = _judge(PLAN, GROUP, before, after)
    assert [f.severity for f in found] == [Severity.NOT_JUDGED, Severity.NOT_JUDGED]
    assert sorted(f.message for f in found) == [
        f"{last.device}:{last.ports[0]} is not judged: it keeps no drops counter for TC 3",
        f"{last.device}:{last.ports[0]} is not judged: it keeps no packets counter for TC 3"]


def test_a_spine_without_counters_leaves_the_spread_unjudged() -> None:
    before, after = _counters(GROUP.roce_packets + GROUP.cnp_packets)
    spine = next(h for h in hops(PLAN, GROUP) if h.role == "spine")
    for counters in (before, after):
        counters[spine.device][spine.ports[0]] = {}
    found = _judge(PLAN, GROUP, before, after)
    assert {f.severity for f in found} == {Severity.NOT_JUDGED}
    assert {f.device for f in found} == {spine.device}


RAIL: FabricState = plan(load_intent(ROOT / "intents" / "rail"))


def test_flow_groups_that_share_a_port_are_sent_in_different_waves() -> None:
    """Each group is judged on counters no other group's packets touched: on the rail lab,
    su1-leaf1's uplink carries two servers' flows, which go in two waves."""
    groups = plan_flows(RAIL)
    sent = waves(RAIL, groups)
    assert sum(map(len, sent)) == len(groups) and all(any(g in w for w in sent) for g in groups)
    assert sorted(map(len, sent)) == [2, 4, 4, 8]
    for wave in sent:
        crossed = [(hop.device, port) for g in wave for hop in hops(RAIL, g)
                   for port in hop.ports]
        assert len(crossed) == len(set(crossed))
    uplink = [i for i, wave in enumerate(sent) for g in wave
              if hops(RAIL, g)[0] == hops(RAIL, groups[0])[0]]
    assert len(uplink) == len(set(uplink)) >= 2


def test_the_classic_lab_sends_every_group_at_once() -> None:
    assert len(waves(PLAN, plan_flows(PLAN))) == 1


def test_a_mis_marked_group_judged_alone_is_named_at_the_hop_it_crossed() -> None:
    """What a wave's counters show for one group whose RoCE left in TC 0: named at every
    hop it crossed in the wrong class, with its route."""
    before, after = _counters(GROUP.roce_packets + GROUP.cnp_packets)
    for hop in hops(PLAN, GROUP):
        for port in hop.ports:
            after[hop.device][port][0] = {"packets": GROUP.roce_packets, "drops": 0}
            after[hop.device][port][3] = {"packets": 0, "drops": 0}
    found = [f for f in _judge(PLAN, GROUP, before, after) if f.check == CHECK]
    route = f"{GROUP.source} -> {GROUP.target} (VRF {GROUP.vrf})"
    assert {f.device for f in found} == {h.device for h in hops(PLAN, GROUP)}
    assert all(route in f.message for f in found)


def test_the_chance_floor_is_the_binomial_tail() -> None:
    # 32 flows over 2 spines: 4 or fewer on one happens by chance 9.7 times in a million
    assert chance_floor(32, 2) == 5
    assert chance_floor(32, 2, odds=0.5) == 16  # the median
    assert chance_floor(64, 4) == 3 and chance_floor(16, 1) == 0


def _spine_split(carried: dict[str, int]) -> tuple[Counters, Counters]:
    """Counters where each spine hop of GROUP carried these many RoCE flows."""
    before, after = _counters(GROUP.roce_packets + GROUP.cnp_packets)
    for hop in hops(PLAN, GROUP):
        if hop.role == "spine":
            after[hop.device][hop.ports[0]][3]["packets"] = (carried[hop.device]
                                                            * GROUP.data_packets)
    return before, after


def test_a_spine_starved_of_flows_is_named_and_each_tier_is_measured() -> None:
    spines = sorted(h.device for h in hops(PLAN, GROUP) if h.role == "spine")
    assert len(spines) == 2 and GROUP.flows == 32
    tally: dict[int, list[int]] = {}
    found = _judge(PLAN, GROUP, *_spine_split({spines[0]: 30, spines[1]: 2}), tally)
    assert [(f.check, f.device, f.severity) for f in found] == [
        (SPREAD, spines[1], Severity.WARNING)]
    assert found[0].message.startswith(f"{spines[1]} carried 2 of 32 RoCE flows")
    tally = {}
    assert _judge(PLAN, GROUP, *_spine_split({spines[0]: 20, spines[1]: 12}), tally) == []
    summary = spread_summary(tally)
    assert [(f.check, f.severity, f.actual) for f in summary] == [
        (SPREAD, Severity.INFO, "12-20 flows")]
