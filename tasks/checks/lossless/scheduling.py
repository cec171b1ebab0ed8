"""Scheduling (I-18, I-19): CNPs go first and stay lossy, the RoCE class has bandwidth."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, check
from flatfab.checks.lossless.common import (
    Issue,
    PerObject,
    at,
    fmt_set,
    grouped_findings,
    lossless_host,
    nic_findings,
    nics,
    profile,
)
from flatfab.model.state import NicQos, PortQos


def _cnp_port(qos: PortQos, tc: int) -> list[Issue]:
    queue = at(qos.maps.tc_to_queue, tc)
    state = qos.queues.get(queue) if queue is not None else None
    if state is None:
        return [Issue(f"CNP TC {tc} goes to queue {queue}, which is not configured",
                      f"queue {queue}: strict", "missing")]
    if not state.strict:
        weight = f"weight {state.weight}" if state.weight else "no weight"
        return [Issue(f"CNP queue {queue} (TC {tc}) is not strict priority",
                      f"queue {queue}: strict", f"queue {queue}: {weight}")]
    return []


@check("sched.cnp_strict", "Every port and NIC sends CNPs in a strict-priority, lossy class",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=lossless_host)
def cnp_strict(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the lossless profile's CNP priority, each physical switch port's TC to queue map and
    queue scheduling, and each host NIC's strict-priority TCs.
    Expects: the CNP priority is lossy (a paused CNP class delays every rate cut), its queue exists
    and is strict priority on every port, and every NIC schedules it strict.
    Fails when: any of these does not hold; a lossless CNP priority is one finding on no device (the
    profile's).
    Fix: From `flatfab check`: keep the CNP priority out of `pfc.priorities` and in `ets.strict` (no
    override removing it); live, `flatfab rollout` restores the switch's or host's scheduling. CNPs
    queued behind data delay every sender's rate cut.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    tc = lossless.cnp_priority
    if tc in lossless.lossless:  # the profile itself: a paused CNP class delays every rate cut
        yield item.finding(None, f"CNP priority {tc} is in the lossless set "
                           f"{fmt_set(lossless.lossless)}", expected=f"{tc} lossy",
                           actual=f"lossless {fmt_set(lossless.lossless)}")
    cached = PerObject(_cnp_port)
    yield from grouped_findings(item, ctx, lambda g: cached(g.qos, tc))
    for nic in nics(ctx):
        if tc not in nic.nic.strict_tcs:
            yield from nic_findings(item, nic, [Issue(
                f"does not schedule CNP TC {tc} strict (strict: "
                f"{fmt_set(nic.nic.strict_tcs)})", f"{tc} strict",
                f"strict {fmt_set(nic.nic.strict_tcs)}")])


def _port_bandwidth(qos: PortQos, tc: int) -> list[Issue]:
    issues = []
    queue = at(qos.maps.tc_to_queue, tc)
    state = qos.queues.get(queue) if queue is not None else None
    if state is not None and state.strict:
        # a strict lossless class starves the others and, paused, blocks nothing below it
        issues.append(Issue(f"RoCE queue {queue} (TC {tc}) is strict priority",
                            "a weighted share", "strict"))
    elif state is not None and not (state.weight or 0) > 0:
        issues.append(Issue(f"RoCE queue {queue} (TC {tc}) has no bandwidth share",
                            "weight > 0", f"weight {state.weight or 0}"))
    weights = [q.weight for q in qos.queues.values() if not q.strict and q.weight]
    if weights and sum(weights) != 100:
        issues.append(Issue(f"DWRR weights sum to {sum(weights)} %", "100", str(sum(weights))))
    return issues


def _nic_bandwidth(nic: NicQos, tc: int) -> list[Issue]:
    issues = []
    share = at(nic.tc_bw, tc) or 0
    if tc in nic.strict_tcs:
        issues.append(Issue(f"schedules RoCE TC {tc} strict priority", "a weighted share",
                            "strict"))
    elif share <= 0:
        issues.append(Issue(f"gives RoCE TC {tc} no bandwidth (tc_bw {share} %)",
                            "tc_bw > 0", f"{share}"))
    if sum(nic.tc_bw) != 100:
        issues.append(Issue(f"tc_bw sums to {sum(nic.tc_bw)} %", "100", str(sum(nic.tc_bw))))
    return issues


@check("sched.lossless_bandwidth", "Every port and NIC gives the RoCE class a bandwidth share",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=lossless_host)
def lossless_bandwidth(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each physical switch port's RoCE TC queue and DWRR weights, and each host NIC's
    strict-priority TCs and TC bandwidth.
    Expects: the RoCE class is weighted (not strict) with a share above 0, and a port's DWRR weights
    and a NIC's TC bandwidth each sum to 100 %.
    Fails when: the RoCE class is strict or has no share, or the weights do not sum to 100 %.
    Fix: Give the RoCE traffic class a DWRR share in qos.yaml `ets.weights` (not strict), with the
    weights summing to 100; live, `flatfab rollout`.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    tc = lossless.roce_priority
    cached = PerObject(_port_bandwidth)
    yield from grouped_findings(item, ctx, lambda g: cached(g.qos, tc))
    for nic in nics(ctx):
        yield from nic_findings(item, nic, _nic_bandwidth(nic.nic, tc))
