"""verify --traffic's judgement of per-class counters (tasks/workflows/commands/traffic.py),
offline: a counter a switch does not keep is unknown and said so, never read as zero."""

from __future__ import annotations

from flatfab.checks.base import Severity
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.plan.traffic import FlowGroup, hops, plan_flows
from flatfab.workflows.commands.traffic import CHECK, DROPS, Counters, _judge
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
