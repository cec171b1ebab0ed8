"""Device reachability, interface presence, admin/oper state, MTU and cabling."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import (
    Check,
    CheckContext,
    Finding,
    Scope,
    Severity,
    Stage,
    check,
    every_host,
)
from flatfab.model.state import Endpoint, IfKind, Interface, LinkKind


@check("device.reachable", "Every planned device answers on its management address",
       scope=Scope.DEVICE, severity=Severity.CRITICAL, stages=[Stage.LIVE], hosts=every_host)
def reachable(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the collect result of every planned device, switches and hosts.
    Expects: each device was collected and read through its management address.
    Fails when: a device was not collected or could not be read, with collect's errors. The other
    checks skip unreadable devices: this is the check that names them. An unmanaged host is never
    read: it is not judged (never unread).
    Fix: Read the reason the finding gives (refused, timed out, authentication, host key) and repair
    that path from this machine: the device's management address and its SSH or API service, the
    credentials the inventory and environment give it, its known_hosts entry. Every other check
    skips the device until it is read.
    """
    for name, planned in ctx.plan.devices.items():
        if not planned.managed:
            continue  # never connected to: run_checks reports it not judged
        device = ctx.state.devices.get(name)
        if device is None or not device.reachable:
            reason = "; ".join(device.errors) if device else "not collected"
            yield item.finding(name, f"{name} could not be read: {reason}",
                               expected="reachable", actual=reason)


def _planned_interfaces(ctx: CheckContext) -> Iterator[tuple[str, Interface, Interface | None]]:
    """(device, planned interface, observed interface or None) on every readable device."""
    for name, planned in ctx.plan.devices.items():
        device = ctx.observed(name)
        if device is not None:
            for iface in planned.interfaces.values():
                yield name, iface, device.interfaces.get(iface.name)


@check("device.not_modelled", "What a device has beyond flatfab's model is named, never dropped",
       scope=Scope.DEVICE, severity=Severity.INFO, stages=[Stage.LIVE], hosts=every_host)
def not_modelled(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, what collect found on each device that flatfab's model has no place for (a
    port outside the platform's port naming, an OS-internal routing table or unit), with why.
    Expects: nothing: these are listed so that nothing a device has is silently left out.
    Fails when: never: each object is an information finding naming it and why it is not
    modelled; no other check judges it.
    Fix: Nothing, unless the object should be part of the fabric: then the intent lacks it (a
    port the plan does not know), or the device carries configuration flatfab does not manage;
    look at it on the device.
    """
    for name in ctx.state.devices:
        device = ctx.observed(name)
        if device is None:
            continue
        for thing, why in sorted(device.not_modelled.items()):
            yield item.finding(name, f"{name} {thing} is not modelled: {why}",
                               expected="modelled or absent", actual=why)


@check("interface.present", "Every planned interface exists, in its planned VRF",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE], hosts=every_host)
def present(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, every planned interface of each readable device and the interface the device
    reports by that name.
    Expects: the interface exists, in its planned VRF.
    Fails when: it is missing, or sits in another VRF.
    Fix: Run `flatfab audit`: an interface the running config lacks, or puts in another VRF, is
    config drift, and `flatfab rollout` puts the intended config back. If the device has no such
    port (a breakout or port count the hardware lacks), correct the intent's port scheme or the
    switch's platform.
    """
    for name, iface, seen in _planned_interfaces(ctx):
        if seen is None:
            yield item.finding(name, f"{name}:{iface.name} is missing", port=iface.name,
                               vrf=iface.vrf, expected="present", actual="missing")
        elif seen.vrf != iface.vrf:
            yield item.finding(name, f"{name}:{iface.name} is in VRF {seen.vrf}, not "
                               f"{iface.vrf}", port=iface.name, vrf=iface.vrf,
                               expected=iface.vrf, actual=seen.vrf)


@check("host.address", "Every host NIC has its planned addresses",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE], hosts=every_host)
def host_address(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the addresses of every planned data NIC of each readable host, and the plan's.
    Expects: each NIC holds every address the plan gives it.
    Fails when: a planned address is missing from its NIC, naming what the NIC holds instead: a
    NIC moved to another address is named here, where routes and probes only show the symptom.
    A NIC that is missing is `interface.present`'s.
    Fix: The address was changed on the host by hand (or by another tool): a rollout restores the
    planned one on a managed host; on an unmanaged one, give its team the rendered config. If the
    new address is wanted, it belongs in the intent (hosts.yaml pools), not on the host alone.
    """
    for name, iface, seen in _planned_interfaces(ctx):
        if iface.kind is not IfKind.NIC or seen is None or not iface.addresses:
            continue
        absent = [a for a in iface.addresses if a not in seen.addresses]
        if absent:
            held = ", ".join(seen.addresses) or "no address"
            yield item.finding(name, f"{name}:{iface.name} holds {held}, planned "
                               f"{', '.join(iface.addresses)}", port=iface.name,
                               vrf=iface.vrf, expected=", ".join(iface.addresses),
                               actual=held)


@check("interface.up", "Every planned interface is up",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE], hosts=every_host)
def up(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the oper state each readable device reports for every interface planned up.
    Expects: the interface is up.
    Fails when: the device reports it down. A missing interface is `interface.present`'s; one whose
    state is not reported is not judged.
    Fix: Look at the port on the device. Administratively down is config drift (`flatfab audit`,
    then `flatfab rollout`); link down is physical: the cable, the optic, the far end, speed and FEC
    on both ends. `cabling.lldp` and the far end's own findings tell which side.
    """
    for name, iface, seen in _planned_interfaces(ctx):
        if iface.up and seen is not None and seen.up is False:
            yield item.finding(name, f"{name}:{iface.name} is down", port=iface.name,
                               vrf=iface.vrf, expected="up", actual="down")


@check("interface.mtu", "Every interface has the MTU of its link class",
       scope=Scope.DEVICE, severity=Severity.ERROR, stages=[Stage.LIVE], hosts=every_host)
def mtu(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the MTU each readable device reports for every planned interface with an MTU.
    Expects: the planned MTU (its link class's).
    Fails when: the MTU differs, or the interface reports none. A missing interface is
    `interface.present`'s.
    Fix: `flatfab audit` shows the MTU as config drift and `flatfab rollout` sets it again. A device
    that keeps refusing it cannot take the link class's `mtu`: lower that `mtu` in fabric.yaml (and
    the hosts' to match), then `flatfab check`.
    """
    for name, iface, seen in _planned_interfaces(ctx):
        if iface.mtu is not None and seen is not None and seen.mtu != iface.mtu:
            yield item.finding(name, f"{name}:{iface.name} has MTU {seen.mtu}, planned "
                               f"{iface.mtu}", port=iface.name, vrf=iface.vrf,
                               expected=str(iface.mtu), actual=str(seen.mtu))


@check("link.mtu_match", "Both ends of every link have the same MTU",
       scope=Scope.LINK, severity=Severity.ERROR, hosts=every_host)
def link_mtu(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the MTU of both ends of every planned link, VRF sub-links included (planned
    statically, observed live).
    Expects: both ends have the same MTU.
    Fails when: they differ; the finding names the lower end and expects the higher MTU. A link with
    an unreadable device, a missing interface or an MTU not reported is not judged.
    Fix: From `flatfab check`: the intent gives the two ends different MTUs, typically a host link
    class's `mtu` against hosts.yaml's `defaults.mtu` or a profile's `mtu`; make them equal. Live:
    the lower end changed on the device; `flatfab rollout` restores it (find out who changed it).
    """
    readable = ctx.readable
    for link in ctx.state.links:
        a_dev, b_dev = readable.get(link.a.device), readable.get(link.b.device)
        if a_dev is None or b_dev is None:
            continue
        a_if, b_if = a_dev.interfaces.get(link.a.port), b_dev.interfaces.get(link.b.port)
        if a_if is None or b_if is None:
            continue
        a_mtu, b_mtu = a_if.mtu, b_if.mtu
        if a_mtu is None or b_mtu is None or a_mtu == b_mtu:
            continue
        low, low_mtu = (link.a, a_mtu) if a_mtu < b_mtu else (link.b, b_mtu)
        yield item.finding(low.device, f"MTU mismatch on {link.id}: {link.a} {a_mtu}, "
                           f"{link.b} {b_mtu}", port=low.port, link=link.id, vrf=link.vrf,
                           expected=str(max(a_mtu, b_mtu)), actual=str(low_mtu))


def _settling(item: Check, device: str, port: str, link: str, planned: str,
              held: list[Endpoint]) -> Finding:
    """A port that holds the planned neighbour beside others: not judged until the others'
    entries expire (by when, where the OS says)."""
    left = [n.expires_s for n in held if n.expires_s is not None]
    hold = [n.hold_s for n in held if n.hold_s is not None]
    when = (f"within {max(left)} s" if left else f"within its hold time of {max(hold)} s"
            if hold else "when its hold time (TTL) runs out")
    others = ", ".join(f"{n.device}:{n.port}" for n in held)
    return Finding(check=item.id, severity=Severity.NOT_JUDGED, device=device, port=port,
                   link=link, message=f"{device}:{port} is not judged: LLDP holds {others} "
                   f"beside the planned {planned} (a moved cable's old entry), which expires "
                   f"{when}: verify again then", expected=planned,
                   actual=f"{planned} and {others}")


@check("cabling.lldp", "LLDP sees the planned neighbour on every fabric port",
       scope=Scope.LINK, severity=Severity.ERROR, stages=[Stage.LIVE])
def cabling(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the LLDP neighbour each readable switch sees on both ends of every planned
    physical fabric link.
    Expects: the planned far end, device and port.
    Fails when: LLDP names another device or port. A port with no LLDP neighbour (yet), or that the
    device does not report as a fabric port, is not judged. A port that holds an entry for the
    planned neighbour beside another (a cable moved back: the old entry stays until its hold
    time runs out) is not judged either, and the run is incomplete: the finding says how long
    the stale entry can last, and a verify after that judges the port.
    Fix: A cabling error: move the cable to the planned ports (the finding names both ends). If the
    site is cabled this way on purpose, change the intent instead (`links`, the port scheme, a
    server's `cabling`) and roll it out. Two neighbours on a port: verify again once the older
    entry's hold time has passed.
    """
    for link in ctx.state.links:
        if link.kind is not LinkKind.FABRIC or link.parent is not None:
            continue  # LLDP runs on physical switch ports
        for here, there in ((link.a, link.b), (link.b, link.a)):
            device = ctx.observed(here.device)
            iface = device.interfaces.get(here.port) if device else None
            if iface is None or iface.kind is not IfKind.FABRIC or iface.peer is None:
                continue  # no LLDP neighbour (yet): nothing to contradict the plan
            held = [n for n in iface.lldp_neighbours if (n.device, n.port) != (there.device,
                                                                             there.port)]
            if held and len(held) < len(iface.lldp_neighbours):
                yield _settling(item, here.device, here.port, link.id, str(there), held)
            elif (iface.peer.device, iface.peer.port) != (there.device, there.port):
                yield item.finding(here.device, f"{here} is cabled to {iface.peer}, planned "
                                   f"{there}", port=here.port, link=link.id,
                                   expected=str(there), actual=str(iface.peer))
