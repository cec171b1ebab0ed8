"""verify --traffic: send RoCEv2 and CNP flows and prove, from per-hop class counters, that
every hop queued them in the right class with no drops in the lossless class.

Counters are read from every switch before and after (read-only), the hosts send at the same
time, and each flow group is then followed hop by hop (flatfab.plan.traffic). A hop that
queued the packets in another class is named with the classes they went to. Flow groups are
sent in waves in which no two cross the same port, so every group is judged on counters no
other group's packets touched: a mis-marked flow beside correctly marked ones is named at
each hop it crossed, never hidden by its neighbours' packets. An unmanaged
host sends nothing (flatfab never logs in to it): its flow groups are reported not judged; a
flow from a managed host to an unmanaged one is sent and judged like any other.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from flatfab.checks.base import Finding, FindingKind, Scope, Severity, not_judged
from flatfab.errors import InputError
from flatfab.model.state import UNMANAGED, FabricState, Role
from flatfab.plan.traffic import FlowGroup, Hop, hops, plan_flows
from flatfab.platforms.registry import get as get_platform
from flatfab.workflows.devices.connections import driver

CHECK = "traffic.class"
DROPS = "traffic.lossless_drops"
SPREAD = "traffic.ecmp_spread"
SETTLE_S = 0.5
# how rarely an even hash may leave a path that short before the spread is called uneven:
# rare enough that a run of a few hundred flow groups warns by chance about once in 1,000
CHANCE = 1e-5
# not in the check catalog: they judge traffic this workflow sends, not collected state
TRAFFIC_CHECKS = {
    CHECK: ("path", "Every hop queues RoCEv2 and CNP flows in their classes", Severity.ERROR),
    DROPS: ("path", "No hop drops packets of the lossless class", Severity.ERROR),
    SPREAD: ("path", "RoCE flows of every leaf pair cross every spine", Severity.WARNING),
}

# what each finding judges and what an operator does about it (the documentation's catalog)
KINDS = (
    FindingKind(CHECK, TRAFFIC_CHECKS[CHECK][1], Severity.ERROR, Scope.PATH, """
        Reads: the per-class queue counters of every switch on each flow's path, before and
        after RoCEv2 (UDP 4791) and CNP flows the hosts send between leaves across every
        spine.
        Expects: every hop queued the flow's packets in its class (RoCE in the lossless TC,
        CNP in its own).
        Fails when: a hop queued them in another class, or fewer than were sent. A switch
        whose counters cannot be read, or a host that cannot send, is critical; a counter a
        switch does not keep is a not-judged finding, and so is each flow group of an
        unmanaged host (hosts.yaml `managed: false`), which flatfab never makes send.
        Fix: A hop classifies the traffic wrongly: run `verify --lossless` on it
        (`qos.trust`, `qos.dscp_map`, `qos.class_chain` name the map or setting) and `flatfab
        rollout` to restore it. A host that could not send needs its traffic tool and
        addresses checked."""),
    FindingKind(DROPS, TRAFFIC_CHECKS[DROPS][1], Severity.ERROR, Scope.PATH, """
        Reads: the drop counters of the lossless TC on every hop of the flows' paths, before
        and after the flows.
        Expects: no drops in the lossless class.
        Fails when: a hop dropped packets of the lossless TC while the flows ran.
        Fix: The lossless plane loses packets under load: check that hop's PFC, headroom and
        buffers (`verify --lossless`: `pfc.link_symmetry`, `buffer.headroom`,
        `buffer.budget`) and the ECN thresholds before PFC (`ecn.before_pfc`)."""),
    FindingKind(SPREAD, TRAFFIC_CHECKS[SPREAD][1], Severity.WARNING, Scope.PATH, """
        Reads: which spines' counters saw the RoCE flows between each pair of leaves, and
        how many flows each carried (its RoCE packets over the packets per flow).
        Expects: every spine (every tier's switch on a 5-stage path) carried some of them,
        and none so few that an even hash over the tier would leave it that short less than
        once in 100,000 flow groups (a binomial floor: fewer than 5 of 32 flows over 2
        spines). Each tier's figures (flows per switch and flow group: least, most, mean)
        are an info finding.
        Fails when: a spine carried none (the flows did not spread over it), or fewer than
        the floor (the hash spreads them unevenly: a warning).
        Fix: Look at the leaves' routes (`ecmp.leaf_paths`, `ecmp.pod_paths`) and the missing
        spine's sessions (`bgp.session`). With every path present, the flows may hash onto
        fewer spines than there are: run again, and consider the switches' ECMP hash fields
        (source port included)."""),
)

Counters = dict[str, dict[str, dict[int, dict[str, int]]]]  # device -> link -> tc -> counts


@dataclass
class TrafficReport:
    findings: list[Finding]
    groups: list[FlowGroup]
    packets: int
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(f.severity.fails for f in self.findings)


def _counters(task: Task) -> Result:
    platform = get_platform(str(task.host.platform))
    return Result(host=task.host, result=platform.class_counters(driver(task, read_only=True)))


def _send(task: Task, groups: list[FlowGroup]) -> Result:
    sent = 0
    platform = get_platform(str(task.host.platform))
    for group in groups:
        if group.source == task.host.name:
            sent += platform.send_test_traffic(driver(task, read_only=True), group.address,
                                               group.sport_base, group.flows,
                                               group.data_packets,
                                               source=group.source_address)
    return Result(host=task.host, result=sent)


def _read(nornir: Nornir, switches: set[str]) -> tuple[Counters, list[Finding]]:
    results = nornir.filter(filter_func=lambda h: h.name in switches).run(
        task=_counters, name="traffic: counters", on_failed=True)
    counters: Counters = {}
    findings = []
    for name in sorted(switches):
        outcome = results.get(name)
        if outcome is None or outcome.failed:
            reason = str(outcome[0].exception) if outcome else "not in the inventory"
            findings.append(Finding(check=CHECK, severity=Severity.CRITICAL, device=name,
                                    message=f"{name}: class counters could not be read: "
                                    f"{reason}", expected="counters", actual=reason))
        else:
            counters[name] = outcome[0].result
    return counters, findings


def _delta(before: Counters, after: Counters, device: str, port: str, tc: int,
           key: str) -> int | None:
    """How much a counter grew; None when the switch does not keep it (never read as 0)."""
    now = after.get(device, {}).get(port, {}).get(tc, {}).get(key)
    then = before.get(device, {}).get(port, {}).get(tc, {}).get(key)
    return None if now is None or then is None else max(now - then, 0)


def _summed(before: Counters, after: Counters, hop: Hop, tc: int, key: str) -> int | None:
    deltas = [_delta(before, after, hop.device, p, tc, key) for p in hop.ports]
    return None if any(d is None for d in deltas) else sum(d for d in deltas if d is not None)


def _by_class(before: Counters, after: Counters, hop: Hop) -> dict[int, int | None]:
    return {tc: _summed(before, after, hop, tc, "packets") for tc in range(8)}


def _unread(hop: Hop, tc: int, key: str) -> Finding:
    port = ",".join(hop.ports)
    return not_judged(CHECK, hop.device, f"it keeps no {key} counter for TC {tc}", port=port,
                      what=f"{hop.device}:{port}", expected=f"TC {tc} {key} counted")


def _judge(plan: FabricState, group: FlowGroup, before: Counters,
           after: Counters, tally: dict[int, list[int]] | None = None) -> list[Finding]:
    assert plan.lossless is not None
    classes = {"RoCE": (plan.lossless.roce_priority, group.roce_packets),
               "CNP": (plan.lossless.cnp_priority, group.cnp_packets)}
    findings: list[Finding] = []
    source = f"{group.source} {group.source_nic}" if group.source_nic else group.source
    target = f"{group.target} {group.target_nic}" if group.target_nic else group.target
    route = f"{source} -> {target} (VRF {group.vrf})"
    group_hops = hops(plan, group)
    seen_at = {hop: _by_class(before, after, hop) for hop in group_hops}
    tiers: dict[int, list[Hop]] = {}
    for hop in group_hops:
        if hop.role == "spine":
            tiers.setdefault(hop.tier, []).append(hop)
    for label, (tc, expected) in classes.items():
        for hop in group_hops:
            seen, port = seen_at[hop], ",".join(hop.ports)
            drops = _summed(before, after, hop, tc, "drops")
            if tc in plan.lossless.lossless and drops is None:
                findings.append(_unread(hop, tc, "drops"))
            elif drops and tc in plan.lossless.lossless:
                findings.append(Finding(
                    check=DROPS, severity=Severity.ERROR, device=hop.device, port=port,
                    message=f"{hop.device}:{port} dropped {drops} packets in lossless TC {tc}",
                    expected="0", actual=str(drops)))
            queued = seen[tc]
            if queued is None:
                findings.append(_unread(hop, tc, "packets"))
            elif hop.role == "spine":
                # each spine carries only its ECMP share: judged together below
                if queued == 0 and any(seen[o] for o in range(8) if o not in (tc, 0)):
                    findings.append(Finding(
                        check=CHECK, severity=Severity.ERROR, device=hop.device, port=port,
                        message=f"{label} packets of {route} left {hop.device}:{port} in "
                        f"another class", expected=f"TC {tc}", actual=_classes(seen)))
            elif queued < expected:
                findings.append(Finding(
                    check=CHECK, severity=Severity.ERROR, device=hop.device, port=port,
                    message=f"{hop.device}:{port} queued {queued} of {expected} {label} "
                    f"packets of {route} in TC {tc}", expected=f"{expected} in TC {tc}",
                    actual=_classes(seen)))
        for spine_hops in tiers.values():
            findings += _spread(spine_hops, seen_at, findings, label, tc, expected, route,
                                group.data_packets if label == "RoCE" else 1, tally)
    return findings


def chance_floor(flows: int, paths: int, odds: float = CHANCE) -> int:
    """The fewest flows of `flows` a path carries by chance less often than `odds`, when a
    hash spreads them evenly over `paths` (binomial): a path below it is spread against."""
    if paths < 2:
        return 0
    share, below = 1 / paths, 0.0
    for count in range(flows + 1):
        below += math.comb(flows, count) * share ** count * (1 - share) ** (flows - count)
        if below > odds:
            return count
    return flows


def _spread(spine_hops: list[Hop], seen_at: dict[Hop, dict[int, int | None]],
            found: list[Finding], label: str, tc: int, expected: int,
            route: str, per_flow: int = 1,
            tally: dict[int, list[int]] | None = None) -> list[Finding]:
    """The spine hops of one tier share the flows (ECMP): together they carry them all,
    each carries some, and none so few that an even hash would do it by chance."""
    shares = [seen_at[h][tc] for h in spine_hops]
    if any(share is None for share in shares):
        return []  # a spine that keeps no counter: the spread is not known
    idle = [h for h in spine_hops if seen_at[h][tc] == 0]
    findings: list[Finding] = []
    flows = expected // per_flow
    carried = [(seen_at[h][tc] or 0) // per_flow for h in spine_hops]
    if label == "RoCE" and tally is not None and sum(carried) == flows:
        tally.setdefault(spine_hops[0].tier, []).extend(carried)
    floor = chance_floor(flows, len(spine_hops))
    starved = [(h, n) for h, n in zip(spine_hops, carried, strict=True) if 0 < n < floor]
    if label == "RoCE" and starved and sum(carried) == flows:
        hop, count = starved[0]
        findings.append(Finding(
            check=SPREAD, severity=Severity.WARNING, device=hop.device,
            port=",".join(hop.ports),
            message=f"{hop.device} carried {count} of {flows} RoCE flows of {route}: an even "
            f"hash over {len(spine_hops)} paths leaves fewer than {floor} on one less than "
            f"once in {round(1 / CHANCE):,} runs", expected=f">= {floor} flows",
            actual=f"{count} flows"))
    if sum(share or 0 for share in shares) < expected:
        named = {f.device for f in found if f.check == CHECK}
        for hop in idle:
            if hop.device not in named:
                port = ",".join(hop.ports)
                findings.append(Finding(
                    check=CHECK, severity=Severity.ERROR, device=hop.device, port=port,
                    message=f"{hop.device}:{port} queued no {label} packets of {route} "
                    f"in TC {tc}", expected=f"some in TC {tc}",
                    actual=_classes(seen_at[hop])))
    elif idle and label == "RoCE":
        missing = ", ".join(h.device for h in idle)
        findings.append(Finding(
            check=SPREAD, severity=Severity.WARNING, device=idle[0].device,
            message=f"no {label} flow of {route} crossed {missing}",
            expected="every spine", actual=f"missing {missing}"))
    return findings


TIER_NAMES = {1: "pod spines towards super-spines", 2: "super-spines",
              3: "spines into the target leaf"}


def spread_summary(tally: dict[int, list[int]]) -> list[Finding]:
    """One info finding per tier: how many RoCE flows each of its switches carried, per flow
    group (the figure behind `traffic.ecmp_spread`)."""
    out = []
    for tier, counts in sorted(tally.items()):
        if not counts:
            continue
        low, high, mean = min(counts), max(counts), sum(counts) / len(counts)
        out.append(Finding(
            check=SPREAD, severity=Severity.INFO, device=None,
            message=f"tier {tier} ({TIER_NAMES.get(tier, 'spines')}): RoCE flows per switch "
            f"and flow group {low}-{high}, mean {mean:.1f}, over {len(counts)} switch "
            "shares", expected="an even spread", actual=f"{low}-{high} flows"))
    return out


def _classes(seen: dict[int, int | None]) -> str:
    used = [f"TC {tc}: {n}" for tc, n in seen.items() if n]
    return ", ".join(used) or "none"


def counted_switches(plan: FabricState) -> set[str]:
    """The switches whose counters are read. A platform that keeps no per-class counters
    (capabilities.class_counters) is not asked: the hops through it are reported as not
    judged, never as failed reads."""
    return {d.name for d in plan.devices.values() if d.role is not Role.HOST
            and get_platform(d.platform).facts.capabilities.class_counters}


def waves(plan: FabricState, groups: list[FlowGroup]) -> list[list[FlowGroup]]:
    """The flow groups in waves, in order: each group joins the first wave none of whose
    groups crosses a port it crosses (first fit), so the counters of a port grow by one
    group's packets per wave."""
    found: list[tuple[list[FlowGroup], set[tuple[str, str]]]] = []
    for group in groups:
        ports = {(hop.device, port) for hop in hops(plan, group) for port in hop.ports}
        wave = next((w for w in found if not w[1] & ports), None)
        if wave is None:
            found.append(([group], ports))
        else:
            wave[0].append(group)
            wave[1].update(ports)
    return [wave for wave, _ in found]


def _send_wave(nornir: Nornir, wave: list[FlowGroup]) -> tuple[int, list[Finding]]:
    """Packets the wave's sources sent, and a finding per source that could not send."""
    sources = {g.source for g in wave}
    results = nornir.filter(filter_func=lambda h: h.name in sources).run(
        task=_send, name="traffic: send", groups=wave, on_failed=True)
    packets, findings = 0, []
    for name in sorted(sources):
        outcome = results.get(name)
        if outcome is None or outcome.failed:
            reason = str(outcome[0].exception) if outcome else "not in the inventory"
            findings.append(Finding(check=CHECK, severity=Severity.CRITICAL, device=name,
                                    message=f"{name} could not send: {reason}",
                                    expected="sent", actual=reason))
        else:
            packets += int(outcome[0].result)
    return packets, findings


def run_traffic(nornir: Nornir, plan: FabricState) -> TrafficReport:
    started = time.monotonic()
    planned = plan_flows(plan)
    groups = [g for g in planned if plan.devices[g.source].managed]
    unsent = sorted({g.source for g in planned} - {g.source for g in groups})
    sources = {g.source for g in groups}
    unable = sorted({plan.devices[s].platform for s in sources
                     if not get_platform(plan.devices[s].platform).facts.capabilities
                     .traffic_source})
    if unable:
        raise InputError.single("--traffic", "", f"platform {', '.join(unable)} cannot send "
                                "test flows (capabilities.traffic_source): verify without "
                                "--traffic")
    switches = counted_switches(plan)
    before, findings = _read(nornir, switches)
    tally: dict[int, list[int]] = {}  # tier -> flows each of its switches carried, per group
    sent_at = time.monotonic()
    packets = 0
    for wave in waves(plan, groups) if not findings else []:
        sent, failed = _send_wave(nornir, wave)
        packets += sent
        time.sleep(SETTLE_S)
        after, unread = _read(nornir, switches)
        findings += failed + unread
        if findings:
            break  # a source or a switch failed: what the counters say is not the flows'
        for group in wave:
            findings += _judge(plan, group, before, after, tally)
        before = after
    findings += spread_summary(tally)
    findings += [not_judged(check, host, UNMANAGED, what=f"{host}'s test traffic",
                            expected="sent", actual="unmanaged")
                 for host in unsent for check in TRAFFIC_CHECKS]
    # flow groups that share a hop name the same unread counter once
    return TrafficReport(findings=sorted(set(findings), key=lambda f: f.sort_key), groups=groups,
                         packets=packets,
                         timings={"send_s": round(time.monotonic() - sent_at, 3),
                                  "total_s": round(time.monotonic() - started, 3)})


def as_json(report: TrafficReport) -> dict[str, Any]:
    return {"flow_groups": len(report.groups), "packets": report.packets,
            "timings": report.timings}
