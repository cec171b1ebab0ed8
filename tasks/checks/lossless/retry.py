"""Link-level retry (fabric.yaml `link_classes.<name>.llr`): both ends of a link or neither.
A frame one end keeps for replay and the other never acknowledges (or the other way round)
stalls the link's replay buffer or is never resent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from flatfab.checks.base import Check, CheckContext, Finding, Scope, Severity, check
from flatfab.checks.lossless.common import device_virtual, interface, physical_links, planned
from flatfab.model.state import DeviceState, Endpoint, LinkKind


class _End(NamedTuple):
    endpoint: Endpoint
    device: DeviceState
    llr: bool
    planned: bool | None  # None: the plan has no lossless state there


def _on(flag: bool) -> str:
    return "on" if flag else "off"


@check("llr.link", "Every switch link runs link-level retry on both ends or neither",
       scope=Scope.LINK, severity=Severity.ERROR)
def link(item: Check, ctx: CheckContext) -> Iterator[Finding]:
    """Reads: link-level retry on both switch ends of every fabric link (the plan statically;
    live, what each switch states), and what the plan gives each end (its link class's `llr`).
    Expects: both ends alike, as the link class says.
    Fails when: the ends differ: named at the end that moved from the plan (statically, or
    when neither did, at the end that differs from its link class), one finding per link.
    A setting a switch does not state is not judged.
    Fix: Set `llr` on the link class, not per port; live, `flatfab rollout` puts the moved end
    back.
    """
    for fabric_link in physical_links(ctx):
        if fabric_link.kind is not LinkKind.FABRIC:
            continue
        ends: list[_End] = []
        for endpoint in (fabric_link.a, fabric_link.b):
            found = interface(ctx, endpoint)
            if found is None or found[1].qos is None or "llr" in found[1].qos.unknown:
                break
            want = planned(ctx, endpoint)
            ends.append(_End(endpoint, found[0], found[1].qos.llr,
                             want.qos.llr if want is not None and want.qos is not None
                             else None))
        if len(ends) < 2 or ends[0].llr == ends[1].llr:
            continue
        moved = [e for e in ends if e.planned is not None and e.llr != e.planned] or ends[:1]
        end = moved[0]
        other = ends[1] if end is ends[0] else ends[0]
        yield item.finding(end.device.name, f"{end.endpoint} runs link-level retry "
                           f"{_on(end.llr)}, its peer {other.endpoint} {_on(other.llr)}: "
                           f"{fabric_link.id} retries one way only", port=end.endpoint.port,
                           link=fabric_link.id,
                           expected=_on(end.planned if end.planned is not None else other.llr),
                           actual=_on(end.llr), virtual=device_virtual(end.device))
