"""flatfab accept: acceptance runs between GPU servers, judged against the intent's
references, with the fabric's counters before and after.

The pairs come from the plan (flatfab.acceptance.selection: same rail, cross rail, cross
pod; cross plane is not allowed), a bounded number per kind. The switches' counters (per
class packets and drops, the physical layer's FEC codewords and flaps) and the servers' NIC
counters (pauses, CNPs, ECN marks) are read before and after, read-only. The pairs run in
waves in which no two share a server or a leaf: per pair a server starts on the destination
(in the background), the client runs on the source and reports the figure, and the server is
stopped and reaped. Each result is judged against its reference (busbw for NCCL); a pair
that fails names the links it crossed and their counters, and a link crossed for certain by
failing pairs only is named as the suspect. A pair that could not run is named with why,
never passed (the run is then incomplete, exit 3); an unmanaged server runs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from flatfab.acceptance import counters as ctr
from flatfab.acceptance.engines import COLLECTIVE_ENGINES, PAIR_ENGINES
from flatfab.acceptance.engines.base import (
    EngineOutputError,
    PairEngine,
    PairSpec,
    Side,
)
from flatfab.acceptance.engines.nccl import Collective, CollectiveSpec
from flatfab.acceptance.paths import Crossing, LinkRef
from flatfab.acceptance.reference import Reference, nccl_reference, pair_reference
from flatfab.acceptance.results import (
    CollectiveResult,
    PairKind,
    PairResult,
    RunResult,
    collective_result,
    pair_result,
)
from flatfab.acceptance.run import AcceptanceInfo, FailedPath, LinkCounters, Unrun
from flatfab.acceptance.selection import DEFAULT_PAIRS, PlannedPair, ends, select, waves
from flatfab.checks.base import UNMANAGED_ACTUAL, Finding, FindingKind, Scope, Severity
from flatfab.errors import InputError
from flatfab.intent.acceptance import AcceptanceIntent
from flatfab.model.state import UNMANAGED, FabricState, Link, LinkKind, Role
from flatfab.plan.traffic import FlowGroup, hops
from flatfab.platforms.base import EngineRun
from flatfab.platforms.registry import get as get_platform
from flatfab.reports.model import AuditReport
from flatfab.workflows.commands.audit import device_summaries, link_summaries
from flatfab.workflows.devices.connections import driver

PAIR = "acceptance.pair"
LINK = "acceptance.link"
COLLECTIVE = "acceptance.collective"
UNRUN = "acceptance.unrun"
KIND = "acceptance.kind"
NCCL = "nccl"
ENGINES = (*PAIR_ENGINES, NCCL)
SERVER_GRACE_S = 20  # a server outlives its client's duration by this much at most
STOP_WAIT_S = 5.0  # how long a server may take to end after its one test

KINDS = (
    FindingKind(PAIR, "Every pair of GPU server NICs reaches its reference", Severity.ERROR,
                Scope.PATH, """
        Reads: the figure an engine measured between two servers' NICs (iperf3's received
        bits per second, ib_write_bw's average bandwidth), pairs of each kind asked for
        (same rail, cross rail, cross pod) chosen from the plan, a bounded number per kind.
        Expects: the figure at most the tolerance (acceptance.yaml `tolerance`, default 20 %)
        under the pair's reference: acceptance.yaml's figure for the engine and NIC speed,
        else the engine's default (each report prints the reference's basis).
        Fails when: the figure is further under, or the engine reported a problem of its
        own. The finding names the links the pair crossed for certain (both servers' own),
        those ECMP chose among, and the counters on them before and after. An unmanaged
        server is a not-judged finding: flatfab never logs in to it.
        Fix: Look at the links named: a link at a lower speed, a module or cable that loses
        frames (`verify --physical`), a port shaped or policed, pauses or ECN marks that grew
        (`verify --lossless`); a server whose every pair fails has a NIC, PCIe or CPU problem
        of its own. Run `flatfab accept` again once repaired."""),
    FindingKind(LINK, "No link is crossed for certain by failing pairs only", Severity.ERROR,
                Scope.LINK, """
        Reads: which measured pairs crossed each server link for certain, and their verdicts.
        Expects: every link a failing pair crossed is also crossed by a passing pair.
        Fails when: every pair that crossed the link failed: the link is the suspect, named
        with its ends' counters before and after.
        Fix: Check that link first: its speed and FEC (`verify --physical`), its module and
        cable, any shaping or policing on either port, its pause and drop counters."""),
    FindingKind(COLLECTIVE, "Every NCCL collective reaches its busbw reference",
                Severity.ERROR, Scope.FABRIC, """
        Reads: nccl-tests' busbw (never algbw) at the largest size, all_reduce_perf and
        alltoall_perf over the servers chosen, and its #wrong count.
        Expects: busbw at most the tolerance under the reference (acceptance.yaml's, else
        the NIC payload share times the NICs a server has, corrected for alltoall's ranks).
        Fails when: busbw is further under, or a value was wrong.
        Fix: Run the pairwise engines (`flatfab accept --engine ib_write_bw`) to find the
        pair or link that is slow; check NCCL's environment (acceptance.yaml `nccl_env`:
        NCCL_IB_HCA, NCCL_IB_GID_INDEX) and the servers' GPUs and NVLink."""),
    FindingKind(UNRUN, "Every pair chosen could be measured", Severity.NOT_JUDGED,
                Scope.PATH, """
        Reads: whether each pair's server started, its client ran to the end and its output
        could be read.
        Expects: a figure from every pair.
        Fails when: an engine is missing, a server never listened, a client timed out or
        printed no result, a NIC has no RDMA device for ib_write_bw: the pair is named with
        why and not judged; the run is incomplete (exit 3), never passed.
        Fix: Install the engine on the servers (iperf3, perftest, nccl-tests with MPI), or
        choose another (`--engine iperf3` on servers without RDMA); check the servers'
        addresses and firewall for the engine's port."""),
    FindingKind(KIND, "Each kind of pair asked for is measured", Severity.INFO, Scope.FABRIC,
                """
        Reads: the kinds of pair asked for (`--kinds`) against the plan.
        Expects: pairs of each kind.
        Fails when: never: a kind with no pair in the plan (no two managed servers on one
        leaf), or not allowed (cross-plane: flatfab's planes never join), is named with
        why.
        Fix: Nothing to repair; ask for the kinds the fabric has."""),
)


@dataclass(frozen=True)
class AcceptanceOptions:
    engine: str = "iperf3"
    kinds: tuple[PairKind, ...] = tuple(PairKind)
    per_kind: int = DEFAULT_PAIRS
    reference_gbps: float | None = None  # overrides every reference (--reference)
    duration_s: int | None = None  # None: acceptance.yaml's


@dataclass
class AcceptanceRun:
    info: AcceptanceInfo
    findings: list[Finding]
    unread: dict[str, str]
    started_epoch: float
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(f.severity.fails for f in self.findings)


# ---------------------------------------------------------------- references and paths

GIVEN = "given on the command line (--reference)"


def _speed(speed_mbps: int) -> str:
    return f"{speed_mbps / 1000:g}G"


def reference_for_pair(engine: str, speed_mbps: int, intent: AcceptanceIntent, *,
                       roce_mtu: int, given_gbps: float | None = None) -> Reference:
    """The command line's figure, else the intent's (acceptance.yaml, with its `why`), else
    the engine's default (flatfab.acceptance.reference, with its reason)."""
    if given_gbps is not None:
        return Reference(given_gbps, GIVEN)
    entry = intent.reference_of(engine)
    figure = entry.figure(speed_mbps) if entry is not None else None
    if entry is not None and figure is not None:
        return Reference(figure, f"acceptance.yaml {engine} at {_speed(speed_mbps)}: "
                                 f"{entry.why}")
    return pair_reference(engine, speed_mbps, roce_mtu)


def reference_for_collective(collective: Collective, *, speed_mbps: int,
                             nics_per_server: int, servers: int, intent: AcceptanceIntent,
                             roce_mtu: int, given_gbps: float | None = None) -> Reference:
    """As reference_for_pair, busbw of a collective (the intent's per NIC speed)."""
    if given_gbps is not None:
        return Reference(given_gbps, GIVEN)
    entry = intent.reference_of(collective.value)
    figure = entry.gbps.get(_speed(speed_mbps)) if entry is not None else None
    if entry is not None and figure is not None:
        return Reference(figure, f"acceptance.yaml {collective.value} at "
                                 f"{_speed(speed_mbps)}: {entry.why}")
    return nccl_reference(collective, nic_speed_mbps=speed_mbps,
                          nics_per_server=nics_per_server,
                          gpus_per_server=intent.gpus_per_server, servers=servers,
                          roce_mtu=roce_mtu)


def link_ref(link: Link) -> LinkRef:
    """A host link is named switch side first (`leaf1:swp1 <-> leaf1-h1:eth1`), as every
    other link is (the plan keeps its host side as `a`)."""
    if link.kind is LinkKind.HOST:
        return LinkRef(link.id, str(link.b), str(link.a))
    return LinkRef(link.id, str(link.a), str(link.b))


def _by_port(plan: FabricState) -> dict[tuple[str, str], Link]:
    """Each planned port's physical link (a VRF sub-link's ports are its parent's)."""
    by_id = {link.id: link for link in plan.links}
    found: dict[tuple[str, str], Link] = {}
    for link in plan.links:
        physical = by_id.get(link.parent, link) if link.parent is not None else link
        for end in (link.a, link.b):
            found.setdefault((end.device, end.port), physical)
    return found


def crossing(plan: FabricState, pair: PlannedPair,
             by_port: dict[tuple[str, str], Link] | None = None) -> Crossing:
    """The links a pair crosses: its servers' own for certain, and the fabric links of the
    plan's path between their leaves (flatfab.plan.traffic `hops`) that ECMP chose among."""
    ports = by_port if by_port is not None else _by_port(plan)
    source, target = pair.source, pair.destination
    certain = [ports[key] for key in ((source.server, source.nic),
                                      (target.server, target.nic)) if key in ports]
    maybe: dict[str, Link] = {}
    if source.leaf != target.leaf:
        group = FlowGroup(vrf=source.vrf, source=source.server, target=target.server,
                          address=target.address, source_leaf=source.leaf,
                          target_leaf=target.leaf, flows=1, data_packets=1, sport_base=0,
                          source_nic=source.nic, target_nic=target.nic)
        for hop in hops(plan, group):
            for port in hop.ports:
                link = ports.get((hop.device, port))
                if link is not None and link not in certain:
                    maybe.setdefault(link.id, link)
    return Crossing(certain=tuple(link_ref(link) for link in certain),
                    maybe=tuple(link_ref(link) for link in maybe.values()))


# ---------------------------------------------------------------- counters


def _counters(task: Task, plan: FabricState) -> Result:
    device = plan.devices[task.host.name]
    platform = get_platform(device.platform)
    caps = platform.facts.capabilities
    session = driver(task, read_only=True)
    if device.role is Role.HOST:
        found = ctr.from_nic(platform.nic_counters(session)) if caps.nic_counters else {}
    else:
        classes = ctr.from_classes(platform.class_counters(session)) \
            if caps.class_counters else {}
        # pauses and ECN marks are part of what collect reads of a port (read-only)
        ports = ctr.from_ports(platform.collect(session, device, []))
        found = ctr.merge(classes, ports, ctr.from_physical(platform.collect_physical(
            session, device)))
    return Result(host=task.host, result=found)


def _read(nornir: Nornir, plan: FabricState, devices: set[str], name: str
          ) -> tuple[ctr.Snapshot, dict[str, str]]:
    results = nornir.filter(filter_func=lambda h: h.name in devices).run(
        task=_counters, plan=plan, name=name, on_failed=True)
    snapshot: ctr.Snapshot = {}
    unread: dict[str, str] = {}
    for device in sorted(devices):
        outcome = results.get(device)
        if outcome is None or outcome.failed:
            why = str(outcome[0].exception) if outcome else "not in the inventory"
            unread[device] = f"counters not read ({name}): {why}"
        else:
            snapshot[device] = outcome[0].result
    return snapshot, unread


# ---------------------------------------------------------------- pairs


def _side(task: Task, engine: PairEngine, nic: str, address: str) -> Side:
    if engine.name not in ("ib_write_bw",):
        return Side(address=address)
    platform = get_platform(str(task.host.platform))
    device, gid = platform.rdma_side(driver(task, read_only=True), nic, address)
    return Side(address=address, device=device, gid_index=gid)


def _serve(task: Task, engine: PairEngine, specs: dict[str, tuple[PlannedPair, PairSpec]]
           ) -> Result:
    pair, spec = specs[task.host.name]
    spec = replace(spec, server=_side(task, engine, pair.destination.nic,
                                      pair.destination.address))
    platform = get_platform(str(task.host.platform))
    run = platform.run_engine(driver(task, read_only=True), engine.server_argv(spec),
                              spec.duration_s + SERVER_GRACE_S, background=True,
                              listens_on=spec.port)
    return Result(host=task.host, result=run)


def _client(task: Task, engine: PairEngine, specs: dict[str, tuple[PlannedPair, PairSpec]]
            ) -> Result:
    pair, spec = specs[task.host.name]
    spec = replace(spec, client=_side(task, engine, pair.source.nic, pair.source.address))
    platform = get_platform(str(task.host.platform))
    run = platform.run_engine(driver(task, read_only=True), engine.client_argv(spec),
                              spec.duration_s + SERVER_GRACE_S)
    return Result(host=task.host, result=run)


def _stop(task: Task, handles: dict[str, str]) -> Result:
    platform = get_platform(str(task.host.platform))
    return Result(host=task.host, result=platform.stop_engine(
        driver(task, read_only=True), handles[task.host.name], STOP_WAIT_S))


def _outcomes(nornir: Nornir, hosts: set[str], name: str, **kwargs: Any
              ) -> dict[str, EngineRun | str]:
    """Each host's EngineRun, or why it has none."""
    if not hosts:
        return {}
    results = nornir.filter(filter_func=lambda h: h.name in hosts).run(
        name=name, on_failed=True, **kwargs)
    found: dict[str, EngineRun | str] = {}
    for host in hosts:
        outcome = results.get(host)
        if outcome is None:
            found[host] = "not in the inventory"
        elif outcome.failed:
            found[host] = str(outcome[0].exception).strip().splitlines()[-1] \
                if str(outcome[0].exception).strip() else type(outcome[0].exception).__name__
        else:
            found[host] = outcome[0].result
    return found


def _pair_name(pair: PlannedPair) -> str:
    return f"{pair.source.ref} -> {pair.destination.ref}"


def _run_wave(nornir: Nornir, engine: PairEngine, wave: Sequence[PlannedPair],
              spec_of: Callable[[PlannedPair], PairSpec]
              ) -> list[tuple[PlannedPair, str | EngineRun]]:
    """Each pair's client run, or why the pair could not run."""
    specs = {p.destination.server: (p, spec_of(p)) for p in wave}
    served = _outcomes(nornir, set(specs), "accept: servers", task=_serve, engine=engine,
                       specs=specs)
    ready = {p.source.server: (p, spec_of(p)) for p in wave
             if isinstance(served[p.destination.server], EngineRun)}
    ran = _outcomes(nornir, set(ready), "accept: clients", task=_client, engine=engine,
                    specs=ready)
    handles = {host: run.handle for host, run in served.items()
               if isinstance(run, EngineRun) and run.handle is not None}
    stopped = _outcomes(nornir, set(handles), "accept: stop", task=_stop, handles=handles)
    found: list[tuple[PlannedPair, str | EngineRun]] = []
    for pair in wave:
        server = served[pair.destination.server]
        if not isinstance(server, EngineRun):
            found.append((pair, f"the {engine.name} server on {pair.destination.server} did "
                                f"not start: {server}"))
            continue
        client = ran.get(pair.source.server, "not run")
        if isinstance(client, EngineRun) and client.exit_status is None:
            client = f"the client on {pair.source.server} timed out"
        elif isinstance(client, str):
            client = f"the client on {pair.source.server} failed: {client}"
        stop = stopped.get(pair.destination.server)
        if isinstance(client, EngineRun) and isinstance(stop, str):
            client = f"the server on {pair.destination.server} could not be stopped: {stop}"
        found.append((pair, client))
    return found


def _judge_pair(pair: PlannedPair, run: EngineRun, engine: PairEngine,
                reference: Reference, tolerance: float) -> PairResult | str:
    try:
        measurement = engine.parse(run.output)
    except EngineOutputError as exc:
        said = f" ({run.errors.splitlines()[-1]})" if run.errors.strip() else ""
        return f"{exc}{said}"
    return pair_result(pair.source.ref, pair.destination.ref, pair.kind, measurement,
                       reference, rail=None if pair.source.rail is None
                       else str(pair.source.rail), tolerance=tolerance)


# ---------------------------------------------------------------- collectives


def _launch(task: Task, argv: list[str], timeout_s: float) -> Result:
    platform = get_platform(str(task.host.platform))
    return Result(host=task.host, result=platform.run_engine(driver(task, read_only=True),
                                                             argv, timeout_s))


def _collectives(nornir: Nornir, plan: FabricState, intent: AcceptanceIntent,
                 options: AcceptanceOptions) -> tuple[list[CollectiveResult], list[Unrun],
                                                      list[tuple[str, str]]]:
    """all_reduce and alltoall over up to `per_kind` managed GPU servers of the first tenant
    that has two, launched from the first of them (Open MPI reaches the others by their
    inventory addresses)."""
    by_vrf: dict[str, list[str]] = {}
    nics: dict[str, list[int]] = {}
    for end in ends(plan):
        if end.managed and plan.devices[end.server].server_role != "storage":
            servers = by_vrf.setdefault(end.vrf, [])
            if end.server not in servers:
                servers.append(end.server)
            nics.setdefault(end.server, []).append(end.speed_mbps)
    chosen = next((s[:options.per_kind] for s in by_vrf.values() if len(s) > 1), [])
    if not chosen:
        return [], [Unrun("collectives", "collective", "no two managed GPU servers in one "
                                                       "tenant", "")], []
    hosts = tuple(str(nornir.inventory.hosts[s].hostname) if s in nornir.inventory.hosts
                  else s for s in chosen)
    speed = min(min(nics[s]) for s in chosen)
    results, unrun, bases = [], [], []
    for collective in Collective:
        reference = reference_for_collective(
            collective, speed_mbps=speed, nics_per_server=len(nics[chosen[0]]),
            servers=len(chosen), intent=intent, roce_mtu=plan.roce_mtu,
            given_gbps=options.reference_gbps)
        bases.append((f"{collective.value} over {len(chosen)} servers", reference.basis))
        spec = CollectiveSpec(collective=collective, hosts=hosts,
                              gpus_per_host=intent.gpus_per_server, env=intent.nccl_env,
                              binary_dir=intent.nccl_binary_dir)
        argv = COLLECTIVE_ENGINES[collective].launch_argv(spec)
        what = f"{collective.value} over {', '.join(chosen)}"
        ran = _outcomes(nornir, {chosen[0]}, f"accept: {collective.value}", task=_launch,
                        argv=argv, timeout_s=600.0)[chosen[0]]
        if isinstance(ran, str) or ran.exit_status is None:
            why = ran if isinstance(ran, str) else "timed out after 600 s"
            unrun.append(Unrun(what, "collective", why, chosen[0]))
            continue
        try:
            measurement = COLLECTIVE_ENGINES[collective].parse(ran.output)
        except EngineOutputError as exc:
            unrun.append(Unrun(what, "collective", str(exc), chosen[0]))
            continue
        results.append(collective_result(collective.value, chosen, measurement, reference,
                                         tolerance=intent.tolerance))
    return results, unrun, bases


# ---------------------------------------------------------------- the run


def _refuse(plan: FabricState, servers: set[str], options: AcceptanceOptions) -> None:
    if options.engine not in ENGINES:
        raise InputError.single("--engine", "", f"{options.engine!r}: one of "
                                f"{', '.join(ENGINES)}")
    unable = sorted({plan.devices[s].platform for s in servers
                     if not get_platform(plan.devices[s].platform).facts.capabilities
                     .acceptance_engines})
    if unable:
        raise InputError.single("--engine", "", f"platform {', '.join(unable)} cannot run "
                                "test engines (capabilities.acceptance_engines)")


def run_acceptance(nornir: Nornir, plan: FabricState, intent: AcceptanceIntent,
                   options: AcceptanceOptions,
                   tell: Callable[[str], None] = lambda _: None) -> AcceptanceRun:
    started_epoch, started = time.time(), time.monotonic()
    selection = select(plan, options.kinds, options.per_kind)
    pairs = selection.pairs if options.engine != NCCL else ()
    servers = {s for p in pairs for s in p.servers} if options.engine != NCCL else {
        e.server for e in ends(plan) if e.managed}
    _refuse(plan, servers, options)
    switches = {d.name for d in plan.devices.values() if d.role is not Role.HOST}
    tell(f"reading the counters of {len(switches)} switches and {len(servers)} servers")
    before, unread = _read(nornir, plan, switches | servers, "accept: counters before")
    duration = options.duration_s or intent.duration_s
    results: list[PairResult] = []
    unrun: list[Unrun] = []
    bases: dict[str, str] = {}
    planned = waves(pairs)
    measured_at = time.monotonic()
    if options.engine == NCCL:
        tell("running the NCCL collectives")
        collectives, unrun, found_bases = _collectives(nornir, plan, intent, options)
        bases.update(found_bases)
    else:
        collectives = []
        engine = PAIR_ENGINES[options.engine]

        def spec_of(pair: PlannedPair) -> PairSpec:
            return PairSpec(server=Side(address=pair.destination.address),
                            client=Side(address=pair.source.address), duration_s=duration,
                            parallel=intent.parallel, port=_port(engine))

        for number, wave in enumerate(planned, 1):
            tell(f"wave {number} of {len(planned)}: {len(wave)} pairs")
            for pair, outcome in _run_wave(nornir, engine, wave, spec_of):
                reference = reference_for_pair(
                    engine.name, pair.speed_mbps, intent, roce_mtu=plan.roce_mtu,
                    given_gbps=options.reference_gbps)
                bases[f"{engine.name} at {pair.speed_mbps / 1000:g}G"] = reference.basis
                judged = _judge_pair(pair, outcome, engine, reference, intent.tolerance) \
                    if isinstance(outcome, EngineRun) else outcome
                if isinstance(judged, str):
                    unrun.append(Unrun(_pair_name(pair), pair.kind.value, judged,
                                       pair.source.server))
                else:
                    results.append(judged)
    measured_s = time.monotonic() - measured_at
    tell("reading the counters again")
    after, unread_after = _read(nornir, plan, switches | servers, "accept: counters after")
    for device, why in unread_after.items():
        unread.setdefault(device, why)
    run = RunResult(pairs=tuple(results), collectives=tuple(collectives))
    paths, links = _failed_paths(plan, pairs, run, before, after)
    info = AcceptanceInfo(
        engine=options.engine, kinds=tuple(options.kinds), per_kind=options.per_kind,
        results=run, bases=tuple(sorted(bases.items())),
        unrun=tuple(sorted(unrun, key=lambda u: (u.what, u.why))),
        skipped=tuple((s.kind.value, s.why) for s in selection.skipped),
        unmanaged=selection.unmanaged, paths=paths, links=links, waves=len(planned),
        timings={"measure_s": round(measured_s, 3),
                 "total_s": round(time.monotonic() - started, 3)})
    return AcceptanceRun(info=info, findings=findings_of(info), unread=unread,
                         started_epoch=started_epoch, timings=dict(info.timings))


def _port(engine: PairEngine) -> int:
    from flatfab.acceptance.engines.iperf3 import DEFAULT_PORT as IPERF3_PORT  # noqa: PLC0415
    from flatfab.acceptance.engines.perftest import DEFAULT_PORT as PERFTEST_PORT  # noqa: PLC0415

    return IPERF3_PORT if engine.name == "iperf3" else PERFTEST_PORT


def _failed_paths(plan: FabricState, pairs: Sequence[PlannedPair], run: RunResult,
                  before: ctr.Snapshot, after: ctr.Snapshot
                  ) -> tuple[tuple[FailedPath, ...], tuple[LinkCounters, ...]]:
    """Each failing pair's links, and the counters of every link a failing pair crossed for
    certain, or may have crossed where a counter of trouble grew on it."""
    verdicts = {(r.source, r.destination): r.verdict.passed for r in run.pairs}
    ports = _by_port(plan)
    crossed: dict[PlannedPair, Crossing] = {p: crossing(plan, p, ports) for p in pairs
                                            if (p.source.ref, p.destination.ref) in verdicts}
    tally: dict[LinkRef, list[int]] = {}
    for pair, found in crossed.items():
        passed = verdicts[(pair.source.ref, pair.destination.ref)]
        for link in found.certain:
            tally.setdefault(link, [0, 0])[0 if not passed else 1] += 1
    paths: list[FailedPath] = []
    named: set[LinkRef] = set()
    for pair, found in crossed.items():
        if verdicts[(pair.source.ref, pair.destination.ref)]:
            continue
        paths.append(FailedPath(pair.source.ref, pair.destination.ref, found.certain,
                                found.maybe))
        named.update(found.certain)
        for link in found.maybe:
            ends_ = tuple(ctr.delta(before, after, end) for end in (link.a, link.b))
            if any(end.grew() for end in ends_):
                named.add(link)
    links = tuple(LinkCounters(link=link, ends=tuple(ctr.delta(before, after, end)
                                                     for end in (link.a, link.b)),
                               failed=tally.get(link, [0, 0])[0],
                               passed=tally.get(link, [0, 0])[1])
                  for link in sorted(named))
    return tuple(sorted(paths, key=lambda p: (p.source, p.destination))), links


def _grown(link: LinkCounters) -> str:
    said = [f"{end.end} {name} +{value}" for end in link.ends
            for name, value in sorted(end.grew().items())]
    unread = [end.end for end in link.ends if not end.read]
    words = ", ".join(said) if said else "no drop, pause, ECN mark or FEC error counted"
    return words + (f" (not read: {', '.join(unread)})" if unread else "")


def findings_of(info: AcceptanceInfo) -> list[Finding]:
    found: list[Finding] = []
    paths = {(p.source, p.destination): p for p in info.paths}
    for result in info.results.pairs:
        if result.verdict.passed:
            continue
        path = paths.get((result.source, result.destination))
        certain = ", ".join(str(link) for link in path.certain) if path else "unknown"
        maybe = f"; and one path of {len(path.maybe)} fabric links (ECMP)" \
            if path and path.maybe else ""
        found.append(Finding(
            check=PAIR, severity=Severity.ERROR, device=result.source.server,
            port=result.source.nic,
            message=f"{result.source} -> {result.destination} ({result.kind}, "
            f"{result.engine}): {'; '.join(result.verdict.reasons)}; crossed {certain}{maybe}",
            expected=f">= {result.reference_gbps * (1 - result.verdict.tolerance):.2f} Gb/s",
            actual=f"{result.figure_gbps:.2f} Gb/s"))
    for link in info.links:
        if link.suspect:
            found.append(Finding(
                check=LINK, severity=Severity.ERROR, device=link.link.a.split(":")[0],
                port=link.link.a.partition(":")[2], link=link.link.id,
                message=f"link {link.link}: every pair that crossed it failed ({link.failed} "
                f"of {link.failed}); counters: {_grown(link)}",
                expected="a passing pair crosses it", actual=f"{link.failed} failed, 0 passed"))
    for collective in info.results.collectives:
        if not collective.verdict.passed:
            least = collective.reference_gbps * (1 - collective.verdict.tolerance)
            found.append(Finding(
                check=COLLECTIVE, severity=Severity.ERROR, device=None,
                message=f"{collective.collective} over {', '.join(collective.servers)}: "
                f"{'; '.join(collective.verdict.reasons)}",
                expected=f">= {least:.2f} Gb/s busbw",
                actual=f"{collective.figure_gbps:.2f} Gb/s"))
    for unrun in info.unrun:
        found.append(Finding(check=UNRUN, severity=Severity.NOT_JUDGED,
                             device=unrun.device or None,
                             message=f"{unrun.what} ({unrun.kind}) is not judged: {unrun.why}",
                             expected="measured", actual="not run"))
    for kind, why in info.skipped:
        found.append(Finding(check=KIND, severity=Severity.INFO, device=None,
                             message=f"{kind} pairs are not run: {why}",
                             expected=f"{kind} pairs", actual="none run"))
    for server in info.unmanaged:
        found.append(Finding(check=PAIR, severity=Severity.NOT_JUDGED, device=server,
                             message=f"{server}'s pairs are not judged: {UNMANAGED}",
                             expected="measured", actual=UNMANAGED_ACTUAL))
    return sorted(found, key=lambda f: f.sort_key)


def acceptance_report(plan: FabricState, run: AcceptanceRun) -> AuditReport:
    """The run as a report in every format (flatfab.reports)."""
    stamp = datetime.fromtimestamp(run.started_epoch, UTC)
    return AuditReport(
        fabric=plan.fabric, run_id=f"{stamp:%Y%m%dT%H%M%SZ}-acceptance-{plan.fabric}",
        started=f"{stamp:%Y-%m-%dT%H:%M:%SZ}", started_epoch=round(run.started_epoch, 3),
        duration_s=run.timings.get("total_s", 0.0),
        devices=device_summaries(plan, set(run.unread)), links=link_summaries(plan),
        checks_run=sorted(kind.id for kind in KINDS), findings=run.findings, drift=[],
        unread=dict(run.unread), timings=dict(run.timings), acceptance=run.info)
