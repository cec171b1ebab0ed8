"""What a device does not state: reported as unknown with the reason, never judged as zero.

Collectors record a lossless setting they could not read (a watchdog action no line gives,
a PG profile or pool size a switch's buffer manager computes) in the `unknown` maps of the
port, its watchdog or the device, and the other checks leave those settings alone. This
check names each, so a report shows what was not judged and why, and the run is
incomplete (exit 3), never passed. What the OS never states on any device (its platform's
data file declares it: the collect sets it apart as the device's `limitations`) is listed
once per platform instead, as information.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

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
from flatfab.checks.lossless.common import lossless_host, nics, port_groups
from flatfab.model.state import Role


@check("state.unknown", "Every lossless setting a check judges was read from the device",
       scope=Scope.DEVICE, severity=Severity.NOT_JUDGED, stages=[Stage.LIVE],
       hosts=lossless_host)
def unknown(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, the `unknown` reasons collect left on switches' buffers, physical ports, their
    PFC watchdogs and host NICs.
    Expects: none: every lossless setting a check judges was read from the device.
    Fails when: never: each unread setting is a not-judged finding with the reason.
    Fix: Nothing is known to be wrong: a setting was not read, so no check judged it, and the reason
    says why (the OS does not state it, a buffer manager sizes it, a counter is not kept). Where it
    matters, read it on the device by hand; treat the checks that skipped it as not done.
    """
    yield from _limitations(item, ctx)
    for name in ctx.state.devices:
        device = ctx.observed(name)
        if device is None or device.role is Role.HOST or device.qos is None:
            continue
        for setting, why in sorted(device.qos.unknown.items()):
            yield not_judged(item.id, name, why, what=f"{name} {setting}",
                             virtual=device.qos.virtual)
    for group in port_groups(ctx):
        reasons = dict(group.qos.unknown)
        if group.qos.watchdog is not None:
            reasons.update({f"watchdog.{k}": v for k, v in group.qos.watchdog.unknown.items()})
        for port in group.ports if reasons else []:
            for setting, why in sorted(reasons.items()):
                yield not_judged(item.id, port.device.name, why, port=port.iface.name,
                                 what=f"{port.name} {setting}", virtual=port.virtual)
    for nic in nics(ctx):
        for setting, why in sorted(nic.nic.unknown.items()):
            yield not_judged(item.id, nic.device.name, why, port=nic.iface.name,
                             what=f"{nic.name} {setting}", virtual=nic.nic.virtual)


def _limitations(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    # the physical layer's are phy.unread's
    yield from limitations(item, ctx, lambda pattern: not pattern.startswith("phy."))


def limitations(item: Check, ctx: CheckContext,
                wanted: Callable[[str], bool]) -> Iterator[Finding]:
    """One information finding per platform and setting its OS never states (of those
    `wanted`), naming the devices it concerns."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for name in ctx.state.devices:
        device = ctx.observed(name)
        if device is None:
            continue
        for pattern, why in device.limitations.items():
            if not wanted(pattern):
                continue
            found.setdefault((device.platform, pattern, why), []).append(name)
    for (platform, pattern, why), devices in sorted(found.items()):
        shown = ", ".join(devices[:5]) + (f" and {len(devices) - 5} more" if len(devices) > 5
                                          else "")
        yield Finding(check=item.id, severity=Severity.INFO, device=None,
                      message=f"{platform} never states {pattern}: {why} (a limitation of the "
                      f"platform, on {shown})", expected="read from the device",
                      actual="not stated by the OS")
