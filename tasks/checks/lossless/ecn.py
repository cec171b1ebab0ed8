"""ECN (I-9..I-11): marking on every lossless queue, sane thresholds, marking before pausing."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, Stage, check
from flatfab.checks.lossless.common import (
    Issue,
    PerObject,
    at,
    grouped_findings,
    planned_port_findings,
    port_findings,
    port_groups,
    profile,
    switch_ports,
)
from flatfab.model.state import BufferPool, DeviceQos, EcnProfile, PortQos, QueueQos
from flatfab.qos.ecn_delay import depth_text, speed_text


def lossless_queues(qos: PortQos, lossless: list[int]) -> list[tuple[int, QueueQos | None]]:
    """(queue, its state or None) of every lossless TC of a port, each queue once."""
    queues = sorted({q for tc in lossless if (q := at(qos.maps.tc_to_queue, tc)) is not None})
    return [(q, qos.queues.get(q)) for q in queues]


def _attached(qos: PortQos, lossless: list[int], kind: str) -> list[Issue]:
    issues = []
    for queue, state in lossless_queues(qos, lossless):
        if state is None or state.ecn is None:
            what = "is not configured" if state is None else "has no ECN marking"
            issues.append(Issue(f"{kind} queue {queue} {what}", f"queue {queue}: ECN",
                                f"queue {queue}: {'missing' if state is None else 'no ECN'}"))
    return issues


@check("ecn.attached", "Every lossless queue on every switch port marks ECN",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def attached(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the TC to queue map and queue ECN settings of every physical switch port, and the
    lossless profile's lossless TCs.
    Expects: the queue of every lossless TC (in a `lossy` fabric, the RoCE TC) exists and marks ECN.
    Fails when: such a queue is not configured or has no ECN marking.
    Fix: Turn marking on for the lossless queues: from `flatfab check`, an override sets
    `ecn_enabled: false` or a PFC priority has no queue; live, `flatfab rollout`. Without ECN marks
    DCQCN gets no signal and PFC does all the work.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    cached = PerObject(_attached)
    marked, kind = lossless.marked, "RoCE" if lossless.lossy else "lossless"
    yield from grouped_findings(item, ctx, lambda g: cached(g.qos, marked, kind))


def _egress_pool(dev: DeviceQos | None, state: QueueQos) -> BufferPool | None:
    """The pool a queue draws from: its profile's, else the egress lossless pool."""
    if dev is None:
        return None
    queue_profile = dev.profiles.get(state.profile)
    pool = dev.pools.get(queue_profile.pool) if queue_profile is not None else None
    if pool is not None and pool.direction == "egress":
        return pool
    return next((p for p in dev.pools.values() if p.direction == "egress" and p.lossless), None)


def _thresholds(qos: PortQos, dev: DeviceQos | None) -> list[Issue]:
    issues = []
    for queue, state in sorted(qos.queues.items()):
        ecn = state.ecn
        if ecn is None:
            continue
        if ecn.min_bytes <= 0:
            issues.append(Issue(f"queue {queue} ECN min is {ecn.min_bytes} B", "> 0",
                                str(ecn.min_bytes)))
        if ecn.min_bytes >= ecn.max_bytes:
            issues.append(Issue(f"queue {queue} ECN min {ecn.min_bytes} B is not below its max "
                                f"{ecn.max_bytes} B", f"min < {ecn.max_bytes}",
                                f"min {ecn.min_bytes}"))
        if not 0 < ecn.probability <= 100:
            issues.append(Issue(f"queue {queue} ECN marking probability is {ecn.probability} %",
                                "1-100", str(ecn.probability)))
        pool = _egress_pool(dev, state)
        if pool is not None and ecn.max_bytes > pool.size:
            issues.append(Issue(f"queue {queue} ECN max {ecn.max_bytes} B exceeds its egress "
                                f"pool ({pool.size} B)", f"<= {pool.size}",
                                str(ecn.max_bytes)))
    return issues


@check("ecn.thresholds", "Every ECN profile has 0 < min < max <= pool and 0 < P <= 100 %",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def thresholds(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the ECN settings of every queue of every physical switch port, and the egress pool
    each queue draws from (its profile's, else the switch's egress lossless pool).
    Expects: 0 < min < max, max no larger than the pool, marking probability 1-100 %.
    Fails when: any of these does not hold. A queue without ECN is not judged here (`ecn.attached`
    names a lossless one).
    Fix: Correct the thresholds in qos.yaml (`ecn.default`, `ecn.per_speed`, an override's `ecn`): 0
    < min < max, max no larger than the pool, probability 1-100; live, `flatfab rollout` restores
    them.
    """
    cached = PerObject(_thresholds)
    yield from grouped_findings(item, ctx, lambda g: cached(g.qos, g.device.qos))


def xoff_trigger(dev: DeviceQos) -> tuple[int, str] | None:
    """(bytes, profile) of the earliest point a lossless PG of this device sends XOFF: its
    static threshold, or alpha/(1+alpha) of its pool (alpha = 2^dynamic_th, one congested PG
    alone on a free pool)."""
    best: tuple[int, str] | None = None
    for name, pg in sorted(dev.profiles.items()):
        if pg.xoff <= 0:
            continue
        if pg.static_th is not None:
            trigger = pg.static_th
        elif pg.dynamic_th is not None:
            key = pg.pool if pg.pool in dev.pools else next(
                (k for k, p in dev.pools.items() if p.direction == "ingress" and p.lossless),
                None)
            if key is None or f"pools.{key}.size" in dev.unknown:
                continue  # no pool, or one the buffer manager sizes: no trigger to judge by
            pool = dev.pools[key]
            alpha = 2.0 ** pg.dynamic_th
            trigger = int(alpha / (1 + alpha) * pool.size)
        else:
            continue
        if best is None or trigger < best[0]:
            best = (trigger, name)
    return best


def _before_pfc(qos: PortQos, lossless: list[int], trigger: tuple[int, str]) -> list[Issue]:
    limit, name = trigger
    return [Issue(f"queue {queue}: ECN max above the XOFF point ({state.ecn.max_bytes} B > "
                  f"{limit} B of {name}): PFC pauses before ECN marks fully",
                  f"<= {limit}", str(state.ecn.max_bytes))
            for queue, state in lossless_queues(qos, lossless)
            if state is not None and state.ecn is not None and state.ecn.max_bytes > limit]


@check("ecn.before_pfc", "Every lossless queue marks ECN fully before its PG sends PFC",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def before_pfc(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the ECN max of each physical switch port's lossless queues, and the switch's lossless
    PG profiles with their pools.
    Expects: every ECN max is at or below the switch's earliest XOFF point: a lossless PG's static
    threshold, or alpha/(1+alpha) of its pool for a dynamic one (alpha = 2^dynamic_th).
    Fails when: an ECN max is above it: PFC pauses before ECN marks fully. A dynamic PG with no pool
    to measure, or one the buffer manager sizes, gives no XOFF point; a switch with none is not
    judged.
    Fix: Lower ECN's `max_bytes` in qos.yaml below the XOFF point the finding gives, or raise the
    lossless PGs' threshold (`buffers.lossless_dynamic_th`, `lossless_static_th`) or pool. ECN must
    mark before PFC pauses, or pauses become the congestion control.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    triggers, cached = PerObject(xoff_trigger), PerObject(_before_pfc)
    for group in port_groups(ctx):
        dev = group.device.qos
        trigger = triggers(dev) if dev is not None else None
        issues = cached(group.qos, lossless.lossless, trigger) if trigger is not None else []
        for port in group.ports if issues else ():
            yield from port_findings(item, port, issues)


@check("ecn.pause_without_marks", "Every switch that sent PFC pauses has marked ECN too",
       scope=Scope.DEVICE, severity=Severity.WARNING, stages=(Stage.LIVE,))
def pause_without_marks(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the PFC frames every physical switch port sent and the ECN-marked count of its
    lossless queues (interface counters).
    Expects: a switch that sent pauses has also marked: pauses come from a full ingress PG, marks
    from a filling egress queue, and traffic should cross the ECN threshold first.
    Fails when: a switch sent PFC frames while its lossless queues marked nothing (marking off, or
    thresholds above the XOFF point). A switch whose counters give no marks count is not judged.
    Fix: Check the switch's ECN on its lossless queues (`ecn.attached`, `ecn.before_pfc`,
    `ecn.intent`). If they pass, the pauses come from congestion no egress queue of this switch sees
    (incast towards a host): watch the ports with `flatfab watch` and check the hosts' DCQCN
    (`telemetry.dcqcn_idle`).
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    paused: dict[str, int] = {}
    marks: dict[str, int | None] = {}
    for port in switch_ports(ctx):
        counters = port.iface.counters
        if counters is None:
            continue
        name = port.device.name
        paused[name] = paused.get(name, 0) + (counters.pfc_tx_frames or 0)
        for queue, _ in lossless_queues(port.qos, lossless.lossless):
            if queue in counters.ecn_marked:
                marks[name] = (marks.get(name) or 0) + counters.ecn_marked[queue]
    for name, frames in sorted(paused.items()):
        if frames and marks.get(name) == 0:
            yield item.finding(name, f"{name} sent {frames} PFC pause frames while its lossless "
                               "queues marked no packet: ECN did not act before PFC (marking "
                               "off, or thresholds above the XOFF point)",
                               expected="ECN marks before pauses", actual="0 marked")


def _ecn_text(ecn: EcnProfile | None, speed_mbps: int | None) -> str:
    """In bytes, and in queue delay at the port's speed (an intent may give either)."""
    if ecn is None:
        return "no ECN"
    at = f" at {speed_text(speed_mbps)}" if speed_mbps else ""
    return (f"min {depth_text(ecn.min_bytes, speed_mbps)}, max "
            f"{depth_text(ecn.max_bytes, speed_mbps)}{at}, {ecn.probability} %")


def _against_plan(qos: PortQos, planned: PortQos, lossless: list[int]) -> list[Issue]:
    issues = []
    for queue, want in lossless_queues(planned, lossless):
        if want is None or want.ecn is None or any(
                key in qos.unknown for key in (f"queues.{queue}", f"queues.{queue}.ecn")):
            continue
        got = qos.queues.get(queue)
        got_ecn = got.ecn if got is not None else None
        if got_ecn is not None and got_ecn != want.ecn:
            speed = planned.speed_mbps
            issues.append(Issue(f"queue {queue} marks ECN at {_ecn_text(got_ecn, speed)}, the "
                                f"intent sets {_ecn_text(want.ecn, speed)}",
                                _ecn_text(want.ecn, speed), _ecn_text(got_ecn, speed)))
    return issues


@check("ecn.intent", "Every lossless queue marks ECN at the thresholds the intent sets",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE])
def intent(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the ECN min, max and probability of each physical switch port's lossless
    queues (a `lossy` fabric's RoCE queue), and the plan's for the same port.
    Expects: the planned values: two vendors' valid thresholds can still disagree (one leaf
    marking at 300 KB while its spine marks at 150 KB), and then DCQCN reacts late on one hop.
    Fails when: a queue's ECN settings differ from the plan's. A queue without ECN is
    `ecn.attached`'s, an insane profile `ecn.thresholds`'s; a queue the device does not state
    is not judged.
    Fix: `flatfab rollout` restores the planned thresholds (`flatfab audit` names the drift). If the
    new values are wanted, set them in qos.yaml, for every switch on the path, so each hop marks
    alike.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    queues = lossless.marked
    yield from planned_port_findings(item, ctx,
                                     lambda seen, plan: _against_plan(seen, plan, queues))
