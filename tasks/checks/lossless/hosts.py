"""Host agreement (I-6, I-12): a GPU NIC classifies, marks and reacts like its leaf port.

PFC equality across the host link is pfc.link_symmetry's; this check covers the rest of the
pairs a NIC and its leaf port must agree on (lossless-domain reference §6.3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, Stage, check
from flatfab.checks.lossless.common import (
    Issue,
    Nic,
    Port,
    at,
    fmt_set,
    interface,
    lossless_host,
    nic_findings,
    nics,
    physical_links,
    planned,
    port_findings,
    profile,
)
from flatfab.model.state import Interface, LinkKind, LosslessProfile, NicQos, PortQos


def _nic_only(nic: NicQos, lossless: LosslessProfile) -> list[Issue]:
    """What a NIC must send and enable whatever its leaf does."""
    issues: list[Issue] = []
    unread = nic.unknown  # settings the NIC did not state: state.unknown names them
    dscp = nic.roce_tos >> 2
    if "roce_tos" in unread:
        pass
    elif dscp not in lossless.roce_dscp:
        issues.append(Issue(f"marks RoCE with ToS {nic.roce_tos} (DSCP {dscp}), not a RoCE "
                            "DSCP", f"DSCP {fmt_set(lossless.roce_dscp)}", f"DSCP {dscp}",
                            kernel=True))
    ecn_bits = nic.roce_tos & 0b11
    if "roce_tos" in unread:
        pass
    elif ecn_bits in (0b00, 0b11):
        # RFC 3168: RoCE must leave as ECN-capable (ECT) for switches to mark it
        issues.append(Issue(f"sends RoCE with ToS {nic.roce_tos}, whose ECN field is "
                            f"{'not-ECT' if ecn_bits == 0 else 'CE'}: switches cannot mark it",
                            "ECT(0) or ECT(1)", "not-ECT" if ecn_bits == 0 else "CE",
                            kernel=True))
    elif nic.roce_tos != lossless.roce_tos:
        issues.append(Issue(f"sends RoCE with ToS {nic.roce_tos}, the intent says "
                            f"{lossless.roce_tos}", f"ToS {lossless.roce_tos}",
                            f"ToS {nic.roce_tos}", kernel=True))
    if "cnp_dscp" not in unread and nic.cnp_dscp not in lossless.cnp_dscp:
        issues.append(Issue(f"marks CNPs with DSCP {nic.cnp_dscp}, not a CNP DSCP",
                            f"DSCP {fmt_set(lossless.cnp_dscp)}", f"DSCP {nic.cnp_dscp}",
                            kernel=True))
    for field, name, enabled in (("ecn_np", "notification point", nic.ecn_np),
                                 ("ecn_rp", "reaction point", nic.ecn_rp)):
        if field in unread or not lossless.dcqcn:
            continue  # lossless-no-dcqcn: the points are off on purpose (host.intent)
        missing = set(lossless.marked) - set(enabled)
        if missing:
            kind = "RoCE" if lossless.lossy else "lossless"
            issues.append(Issue(f"has no ECN {name} on {kind} priority {fmt_set(missing)}",
                                f"ECN {name} on {fmt_set(lossless.marked)}",
                                f"on {fmt_set(enabled)}"))
    return issues


def _paired(nic: NicQos, port: PortQos,
            lossless: LosslessProfile) -> list[tuple[str, Issue, Issue]]:
    """(field, issue named at the NIC, issue named at the leaf port) for every pair that
    disagrees."""
    issues: list[tuple[str, Issue, Issue]] = []
    if "trust" not in nic.unknown and nic.trust != port.trust:
        issues.append(("trust", Issue(f"trusts {nic.trust}, its leaf port trusts {port.trust}",
                                      port.trust, nic.trust),
                       Issue(f"trusts {port.trust}, its host NIC trusts {nic.trust}",
                             nic.trust, port.trust)))
    pfc = fmt_set(port.pfc)
    # a lossy fabric pauses nothing: PFC there is pfc.lossy_fabric's
    paused = [] if lossless.lossy else lossless.roce_dscp
    for dscp in [] if {"dscp_to_priority", "pfc"} & nic.unknown.keys() else paused:
        prio = at(nic.dscp_to_priority, dscp)
        if prio not in port.pfc:
            issues.append(("pfc", Issue(
                f"sends RoCE DSCP {dscp} on priority {prio}, which its leaf port does not "
                f"pause (PFC on {pfc})", f"priority in {pfc}", f"priority {prio}"), Issue(
                f"does not pause priority {prio}, on which its host NIC sends RoCE DSCP "
                f"{dscp} (PFC on {pfc})", f"PFC on {prio}", f"PFC on {pfc}")))
    leaf_tc = at(port.maps.dscp_to_tc, nic.cnp_dscp)
    if not {"cnp_dscp", "cnp_priority"} & nic.unknown.keys() and nic.cnp_priority != leaf_tc:
        issues.append(("cnp", Issue(
            f"sends CNPs (DSCP {nic.cnp_dscp}) on priority {nic.cnp_priority}, its leaf port "
            f"classifies them into TC {leaf_tc}", f"priority {leaf_tc}",
            f"priority {nic.cnp_priority}"), Issue(
            f"classifies CNPs (DSCP {nic.cnp_dscp}) into TC {leaf_tc}, its host NIC sends them "
            f"on priority {nic.cnp_priority}", f"TC {nic.cnp_priority}", f"TC {leaf_tc}",
            kernel=True)))
    return issues


def _nic_value(field: str, nic: NicQos) -> object:
    if field == "trust":
        return nic.trust
    return nic.dscp_to_priority if field == "pfc" else (nic.cnp_dscp, nic.cnp_priority)


def _port_value(field: str, port: PortQos) -> object:
    if field == "trust":
        return port.trust
    return sorted(port.pfc) if field == "pfc" else port.maps.dscp_to_tc


def _leaf_moved(field: str, nic: Nic, port: Port, nic_plan: Interface | None,
                port_plan: Interface | None) -> bool:
    """Whether the leaf port, not the NIC, moved away from the plan on this pair."""
    if nic_plan is None or nic_plan.nic is None or port_plan is None or port_plan.qos is None:
        return False
    return (_port_value(field, port.qos) != _port_value(field, port_plan.qos)
            and _nic_value(field, nic.nic) == _nic_value(field, nic_plan.nic))


@check("host.agreement", "Every host NIC marks, classifies and reacts like its leaf port",
       scope=Scope.LINK, severity=Severity.ERROR, hosts=lossless_host)
def agreement(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: on every host link, the NIC's RoCE ToS, CNP DSCP and priority, ECN notification and
    reaction point priorities, trust and DSCP to priority map, and the leaf port's trust, PFC and
    DSCP to TC map (planned statically, observed live); the plan's ends and profile.
    Expects: the NIC marks RoCE with a RoCE DSCP, ECN-capable, with the intent's ToS, marks CNPs
    with a CNP DSCP and has ECN notification and reaction points on every lossless priority (in a
    `lossy` fabric the RoCE priority; none are required in `lossless-no-dcqcn`); NIC and port trust
    alike, the port pauses each RoCE DSCP's priority (not in a `lossy` fabric) and classifies CNPs
    into the NIC's CNP priority.
    Fails when: any of these does not hold. A disagreement is named at the leaf port when the port
    moved from the plan and the NIC did not, else at the NIC. A NIC setting not read is not judged;
    PFC equality across the link is `pfc.link_symmetry`'s.
    Fix: Make the NIC and its leaf port agree. Live: `flatfab rollout` restores the end the finding
    names (the one that moved). From `flatfab check`: qos.yaml's `hosts` settings or an override's
    `nic` contradict the switches' (RoCE ToS, CNP DSCP and priority, trust, maps); align them.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    for link in physical_links(ctx):
        if link.kind is not LinkKind.HOST:
            continue
        host, leaf = interface(ctx, link.a), interface(ctx, link.b)
        if host is None or host[1].nic is None or leaf is None or leaf[1].qos is None:
            continue
        nic = Nic(host[0], host[1], host[1].nic)
        port = Port(leaf[0], leaf[1], leaf[1].qos)
        yield from nic_findings(item, nic, _nic_only(nic.nic, lossless), link=link.id)
        nic_plan, port_plan = planned(ctx, link.a), planned(ctx, link.b)
        for field, at_nic, at_port in _paired(nic.nic, port.qos, lossless):
            if _leaf_moved(field, nic, port, nic_plan, port_plan):
                yield from port_findings(item, port, [at_port], link=link.id)
            else:
                yield from nic_findings(item, nic, [at_nic], link=link.id)


# (what the setting is called, how to read it from a NicQos as text); every NIC setting the
# host config sets, except what `host.agreement` already judges against the fabric profile
# (the RoCE ToS and the CNP DSCP).
_NIC_SETTINGS: tuple[tuple[str, str, Callable[[NicQos], str]], ...] = (
    ("trust", "trust", lambda n: n.trust),
    ("PFC priorities", "pfc", lambda n: fmt_set(n.pfc)),
    ("CNP priority", "cnp_priority", lambda n: str(n.cnp_priority)),
    ("ECN notification point priorities", "ecn_np", lambda n: fmt_set(n.ecn_np)),
    ("ECN reaction point priorities", "ecn_rp", lambda n: fmt_set(n.ecn_rp)),
    ("DCQCN", "dcqcn", lambda n: "on" if n.dcqcn else "off"),
    ("strict-priority TCs", "strict_tcs", lambda n: fmt_set(n.strict_tcs)),
    ("TC bandwidth", "tc_bw", lambda n: ",".join(map(str, n.tc_bw))),
    ("PFC storm prevention", "pfc_prevention_ms", lambda n: f"{n.pfc_prevention_ms} ms"),
)


def _map_differences(seen: NicQos, plan: NicQos) -> Issue | None:
    """The DSCP code points the NIC maps to another priority than the intent, in full."""
    moved = [d for d in range(64) if at(seen.dscp_to_priority, d) != at(plan.dscp_to_priority, d)]
    if not moved:
        return None
    shown = moved[:8]
    more = f" (+{len(moved) - len(shown)} more)" if len(moved) > len(shown) else ""
    return Issue(f"maps DSCP {','.join(map(str, shown))}{more} to another priority than "
                 "the intent",
                 " ".join(f"{d}:{at(plan.dscp_to_priority, d)}" for d in shown),
                 " ".join(f"{d}:{at(seen.dscp_to_priority, d)}" for d in shown))


def _against_intent(seen: NicQos, plan: NicQos) -> list[Issue]:
    issues = []
    for what, field, read in _NIC_SETTINGS:
        if field in seen.unknown:
            continue  # not read from the NIC: state.unknown says why
        want, got = read(plan), read(seen)
        if want != got:
            issues.append(Issue(f"has {what} {got}, the intent says {want}", want, got))
    moved = None if "dscp_to_priority" in seen.unknown else _map_differences(seen, plan)
    if moved is not None:
        issues.append(moved)
    return issues


@check("host.intent", "Every host NIC carries the lossless settings its intent gives it",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE], hosts=lossless_host)
def intent(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, every NIC setting the host config sets: trust, PFC, CNP priority, ECN
    notification and reaction point priorities, DCQCN, strict-priority TCs, TC bandwidth, PFC storm
    prevention and the DSCP to priority map; and the plan's for the same NIC.
    Expects: the planned values. A NIC and its leaf can drift together (both trusting PCP):
    `host.agreement` passes them, this check does not.
    Fails when: any setting differs (for the map, the code points that moved). A setting not read is
    not judged; the RoCE ToS and CNP DSCP are `host.agreement`'s.
    Fix: `flatfab rollout` puts the NIC settings back (a firmware reset, or a NIC tool run by hand,
    changes them). If the new setting is wanted, set it in qos.yaml `hosts` (or an override's `nic`)
    first.
    """
    for nic in nics(ctx):
        plan = ctx.plan.devices.get(nic.device.name)
        planned_iface = plan.interfaces.get(nic.iface.name) if plan is not None else None
        if planned_iface is None or planned_iface.nic is None:
            continue
        yield from nic_findings(item, nic, _against_intent(nic.nic, planned_iface.nic))
