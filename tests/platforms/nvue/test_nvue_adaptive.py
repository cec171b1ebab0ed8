"""Adaptive routing on nvue: fabric.yaml `load_balancing.mode: adaptive` rendered as `router
adaptive-routing state enabled` and the same on each plain routed fabric port, judged by
nvueschema on every release of the target line, pushed through the double and read back
into `DeviceState.lb.mode`, so `lb.mode`, `lb.intent` and `lb.adaptive_ports` judge an nvue
switch. Resilient hashing, flowlets and spraying stay refused at load.

NVUE facts: the NVUE reference's "Adaptive Routing" set and show commands (global and per
interface `state`; 5.14 and earlier `enable on`; not on sub-interfaces, SVIs, bonds or bond
members; Spectrum-4 from 5.6, Spectrum-2/3 a beta up to 5.5); key names, value types and the
releases that have them: nvueschema `models/v5_14.py`..`v5_18.py` (`/router/adaptive-routing`,
`/interface/{interface-id}/router/adaptive-routing`), none of which has a resilient hash key
under `/system/forwarding`. The switch configs here are derived from that documentation
(through flatfab's own render), never captured from a switch.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
import yaml

from flatfab.checks import CheckContext, Finding, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, IfKind, LbMode
from flatfab.plan.planner import plan
from flatfab.platforms.nvue import PLATFORM
from flatfab.platforms.nvue.oracle import violations
from flatfab.platforms.nvue.render import RELEASES, NvueRenderError, render, tree
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.nvue import double_for, synthesized
from tests.support.checks import live_findings
from tests.support.nvue import collected, push, switches, writable_driver
from tests.support.on_platform import fabric_on, intent_on
from tests.support.oracles import ORACLES, usable
from tests.support.paths import ROOT

LB_CHECKS = ["lb.mode", "lb.intent", "lb.adaptive_ports"]
AR = "adaptive-routing"


def _write(target: Path, family: str = "spectrum-4", mode: str = "adaptive",
           plain: bool = False) -> Path:
    """The lab on nvue balancing by `mode`; `plain`: no tenants and a global host pool, so
    the fabric ports are plain routed ports (no VRF sub-interfaces)."""
    intent_on(ROOT / "intents" / "lab", target, "nvue", family)
    fabric = yaml.safe_load((target / "fabric.yaml").read_text())
    fabric["load_balancing"]["mode"] = mode
    if mode == "flowlet":
        fabric["load_balancing"]["flowlet_us"] = 50
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    if plain:
        (target / "tenants.yaml").write_text(yaml.safe_dump({"tenants": []}))
        hosts = yaml.safe_load((target / "hosts.yaml").read_text())
        hosts["host_pool"] = "10.30.0.0/16"
        (target / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    return target


@cache
def _fabric(plain: bool = False, family: str = "spectrum-4") -> FabricState:
    with TemporaryDirectory() as tmp:
        return plan(load_intent(_write(Path(tmp), family, plain=plain),
                                known_platforms=PLATFORMS))



def _fabric_ports(device: DeviceState) -> list[str]:
    return sorted(n for n, i in device.interfaces.items()
                  if i.kind is IfKind.FABRIC and i.parent is None)


def _steered(nvue: dict[str, object]) -> list[str]:
    interfaces = nvue["interface"]
    assert isinstance(interfaces, dict)
    return sorted(n for n, e in interfaces.items() if AR in e.get("router", {}))



def _findings(plan_: FabricState, seen: DeviceState) -> list[Finding]:
    return [f for f in live_findings(plan_, seen, only=LB_CHECKS) if f.device == seen.name]




# ---- render, judged by nvueschema ---------------------------------------------------------


@pytest.mark.parametrize("plain", [False, True], ids=["lab", "plain"])
@pytest.mark.parametrize("family", ["spectrum-4", "spectrum-5"])
def test_every_switch_renders_adaptive_routing_the_oracle_accepts(plain: bool,
                                                                  family: str) -> None:
    oracle = usable(ORACLES["nvue"])  # every release of the target line, strictly
    for device in switches(_fabric(plain, family)):
        text = PLATFORM.render(device)
        assert oracle.validate(device.name, text, device) == []
        assert tree(device, PLATFORM.names)["router"][AR] == {"state": "enabled"}


def test_plain_routed_fabric_ports_are_steered() -> None:
    for device in switches(_fabric(plain=True)):
        nvue = tree(device, PLATFORM.names)
        ports = _fabric_ports(device)
        assert ports and _steered(nvue) == ports  # host ports and lo are not fabric ports
        for port in ports:
            assert nvue["interface"][port]["router"] == {AR: {"state": "enabled"}}


def test_ports_with_vrf_sub_interfaces_are_not_steered_and_are_named() -> None:
    """The lab carries its tenants on VRF sub-interfaces of every fabric port: NVUE cannot
    route those adaptively, so no port gets it; the switch still gets the global state (the
    plan's mode, read back) and `lb.adaptive_ports` names every fabric port."""
    fabric = _fabric()
    for device in switches(fabric):
        nvue = tree(device, PLATFORM.names)
        assert _steered(nvue) == []
        assert nvue["router"][AR] == {"state": "enabled"}
    found = list(run_checks(CheckContext(state=fabric, plan=fabric, stage=Stage.STATIC),
                            only=LB_CHECKS))
    named = {(f.device, f.port) for f in found if f.check == "lb.adaptive_ports"}
    expected = {(d.name, p) for d in switches(fabric) for p in _fabric_ports(d)}
    assert expected and named == expected
    assert {f.check for f in found} == {"lb.adaptive_ports"}


def test_the_plain_variant_passes_the_static_checks() -> None:
    fabric = _fabric(plain=True)
    found = list(run_checks(CheckContext(state=fabric, plan=fabric, stage=Stage.STATIC)))
    assert found == [], [(f.check, f.message) for f in found]


def test_the_hash_lab_renders_no_adaptive_routing() -> None:
    for device in switches(fabric_on("lab", "nvue", "spectrum-4")):
        assert "adaptive-routing" not in PLATFORM.render(device)


def test_the_5_14_line_spells_it_enable_on() -> None:
    device = _fabric(plain=True).devices["leaf1"]
    nvue = tree(device, PLATFORM.names, RELEASES["5.14"])
    assert nvue["router"][AR] == {"enable": "on"}
    port = _fabric_ports(device)[0]
    alone = {"router": {AR: nvue["router"][AR]},
             "interface": {port: {"type": "swp", "router": nvue["interface"][port]["router"]}}}
    for module in RELEASES["5.14"].models:
        assert violations(alone, module) == [], module


def test_the_oracle_refuses_an_adaptive_routing_word_nvue_does_not_have() -> None:
    nvue = tree(_fabric(plain=True).devices["leaf1"], PLATFORM.names)
    nvue["router"][AR] = {"enable": "on"}  # 5.14's spelling: not 5.15's
    assert any(AR in v for v in violations(nvue, "v5_15"))
    nvue["router"][AR] = {"state": "enabled"}
    nvue["interface"]["swp51"]["router"][AR]["state"] = "on"
    assert any("swp51" in v for v in violations(nvue, "v5_18"))


def test_no_release_of_the_target_line_has_a_resilient_hash_key() -> None:
    """Why `lb_resilient` stays refused: the schema drops the key on every target release."""
    alone = {"system": {"forwarding": {"resilient-hash": {"state": "enabled"}}}}
    for module in RELEASES["5.15"].models:
        assert violations(alone, module) == ["/system/forwarding/resilient-hash: dropped"]


def test_a_mode_that_reaches_the_render_unchecked_is_one_render_error(tmp_path: Path) -> None:
    # planned without the platforms' capability check: the render still refuses it
    fabric = plan(load_intent(_write(tmp_path, mode="resilient")))
    with pytest.raises(NvueRenderError, match=r"^leaf1: flatfab renders load balancing by "
                                              r"hash or adaptive routing on NVUE, not "
                                              r"resilient$"):
        render(fabric.devices["leaf1"], PLATFORM.names)


# ---- refused at load ----------------------------------------------------------------------


@pytest.mark.parametrize(("family", "why"), [
    ("generic", "family 'generic' names no ASIC; Cumulus Linux 5.6 and later route "
                "adaptively on Spectrum-4 and later only"),
    ("spectrum-1", "Cumulus Linux 5.6 and later route adaptively on Spectrum-4 and later "
                   "only, not Spectrum-1"),
    ("spectrum-2", "Cumulus Linux 5.6 and later route adaptively on Spectrum-4 and later "
                   "only, not Spectrum-2 (a beta up to 5.5)"),
    ("spectrum-3", "Cumulus Linux 5.6 and later route adaptively on Spectrum-4 and later "
                   "only, not Spectrum-3 (a beta up to 5.5)"),
])
def test_adaptive_routing_before_spectrum_4_is_refused_at_load(tmp_path: Path, family: str,
                                                              why: str) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_write(tmp_path, family), known_platforms=PLATFORMS)
    found = [p for p in caught.value.problems if "lb_adaptive" in p.reason]
    assert len(found) == 1
    [problem] = found
    assert problem.file.endswith("fabric.yaml") and problem.path == "load_balancing.mode"
    assert problem.reason == (f"platform nvue on {family} hardware cannot do this "
                              f"(lb_adaptive): {why}")


@pytest.mark.parametrize(("mode", "why"), [
    ("resilient", "NVUE 5.15-5.18 has no resilient hashing key (nvueschema: none under "
                  "system forwarding); those releases set it in traffic.conf, outside NVUE"),
    ("flowlet", "Cumulus Linux documents no flowlet (dynamic) load balancing; NVIDIA's "
                "per-packet path choice is adaptive routing (mode adaptive)"),
    ("spray", "Cumulus Linux documents no per-packet spraying over every path; NVIDIA's "
              "per-packet path choice is adaptive routing (mode adaptive)"),
])
def test_the_other_modes_are_refused_at_load_with_why(tmp_path: Path, mode: str,
                                                      why: str) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_write(tmp_path, mode=mode), known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("fabric.yaml") and problem.path == "load_balancing.mode"
    assert problem.reason == f"platform nvue cannot do this (lb_{mode}): {why}"


# ---- read back ----------------------------------------------------------------------------


@pytest.mark.parametrize("plain", [False, True], ids=["lab", "plain"])
def test_every_switch_reads_back_adaptive(plain: bool) -> None:
    fabric = _fabric(plain)
    for device in switches(fabric):
        seen = collected(device, double_for(device, outputs=synthesized(device)))
        assert seen.errors == [], seen.errors
        assert seen.lb is not None and device.lb is not None
        assert seen.lb.mode is LbMode.ADAPTIVE
        assert seen.lb.hash_fields == device.lb.hash_fields
        found = _findings(fabric, seen)
        if plain:
            assert found == [], [(f.check, f.message) for f in found]
        else:  # the lab's fabric ports carry VRF sub-interfaces: named live too
            assert {f.check for f in found} == {"lb.adaptive_ports"}


def test_a_switch_with_adaptive_routing_set_by_hand_is_named() -> None:
    lab = fabric_on("lab", "nvue", "spectrum-4")  # hashing only
    leaf1 = lab.devices["leaf1"]
    double = double_for(leaf1, outputs=synthesized(leaf1))
    double.applied.setdefault("router", {})[AR] = {"state": "enabled"}
    seen = collected(leaf1, double)
    assert seen.lb is not None and seen.lb.mode is LbMode.ADAPTIVE
    found = {(f.check, f.message) for f in _findings(lab, seen)}
    assert ("lb.intent", "leaf1 balances by adaptive, the intent by hash") in found
    assert ("lb.mode", "leaf1 balances by adaptive, the other leafs of its tier by hash") \
        in found


@pytest.mark.parametrize("word", ["disabled", "off"])
def test_adaptive_routing_switched_off_reads_hash(word: str) -> None:
    device = _fabric(plain=True).devices["spine1"]
    double = double_for(device, outputs=synthesized(device))
    double.applied["router"][AR] = {"state" if word == "disabled" else "enable": word}
    seen = collected(device, double)
    assert seen.lb is not None and seen.lb.mode is LbMode.HASH
    assert {f.check for f in _findings(_fabric(plain=True), seen)} >= {"lb.intent"}


def test_an_unreadable_state_is_not_judged_with_why() -> None:
    device = _fabric(plain=True).devices["spine1"]
    double = double_for(device, outputs=synthesized(device))
    double.applied["router"][AR] = {"state": "sometimes"}
    seen = collected(device, double)
    assert seen.lb is None
    assert "lb: router adaptive-routing state reads 'sometimes', not on or off: the load " \
           "balancing is not judged" in seen.errors


# ---- push, drift and change notes ---------------------------------------------------------


def test_a_push_turns_adaptive_routing_on_and_a_hash_plan_takes_it_away() -> None:
    hashed = fabric_on("lab", "nvue", "spectrum-4").devices["leaf1"]
    # the hash lab without tenants: the plain variant's ports, hashing
    with TemporaryDirectory() as tmp:
        plain_hash = plan(load_intent(_write(Path(tmp), mode="hash", plain=True),
                                      known_platforms=PLATFORMS)).devices["leaf1"]
    leaf1 = _fabric(plain=True).devices["leaf1"]
    double = double_for(plain_hash)
    intended = PLATFORM.render(leaf1)
    notes = PLATFORM.change_notes(*PLATFORM.drift_texts(writable_driver(double), intended))
    assert any(n.startswith("router adaptive-routing unset -> state enabled: NVUE reloads "
                            "switchd") for n in notes)
    push(double, intended)
    assert double.applied["router"][AR] == {"state": "enabled"}
    assert sorted(n for n, e in double.applied["interface"].items()
                  if AR in e.get("router", {})) == _fabric_ports(leaf1)
    running, wanted = PLATFORM.drift_texts(writable_driver(double), intended)
    assert running == wanted
    # a port switched off by hand is drift of the interface section
    double.applied["interface"]["swp51"]["router"][AR]["state"] = "disabled"
    running, wanted = PLATFORM.drift_texts(writable_driver(double), intended)
    drifted = {name for name, lines in PLATFORM.sections(running).items()
               if lines != PLATFORM.sections(wanted).get(name)}
    assert drifted == {"interface"}
    back = PLATFORM.render(hashed)
    notes = PLATFORM.change_notes(*PLATFORM.drift_texts(writable_driver(double), back))
    assert any(n.startswith("router adaptive-routing state enabled -> unset") for n in notes)
    push(double, back)
    assert AR not in double.applied["router"]
    assert all(AR not in e.get("router", {}) for e in double.applied["interface"].values())
    running, wanted = PLATFORM.drift_texts(writable_driver(double), back)
    assert running == wanted


def test_a_plan_without_load_balancing_keeps_the_switch_s_adaptive_routing() -> None:
    leaf1 = _fabric(plain=True).devices["leaf1"]
    double = double_for(leaf1)  # routing adaptively, as pushed
    bare = leaf1.model_copy(update={"lb": None})  # no `load_balancing`: the switch's own
    intended = PLATFORM.render(bare)
    assert "adaptive-routing" not in intended and "ecmp-hash" not in intended
    running, wanted = PLATFORM.drift_texts(writable_driver(double), intended)
    assert running == wanted  # the switch's own balancing is no drift
    push(double, intended)
    assert double.applied["router"][AR] == {"state": "enabled"}
    assert sorted(n for n, e in double.applied["interface"].items()
                  if AR in e.get("router", {})) == _fabric_ports(leaf1)
