"""What a congestion profile other than `lossless` promises (qos.yaml `profile`): a `lossy`
fabric pauses nothing, on any switch port or host NIC."""

from __future__ import annotations

from collections.abc import Iterator

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, check
from flatfab.checks.lossless.common import (
    Issue,
    PerObject,
    fmt_set,
    grouped_findings,
    lossless_host,
    nic_findings,
    nics,
    profile,
)


def _paused(pfc: list[int]) -> list[Issue]:
    if not pfc:
        return []
    return [Issue(f"has PFC on {fmt_set(pfc)} in a lossy fabric", "no PFC",
                  f"PFC on {fmt_set(pfc)}")]


@check("pfc.lossy_fabric", "Every switch port and host NIC of a lossy fabric has PFC off",
       scope=Scope.DEVICE, severity=Severity.ERROR, hosts=lossless_host)
def lossy_fabric(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: the PFC priorities of every physical switch port and host NIC, and the plan's
    congestion profile (qos.yaml `profile`).
    Expects: in a `lossy` fabric, PFC off everywhere: RoCE drops are recovered by the NICs, and
    congestion is signalled by ECN alone.
    Fails when: a port or NIC has PFC on any priority, one finding per port or NIC. Nothing is
    judged in the other profiles, nor PFC a device does not state (`state.unknown`).
    Fix: Statically, an override's `pfc` (or `hosts.pfc`) turns PFC on in a lossy fabric: remove
    it. Live, the port kept (or regained) PFC: `flatfab rollout` takes it off. One port that still
    pauses stalls every queue behind it with no headroom sized for it and no watchdog.
    """
    lossless = profile(ctx)
    if lossless is None or not lossless.lossy:
        return
    cached = PerObject(_paused)
    yield from grouped_findings(item, ctx, lambda g: [] if "pfc" in g.qos.unknown
                                else cached(g.qos.pfc))
    for nic in nics(ctx):
        if "pfc" not in nic.nic.unknown:
            yield from nic_findings(item, nic, _paused(nic.nic.pfc))
