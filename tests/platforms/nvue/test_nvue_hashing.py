"""ECMP hashing on nvue: `load_balancing` rendered as `system forwarding ecmp-hash` and
`hash-seed`, judged by nvueschema on every release of the target line, pushed through the
double and read back into `lb` as planned; the live checks judge what was read.

NVUE facts: NVIDIA's NVUE command reference, "System Forwarding" (the ecmp-hash fields and
hash-seed 0-4294967295, 5.2+; `on`/`off` up to 5.14, `enabled`/`disabled` from 5.15) and
the Cumulus Linux user guide, "Equal Cost Multipath Load Sharing" (default fields; a new
seed restarts switchd). Key names and enums: nvueschema `models/v5_*.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from flatfab.checks import Finding
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, HashField, LoadBalancing, Role
from flatfab.plan.planner import plan
from flatfab.platforms.nvue import PLATFORM
from flatfab.platforms.nvue.collect import FORWARDING, hash_switches
from flatfab.platforms.nvue.oracle import violations
from flatfab.platforms.nvue.render import (
    HASH_KEYS,
    OTHER_HASH_KEYS,
    RELEASES,
    NvueRenderError,
    render,
    tree,
)
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.nvue import (
    FIXTURES,
    NvueDouble,
    collect_cases,
    double_for,
    synthesized,
)
from tests.support.checks import live_findings
from tests.support.nvue import collected, switches, writable_driver
from tests.support.on_platform import fabric_on, intent_on
from tests.support.oracles import ORACLES, usable
from tests.support.paths import ROOT

FIVE = [HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL, HashField.SRC_PORT,
        HashField.DST_PORT]
ALL_KEYS = sorted([*HASH_KEYS.values(), *OTHER_HASH_KEYS])
CHECKS = ["lb.roce_entropy", "lb.intent", "lb.seeds", "device.not_modelled"]


def _lab() -> FabricState:
    return fabric_on("lab", "nvue", "spectrum-4")


def _variant(tmp_path: Path, balancing: dict[str, Any]) -> FabricState:
    """The lab on nvue with its `load_balancing` replaced (a copy of the intent)."""
    intent_on(ROOT / "intents" / "lab", tmp_path, "nvue", "spectrum-4")
    fabric = yaml.safe_load((tmp_path / "fabric.yaml").read_text())
    fabric["load_balancing"] = balancing
    (tmp_path / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    return plan(load_intent(tmp_path, known_platforms=PLATFORMS))



def _expected(lb: LoadBalancing, on: str = "enabled", off: str = "disabled") -> dict[str, Any]:
    fields = {key: on if field in lb.hash_fields else off for field, key in HASH_KEYS.items()}
    fields.update(dict.fromkeys(OTHER_HASH_KEYS, off))
    out: dict[str, Any] = {"ecmp-hash": fields}
    if lb.seed is not None:
        out["hash-seed"] = lb.seed
    return out


def _accepted(state: FabricState) -> None:
    oracle = usable(ORACLES["nvue"])
    for device in switches(state):
        found = oracle.validate(device.name, PLATFORM.render(device), device)
        assert found == [], "\n".join(found)



def _pushed(device: DeviceState) -> NvueDouble:
    """The device's plan pushed (the double's applied tree), answering every `nv show` the
    collect asks from the plan (leaf1 from its recorded outputs)."""
    return double_for(device, outputs=None if device.name == "leaf1" else synthesized(device))


def _findings(plan_: FabricState, seen: DeviceState) -> list[Finding]:
    return [f for f in live_findings(plan_, seen, only=CHECKS) if f.device == seen.name]


# ---- render, judged by nvueschema ---------------------------------------------------------


def test_the_lab_hashes_on_the_5_tuple_and_every_other_field_is_off() -> None:
    lab = _lab()
    _accepted(lab)
    for device in switches(lab):
        assert device.lb == LoadBalancing(hash_fields=FIVE)
        forwarding = tree(device, PLATFORM.names)["system"]["forwarding"]
        assert forwarding == _expected(device.lb)  # no hash-seed: switchd's own
        assert sorted(forwarding["ecmp-hash"]) == ALL_KEYS
        # NVUE's default hashes the flow label too: written out, it is off
        assert forwarding["ecmp-hash"]["ipv6-label"] == "disabled"
    text = PLATFORM.render(lab.devices["leaf1"])
    assert "      forwarding:\n        ecmp-hash:\n          destination-ip: enabled\n" in text
    assert PLATFORM.sections(text)["system"][:3] == ["- set:", "    system:",
                                                      "      hostname: leaf1"]


@pytest.mark.parametrize("balancing", [
    {"hash_fields": ["src_ip", "dst_ip", "flow_label", "src_port"],
     "seeds": {"leaf": 11, "spine": 23}},
    {"hash_fields": ["src_ip", "dst_ip", "protocol", "flow_label", "src_port", "dst_port"],
     "seeds": {"leaf": 1, "spine": 2**32 - 1}},  # the bounds of NVUE's hash-seed
    {"hash_fields": ["dst_ip", "src_port"], "seeds": {"spine": 7}},  # leaves: their own
], ids=["no-dst-port", "all-fields-seed-bounds", "two-fields-spine-seed"])
def test_other_fields_and_tier_seeds_render_and_pass_the_oracle(
        tmp_path: Path, balancing: dict[str, Any]) -> None:
    state = _variant(tmp_path, balancing)
    _accepted(state)
    wanted = [HashField(f) for f in balancing["hash_fields"]]
    for device in switches(state):
        seed = balancing["seeds"].get(device.role.value)
        assert device.lb == LoadBalancing(hash_fields=wanted, seed=seed)
        nvue = tree(device, PLATFORM.names)
        assert nvue["system"]["forwarding"] == _expected(device.lb)
        old = RELEASES["5.14"]  # the same keys in 5.2-5.14's words
        older = tree(device, PLATFORM.names, old)
        assert older["system"]["forwarding"] == _expected(device.lb, "on", "off")
        for module in (old.models[0], old.models[-1]):
            assert violations(older, module) == [], module


def test_the_oracle_refuses_a_hash_key_or_word_nvue_does_not_have() -> None:
    nvue = tree(_lab().devices["leaf1"], PLATFORM.names)
    nvue["system"]["forwarding"]["ecmp-hash"]["ipv6-flow-label"] = "enabled"
    assert "/system/forwarding/ecmp-hash/ipv6-flow-label: dropped" in violations(nvue, "v5_15")
    nvue = tree(_lab().devices["leaf1"], PLATFORM.names)
    nvue["system"]["forwarding"]["ecmp-hash"]["source-port"] = "on"  # <= 5.14's word
    assert any("source-port" in v for v in violations(nvue, "v5_15"))
    nvue["system"]["forwarding"]["ecmp-hash"]["source-port"] = "enabled"
    nvue["system"]["forwarding"]["hash-seed"] = 2**32
    assert any("hash-seed" in v for v in violations(nvue, "v5_18"))


def test_a_switch_without_lb_renders_no_forwarding() -> None:
    device = _lab().devices["leaf1"].model_copy(update={"lb": None})
    assert "forwarding" not in tree(device, PLATFORM.names)["system"]


def test_per_vrf_hashing_is_one_render_error() -> None:
    device = _lab().devices["leaf1"].model_copy(deep=True)
    assert device.lb is not None
    device.lb.vrfs = {"blue": LoadBalancing(hash_fields=[HashField.SRC_IP])}
    with pytest.raises(NvueRenderError, match=r"^leaf1: NVUE hashes once per switch; the "
                                              r"plan hashes VRF\(s\) blue otherwise$"):
        render(device, PLATFORM.names)


def test_nothing_of_load_balancing_is_refused_at_load_on_nvue(tmp_path: Path) -> None:
    """Each of flatfab's fields has an NVUE key and every seed the intent allows is one NVUE
    takes (1..2^32-1 within 0..4294967295): the data file refuses neither feature."""
    assert set(HASH_KEYS) == set(HashField)
    unsupported = PLATFORM.facts.capabilities.unsupported
    assert "ecmp_hash" not in unsupported and "ecmp_hash_seed" not in unsupported
    state = _variant(tmp_path, {"hash_fields": [f.value for f in HashField],
                                "seeds": {"leaf": 1, "spine": 2**32 - 1}})
    assert {d.lb.seed for d in switches(state) if d.lb} == {1, 2**32 - 1}


# ---- read back ------------------------------------------------------------------------------


def test_the_conformance_case_reads_its_hashing_back_as_planned() -> None:
    (case,) = collect_cases()
    seen = PLATFORM.collect(PLATFORM.read_only(case.driver), case.planned, [])
    assert seen.errors == [] and seen.not_modelled == {}
    assert seen.lb == case.planned.lb == LoadBalancing(hash_fields=FIVE)
    assert FORWARDING not in case.commands()  # the applied config states every field


@pytest.mark.parametrize("balancing", [
    {"hash_fields": ["src_ip", "dst_ip", "protocol", "src_port", "dst_port"]},
    {"hash_fields": ["src_ip", "dst_ip", "flow_label", "src_port"],
     "seeds": {"leaf": 11, "spine": 23}},
], ids=["5-tuple", "flow-label-seeds"])
def test_every_switch_reads_back_as_planned_and_the_checks_pass(
        tmp_path: Path, balancing: dict[str, Any]) -> None:
    state = _variant(tmp_path, balancing)
    for device in switches(state):
        double = _pushed(device)
        seen = collected(device, double)
        assert seen.errors == [], seen.errors
        assert seen.lb == device.lb, device.name
        assert FORWARDING not in double.commands
        assert _findings(state, seen) == []


def test_a_switch_that_drifted_is_named_by_the_live_checks() -> None:
    lab = _lab()
    leaf1 = lab.devices["leaf1"]
    double = double_for(leaf1)
    forwarding = double.applied["system"]["forwarding"]
    forwarding["ecmp-hash"]["source-port"] = "disabled"
    forwarding["hash-seed"] = 50
    seen = collected(leaf1, double)
    assert seen.lb == LoadBalancing(hash_fields=FIVE[:3] + FIVE[4:], seed=50)
    messages = {(f.check, f.message) for f in _findings(lab, seen)}
    assert ("lb.roce_entropy", "leaf1 hashes ECMP on src_ip, dst_ip, protocol, dst_port, not "
            "the UDP source port: every queue pair between two hosts takes one path"
            ) in messages
    assert ("lb.intent", "leaf1 hashes ECMP on src_ip, dst_ip, protocol, dst_port, the "
            "intent on src_ip, dst_ip, protocol, src_port, dst_port") in messages
    assert ("lb.intent", "leaf1 hashes with seed 50, the intent sets none (random)"
            ) in messages


def test_a_field_beyond_flatfab_s_model_is_named_not_dropped() -> None:
    lab = _lab()
    leaf1 = lab.devices["leaf1"]
    double = double_for(leaf1)
    double.applied["system"]["forwarding"]["ecmp-hash"]["ingress-interface"] = "enabled"
    seen = collected(leaf1, double)
    assert seen.lb == leaf1.lb and seen.errors == []
    key = "system forwarding ecmp-hash ingress-interface"
    assert key in seen.not_modelled
    assert [f.check for f in _findings(lab, seen)] == ["device.not_modelled"]


@pytest.mark.parametrize("variant", ["hash_defaults", "hash_defaults_5.14"])
def test_fields_left_to_nvue_s_defaults_are_read_from_nv_show(variant: str) -> None:
    """A switch whose config sets no `system forwarding` (an operator's `nv unset`): NVUE's
    defaults, stated by `nv show system forwarding` (in either release's words), hash on
    the flow label too; no seed configured is switchd's own."""
    lab = _lab()
    leaf1 = lab.devices["leaf1"]
    double = double_for(leaf1)
    del double.applied["system"]["forwarding"]
    path = FIXTURES / "variants" / variant / "nv_show_system_forwarding.json"
    double.outputs[FORWARDING] = path.read_text(encoding="utf-8")
    seen = collected(leaf1, double)
    assert seen.errors == []
    assert seen.lb == LoadBalancing(hash_fields=list(HashField))
    assert FORWARDING in double.commands
    assert [(f.check, f.actual) for f in _findings(lab, seen)] == [
        ("lb.intent", "src_ip, dst_ip, protocol, flow_label, src_port, dst_port")]


def test_the_double_answers_nv_show_from_its_applied_tree() -> None:
    """Without a recorded output the double states the applied fields over the defaults
    (a switch where flatfab renders no hashing: the mixed fabric's nvue leaves)."""
    leaf1 = _lab().devices["leaf1"]
    double = double_for(leaf1)  # leaf1's recorded outputs hold no `nv show system forwarding`
    assert FORWARDING not in double.outputs
    double.applied["system"]["forwarding"]["ecmp-hash"].pop("source-port")
    seen = collected(leaf1, double)
    assert seen.lb == LoadBalancing(hash_fields=FIVE)  # source-port: NVUE's default, on
    assert FORWARDING in double.commands


def test_an_unreadable_hash_is_not_judged_with_why() -> None:
    lab = _lab()
    leaf1 = lab.devices["leaf1"]
    double = double_for(leaf1)
    del double.applied["system"]["forwarding"]["ecmp-hash"]["ipv6-label"]
    double.outputs[FORWARDING] = "Error: nvued is busy\n"
    seen = collected(leaf1, double)
    assert seen.lb is None
    assert [e for e in seen.errors if e.startswith("lb: ")] == [
        f"lb: {FORWARDING}: no JSON in the output ('Error: nvued is busy'): the ECMP hash is "
        "not judged"]
    assert [(f.check, f.severity.value) for f in _findings(lab, seen)] == [
        ("lb.roce_entropy", "not-judged")]
    double.outputs[FORWARDING] = json.dumps({"ecmp-hash": {"source-ip": "enabled"}})
    seen = collected(leaf1, double)
    assert seen.lb is None and any("states ecmp-hash" in e and "ipv6-label" in e
                                   for e in seen.errors)
    double = double_for(leaf1)
    double.applied["system"]["forwarding"]["hash-seed"] = "fifty"
    seen = collected(leaf1, double)
    assert seen.lb is None and any("hash-seed reads 'fifty'" in e for e in seen.errors)


@pytest.mark.parametrize(("words", "on"), [
    ({"source-port": "enabled", "source-ip": "disabled"}, {"source-port": True,
                                                           "source-ip": False}),
    ({"source-port": "on", "source-ip": "off"}, {"source-port": True, "source-ip": False}),
    ({"source-port": "maybe", "source-ip": {}}, {}),
    ("enabled", {}),
])
def test_hash_switches_read_either_release_s_words(words: Any, on: dict[str, bool]) -> None:
    assert hash_switches(words) == on


# ---- push, drift and change notes -----------------------------------------------------------



def test_a_push_replaces_the_hashing_an_operator_set(tmp_path: Path) -> None:
    state = _variant(tmp_path, {"hash_fields": ["src_ip", "dst_ip", "src_port"],
                                "seeds": {"spine": 23}})
    leaf1 = state.devices["leaf1"]  # leaves: no seed (switchd's own)
    double = double_for(leaf1, push=False)
    double.applied["system"]["forwarding"] = {
        "ecmp-hash": {"ingress-interface": "enabled"}, "hash-seed": 50,
        "lag-hash": {"vlan": "disabled"}}  # not flatfab's: kept
    driver = writable_driver(double)
    intended = PLATFORM.render(leaf1)
    notes = PLATFORM.change_notes(*PLATFORM.drift_texts(driver, intended))
    assert notes[0] == ("system forwarding hash-seed 50 -> switchd's own: NVUE restarts "
                        "switchd, every port resets and traffic stops meanwhile")
    driver.load_replace_candidate(config=intended)
    driver.commit_config()
    forwarding = double.applied["system"]["forwarding"]
    assert {k: v for k, v in forwarding.items() if k != "lag-hash"} == _expected(
        LoadBalancing(hash_fields=[HashField.SRC_IP, HashField.DST_IP, HashField.SRC_PORT]))
    assert forwarding["lag-hash"] == {"vlan": "disabled"}
    running, wanted = PLATFORM.drift_texts(writable_driver(double), intended)
    assert running == wanted
    assert PLATFORM.change_notes(running, wanted) == []
    spine1 = state.devices["spine1"]
    double = double_for(spine1, push=False)
    notes = PLATFORM.change_notes(*PLATFORM.drift_texts(writable_driver(double),
                                                         PLATFORM.render(spine1)))
    assert notes[0].startswith("system forwarding hash-seed switchd's own -> 23: NVUE "
                               "restarts switchd")


def test_a_plan_without_lb_leaves_the_switch_s_hashing_alone() -> None:
    leaf1 = _lab().devices["leaf1"].model_copy(update={"lb": None})
    double = double_for(leaf1, push=False)
    operators = {"ecmp-hash": {"source-port": "disabled"}, "hash-seed": 50}
    double.applied["system"]["forwarding"] = json.loads(json.dumps(operators))
    driver = writable_driver(double)
    intended = PLATFORM.render(leaf1)
    driver.load_replace_candidate(config=intended)
    assert "forwarding" not in driver.compare_config()
    driver.commit_config()
    assert double.applied["system"]["forwarding"] == operators
    running, wanted = PLATFORM.drift_texts(writable_driver(double), intended)
    assert running == wanted  # not flatfab's to compare
    assert PLATFORM.change_notes(running, wanted) == []
    # what the switch hashes on is still read (its own: no `lb` in the plan to judge it by)
    seen = collected(leaf1, double)
    assert seen.lb == LoadBalancing(  # the fields it leaves to NVUE: on by default
        hash_fields=[HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL,
                     HashField.FLOW_LABEL, HashField.DST_PORT], seed=50)
    assert FORWARDING in double.commands


def test_hashing_drift_is_in_the_system_section() -> None:
    leaf1 = _lab().devices["leaf1"]
    double = double_for(leaf1)
    double.applied["system"]["forwarding"]["ecmp-hash"]["ipv6-label"] = "enabled"
    running, wanted = PLATFORM.drift_texts(writable_driver(double), PLATFORM.render(leaf1))
    drifted = {name for name, lines in PLATFORM.sections(running).items()
               if lines != PLATFORM.sections(wanted).get(name)}
    assert drifted == {"system"}


def test_only_the_tier_with_a_seed_sets_one(tmp_path: Path) -> None:
    state = _variant(tmp_path, {"seeds": {"spine": 23}})
    seeds = {d.role: tree(d, PLATFORM.names)["system"]["forwarding"].get("hash-seed")
             for d in switches(state)}
    assert seeds == {Role.SPINE: 23, Role.LEAF: None}
