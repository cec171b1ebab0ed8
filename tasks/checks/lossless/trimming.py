"""Packet trimming (qos.yaml `profile: lossy-trimming`): trimmed packets are marked with
DSCPs no data class uses, and every hop sends them in a strict lossy queue; the RoCE queue
trims what it cannot admit (SONiC's packet-trimming design; NVIDIA's Cumulus Linux packet
trimming)."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, Stage, check
from flatfab.checks.lossless.common import (
    Issue,
    PerObject,
    at,
    egress_lossless,
    fmt_set,
    grouped_findings,
    planned_port_findings,
    port_findings,
    port_groups,
    profile,
)
from flatfab.model.state import TRIM, DeviceQos, LosslessProfile, PortQos, Trimming


def _classes(lossless: LosslessProfile) -> dict[int, str]:
    """DSCP -> the data class that owns it (RoCE's, CNP's)."""
    owners = dict.fromkeys(lossless.cnp_dscp, "CNP's")
    return owners | dict.fromkeys(lossless.roce_dscp, "RoCE's")


def _dscp_issues(qos: PortQos, lossless: LosslessProfile, trim_tc: int) -> list[Issue]:
    issues = []
    owners = _classes(lossless)
    if qos.trim_dscp is not None and qos.trim_dscp in owners:
        issues.append(Issue(f"marks trimmed packets with DSCP {qos.trim_dscp}, "
                            f"{owners[qos.trim_dscp]} code point: the receiver cannot tell a "
                            "trimmed packet from data", f"a DSCP outside {fmt_set(owners)}",
                            f"DSCP {qos.trim_dscp}"))
    for dscp in lossless.trim_dscp:
        tc = at(qos.maps.dscp_to_tc, dscp)
        if tc != trim_tc and "dscp_to_tc" not in qos.unknown:
            issues.append(Issue(f"classifies trimmed packets (DSCP {dscp}) into TC {tc}, not "
                                f"the trim TC {trim_tc}", f"DSCP {dscp} -> TC {trim_tc}",
                                f"DSCP {dscp} -> TC {tc}", kernel=True))
    return issues


@check("trim.dscp", "Every hop marks and classifies trimmed packets apart from data",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def dscp(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: in a `lossy-trimming` fabric, the DSCP each switch port gives trimmed packets
    (its egress direction's: towards hosts or towards the fabric) and every port's DSCP to TC
    map.
    Expects: each trim DSCP is no RoCE or CNP code point, and every hop classifies both trim
    DSCPs into the trim TC (`trimming.priority`).
    Fails when: a port re-marks trimmed packets with a data class's DSCP (the receiver takes
    them for data), or a hop puts a trim DSCP into another TC (trimmed packets then queue
    behind the congestion they report). Outside a trimming fabric nothing is judged.
    Fix: Pick trim DSCPs no class uses (qos.yaml `trimming.dscp_to_hosts`, `dscp_to_fabric`;
    not in `roce.dscp`, `cnp.dscp` or `dscp_to_tc`); live, `flatfab rollout` restores the
    switch's maps and trimming.
    """
    lossless = profile(ctx)
    if lossless is None or lossless.trim_tc is None:
        return
    cached = PerObject(_dscp_issues)
    trim_tc = lossless.trim_tc
    for group in port_groups(ctx, subinterfaces=True):
        issues = cached(group.qos, lossless, trim_tc)
        for port in group.ports if issues else []:
            yield from port_findings(item, port, issues)


def _queue_issues(qos: PortQos, dev: DeviceQos | None, lossless: LosslessProfile,
                  trim_tc: int) -> list[Issue]:
    issues = []
    trimming = dev.trimming if dev is not None else None
    if dev is not None and "trimming" in dev.unknown:
        return []  # not read: state.unknown names it
    if trimming is None:
        return [Issue("does not trim: its switch has no packet trimming", "trimming on",
                      "off")]
    if "trimming.tc" in (dev.unknown if dev is not None else {}):
        return []  # the switch states no trim TC: state.unknown names it
    queue = at(qos.maps.tc_to_queue, trimming.tc)
    if queue != trimming.queue:
        issues.append(Issue(f"sends trimmed packets (TC {trimming.tc}) out of queue "
                            f"{trimming.queue}, while TC {trimming.tc} uses queue {queue}",
                            f"queue {queue}", f"queue {trimming.queue}"))
    state = qos.queues.get(trimming.queue)
    if state is None or not state.strict:
        issues.append(Issue(f"sends trimmed packets in queue {trimming.queue}, which is not "
                            "strict priority", f"queue {trimming.queue}: strict",
                            "missing" if state is None else "weighted"))
    if trimming.tc in qos.pfc or (state is not None and egress_lossless(dev, state.profile)):
        issues.append(Issue(f"sends trimmed packets in lossless TC {trimming.tc}",
                            f"TC {trimming.tc}: lossy", f"TC {trimming.tc}: lossless"))
    roce = qos.queues.get(at(qos.maps.tc_to_queue, lossless.roce_priority) or -1)
    profiles = dev.profiles if dev is not None else {}
    roce_profile = profiles.get(roce.profile) if roce is not None else None
    if roce_profile is None or roce_profile.discard != TRIM:
        issues.append(Issue("RoCE queue drops what it cannot admit instead of trimming it",
                            "egress profile with discard action trim",
                            "none" if roce is None else roce.profile))
    if trimming.tc != trim_tc:
        issues.append(Issue(f"trims into TC {trimming.tc}, the intent's trim TC is {trim_tc}",
                            f"TC {trim_tc}", f"TC {trimming.tc}"))
    return issues


@check("trim.queue", "Every hop sends trimmed packets in a strict lossy queue",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def queue(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: in a `lossy-trimming` fabric, each switch's packet trimming (its TC and queue),
    and on every physical port the trim TC's queue (scheduler, egress profile, PFC) and the
    RoCE queue's egress buffer profile.
    Expects: every switch trims; the trim TC's queue is the one trimmed packets leave by,
    strict priority and lossy, on every hop; the RoCE queue's profile trims (discard action
    `trim`) instead of dropping.
    Fails when: any of these does not hold, named at the port. Outside a trimming fabric
    nothing is judged.
    Fix: From `flatfab check`: put `trimming.priority` among `ets.strict` and out of
    `pfc.priorities`. Live: `flatfab rollout` restores the switch's trimming, schedulers and
    buffer profiles.
    """
    lossless = profile(ctx)
    if lossless is None or lossless.trim_tc is None:
        return
    cached = PerObject(_queue_issues)
    trim_tc = lossless.trim_tc
    yield from grouped_findings(item, ctx, lambda g: cached(g.qos, g.device.qos, lossless,
                                                             trim_tc))


def _trimming_text(trimming: Trimming | None) -> str:
    if trimming is None:
        return "off"
    return f"{trimming.size} B into TC {trimming.tc}, queue {trimming.queue}"


def _against_plan(seen: PortQos, planned: PortQos) -> list[Issue]:
    if seen.trim_dscp == planned.trim_dscp or "trim_dscp" in seen.unknown:
        return []
    return [Issue(f"marks trimmed packets with DSCP {seen.trim_dscp}, the intent sets "
                  f"{planned.trim_dscp}", f"DSCP {planned.trim_dscp}", f"DSCP {seen.trim_dscp}")]


@check("trim.intent", "Every switch trims as the intent sets: size, TC, queue, DSCPs",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE])
def intent(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each switch's packet trimming (size, TC, queue) and each physical port's
    trim DSCP, and the plan's.
    Expects: the planned values.
    Fails when: a switch trims otherwise than planned (or does not, or does where the plan
    does not), or a port marks trimmed packets with another DSCP.
    Fix: `flatfab rollout` restores the trimming. If the new values are wanted, set them in
    qos.yaml `trimming` first.
    """
    for name, device in sorted(ctx.readable.items()):
        planned = ctx.plan.devices.get(name)
        if planned is None or planned.qos is None or device.qos is None \
                or "trimming" in device.qos.unknown:
            continue
        want, got = planned.qos.trimming, device.qos.trimming
        if got is not None and "trimming.tc" in device.qos.unknown:
            got = got.model_copy(update={"tc": want.tc if want else got.tc})  # unstated
        if want != got:
            yield item.finding(name, f"{name} trims {_trimming_text(got)}, the intent says "
                               f"{_trimming_text(want)}", expected=_trimming_text(want),
                               actual=_trimming_text(got), virtual=device.qos.virtual)
    yield from planned_port_findings(item, ctx, _against_plan)
