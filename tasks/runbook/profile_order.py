"""The order a rollout may move a fabric between congestion profiles in.

Where one profile pauses (PFC) and the other does not, no device may be lossless while a
device above it is not: then every path between two lossless hosts pauses on every hop
(congestion.transition judges it live). Towards the profile that does not pause, a device
changes no earlier than every device below it (the edge first); towards the one that pauses,
no earlier than every device above it (the core first).
"""

from __future__ import annotations

from flatfab.model.state import FabricState
from flatfab.model.transition import TIER
from flatfab.runbook.schedule import Schedule

NEVER = (1 << 30, 0)  # a device no phase takes keeps the profile it has


def order_problems(plan: FabricState, result: Schedule) -> list[tuple[int, str]]:
    """(phase index, reason) for each pair of phases that changes a device too early."""
    moving, target = plan.transition, plan.lossless
    if moving is None or target is None or bool(moving.profile.lossless) == bool(
            target.lossless):
        return []
    edge_first = not target.lossless  # towards the profile that does not pause
    when: dict[str, tuple[int, int]] = {}
    for scheduled in result.phases:
        for b, batch in enumerate(scheduled.batches):
            for name in batch:
                when[name] = (scheduled.index, b)
    names = {s.index: s.phase.name for s in result.phases}
    found: dict[tuple[int, int], str] = {}
    for link in plan.links:
        if link.parent is not None:
            continue
        low, high = sorted((link.a.device, link.b.device),
                           key=lambda n: TIER[plan.devices[n].role])
        if TIER[plan.devices[low].role] == TIER[plan.devices[high].role]:
            continue
        if not (plan.devices[low].managed and plan.devices[high].managed):
            continue  # an unmanaged host's NIC is its owner's to change, in any order
        early, late = (high, low) if edge_first else (low, high)
        at_early, at_late = when.get(early, NEVER), when.get(late, NEVER)
        if at_early >= at_late or at_early == NEVER:
            continue
        key = (at_early[0], at_late[0])
        if key in found:
            continue
        later = ("no phase" if at_late == NEVER
                 else f"phase {names[at_late[0]]!r} batch {at_late[1] + 1}")
        towards = target.congestion
        rule = ("from the edge to the core: each device after every one below it"
                if edge_first else "from the core to the edge: each device after every one "
                "above it")
        found[key] = (f"{early} changes to {towards} (phase {names[at_early[0]]!r} batch "
                      f"{at_early[1] + 1}) before {late} (by {later}); a move to {towards} "
                      f"goes {rule}")
    return [(phase, reason) for (phase, _), reason in sorted(found.items())]
