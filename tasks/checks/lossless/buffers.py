"""Buffers (I-13..I-16): headroom per lossless PG, sane profiles, full coverage, the budget."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from pydantic import BaseModel

from flatfab.checks.base import (
    Check,
    CheckContext,
    Finding,
    Scope,
    Severity,
    Stage,
    check,
    not_judged,
)
from flatfab.checks.lossless.common import (
    Issue,
    PerObject,
    at,
    egress_lossless,
    physical_links,
    port_findings,
    port_groups,
    profile,
)
from flatfab.model.state import Asic, BufferProfile, DeviceQos, PortQos
from flatfab.qos import headroom as hr
from flatfab.qos.headroom import ASICS, Headroom, required_headroom

DYNAMIC_TH = (-8, 7)


def _lossless(item: BufferProfile | None) -> bool:
    return item is not None and item.xoff > 0


def _model(asic: Asic) -> hr.Asic | None:
    return hr.model_asic(asic) if asic.family in ASICS else None


@lru_cache(maxsize=4096)
def _required(asic: hr.Asic, speed: int, cable: float, mtu: int, peer_mtu: int) -> Headroom:
    return required_headroom(asic, speed, cable, mtu, peer_mtu)


def _link_inputs(ctx: CheckContext) -> dict[tuple[str, str], tuple[float, int | None]]:
    """(device, port) -> (cable metres, far-end MTU as the subject has it, None if unknown),
    for both ends of every physical link, in one pass."""
    readable = ctx.readable
    inputs: dict[tuple[str, str], tuple[float, int | None]] = {}
    for link in physical_links(ctx):
        a_dev, b_dev = readable.get(link.a.device), readable.get(link.b.device)
        a_if = a_dev.interfaces.get(link.a.port) if a_dev is not None else None
        b_if = b_dev.interfaces.get(link.b.port) if b_dev is not None else None
        inputs[(link.a.device, link.a.port)] = (
            link.cable_m, b_if.mtu if b_if is not None and b_if.mtu else link.mtu)
        inputs[(link.b.device, link.b.port)] = (
            link.cable_m, a_if.mtu if a_if is not None and a_if.mtu else link.mtu)
    return inputs


def _headroom(qos: PortQos, dev: DeviceQos, model: hr.Asic, cable: float, mtu: int,
              peer_mtu: int) -> list[Issue]:
    try:
        need = _required(model, qos.speed_mbps, cable, mtu, peer_mtu)
    except ValueError as exc:  # a speed without a known pause response time
        return [Issue(f"headroom cannot be checked: {exc}", "a known port speed",
                      f"{qos.speed_mbps} Mb/s")]
    issues = []
    for pg, name in sorted(qos.pgs.items()):
        item = dev.profiles.get(name)
        if item is not None and _lossless(item) and item.xoff < need.xoff:
            issues.append(Issue(
                f"PG {pg} headroom (xoff) {item.xoff} B of {name} is below the {need.xoff} B "
                f"required at {qos.speed_mbps} Mb/s, {cable:g} m, MTU {mtu}/{peer_mtu}",
                f">= {need.xoff}", str(item.xoff)))
    return issues


@check("buffer.headroom", "Every lossless PG has the headroom its speed, cable and MTUs need",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def headroom(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each physical switch port's lossless PG profiles (xoff), speed and MTU (the larger of
    the interface's and the lossless state's), its link's cable length and the far end's MTU, and
    the switch's ASIC.
    Expects: every lossless PG's xoff is at least the headroom the ASIC's model requires at that
    speed, cable length and pair of MTUs (`tasks/qos/headroom.py`).
    Fails when: an xoff is smaller, or the port's speed has no known pause response time. A switch
    without buffer state, or of an ASIC family without a headroom model, is not judged.
    Fix: Give the PG its headroom: drop an override's `xoff_bytes` that is too small, or correct the
    inputs (the link class's `cable_m`, `speed`, `mtu`, the ASIC in `qos.asics`); live, `flatfab
    rollout` restores a profile that drifted. Too little headroom drops lossless packets after every
    pause.
    """
    inputs = _link_inputs(ctx)
    models = PerObject(_model)
    # keyed by the shared objects (alive in the subject) and the per-port numbers
    results: dict[tuple[int, int, float, int, int], list[Issue]] = {}
    for group in port_groups(ctx):
        dev = group.device.qos
        model = models(dev.asic) if dev is not None else None
        if dev is None or model is None:
            continue  # no buffers, or an ASIC family without a headroom model
        # the group's ports share their device and state: what depends on those is read once
        qos, name = group.qos, group.device.name
        qos_id, dev_id, own = id(qos), id(dev), (qos.cable_m, None)
        for port in group.ports:
            # the larger of the configured and the running MTU: headroom must cover both
            mtu = max(port.iface.mtu or 0, qos.mtu)
            # off any link: the port's own configuration
            cable, far_mtu = inputs.get((name, port.iface.name), own)
            peer_mtu = far_mtu or mtu
            key = (qos_id, dev_id, cable, mtu, peer_mtu)
            issues = results.get(key)
            if issues is None:
                issues = results[key] = _headroom(qos, dev, model, cable, mtu, peer_mtu)
            if issues:
                yield from port_findings(item, port, issues)


def _profile(name: str, item: BufferProfile, dev: DeviceQos) -> list[Issue]:
    issues = []
    pool = dev.pools.get(item.pool)
    if pool is None:
        issues.append(Issue(f"profile {name} draws from pool {item.pool}, which does not exist",
                            f"pool {item.pool} defined", "missing"))
    if (item.dynamic_th is None) == (item.static_th is None):
        issues.append(Issue(f"profile {name} needs exactly one of dynamic_th and static_th",
                            "one threshold", f"dynamic_th {item.dynamic_th}, static_th "
                            f"{item.static_th}"))
    elif pool is not None:
        kind = "dynamic" if item.dynamic_th is not None else "static"
        if kind != pool.mode:
            issues.append(Issue(f"profile {name} has a {kind} threshold in {pool.mode} pool "
                                f"{item.pool}", f"{pool.mode} threshold", f"{kind} threshold"))
    low, high = DYNAMIC_TH
    if item.dynamic_th is not None and not low <= item.dynamic_th <= high:
        issues.append(Issue(f"profile {name} dynamic_th {item.dynamic_th} is out of range",
                            f"{low}..{high}", str(item.dynamic_th)))
    if _lossless(item):
        if item.xon <= 0:
            issues.append(Issue(f"lossless profile {name} has no xon", "> 0", str(item.xon)))
        if item.size < item.xon + item.xoff:
            issues.append(Issue(f"lossless profile {name} size {item.size} B is below xon + "
                                f"xoff", f">= {item.xon + item.xoff}", str(item.size)))
    return issues


@check("buffer.profile", "Every buffer profile is consistent and draws from an existing pool",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def profiles(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: every buffer profile of each readable switch and the pool it draws from.
    Expects: the pool exists; exactly one of `dynamic_th` and `static_th`, of the pool's mode;
    `dynamic_th` within -8..7; a lossless profile (xoff > 0) has xon > 0 and a size of at least xon
    + xoff.
    Fails when: any of these does not hold, one finding per problem.
    Fix: Correct qos.yaml `buffers` (one threshold per profile, of the pool's mode; dynamic
    thresholds within -8..7); live, `flatfab rollout` restores the switch's profiles.
    """
    for name in ctx.state.devices:
        device = ctx.observed(name)
        dev = device.qos if device is not None else None
        if dev is None:
            continue
        for profile_name, buffer in dev.profiles.items():
            for issue in _profile(profile_name, buffer, dev):
                yield item.finding(name, f"{name} {issue.text}", expected=issue.expected,
                                   actual=issue.actual, virtual=dev.virtual)


def _coverage(qos: PortQos, dev: DeviceQos | None, lossless: list[int]) -> list[Issue]:
    known = dev.profiles if dev is not None else {}
    issues = []
    for pg, name in sorted(qos.pgs.items()):
        if name not in known:
            issues.append(Issue(f"PG {pg} uses profile {name}, which does not exist",
                                f"profile {name} defined", "missing"))
    for queue, state in sorted(qos.queues.items()):
        if state.profile not in known:
            issues.append(Issue(f"queue {queue} uses profile {state.profile}, which does not "
                                "exist", f"profile {state.profile} defined", "missing"))
    if 0 not in qos.pgs:
        issues.append(Issue("has no PG 0 for lossy traffic", "PG 0: lossy profile", "none"))
    # PFC on priority 0 makes PG 0 a PFC PG: that is pfc.lossy_class's finding, not this one's
    want = {g for p in qos.pfc if (g := at(qos.maps.pfc_to_pg, p)) is not None}
    if 0 not in want and _lossless(known.get(qos.pgs.get(0, ""))):
        issues.append(Issue("PG 0 has a lossless profile", "PG 0: lossy profile",
                            f"PG 0: {qos.pgs[0]}"))
    for group in sorted(want):
        used = qos.pgs.get(group)
        if used is None and f"pgs.{group}" in qos.unknown:
            continue  # left to the device's buffer manager: state.unknown says so
        if used is None or (used in known and not _lossless(known[used])):
            issues.append(Issue(f"PFC PG {group} has no lossless profile",
                                f"PG {group}: lossless", f"PG {group}: {used or 'none'}"))
    for pg, name in sorted(qos.pgs.items()):
        if pg not in want and pg != 0 and _lossless(known.get(name)):
            issues.append(Issue(f"PG {pg} has lossless profile {name} but no PFC priority",
                                f"PG {pg}: lossy", f"PG {pg}: {name}"))
    lossless_queues = {q for tc in lossless if (q := at(qos.maps.tc_to_queue, tc)) is not None}
    for queue, state in sorted(qos.queues.items()):
        if (queue in lossless_queues) != egress_lossless(dev, state.profile):
            want_profile = ("an egress lossless profile" if queue in lossless_queues
                            else "a lossy profile")
            issues.append(Issue(f"queue {queue} has egress profile {state.profile}",
                                want_profile, state.profile))
    for queue in sorted(lossless_queues - set(qos.queues)):
        issues.append(Issue(f"lossless queue {queue} is not configured",
                            "an egress lossless profile",
                            "missing"))
    return issues


@check("buffer.coverage", "Every port has PG 0 lossy, PFC PGs lossless, lossless queues lossless",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def coverage(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each physical switch port's PG and queue profiles, PFC priorities and maps, the
    switch's buffer profiles and pools, and the lossless profile's lossless TCs.
    Expects: every profile a PG or queue names exists; PG 0 exists and is lossy; every PG a PFC
    priority maps to is lossless and no other is; the lossless TCs' queues exist with an egress
    lossless profile and every other queue has a lossy one.
    Fails when: any of these does not hold. A PFC PG whose profile the switch leaves to its buffer
    manager is not judged; a switch with no buffer state gets one not-judged finding. PFC on
    priority 0 is `pfc.lossy_class`'s.
    Fix: Live: `flatfab rollout` restores the PG and queue profiles (`flatfab audit` names them).
    From `flatfab check`: qos.yaml's PFC priorities, maps and buffers disagree; every PFC priority
    must map to a lossless PG and every lossless TC's queue be lossless.
    """
    lossless = profile(ctx)
    if lossless is None:
        return
    cached = PerObject(_coverage)
    unjudged: set[str] = set()
    for group in port_groups(ctx):
        if group.device.qos is None:
            # no buffer state read: the switch keeps its own buffers (a family without
            # buffer knobs), said once per device rather than judged
            unjudged.add(group.device.name)
            continue
        issues = cached(group.qos, group.device.qos, lossless.lossless)
        for port in group.ports if issues else []:
            yield from port_findings(item, port, issues)
    for name in sorted(unjudged):
        yield not_judged(item.id, name, "its buffers are the switch's own",
                         what=f"{name} PG and queue profiles", expected="buffer state read",
                         actual="the switch's own")


def _reserved(qos: PortQos, dev: DeviceQos) -> int:
    """Bytes a port's lossless PGs reserve (independent headroom: size = xon + xoff)."""
    return sum(item.size for name in qos.pgs.values()
               if _lossless(item := dev.profiles.get(name)) and item is not None)


@check("buffer.budget", "Every switch's pools and reserved headroom fit its ASIC buffer",
       scope=Scope.DEVICE, severity=Severity.ERROR)
def budget(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: each switch's buffer pools and ASIC buffer size, and the lossless PG profiles of its
    physical ports.
    Expects: every pool is at least the sum of the lossless PG sizes reserved in it, and the ingress
    pools plus all reserved lossless headroom fit the ASIC's buffer.
    Fails when: a pool is too small, or the total exceeds the buffer. A pool the switch's buffer
    manager sizes is not judged, nor the total while an ingress pool is so sized.
    Fix: Reserve less, or describe the ASIC truly: smaller pools in qos.yaml `buffers`, fewer
    lossless priorities, `cable_m` as short as the cables really are; or the right `family` or
    `buffer_bytes` in `qos.asics`. A switch over budget cannot hold its headroom when every port
    pauses at once.
    """
    reserved_by: dict[str, int] = {}
    in_pool: dict[tuple[str, str], int] = {}  # (device, pool) -> bytes its PGs reserve
    for group in port_groups(ctx):  # physical ports, by shared state: one sum per group
        dev = group.device.qos
        if dev is not None:
            reserved_by[group.device.name] = (reserved_by.get(group.device.name, 0)
                                              + _reserved(group.qos, dev) * len(group.ports))
            for name in group.qos.pgs.values():
                buffer = dev.profiles.get(name)
                if buffer is not None and _lossless(buffer):
                    key = (group.device.name, buffer.pool)
                    in_pool[key] = in_pool.get(key, 0) + buffer.size * len(group.ports)
    for (name, pool_name), need in sorted(in_pool.items()):
        device = ctx.observed(name)
        pool = device.qos.pools.get(pool_name) if device and device.qos else None
        unsized = device is not None and device.qos is not None \
            and f"pools.{pool_name}.size" in device.qos.unknown
        if pool is not None and not unsized and pool.size < need:
            yield item.finding(name, f"{name} pool {pool_name} ({pool.size} B) is smaller "
                               f"than the {need} B its lossless PGs reserve in it",
                               expected=f">= {need}", actual=str(pool.size),
                               virtual=device.qos.virtual if device and device.qos else False)
    for name in ctx.state.devices:
        device = ctx.observed(name)
        dev = device.qos if device is not None else None
        if device is None or dev is None:
            continue
        if any(f"pools.{n}.size" in dev.unknown for n, p in dev.pools.items()
               if p.direction == "ingress"):
            continue  # a pool the buffer manager sizes: the sum is not known here
        pools = sum(p.size for p in dev.pools.values() if p.direction == "ingress")
        reserved = reserved_by.get(name, 0)
        total = pools + reserved
        if total > dev.asic.buffer_bytes:
            yield item.finding(name, f"{name} needs {total} B of buffer ({pools} B of ingress "
                               f"pools + {reserved} B of lossless PG headroom), its "
                               f"{dev.asic.family} has {dev.asic.buffer_bytes} B",
                               expected=f"<= {dev.asic.buffer_bytes}", actual=str(total),
                               virtual=dev.virtual)



POOL_FIELDS = ("direction", "mode", "size")
PROFILE_FIELDS = ("pool", "size", "xon", "xoff", "dynamic_th", "static_th")
AT_LEAST = frozenset({"size", "xon", "xoff"})  # a profile's bytes: more than planned is safe


def _unit(field_name: str, value: object) -> str:
    return f"{value} B" if field_name in ("size", "xon", "xoff") else str(value)


def _differences(kind: str, name: str, seen: BaseModel | None, want: BaseModel,
                 fields: tuple[str, ...], unknown: dict[str, str]) -> Iterator[Issue]:
    """How a pool or profile the device holds differs from the plan's of the same name
    (what the device does not state is left to state.unknown)."""
    key = f"{kind}s.{name}"
    if key in unknown:
        return
    if seen is None:
        yield Issue(f"{kind} {name} is missing", f"{kind} {name}", "missing")
        return
    for field_name in fields:
        got, wanted = getattr(seen, field_name), getattr(want, field_name)
        # a profile's reserve may be larger than planned (an OS with one profile for the
        # switch gives every PG the largest): only less headroom than planned is a risk
        larger = kind == "profile" and field_name in AT_LEAST and got > wanted
        if got != wanted and not larger and f"{key}.{field_name}" not in unknown:
            yield Issue(f"{kind} {name} {field_name} is {_unit(field_name, got)}, the intent "
                        f"sets {_unit(field_name, wanted)}", _unit(field_name, wanted),
                        _unit(field_name, got))


@check("buffer.intent", "Every switch's buffer pools and profiles are the intent's, by name",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE])
def intent(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each switch's buffer pools (direction, mode, size) and profiles (pool, size,
    XON, XOFF, alpha or static threshold), and the plan's for the same switch.
    Expects: every pool and profile the plan gives the switch, by name, with the plan's values: a
    pool shrunk by hand still passes every sanity check while it holds less than the headroom
    and thresholds were sized for.
    Fails when: a planned pool or profile is missing or differs, each named with the value held
    and the value planned; a profile's size, XON and XOFF fail only below the plan (an OS with
    one MMU profile for the whole switch, EOS on Trident, gives every lossless PG the largest).
    What the switch does not state is not judged (`state.unknown`).
    Fix: `flatfab rollout` restores the planned pools and profiles (`flatfab audit` names the
    drift). If the new sizes are wanted, set them in qos.yaml `buffers`, then check that
    `buffer.budget` and `ecn.before_pfc` still pass.
    """
    for name in ctx.state.devices:
        device, planned = ctx.observed(name), ctx.plan.devices.get(name)
        if device is None or device.qos is None or planned is None or planned.qos is None:
            continue
        seen, want, unknown = device.qos, planned.qos, device.qos.unknown
        issues = [*(issue for role, pool in sorted(want.pools.items())
                    for issue in _differences("pool", role, seen.pools.get(role), pool,
                                              POOL_FIELDS, unknown)),
                  *(issue for profile_name, buffer in sorted(want.profiles.items())
                    for issue in _differences("profile", profile_name,
                                              seen.profiles.get(profile_name), buffer,
                                              PROFILE_FIELDS, unknown))]
        for issue in issues:
            yield item.finding(name, f"{name} {issue.text}", expected=issue.expected,
                               actual=issue.actual, virtual=seen.virtual)
