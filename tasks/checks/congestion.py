"""A fabric moving between congestion profiles (qos.yaml `transition_from`): every device
wholly in one profile, and no lossless device below a lossy one, so a path between two hosts
still lossless is lossless on every hop."""

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
    device_sides,
)
from flatfab.model.state import DeviceState, LosslessProfile
from flatfab.model.transition import TIER, Side, differing


def _pfc_text(device: DeviceState | None, port: str) -> str:
    iface = device.interfaces.get(port) if device is not None else None
    values = (iface.qos.pfc if iface is not None and iface.qos is not None
              else iface.nic.pfc if iface is not None and iface.nic is not None else [])
    return "PFC on " + (",".join(map(str, sorted(values))) or "none")


@check("congestion.transition", "Every device between profiles is in one, none lossless "
       "below lossy", scope=Scope.FABRIC,
       severity=Severity.ERROR, stages=[Stage.LIVE])
def transition(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: live, while qos.yaml sets `transition_from`: every switch port's and host NIC's PFC
    priorities (and a NIC's DCQCN), each device's place in the fabric (host, leaf, spine,
    super-spine) from the plan's links, and what both profiles plan for each port.
    Expects: each device wholly in the profile the fabric moves to or in the one it leaves (the
    lossless checks judge it against that profile's plan), and, where one profile pauses and the
    other does not, no device in the pausing one below a device in the other: then every path
    between two hosts still lossless stays lossless on each hop. runbooks/profile-change.md goes
    from the edge to the core towards `lossy`, from the core to the edge towards `lossless`.
    Fails when: a device is half changed (named at each port in neither profile), or a lossless
    device sits below a lossy one (named at the lower device's port on that link). Devices not
    read are `device.reachable`'s. Outside a transition nothing is judged.
    Fix: Finish the device's change (`flatfab rollout` with the profile-change runbook), or move
    it back. A lossless device below a lossy one: roll out the lower tier first (towards
    `lossy`), or the upper tier first (towards a pausing profile).
    """
    plan = ctx.plan
    moving = plan.transition
    if moving is None or plan.lossless is None:
        return
    at = device_sides(ctx)
    profiles = {Side.TARGET: plan.lossless, Side.SOURCE: moving.profile}
    names = {s: p.congestion for s, p in profiles.items()}
    for name, side in sorted(at.items()):
        if side is not Side.NEITHER:
            continue
        device = ctx.state.devices[name]
        for port in differing(device, plan.devices[name], moving.devices[name]):
            yield item.finding(
                name, f"{name}:{port} is in neither profile of the move from "
                f"{names[Side.SOURCE]} to {names[Side.TARGET]} ({_pfc_text(device, port)}): "
                f"{name} is half changed", port=port,
                expected=f"{names[Side.TARGET]}: {_pfc_text(plan.devices[name], port)}",
                actual=_pfc_text(device, port))
    pausing = [s for s, p in profiles.items() if _pauses(p)]
    if len(pausing) != 1:
        return  # both profiles pause, or neither: no order between tiers matters
    lossless = pausing[0]
    for link in plan.links:
        if link.parent is not None:
            continue
        ends = sorted((link.a, link.b), key=lambda e: TIER[plan.devices[e.device].role])
        low, high = ends
        if (at.get(low.device) is lossless and at.get(high.device) not in (None, lossless)
                and TIER[plan.devices[low.device].role] < TIER[plan.devices[high.device].role]):
            yield item.finding(
                low.device, f"{low} is still {names[lossless]} below {high}, already "
                f"{names[_other(lossless)]}: a path between two lossless hosts crosses a hop "
                "that does not pause", port=low.port,
                link=link.id,
                expected=f"{high.device} {names[lossless]} first"
                if lossless is Side.TARGET else f"{low.device} {names[_other(lossless)]} first",
                actual=f"{low.device} {names[lossless]}, {high.device} "
                f"{names[_other(lossless)]}")


def _pauses(profile: LosslessProfile) -> bool:
    return bool(profile.lossless)


def _other(side: Side) -> Side:
    return Side.SOURCE if side is Side.TARGET else Side.TARGET
