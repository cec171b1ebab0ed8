"""Ways of balancing beyond the hash on EOS (fabric.yaml `load_balancing.mode`): refused at
load, because AVD's schema (the oracle every EOS render passes) has dynamic load balancing
without its inactivity time and no resilient ECMP, and because the hash fields every
`load_balancing` carries are refused too (eos/hashing.py); a switch's own DLB is left alone by
a replace and read back as `lb.mode` flowlet, so `lb.mode` and `lb.intent` judge it.

The DLB lines are tests/fixtures/eos/variants/running_dlb.cfg (derived from documentation:
AVD's own print of its DLB keys, never captured) or the edits of it each test names."""

from __future__ import annotations

from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FIVE_TUPLE, DeviceState, FabricState, LbMode, LoadBalancing, Role
from flatfab.platforms.eos import PLATFORM
from flatfab.platforms.eos.dlb import DYNAMIC, TIMER_NOTE
from flatfab.platforms.eos.sections import merge_into
from flatfab.platforms.registry import PLATFORMS
from tests.support.eos import derived_text, eos_collect, eos_double
from tests.support.on_platform import intent_on
from tests.support.oracles import EOS, usable
from tests.support.paths import ROOT

SNIPPET = ROOT / "tests" / "fixtures" / "eos" / "variants" / "running_dlb.cfg"
SIZE_LINE = f"{DYNAMIC} flow-set-size 3"
IP_LINE = ("ip load-sharing trident fields ip source-ip destination-ip source-port "
           "destination-port\n")
HASHED = LoadBalancing(hash_fields=[f for f in FIVE_TUPLE if f.value != "protocol"])
DYNAMIC_LB = HASHED.model_copy(update={"mode": LbMode.FLOWLET})
UNSUPPORTED = PLATFORM.facts.capabilities.unsupported
FIELDS_REFUSED = ("fabric.yaml", "load_balancing.hash_fields",
                  f"platform eos cannot do this (ecmp_hash): {UNSUPPORTED['ecmp_hash']}")
# the structured config whose print the fixture is
AVD_DLB: dict[str, Any] = {"ip_hardware": {"fib": {"load_balance_distribution": {
    "dynamic": {"enabled": True, "flow_set_size": 3}}}}}


def snippet() -> str:
    return derived_text(SNIPPET)


def dlb_lines() -> list[str]:
    return [line for line in snippet().splitlines() if not line.startswith("!")]


def collect(planned: DeviceState, extra: str) -> DeviceState:
    """leaf1 holding flatfab's render plus `extra`, read back through the eAPI double."""
    return eos_collect(eos_double(PLATFORM.render(planned) + extra), planned)


def live(lab: FabricState, seen: DeviceState, checks: list[str],
         plan: FabricState | None = None) -> list[tuple[str, str | None, str]]:
    """The live findings of `checks` with `seen` for leaf1 and every other switch hashing
    as HASHED (a tier whose ways are all read)."""
    devices = {n: d.model_copy(update={"lb": HASHED}) if d.role in (Role.LEAF, Role.SPINE)
               else d for n, d in lab.devices.items()}
    state = lab.model_copy(update={"devices": {**devices, seen.name: seen}})
    found = run_checks(CheckContext(state=state, plan=plan or lab, stage=Stage.LIVE),
                       only=checks)
    return [(f.check, f.device, f.message) for f in found]


# ---- refused at load --------------------------------------------------------------------------

@pytest.mark.parametrize(("balancing", "mode"), [
    ("load_balancing:\n  mode: flowlet\n  flowlet_us: 16\n", "flowlet"),
    ("load_balancing:\n  mode: flowlet\n  flowlet_us: 1000000\n", "flowlet"),
    ("load_balancing:\n  mode: resilient\n", "resilient"),
    ("load_balancing:\n  mode: adaptive\n", "adaptive"),
    ("load_balancing:\n  mode: spray\n", "spray"),
])
def test_every_mode_is_refused_at_load_with_where_and_why(tmp_path: Path, balancing: str,
                                                          mode: str) -> None:
    """No `load_balancing` loads on eos (its hash fields, defaulted or not, are refused), and
    each mode names its own reason: the day the hash fields may be left out, the mode's
    refusal still holds for flowlet (no timer key) and resilient (no key)."""
    intent_on(ROOT / "intents" / "lab", tmp_path, "eos", "trident-4")  # drops load_balancing
    fabric = tmp_path / "fabric.yaml"
    fabric.write_text(fabric.read_text() + balancing)
    with pytest.raises(InputError) as caught:
        load_intent(tmp_path, known_platforms=PLATFORMS)
    feature = f"lb_{mode}"
    assert sorted((Path(p.file).name, p.path, p.reason) for p in caught.value.problems) == sorted(
        [FIELDS_REFUSED, ("fabric.yaml", "load_balancing.mode",
                          f"platform eos cannot do this ({feature}): {UNSUPPORTED[feature]}")])


def _printed_templates() -> list[Path]:
    spec = find_spec("pyavd")
    assert spec is not None and spec.origin is not None
    templates = Path(spec.origin).parent / "_eos_cli_config_gen" / "j2templates"
    printed = sorted(templates.rglob("eos__*.py"))
    assert printed, "pyavd's compiled templates moved: look again for what AVD prints"
    return printed


def test_the_refusals_are_what_avd_lacks() -> None:
    """AVD's DLB takes no inactivity time and AVD prints no resilient ECMP: the day either
    changes, render the mode through its key and drop the refusal (each reason names the
    version it holds for)."""
    pyavd = usable(EOS).load()
    for timer in ("inactivity", "inactivity_threshold", "flowlet_timer", "aging_time"):
        sc = {"hostname": "leaf1", "ip_hardware": {"fib": {"load_balance_distribution": {
            "dynamic": {"enabled": True, timer: 16}}}}}
        violations = pyavd.validate_structured_config(sc).validation_result.violations
        assert [(v.path[-1], v.message) for v in violations] == [(timer, "Invalid key.")]
    printed = _printed_templates()
    assert [p.name for p in printed if "resilien" in p.read_text(encoding="utf-8")] == []
    [hardware] = [p for p in printed if p.name == "eos__ip_hardware.py"]
    assert "inactiv" not in hardware.read_text(encoding="utf-8")
    for feature in ("lb_flowlet", "lb_resilient"):
        assert f"pyavd {version('pyavd')}" in UNSUPPORTED[feature]


def test_the_fixture_is_avds_print_of_its_dlb_keys(planned: DeviceState) -> None:
    """What collect reads is what AVD would print: its schema takes the keys whole and
    prints exactly the fixture's lines (flow_set_size 1-7; 8 is refused by AVD)."""
    pyavd = usable(EOS).load()
    checked = pyavd.validate_structured_config({"hostname": planned.name, **AVD_DLB})
    assert checked.validation_result.violations == []
    assert checked.validation_result.deprecations == []
    printed = str(pyavd.get_device_config(checked.validated_data)).splitlines()
    assert [line for line in printed if line.startswith("ip hardware")] == dlb_lines()
    too_big = {"hostname": planned.name, "ip_hardware": {"fib": {"load_balance_distribution": {
        "dynamic": {"enabled": True, "flow_set_size": 8}}}}}
    assert pyavd.validate_structured_config(too_big).validation_result.violations


def test_without_a_mode_the_render_is_avds_and_states_no_dlb(lab: FabricState) -> None:
    """The plan carries no `lb` on eos (the load refuses it): the render states no DLB and
    is AVD's own print; the switch's own DLB is left alone."""
    for name in ("leaf1", "spine1"):
        state = lab.devices[name]
        assert state.lb is None
        text = PLATFORM.render(state)
        assert "ip hardware" not in text and "resilience" not in text
        assert usable(EOS).validate(name, text, state) == []


def test_a_replace_keeps_the_switchs_own_dlb(planned: DeviceState) -> None:
    running = snippet() + PLATFORM.render(planned)
    management = PLATFORM.facts.management_interfaces
    candidate = merge_into(running, PLATFORM.render(planned), management).splitlines()
    assert all(line in candidate for line in dlb_lines())
    sections = PLATFORM.sections(running)
    assert not any(line.startswith("ip hardware") for lines in sections.values()
                   for line in lines)


# ---- read back --------------------------------------------------------------------------------

def test_the_switchs_dlb_reads_back_as_flowlet(lab: FabricState,
                                               planned: DeviceState) -> None:
    seen = collect(planned, IP_LINE + snippet())
    assert seen.errors == []
    assert seen.lb == DYNAMIC_LB
    assert seen.lb is not None and seen.lb.flowlet_us is None  # not stated: unknown
    notes = {k: v for k, v in seen.not_modelled.items() if k.startswith("ip hardware")}
    assert notes == {
        SIZE_LINE: "the DLB flow-set table's cut into ECMP groups: flatfab has no such setting",
        TIMER_NOTE: "no line flatfab reads states DLB's inactivity time (AVD has no key for "
                    "it): `flowlet_us` is not read"}


def test_without_dlb_the_hash_reads_as_plain_hashing(planned: DeviceState) -> None:
    seen = collect(planned, IP_LINE)
    assert seen.lb == HASHED and seen.lb.mode is LbMode.HASH
    assert not [k for k in seen.not_modelled if k.startswith("ip hardware")]


def test_a_dynamic_switch_balances_otherwise_than_its_tier(lab: FabricState,
                                                           planned: DeviceState) -> None:
    seen = collect(planned, IP_LINE + snippet())
    assert live(lab, seen, ["lb.mode"]) == [
        ("lb.mode", "leaf1", "leaf1 balances by flowlet, the other leafs of its tier by hash")]
    # a plan that hashes (built in code: no eos intent loads one) names the drift too
    hashing = lab.model_copy(update={"devices": {
        **lab.devices, "leaf1": planned.model_copy(update={"lb": HASHED})}})
    assert live(lab, seen, ["lb.intent"], hashing) == [
        ("lb.intent", "leaf1", "leaf1 balances by flowlet, the intent by hash")]
    # ... and a switch that hashes as planned is none
    assert live(lab, collect(planned, IP_LINE), ["lb.mode", "lb.intent"], hashing) == []


def test_dlb_without_a_read_hash_is_named_not_read(planned: DeviceState) -> None:
    """A mode is stated only with the hash fields it refines (LoadBalancing.hash_fields):
    EOS's default hash is unread, so is the mode, with why."""
    seen = collect(planned, snippet())
    assert seen.lb is None
    assert seen.not_modelled[DYNAMIC].startswith("the switch balances dynamically (DLB), but "
                                                 "its hash is not read")


@pytest.mark.parametrize("line", [f"{DYNAMIC} inactivity-threshold 16",
                                  f"{DYNAMIC} flow-set-size 9"])
def test_a_dlb_form_flatfab_does_not_read_is_named(planned: DeviceState, line: str) -> None:
    seen = collect(planned, IP_LINE + f"{DYNAMIC}\n{line}\n")
    assert seen.lb == DYNAMIC_LB
    assert seen.not_modelled[line] == "a dynamic load balancing form flatfab does not read"


def test_a_flow_set_size_without_dlb_states_no_mode(planned: DeviceState) -> None:
    seen = collect(planned, IP_LINE + SIZE_LINE + "\n")
    assert seen.lb == HASHED
    assert SIZE_LINE in seen.not_modelled
