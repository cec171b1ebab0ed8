"""ecn.intent: a valid ECN profile that is not the intent's is named, live, per port and
queue (the disagreement two vendors' defaults make across one link)."""

from __future__ import annotations

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.intent.loader import load_intent
from flatfab.model.state import EcnProfile, FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

LAB = plan(load_intent(ROOT / "intents" / "lab", known_platforms=PLATFORMS))


def _live(state: FabricState) -> list[tuple[str | None, str | None, str, str]]:
    found = run_checks(CheckContext(state=state, plan=LAB, stage=Stage.LIVE), only=["ecn.intent"])
    return [(f.device, f.port, f.expected, f.actual) for f in found]


def _lossless_queue(state: FabricState, device: str, port: str) -> int:
    qos = state.devices[device].interfaces[port].qos
    assert qos is not None
    return next(q for q, s in sorted(qos.queues.items()) if s.ecn is not None)


def test_the_plan_read_back_as_planned_is_clean() -> None:
    assert _live(LAB.model_copy(deep=True)) == []


def test_another_valid_threshold_on_one_port_is_named() -> None:
    state = LAB.model_copy(deep=True)
    iface = state.devices["leaf1"].interfaces["swp51"]
    assert iface.qos is not None
    qos = iface.qos.model_copy(deep=True)  # the plan shares one PortQos between ports
    queue = _lossless_queue(state, "leaf1", "swp51")
    ecn = qos.queues[queue].ecn
    assert ecn is not None
    qos.queues[queue].ecn = EcnProfile(min_bytes=ecn.min_bytes * 2, max_bytes=ecn.max_bytes * 2,
                                       probability=ecn.probability)
    iface.qos = qos
    [(device, port, expected, actual)] = _live(state)
    assert (device, port) == ("leaf1", "swp51")
    assert f"min {ecn.min_bytes} B" in expected and f"min {ecn.min_bytes * 2} B" in actual


def test_a_queue_the_device_does_not_state_is_not_judged() -> None:
    state = LAB.model_copy(deep=True)
    iface = state.devices["leaf1"].interfaces["swp51"]
    assert iface.qos is not None
    queue = _lossless_queue(state, "leaf1", "swp51")
    qos = iface.qos.model_copy(deep=True)
    qos.queues[queue].ecn = EcnProfile(min_bytes=1, max_bytes=2, probability=1)
    qos.unknown = {f"queues.{queue}.ecn": "not shown by this OS"}
    iface.qos = qos
    assert _live(state) == []
