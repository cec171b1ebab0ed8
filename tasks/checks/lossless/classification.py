"""Classification (I-1..I-3): DSCP trust, the DSCP -> TC -> {PG, queue} chain, PFC maps."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, check
from flatfab.checks.lossless.common import (
    Issue,
    PerObject,
    at,
    egress_lossless,
    fmt_set,
    grouped_findings,
    lossless_host,
    nic_findings,
    nics,
    port_findings,
    port_groups,
    profile,
)
from flatfab.model.state import DeviceQos, LosslessProfile, PortQos, QosMaps

TRUST = "dscp"


def _trust(trust: str) -> list[Issue]:
    return [] if trust == TRUST else [Issue(f"trusts {trust}, not DSCP", TRUST, trust)]


@check("qos.trust", "Every switch port and host NIC trusts DSCP",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=lossless_host)
def trust(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the trust mode of every physical switch port and host NIC with lossless state.
    Expects: DSCP.
    Fails when: a port or NIC trusts anything else (PCP, say). A trust mode the device does
    not state (listed as unknown) is not judged.
    Fix: From `flatfab check`: set `trust: dscp` in qos.yaml, in `hosts` and in any override that
    says otherwise. Live: the port's or NIC's trust was changed on the device; `flatfab rollout`
    restores it.
    """
    yield from grouped_findings(item, ctx, lambda g: [] if "trust" in g.qos.unknown
                                else _trust(g.qos.trust))
    for nic in nics(ctx):
        if "trust" not in nic.nic.unknown:
            yield from nic_findings(item, nic, _trust(nic.nic.trust))


def _dscp_map(maps: QosMaps, lossless: LosslessProfile) -> list[Issue]:
    """RoCE and CNP code points land in their classes (kernel-enforced in the lab)."""
    issues = []
    for kind, dscps, tc in (("RoCE", lossless.roce_dscp, lossless.roce_priority),
                            ("CNP", lossless.cnp_dscp, lossless.cnp_priority)):
        for dscp in dscps:
            got = at(maps.dscp_to_tc, dscp)
            if got != tc:
                issues.append(Issue(f"maps {kind} DSCP {dscp} to TC {got}, not TC {tc}",
                                    f"TC {tc}", f"TC {got}", kernel=True))
    return issues


def _full_map(table: list[int], lossless: LosslessProfile, *, kernel: bool) -> list[Issue]:
    """All 64 code points mapped; only RoCE's in the lossless classes, only CNP's in the CNP
    class; the class most code points fall into (the default) is lossy. `kernel`: the map
    is enforced by the lab's kernel (switch ports), not virtual state (NICs)."""
    if len(table) != 64:
        return [Issue(f"maps {len(table)} DSCP code points, not all 64", "64 code points",
                      str(len(table)), kernel=kernel)]
    issues = []
    lossless_tcs = set(lossless.lossless) | {lossless.roce_priority}
    special = set(lossless.roce_dscp) | set(lossless.cnp_dscp)
    strays: dict[int, list[int]] = {}
    for dscp, tc in enumerate(table):
        if dscp not in special and (tc in lossless_tcs or tc == lossless.cnp_priority):
            strays.setdefault(tc, []).append(dscp)
    for tc, dscps in sorted(strays.items()):
        kind = "lossless" if tc in lossless_tcs else "CNP"
        issues.append(Issue(f"maps DSCP {fmt_set(dscps)} into {kind} TC {tc}, which only "
                            f"{'RoCE' if kind == 'lossless' else 'CNP'} traffic may use",
                            f"TC {tc}: {kind} code points only", f"DSCP {fmt_set(dscps)}",
                            kernel=kernel))
    default = max(range(8), key=table.count)
    if default in lossless_tcs:
        issues.append(Issue(f"the default class (TC {default}, {table.count(default)} code "
                            "points) is lossless", "a lossy default class", f"TC {default}",
                            kernel=kernel))
    return issues


@check("qos.dscp_map", "Every port and NIC maps all 64 DSCPs, RoCE and CNP alone in their TCs",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=lossless_host)
def dscp_map(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the DSCP to TC map of every switch port (VRF sub-interfaces included) and the DSCP to
    priority map of every host NIC; the plan's lossless profile.
    Expects: all 64 code points mapped; only RoCE code points in the lossless TCs and the RoCE TC,
    only CNP code points in the CNP TC; the TC most code points fall into (the default class) lossy.
    Fails when: any of these does not hold. Findings on switch maps are never virtual: the lab's
    kernel enforces them.
    Fix: From `flatfab check`: qos.yaml moves a code point into the wrong class (a `dscp_to_tc`
    entry, an override's map, a NIC's `dscp_to_priority`, or a lossless `default_tc`); correct it.
    Live: the device's map drifted; `flatfab audit` shows it and `flatfab rollout` restores it.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    # judged once per distinct map: a large fabric has ~10^5 ports and NICs, a few maps
    judged: dict[tuple[bool, tuple[int, ...]], list[Issue]] = {}

    def issues_of(table: list[int], *, kernel: bool) -> list[Issue]:
        key = (kernel, tuple(table))
        if key not in judged:
            judged[key] = _full_map(table, lossless, kernel=kernel)
        return judged[key]

    for group in port_groups(ctx, subinterfaces=True):
        issues = issues_of(group.qos.maps.dscp_to_tc, kernel=True)
        for port in group.ports if issues else []:
            yield from port_findings(item, port, issues)
    for nic in nics(ctx):
        yield from nic_findings(item, nic, issues_of(nic.nic.dscp_to_priority, kernel=False))


def _marked_queue(qos: PortQos, tc: int) -> list[Issue]:
    """A lossy fabric's RoCE path: the TC's queue exists and marks ECN."""
    queue = at(qos.maps.tc_to_queue, tc)
    state = qos.queues.get(queue) if queue is not None else None
    if state is None:
        return [Issue(f"RoCE TC {tc} goes to queue {queue}, which is not configured",
                      f"queue {queue} configured", "missing")]
    if state.ecn is None:
        return [Issue(f"RoCE queue {queue} has no ECN marking", f"queue {queue}: ECN",
                      f"queue {queue}: no ECN")]
    return []


def _lossless_path(qos: PortQos, dev: DeviceQos | None, lossless: LosslessProfile) -> list[Issue]:
    """The RoCE TC's ingress PG has a lossless profile, its queue ECN and a lossless profile."""
    issues = []
    tc = lossless.roce_priority
    profiles = dev.profiles if dev is not None else {}
    if lossless.lossy:
        return _marked_queue(qos, tc)  # PFC anywhere is pfc.lossy_fabric's finding
    if tc not in qos.pfc:
        issues.append(Issue(f"has no PFC on RoCE priority {tc}", f"PFC on {tc}",
                            f"PFC on {fmt_set(qos.pfc)}"))
    pg = at(qos.maps.tc_to_pg, tc)
    name = qos.pgs.get(pg) if pg is not None else None
    pg_profile = profiles.get(name) if name is not None else None
    if f"pgs.{pg}" in qos.unknown:
        pass  # the device leaves this PG's profile to its buffer manager: state.unknown says so
    elif pg_profile is None or pg_profile.xoff <= 0:
        what = "none" if name is None else (f"{name} (missing)" if pg_profile is None
                                            else f"{name} (lossy)")
        issues.append(Issue(f"RoCE TC {tc} feeds PG {pg}, which has no lossless buffer profile",
                            f"PG {pg}: lossless profile", f"PG {pg}: {what}"))
    issues += _marked_queue(qos, tc)
    queue = at(qos.maps.tc_to_queue, tc)
    state = qos.queues.get(queue) if queue is not None else None
    if state is not None and not egress_lossless(dev, state.profile):
        issues.append(Issue(f"RoCE queue {queue} has egress profile {state.profile}",
                            "an egress lossless profile", state.profile))
    return issues


@check("qos.class_chain", "Every hop maps RoCE DSCP to a lossless TC, PG and queue",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def class_chain(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: on every switch port, VRF sub-interfaces included, the DSCP to TC map; on physical
    ports also PFC, the TC to PG and TC to queue maps, the PG's buffer profile and the queue's ECN
    and egress profile.
    Expects: the RoCE and CNP code points map to their TCs; the RoCE priority has PFC, its PG a
    lossless profile, its queue exists with ECN marking and an egress lossless profile. In a
    `lossy` fabric (qos.yaml `profile`) the RoCE queue exists and marks ECN, and nothing else of
    the chain is expected (PFC anywhere is `pfc.lossy_fabric`'s finding).
    Fails when: any link of that chain is broken. A PG whose profile the switch leaves to its buffer
    manager is not judged.
    Fix: Follow the broken link the finding names: a map, PFC setting, buffer profile or queue the
    plan has and the device lacks is config drift (`flatfab audit`, then `flatfab rollout`). From
    `flatfab check`, qos.yaml breaks the chain (PFC off the RoCE priority, ECN turned off by an
    override): correct it.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    maps, paths = PerObject(_dscp_map), PerObject(_lossless_path)
    # collected VRF sub-interfaces carry their own kernel DSCP map: check them too
    for group in port_groups(ctx, subinterfaces=True):
        on_maps = maps(group.qos.maps, lossless)
        on_path = on_maps + paths(group.qos, group.device.qos, lossless)
        if not on_path:
            continue
        for port in group.ports:  # the buffer path belongs to the physical port
            yield from port_findings(item, port, on_path if port.iface.parent is None
                                     else on_maps)


def _pfc_maps(qos: PortQos, lossless: LosslessProfile) -> list[Issue]:
    issues = []
    maps = qos.maps
    for priority in sorted(set(qos.pfc) & set(lossless.lossless)):
        # the planner's convention: priority p is carried by TC p, the RoCE priority by its TC
        tc = lossless.roce_priority if priority == lossless.roce_priority else priority
        for table, feeds, what in ((maps.pfc_to_pg, maps.tc_to_pg, "PG"),
                                   (maps.pfc_to_queue, maps.tc_to_queue, "queue")):
            got, want = at(table, priority), at(feeds, tc)
            if got != want:
                verb = "is sent by" if what == "PG" else "stops"
                issues.append(Issue(f"PFC priority {priority} {verb} {what} {got}, but TC {tc} "
                                    f"uses {what} {want}", f"{what} {want}", f"{what} {got}"))
    return issues


@check("qos.pfc_maps", "Every PFC priority pauses and is sent by the PG and queue of its TC",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def pfc_maps(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: every physical switch port's PFC priorities and its PFC to PG, PFC to queue, TC to PG
    and TC to queue maps.
    Expects: each lossless PFC priority p is sent by the PG, and pauses the queue, that TC p uses.
    Fails when: a PFC map points at another PG or queue than TC p's.
    Fix: Live: the switch's maps drifted; `flatfab rollout` restores them. From `flatfab check`: the
    overrides of qos.yaml give a port a `dscp_to_tc` or `pfc` that disagree with each other; make
    the PFC priorities the TCs their traffic uses.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    cached = PerObject(_pfc_maps)
    yield from grouped_findings(item, ctx, lambda g: cached(g.qos, lossless))

