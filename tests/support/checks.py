"""The lab's plan, and the check catalog run on it: as a healthy fabric would report it
(live) or with one fault written into a copy (static)."""

from __future__ import annotations

from collections.abc import Callable

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.intent.loader import load_intent
from flatfab.model.state import (
    DEFAULT_VRF,
    DeviceState,
    FabricState,
    IfKind,
    NextHop,
    Role,
    Route,
    Source,
)
from flatfab.plan.planner import plan
from flatfab.plan.probes import plan_probes
from tests.support.paths import ROOT

PLAN = plan(load_intent(ROOT / "intents" / "lab"))
PROBES = plan_probes(PLAN)


def healthy(planned: FabricState = PLAN) -> FabricState:
    """What a correct fabric would report: the plan, with sessions up, ECMP and pings ok."""
    state = planned.model_copy(deep=True)
    state.source = Source.OBSERVED
    for device in state.devices.values():
        for instance in device.bgp.values():
            for peer in instance.peers.values():
                peer.state = "Established"
        device.probes = [p.model_copy(update={"replied": p.expect_reply})
                         for p in PROBES.get(device.name, [])]
    for leaf in state.of_role(Role.LEAF):
        leaf.routes = {}
        for vrf in (DEFAULT_VRF, *leaf.vrfs):
            uplinks = [i.name for i in leaf.interfaces.values()
                       if i.kind is IfKind.FABRIC and i.vrf == vrf]
            table = leaf.routes.setdefault(vrf, {})
            for other in state.of_role(Role.LEAF):
                if other.name != leaf.name and vrf in other.bgp:
                    for prefix in other.bgp[vrf].networks:
                        table[prefix] = Route(protocol="bgp", nexthops=[
                            NextHop(interface=p) for p in uplinks])
    return state


def static_findings(mutate: Callable[[FabricState], None], check: str) -> list[tuple[str, str]]:
    """(device, message) of `check`'s static findings on the lab's plan as `mutate` left it."""
    state = PLAN.model_copy(deep=True)
    mutate(state)
    found = run_checks(CheckContext(state=state, plan=PLAN, stage=Stage.STATIC))
    return sorted({(f.device or "", f.message) for f in found if f.check == check})


def live_findings(planned: FabricState, *seen: DeviceState,
                  only: list[str] | None = None) -> list[Finding]:
    """The live findings on `planned` read as planned except for the devices `seen`."""
    state = planned.model_copy(update={"devices": {**planned.devices,
                                                   **{d.name: d for d in seen}}})
    return run_checks(CheckContext(state=state, plan=planned, stage=Stage.LIVE), only=only)
