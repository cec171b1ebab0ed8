"""Priority flow control (I-4, I-5, I-20): symmetric per link, lossless classes only, guarded,
and on every switch port exactly as the intent sets it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, Stage, check
from flatfab.checks.lossless.common import (
    Issue,
    PerObject,
    device_virtual,
    fmt_set,
    grouped_findings,
    interface,
    lossless_host,
    nic_findings,
    nics,
    physical_links,
    planned,
    planned_port_findings,
    profile,
)
from flatfab.model.state import DeviceState, Endpoint, Interface, PortQos, Watchdog

DETECT_MS = (100, 5000)  # SONiC's watchdog detection range


def _pfc(iface: Interface | None) -> frozenset[int] | None:
    """PFC priorities of a switch port or host NIC; None when it has no lossless state."""
    if iface is None:
        return None
    if iface.qos is not None:
        return frozenset(iface.qos.pfc)
    return frozenset(iface.nic.pfc) if iface.nic is not None else None


def _raw_pfc(iface: Interface | None) -> list[int] | None:
    if iface is None:
        return None
    if iface.qos is not None:
        return iface.qos.pfc
    return iface.nic.pfc if iface.nic is not None else None


@dataclass(frozen=True)
class _End:
    endpoint: Endpoint
    device: DeviceState
    iface: Interface
    pfc: frozenset[int]
    planned: frozenset[int] | None

    @property
    def virtual(self) -> bool:
        return self.iface.nic.virtual if self.iface.nic is not None else device_virtual(
            self.device)


def _end(ctx: CheckContext, endpoint: Endpoint) -> _End | None:
    found = interface(ctx, endpoint)
    if found is None:
        return None
    pfc = _pfc(found[1])
    if pfc is None:
        return None
    return _End(endpoint, found[0], found[1], pfc, _pfc(planned(ctx, endpoint)))


@check("pfc.link_symmetry", "Every link has the same PFC priorities on both ends",
       scope=Scope.LINK, severity=Severity.ERROR, hosts=lossless_host)
def link_symmetry(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the PFC priorities of both ends of every planned physical link, switch ports and NICs
    (planned statically, observed live), and those the plan gives each end.
    Expects: both ends have the same PFC priorities.
    Fails when: they differ. The finding names the end that moved from the plan (noting when both
    did); when the plan itself differs, the end without the fabric's lossless set. A link with an
    end unreadable or without lossless state is not judged.
    Fix: Give both ends the same PFC priorities. Live: `flatfab rollout` restores the end the
    finding names as moved. From `flatfab check`: qos.yaml gives the ends different priorities (an
    override's `pfc` on one end, `hosts.pfc` or a NIC override unlike the switch); make them equal.
    One end without PFC drops what the other expects to pause.
    """
    lossless = profile(ctx)
    promised = frozenset(lossless.lossless) if lossless is not None else frozenset()
    readable = ctx.readable
    for link in physical_links(ctx):
        # fast path: both ends readable with the same PFC list (almost every link); the
        # plan's two ends of a fabric link share one PortQos
        a_dev, b_dev = readable.get(link.a.device), readable.get(link.b.device)
        if a_dev is not None and b_dev is not None:
            a_if, b_if = a_dev.interfaces.get(link.a.port), b_dev.interfaces.get(link.b.port)
            if a_if is not None and b_if is not None and a_if.qos is not None \
                    and a_if.qos is b_if.qos:
                continue
            same = _raw_pfc(a_if)
            if same is not None and same == _raw_pfc(b_if):
                continue
        a, b = _end(ctx, link.a), _end(ctx, link.b)
        if a is None or b is None or a.pfc == b.pfc:
            continue
        # blame the end that drifted from the plan; statically (or when the plan itself is
        # asymmetric) the end that differs from the fabric's lossless set
        off = [e for e in (a, b) if e.planned is not None and e.pfc != e.planned]
        both = " (both ends differ from the plan)"
        if not off:
            off = [e for e in (a, b) if e.pfc != promised] or [a]
            both = f" (neither end has the lossless set {fmt_set(promised)})"
        named = off[0]
        expected = named.planned if named.planned is not None and named.pfc != named.planned \
            else promised
        yield item.finding(
            named.device.name, f"PFC differs across {link.id}: {a.endpoint} on "
            f"{fmt_set(a.pfc)}, {b.endpoint} on {fmt_set(b.pfc)}"
            f"{both if len(off) > 1 else ''}", port=named.endpoint.port, link=link.id,
            expected=fmt_set(expected), actual=fmt_set(named.pfc), virtual=named.virtual)


def _lossy(pfc: list[int], lossless: frozenset[int]) -> list[Issue]:
    return [Issue(f"has PFC on lossy priority {p}", f"PFC only on {fmt_set(lossless)}",
                  f"PFC on {p}") for p in sorted(set(pfc) - lossless)]


@check("pfc.lossy_class", "Every port and NIC has PFC on lossless priorities only",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=lossless_host)
def lossy_class(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the PFC priorities of every physical switch port and host NIC, and the lossless
    priorities of the plan's lossless profile.
    Expects: PFC only on lossless priorities.
    Fails when: a port or NIC has PFC on another priority, one finding per priority. Nothing is
    judged without a lossless profile, nor PFC the device does not state (listed as unknown); in a
    `lossy` fabric PFC on any priority is `pfc.lossy_fabric`'s.
    Fix: Take PFC off the named priority: in qos.yaml keep only lossless priorities in
    `pfc.priorities`, overrides' `pfc` and `hosts.pfc`; live, `flatfab rollout`. PFC on a lossy
    class pauses traffic that has no headroom and spreads congestion.
    """
    lossless = profile(ctx)
    if lossless is None or lossless.lossy:
        return  # in a lossy fabric, PFC anywhere is pfc.lossy_fabric's
    promised = frozenset(lossless.lossless)
    cached = PerObject(_lossy)
    yield from grouped_findings(item, ctx, lambda g: [] if "pfc" in g.qos.unknown
                                else cached(g.qos.pfc, promised))
    for nic in nics(ctx):
        if "pfc" not in nic.nic.unknown:
            yield from nic_findings(item, nic, _lossy(nic.nic.pfc, promised))


def _watchdog(qos: PortQos) -> list[Issue]:
    if not qos.pfc:
        return []
    pfc = fmt_set(qos.pfc)
    wd = qos.watchdog
    if wd is None:
        return [Issue(f"has PFC on {pfc} but no PFC watchdog", f"watchdog on {pfc}", "none")]
    issues = []
    unread = wd.unknown  # settings the device does not state are not judged here
    if "priorities" not in unread and set(wd.priorities) != set(qos.pfc):
        issues.append(Issue(f"PFC watchdog covers {fmt_set(wd.priorities)}, PFC is on {pfc}",
                            pfc, fmt_set(wd.priorities)))
    low, high = DETECT_MS
    if "detect_ms" not in unread and not low <= wd.detect_ms <= high:
        issues.append(Issue(f"PFC watchdog detection {wd.detect_ms} ms is out of range",
                            f"{low}-{high} ms", f"{wd.detect_ms} ms"))
    if not {"detect_ms", "restore_ms"} & unread.keys() and wd.restore_ms < wd.detect_ms:
        issues.append(Issue(f"PFC watchdog restores ({wd.restore_ms} ms) before it detects "
                            f"({wd.detect_ms} ms)", f">= {wd.detect_ms} ms",
                            f"{wd.restore_ms} ms"))
    if not {"detect_ms", "poll_ms"} & unread.keys() and wd.poll_ms > wd.detect_ms:
        issues.append(Issue(f"PFC watchdog polls every {wd.poll_ms} ms, slower than its "
                            f"{wd.detect_ms} ms detection", f"<= {wd.detect_ms} ms",
                            f"{wd.poll_ms} ms"))
    if wd.action == "alert":
        issues.append(Issue("PFC watchdog only alerts on a storm", "drop or forward",
                            wd.action))
    return issues


@check("pfc.watchdog", "Every port and NIC with PFC has a storm watchdog on its priorities",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=lossless_host)
def watchdog(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the PFC watchdog of every physical switch port with PFC (priorities, detection,
    restoration, polling, action) and the PFC storm prevention of every host NIC with PFC.
    Expects: a watchdog on exactly the port's PFC priorities, detecting within 100-5000 ms,
    restoring no sooner than it detects, polling no slower than it detects, with action drop or
    forward; on a NIC, storm prevention above 0 ms.
    Fails when: the watchdog is missing, any of these does not hold, or it only alerts. A setting
    the device does not state is not judged (`state.unknown` reports it).
    Fix: Turn the watchdog on with sane timers in qos.yaml `pfc.watchdog` (`enabled: true`, action
    `drop` or `forward`, detection 100-5000 ms, restoration no shorter, polling no slower) and give
    NICs `hosts.pfc_prevention_ms` above 0; live, `flatfab rollout`. Without one, a stuck receiver
    can stall every link towards it.
    """
    cached = PerObject(_watchdog)
    yield from grouped_findings(item, ctx, lambda g: cached(g.qos))
    for nic in nics(ctx):
        if nic.nic.pfc and nic.nic.pfc_prevention_ms <= 0 \
                and "pfc_prevention_ms" not in nic.nic.unknown:  # unread: state.unknown
            yield from nic_findings(item, nic, [Issue(
                f"has PFC on {fmt_set(nic.nic.pfc)} but no PFC storm prevention",
                "pfc_prevention_ms > 0", str(nic.nic.pfc_prevention_ms))])


# What the intent sets on a switch port's watchdog, each read the same way from plan and device.
# (what, the model field a device may leave unknown, how it reads)
_WATCHDOG_SETTINGS: tuple[tuple[str, str, Callable[[Watchdog], object]], ...] = (
    ("action", "action", lambda w: w.action),
    ("priorities", "priorities", lambda w: fmt_set(w.priorities)),
    ("detection time", "detect_ms", lambda w: f"{w.detect_ms} ms"),
    ("restoration time", "restore_ms", lambda w: f"{w.restore_ms} ms"),
    ("polling interval", "poll_ms", lambda w: f"{w.poll_ms} ms"),
)


def _against_intent(seen: PortQos, plan: PortQos) -> list[Issue]:
    """Where a port's PFC and watchdog differ from what the intent sets.

    Any valid setting can be the wrong one: a watchdog that forwards where the intent says
    drop lets a storming queue ignore pauses and pass the storm on, and every rule
    pfc.watchdog applies still holds for it.
    """
    issues = []
    if set(seen.pfc) != set(plan.pfc):
        issues.append(Issue(f"has PFC on {fmt_set(seen.pfc)}, the intent says "
                            f"{fmt_set(plan.pfc)}", fmt_set(plan.pfc), fmt_set(seen.pfc)))
    want, got = plan.watchdog, seen.watchdog
    if want is None and got is not None:
        issues.append(Issue("has a PFC watchdog the intent turns off", "no watchdog",
                            f"watchdog on {fmt_set(got.priorities)}"))
    elif want is not None and got is not None:
        for what, field, read in _WATCHDOG_SETTINGS:
            expected, actual = read(want), read(got)
            if field not in got.unknown and actual is not None and expected != actual:
                issues.append(Issue(f"PFC watchdog {what} is {actual}, the intent says "
                                    f"{expected}", str(expected), str(actual)))
    # a watchdog missing where the intent sets one is pfc.watchdog's finding
    return issues


@check("pfc.intent", "Every switch port's PFC and PFC watchdog are what the intent sets",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE])
def intent(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, each physical switch port's PFC priorities and watchdog (action, priorities,
    detection, restoration, polling), and the plan's for the same port.
    Expects: the planned values: a valid setting can still be the wrong one (a watchdog that
    forwards where the intent says drop passes a storm on).
    Fails when: any differs, or the port has a watchdog the intent turns off. A setting the device
    does not state is not judged; a missing watchdog is `pfc.watchdog`'s; host NICs' PFC and storm
    prevention are `host.intent`'s.
    Fix: `flatfab rollout` restores the port's PFC and watchdog (`flatfab audit` shows the section
    that moved). If the change was wanted, put it in qos.yaml first (an override for those ports).
    """
    yield from planned_port_findings(item, ctx, _against_intent)
