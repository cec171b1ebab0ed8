"""fabric.yaml `load_balancing.mode` on junos (tasks/platforms/junos/dlb.py): flowlet and
adaptive rendered as `enhanced-hash-key ecmp-dlb` on the QFX5240 and judged by Juniper's QFX
YANG, read back from the configuration into the same mode and inactivity time; resilient
hashing and spraying (every family) and DLB on the QFX5220/5230 refused with the reason; DLB
with resilient hashing never rendered, and read back named, not guessed.

Every configuration collect reads here is the render's own tree, or that tree changed in code
the way an operator would change the switch, written from Juniper's documentation of
`ecmp-dlb` ("Dynamic Load Balancing (DLB)") and its YANG: never captured from a switch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FIVE_TUPLE, DeviceState, FabricState, LbMode, LoadBalancing
from flatfab.plan.planner import plan
from flatfab.platforms.junos import PLATFORM, dlb
from flatfab.platforms.junos.render import JunosRenderError
from flatfab.platforms.junos.text import REPLACE
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.junos import JunosDevice, healthy_outputs, napalm_driver
from tests.support.junos import (
    changed_outputs,
    collected,
    config_tree,
    hash_key,
    hash_key_violations,
    lb_findings,
)
from tests.support.on_platform import intent_on, switches_on
from tests.support.oracles import JUNOS, usable
from tests.support.paths import ROOT

QFX5240 = "tomahawk-5"
FIVE = list(FIVE_TUPLE)
CAPS = PLATFORM.facts.capabilities
MODE = {"hash-mode": {"layer2-payload": [None]}}  # stated in every render
FLOWLET = {"mode": "flowlet", "flowlet_us": 200}
ADAPTIVE = {"mode": "adaptive"}


def _fabric(tmp_path: Path, balancing: dict[str, Any], family: str = QFX5240) -> Path:
    """intents/lab on junos (`family`) hashing on the 5-tuple, balancing as `balancing`."""
    intent_on(ROOT / "intents" / "lab", tmp_path, "junos", family)
    fabric = yaml.safe_load((tmp_path / "fabric.yaml").read_text())
    fabric["load_balancing"] = {"hash_fields": [f.value for f in FIVE], **balancing}
    (tmp_path / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    return tmp_path


def _planned(tmp_path: Path, balancing: dict[str, Any]) -> FabricState:
    return plan(load_intent(_fabric(tmp_path, balancing), known_platforms=PLATFORMS))


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> FabricState:
    """intents/lab on QFX5240s, plain hashing on the 5-tuple."""
    return plan(load_intent(_fabric(tmp_path_factory.mktemp("lab"), {})))


def _balancing(lab: FabricState, mode: LbMode, flowlet_us: int | None = None) -> DeviceState:
    """leaf1 with its plan's balancing set in code: planned without the platforms'
    capability check, as a render may be reached."""
    leaf1 = lab.devices["leaf1"].model_copy(deep=True)
    leaf1.lb = LoadBalancing(hash_fields=FIVE, mode=mode, flowlet_us=flowlet_us)
    return leaf1


# ---- render and read back -----------------------------------------------------------------


@pytest.mark.parametrize(("balancing", "statements", "want"), [
    (FLOWLET, {"flowlet": {"inactivity-interval": 200}},
     LoadBalancing(hash_fields=FIVE, mode=LbMode.FLOWLET, flowlet_us=200)),
    ({"mode": "flowlet", "flowlet_us": 1}, {"flowlet": {"inactivity-interval": 1}},
     LoadBalancing(hash_fields=FIVE, mode=LbMode.FLOWLET, flowlet_us=1)),
    ({"mode": "flowlet", "flowlet_us": 1_000_000},
     {"flowlet": {"inactivity-interval": 1_000_000}},
     LoadBalancing(hash_fields=FIVE, mode=LbMode.FLOWLET, flowlet_us=1_000_000)),
    (ADAPTIVE, {"per-packet": [None]}, LoadBalancing(hash_fields=FIVE, mode=LbMode.ADAPTIVE)),
], ids=["flowlet-200us", "flowlet-1us", "flowlet-1s", "adaptive"])
def test_a_mode_renders_as_ecmp_dlb_the_yang_accepts_and_reads_back(
        tmp_path: Path, balancing: dict[str, Any], statements: dict[str, Any],
        want: LoadBalancing) -> None:
    fabric = _planned(tmp_path, balancing)
    oracle = usable(JUNOS)
    for device in switches_on(fabric, "junos"):
        assert device.lb == want
        options = config_tree(device)["forwarding-options"]
        assert options == {"enhanced-hash-key": {"@": REPLACE, **MODE, "ecmp-dlb": statements}}
        assert oracle.validate(device.name, PLATFORM.render(device), device) == []
        assert hash_key_violations(options) == []
        seen = collected(device, healthy_outputs(fabric, device.name))
        assert seen.errors == [] and seen.lb == want, device.name
        assert list(seen.not_modelled) == ["re0:mgmt-0"]
        assert lb_findings(fabric, seen) == []


def test_the_flowlet_text_is_junos_s_curly_brace_form(tmp_path: Path) -> None:
    leaf1 = _planned(tmp_path, FLOWLET).devices["leaf1"]
    text = PLATFORM.render(leaf1)
    block = text[text.index("forwarding-options {"):]
    assert ("        ecmp-dlb {\n            flowlet {\n"
            "                inactivity-interval 200;\n") in block


def test_the_yang_check_catches_a_dlb_statement_in_the_wrong_place() -> None:
    """`inactivity-interval` belongs in `flowlet`, and the flowlet and per-packet modes are
    one YANG choice: the grafted check says so for each."""
    misplaced = hash_key_violations({"enhanced-hash-key": {
        "ecmp-dlb": {"inactivity-interval": 200}}})
    assert len(misplaced) == 1 and "inactivity-interval" in misplaced[0], misplaced
    both = hash_key_violations({"enhanced-hash-key": {
        "ecmp-dlb": {"per-packet": [None], "flowlet": {"inactivity-interval": 200}}}})
    assert both and any("case" in v for v in both), both


# ---- refused ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("balancing", "feature"), [
    ({"mode": "resilient"}, "lb_resilient"),
    ({"mode": "spray"}, "lb_spray"),
])
def test_resilient_and_spray_are_refused_at_load_with_the_reason(
        tmp_path: Path, balancing: dict[str, Any], feature: str) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path, balancing), known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("fabric.yaml") and problem.path == "load_balancing.mode"
    assert problem.reason == (f"platform junos cannot do this ({feature}): "
                              + CAPS.unsupported[feature])


def test_the_reasons_name_the_missing_statement() -> None:
    assert "ecmp-resilient-hash" in CAPS.unsupported["lb_resilient"]
    assert "24.4R1-EVO" in CAPS.unsupported["lb_resilient"]
    assert "ecmp-dlb per-packet" in CAPS.unsupported["lb_spray"]
    assert not {"lb_flowlet", "lb_adaptive"} & set(CAPS.unsupported)  # rendered


@pytest.mark.parametrize("family", ["tomahawk-3", "tomahawk-4"])
@pytest.mark.parametrize(("balancing", "feature"), [
    (FLOWLET, "lb_flowlet"), (ADAPTIVE, "lb_adaptive")])
def test_dlb_on_the_qfx5220_and_qfx5230_is_refused_at_load(
        tmp_path: Path, family: str, balancing: dict[str, Any], feature: str) -> None:
    """Juniper documents ECMP DLB on Junos OS Evolved for the QFX5240; no page found names
    the QFX5220 (Tomahawk 3) or QFX5230 (Tomahawk 4)."""
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path, balancing, family), known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    reason = CAPS.family_limits(family)[feature]
    assert problem.path == "load_balancing.mode"
    assert problem.reason == (f"platform junos on {family} hardware cannot do this "
                              f"({feature}): {reason}")
    assert ("QFX5220" if family == "tomahawk-3" else "QFX5230") in reason


@pytest.mark.parametrize(("mode", "flowlet_us", "message"), [
    (LbMode.RESILIENT, None, r"^leaf1: load balancing mode resilient: Junos OS Evolved has "
                             r"no `enhanced-hash-key ecmp-resilient-hash`"),
    (LbMode.SPRAY, None, r"^leaf1: load balancing mode spray: Junos spreads packets by link "
                         r"quality \(`ecmp-dlb per-packet`, mode adaptive\)"),
    (LbMode.FLOWLET, 0, r"^leaf1: flowlet inactivity time 0 us: `ecmp-dlb flowlet "
                        r"inactivity-interval` takes 1 to 4294967295 us$"),
    (LbMode.FLOWLET, 2**32, r"^leaf1: flowlet inactivity time 4294967296 us"),
    (LbMode.FLOWLET, None, r"^leaf1: load balancing mode flowlet without `flowlet_us`"),
], ids=["resilient", "spray", "zero-us", "beyond-uint32", "no-timer"])
def test_what_reaches_the_render_unrenderable_is_one_clear_error(
        lab: FabricState, mode: LbMode, flowlet_us: int | None, message: str) -> None:
    leaf1 = _balancing(lab, mode, flowlet_us)
    with pytest.raises(JunosRenderError, match=message):
        PLATFORM.render(leaf1)


def test_dlb_and_resilient_hashing_are_never_rendered_together(lab: FabricState) -> None:
    """Junos refuses both at commit (the DLB page): no mode renders both, and a key holding
    both is named by the render's own guard."""
    for mode, timer in ((LbMode.HASH, None), (LbMode.FLOWLET, 64), (LbMode.ADAPTIVE, None)):
        key = config_tree(_balancing(lab, mode, timer))["forwarding-options"]["enhanced-hash-key"]
        assert dlb.RESILIENT not in key, mode
    clash = dlb.conflict({"ecmp-dlb": {"per-packet": [None]}, "ecmp-resilient-hash": [None]})
    assert clash is not None and "refuses" in clash and "at commit" in clash
    assert dlb.conflict({"ecmp-dlb": {"per-packet": [None]}}) is None


# ---- what the switch has, read back and judged ------------------------------------------------


def _dlb(body: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def change(config: dict[str, Any]) -> None:
        hash_key(config)["ecmp-dlb"] = body
    return change


def test_a_switch_without_the_planned_dlb_is_drift(tmp_path: Path) -> None:
    fabric = _planned(tmp_path, FLOWLET)
    seen = collected(fabric.devices["leaf1"], changed_outputs(
        fabric, "leaf1", lambda c: hash_key(c).pop("ecmp-dlb")))
    assert seen.lb == LoadBalancing(hash_fields=FIVE)
    assert lb_findings(fabric, seen) == [("lb.intent", "leaf1", (
        "leaf1 balances by hash, the intent by flowlet (200 us)"))]


@pytest.mark.parametrize(("body", "mode", "timer", "finding"), [
    ({"flowlet": {"inactivity-interval": "512"}}, LbMode.FLOWLET, 512,
     "leaf1 balances by flowlet (512 us), the intent by flowlet (200 us)"),
    # without an interval Junos uses its default, 256 us (the YANG's `default "256"`)
    ({"flowlet": [None]}, LbMode.FLOWLET, 256,
     "leaf1 balances by flowlet (256 us), the intent by flowlet (200 us)"),
    ({"per-packet": [None]}, LbMode.ADAPTIVE, None,
     "leaf1 balances by adaptive, the intent by flowlet (200 us)"),
], ids=["another-interval", "default-interval", "per-packet"])
def test_dlb_changed_on_the_switch_is_read_and_judged(
        tmp_path: Path, body: dict[str, Any], mode: LbMode, timer: int | None,
        finding: str) -> None:
    fabric = _planned(tmp_path, FLOWLET)
    seen = collected(fabric.devices["leaf1"], changed_outputs(fabric, "leaf1", _dlb(body)))
    assert seen.errors == []
    assert seen.lb == LoadBalancing(hash_fields=FIVE, mode=mode, flowlet_us=timer)
    assert lb_findings(fabric, seen) == [("lb.intent", "leaf1", finding)]


@pytest.mark.parametrize(("change", "named"), [
    (_dlb({"assigned-flow": [None]}),
     {"forwarding-options enhanced-hash-key ecmp-dlb assigned-flow":
      "DLB with a fixed link per flow (assigned-flow): no flatfab mode: the mode is not read"}),
    (_dlb({}), {"forwarding-options enhanced-hash-key ecmp-dlb":
                "DLB without a mode (Junos has no default DLB mode): the mode is not read"}),
    (lambda c: hash_key(c).update({"ecmp-dlb": {"per-packet": [None]},
                               "ecmp-resilient-hash": [None]}),
     {"forwarding-options enhanced-hash-key ecmp-dlb":
      "with ecmp-resilient-hash, which Junos refuses together: the mode is not read"}),
], ids=["assigned-flow", "no-mode", "with-resilient"])
def test_a_way_of_balancing_flatfab_cannot_map_is_named_not_guessed(
        tmp_path: Path, change: Callable[[dict[str, Any]], None],
        named: dict[str, str]) -> None:
    fabric = _planned(tmp_path, FLOWLET)
    seen = collected(fabric.devices["leaf1"], changed_outputs(fabric, "leaf1", change))
    assert seen.errors == [] and seen.lb is None  # no mode claimed, nor a hash without it
    assert {k: v for k, v in seen.not_modelled.items() if k != "re0:mgmt-0"} == named
    # the switch whose balancing was not read is named not judged, never passed
    assert [(c, d) for c, d, _ in lb_findings(fabric, seen)] == [("lb.roce_entropy", "leaf1")]


def test_dlb_tuning_beyond_the_model_is_named_and_the_mode_still_read(tmp_path: Path) -> None:
    fabric = _planned(tmp_path, FLOWLET)
    seen = collected(fabric.devices["leaf1"], changed_outputs(fabric, "leaf1", _dlb({
        "ether-type": {"ipv4": [None]}, "sampling-rate": "1000000",
        "flowlet": {"inactivity-interval": 200, "flowset-table-size": "2048",
                    "reassignment": {"quality-delta": "2"}}})))
    assert seen.lb == LoadBalancing(hash_fields=FIVE, mode=LbMode.FLOWLET, flowlet_us=200)
    key = "forwarding-options enhanced-hash-key ecmp-dlb"
    assert sorted(seen.not_modelled) == [
        f"{key} ether-type", f"{key} flowlet flowset-table-size",
        f"{key} flowlet reassignment", f"{key} sampling-rate", "re0:mgmt-0"]
    assert lb_findings(fabric, seen) == []


def test_an_unreadable_interval_is_named_and_the_mode_judged_alone(tmp_path: Path) -> None:
    fabric = _planned(tmp_path, FLOWLET)
    seen = collected(fabric.devices["leaf1"], changed_outputs(
        fabric, "leaf1", _dlb({"flowlet": {"inactivity-interval": "<interval>"}})))
    assert seen.lb == LoadBalancing(hash_fields=FIVE, mode=LbMode.FLOWLET)
    assert "forwarding-options enhanced-hash-key ecmp-dlb flowlet inactivity-interval" in (
        seen.not_modelled)
    assert lb_findings(fabric, seen) == []  # a switch that states no interval is judged on its mode


# ---- push -------------------------------------------------------------------------------------


def test_load_replace_takes_dlb_away_when_the_plan_returns_to_hashing(
        lab: FabricState) -> None:
    """The render owns the whole hash key (`replace: enhanced-hash-key`): a plan without a
    mode removes the DLB a former plan put there."""
    device = JunosDevice(running_text="system {\n    host-name qfx;\n}\n")
    driver = PLATFORM.adapt(napalm_driver(device), read_only=False)
    driver.load_replace_candidate(config=PLATFORM.render(_balancing(lab, LbMode.FLOWLET, 200)))
    driver.commit_config()
    running = driver.get_config(retrieve="running")["running"]
    assert "inactivity-interval 200;" in running
    driver.load_replace_candidate(config=PLATFORM.render(_balancing(lab, LbMode.HASH)))
    driver.commit_config()
    running = driver.get_config(retrieve="running")["running"]
    assert "ecmp-dlb" not in running and "layer2-payload;" in running
