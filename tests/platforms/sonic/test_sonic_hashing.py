"""ECMP hashing on sonic: the plan's hash fields rendered as `SWITCH_HASH|GLOBAL` `ecmp_hash`
(flatfab.platforms.sonic.hashing), every render judged by SONiC's YANG oracle, read back
through collect as the plan; the seed refused at load, since SONiC keeps none in CONFIG_DB.

The oracle (shared/schemas/sonic-yang) loads no sonic-hash model: SWITCH_HASH passes it
unvalidated, so its field names are checked here against the `hash-field` enumeration of the
sonic-types model the oracle loads. Its DEVICE_METADATA model has no `ecmp_hash_seed`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import libyang
import pytest
import yaml

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, HashField, LoadBalancing
from flatfab.plan.planner import plan
from flatfab.platforms import configdb
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.sonic import PLATFORM, changes, hashing
from flatfab.platforms.sonic.collect import RUNNING
from flatfab.platforms.sonic.render import config_db
from tests.doubles.sonic import FIXTURES, SonicDouble, collect_cases, healthy_outputs
from tests.support.checks import live_findings
from tests.support.on_platform import fabric_on, intent_on, switches_on
from tests.support.oracles import SONIC, usable
from tests.support.paths import ROOT, SONIC_YANG
from tests.support.sonic import collected, pushed_double, sonic_double, sonic_driver

FAMILY = "tomahawk-4"
FIVE = [HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL, HashField.SRC_PORT,
        HashField.DST_PORT]
LAB_HASH = "SRC_IP,DST_IP,IP_PROTOCOL,L4_SRC_PORT,L4_DST_PORT"
CHECKS = ["lb.roce_entropy", "lb.seeds", "lb.intent"]
# other fields than the lab's 5-tuple: the SONiC list each gives
VARIANTS = {
    "all six": ({"hash_fields": [f.value for f in HashField]},
                "SRC_IP,DST_IP,IP_PROTOCOL,IPV6_FLOW_LABEL,L4_SRC_PORT,L4_DST_PORT"),
    "flow label, no dst port": ({"hash_fields": ["dst_port", "flow_label", "src_port",
                                                 "dst_ip", "src_ip"]},
                                "SRC_IP,DST_IP,IPV6_FLOW_LABEL,L4_SRC_PORT,L4_DST_PORT"),
    "addresses only": ({"hash_fields": ["dst_ip", "src_ip"]}, "SRC_IP,DST_IP"),
    "source port only": ({"hash_fields": ["src_port"]}, "L4_SRC_PORT"),
    "the default fields": ({}, LAB_HASH),
}


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return fabric_on("lab", "sonic", FAMILY)


@pytest.fixture(scope="module")
def leaf1(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


def _intent(tmp_path: Path, balancing: dict[str, Any]) -> Path:
    """intents/lab on sonic with `balancing` as its load_balancing."""
    target = tmp_path / "lab"
    target.mkdir()
    intent_on(ROOT / "intents" / "lab", target, "sonic", FAMILY)
    fabric = yaml.safe_load((target / "fabric.yaml").read_text())
    fabric["load_balancing"] = balancing
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    return target


def _printing(double: SonicDouble, table: str, rows: dict[str, dict[str, Any]]) -> None:
    """The double prints its CONFIG_DB with `table` holding `rows` instead."""
    printed: dict[str, Any] = json.loads(json.dumps(double.config_db))
    printed[table] = rows
    double.broken[RUNNING] = json.dumps(printed, indent=4)


def _live(fabric: FabricState, seen: DeviceState) -> list[tuple[str, str | None, str]]:
    return [(f.check, f.device, f.message) for f in live_findings(fabric, seen, only=CHECKS)]


def _hash_field_enumeration() -> list[str]:
    """The names of sonic-types' `hash-field` enumeration, from the folder the oracle loads
    (in a context of its own: a module added to the oracle's could move its nodes)."""
    usable(SONIC)
    context = libyang.Context(str(SONIC_YANG / "yang"))
    try:
        module = context.parse_module_str(
            'module flatfab-hash-probe { yang-version 1.1; namespace "urn:flatfab:probe"; '
            "prefix probe; import sonic-types { prefix stypes; } "
            "leaf-list field { type stypes:hash-field; } }")
        leaf = next(iter(module.children()))
        assert isinstance(leaf, libyang.SLeafList)
        return [enum.name() for enum in leaf.type().enums()]
    finally:
        context.destroy()


# ---- render ---------------------------------------------------------------------------------


def test_the_lab_renders_its_five_tuple_on_every_switch(lab: FabricState) -> None:
    switches = switches_on(lab, "sonic")
    assert len(switches) == 6
    oracle = usable(SONIC)
    for device in switches:
        assert device.lb == LoadBalancing(hash_fields=FIVE)
        db = config_db(device, PLATFORM.names)
        assert db[hashing.TABLE] == {hashing.KEY: {hashing.FIELD: LAB_HASH}}, device.name
        assert "ecmp_hash_seed" not in db["DEVICE_METADATA"]["localhost"]
        text = PLATFORM.render(device)
        assert oracle.validate(device.name, text, device) == [], device.name
    assert all(d.lb is None for d in lab.devices.values() if d.platform != "sonic")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_other_fields_render_validate_and_read_back(tmp_path: Path, name: str) -> None:
    balancing, expected = VARIANTS[name]
    fabric = plan(load_intent(_intent(tmp_path, balancing), known_platforms=PLATFORMS))
    oracle = usable(SONIC)
    observed = {}
    for device in switches_on(fabric, "sonic"):
        assert device.lb is not None and device.lb.seed is None
        db = config_db(device, PLATFORM.names)
        assert db[hashing.TABLE][hashing.KEY] == {hashing.FIELD: expected}
        assert oracle.validate(device.name, PLATFORM.render(device), device) == []
        seen = observed[device.name] = collected(device, pushed_double(fabric, device.name))
        assert seen.errors == [] and seen.not_modelled == {}, device.name
        assert seen.lb == device.lb, device.name
    # live, read back as planned: only a hash without RoCE's entropy is named
    state = fabric.model_copy(update={"devices": {**fabric.devices, **observed}})
    found = run_checks(CheckContext(state=state, plan=fabric, stage=Stage.LIVE), only=CHECKS)
    assert sorted((f.check, f.device) for f in found) == (
        [] if HashField.SRC_PORT in balancing.get("hash_fields", ["src_port"])
        else [("lb.roce_entropy", switch) for switch in sorted(observed)])


def test_a_switch_without_planned_hashing_gets_no_switch_hash(tmp_path: Path) -> None:
    folder = tmp_path / "numbered"
    folder.mkdir()
    intent_on(ROOT / "intents" / "numbered", folder, "sonic", FAMILY)
    for device in switches_on(plan(load_intent(folder, known_platforms=PLATFORMS)), "sonic"):
        assert device.lb is None
        assert hashing.TABLE not in config_db(device, PLATFORM.names)


def test_render_refuses_a_seed_sonic_cannot_hold(leaf1: DeviceState) -> None:
    """Refused at load; a plan that reaches the render with one anyway is not rendered
    without it."""
    seeded = leaf1.model_copy(update={"lb": LoadBalancing(hash_fields=FIVE, seed=11)})
    with pytest.raises(ValueError, match="seed 11: SONiC keeps no ECMP hash seed"):
        PLATFORM.render(seeded)


# ---- what SONiC's YANG oracle holds ---------------------------------------------------------


def test_every_field_name_is_in_sonic_types_hash_field_enumeration() -> None:
    enumeration = _hash_field_enumeration()
    assert set(hashing.SONIC_FIELDS) == set(HashField)  # every flatfab field has a name
    assert [n for n in hashing.SONIC_FIELDS.values() if n not in enumeration] == []
    # SONiC's own name for the IPv6 flow label, and no other field of flatfab's among them
    assert hashing.SONIC_FIELDS[HashField.FLOW_LABEL] == "IPV6_FLOW_LABEL"


def test_the_oracle_holds_no_sonic_hash_model_so_switch_hash_is_not_validated(
        leaf1: DeviceState) -> None:
    """When this fails, shared/schemas/sonic-yang has gained sonic-hash.yang: validate
    SWITCH_HASH through it (its `ecmp_hash@` spelling as the JSON list the models take) and
    drop the exception from platform.yaml's `proven.rendered`."""
    module, oracle = usable(SONIC).load()
    assert hashing.TABLE not in oracle.tables
    db = module.merge({}, {hashing.TABLE: config_db(leaf1, PLATFORM.names)[hashing.TABLE]})
    violations, notes = oracle.validate(db)
    assert violations == [] and notes == ["SWITCH_HASH: no YANG model, not validated"]
    assert "except `SWITCH_HASH`" in " ".join(PLATFORM.facts.proven.rendered.split())


def test_the_oracle_rejects_an_ecmp_hash_seed_in_device_metadata(leaf1: DeviceState) -> None:
    """Why the seed stays refused: the DEVICE_METADATA model SONiC validates CONFIG_DB with
    has no such field, so no CONFIG_DB with one passes GCU."""
    db = config_db(leaf1, PLATFORM.names)
    db["DEVICE_METADATA"]["localhost"]["ecmp_hash_seed"] = "11"
    found = usable(SONIC).config_db_violations(db)
    assert len(found) == 1 and found[0].startswith("DEVICE_METADATA|localhost: ")
    assert 'Node "ecmp_hash_seed" not found' in found[0]


# ---- refused at load ------------------------------------------------------------------------


def test_per_tier_seeds_are_refused_at_load_with_the_reason(tmp_path: Path) -> None:
    folder = _intent(tmp_path, {"hash_fields": ["src_ip", "dst_ip", "src_port"],
                                "seeds": {"leaf": 11, "spine": 23}})
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    [problem] = caught.value.problems  # the fields are accepted: only the seed is refused
    assert problem.file.endswith("fabric.yaml") and problem.path == "load_balancing.seeds"
    assert problem.reason == (
        "platform sonic cannot do this (ecmp_hash_seed): SONiC keeps no ECMP hash seed in "
        "CONFIG_DB (no such field in its YANG models): orchagent sets it at start from "
        "DEVICE_METADATA type")
    assert PLATFORM.facts.capabilities.unsupported["ecmp_hash_seed"] in problem.reason
    assert "ecmp_hash" not in PLATFORM.facts.capabilities.unsupported


# ---- push and read back ---------------------------------------------------------------------


def test_a_push_adds_switch_hash_as_a_list_and_collect_reads_the_plan(
        lab: FabricState, leaf1: DeviceState) -> None:
    double = sonic_double(leaf1)
    double.outputs = healthy_outputs(lab, "leaf1", PLATFORM.names.vrf)
    assert hashing.TABLE not in double.config_db  # a factory switch: its own hashing
    assert collected(leaf1, double).lb is None
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config()
    [patch] = [json.loads(text) for path, text in double.files.items() if "/patch-" in path]
    assert {"op": "add", "path": "/SWITCH_HASH",
            "value": {"GLOBAL": {"ecmp_hash": LAB_HASH.split(",")}}} in patch
    assert double.config_db[hashing.TABLE] == {"GLOBAL": {"ecmp_hash": LAB_HASH.split(",")}}
    seen = collected(leaf1, double)
    assert seen.errors == [] and seen.lb == leaf1.lb and seen.not_modelled == {}
    assert _live(lab, seen) == []


def test_the_conformance_double_reads_the_hash_back_as_planned() -> None:
    [case] = collect_cases()
    assert case.planned.lb == LoadBalancing(hash_fields=FIVE)
    seen = PLATFORM.collect(PLATFORM.read_only(case.driver), case.planned, [])
    assert seen.lb == case.planned.lb
    assert "derived from" in case.source and "never captured" in case.source


def test_another_order_lag_hash_and_algorithms_are_not_drift(lab: FabricState,
                                                              leaf1: DeviceState) -> None:
    """A release's SWITCH_HASH (variants/running_202311_switch_hash.json): the same ECMP
    fields in another order are the same hashing; `lag_hash` and the algorithms are the
    switch's, never changed; the ECMP algorithm is named, not modelled."""
    variant = json.loads((FIXTURES / "variants" / "running_202311_switch_hash.json")
                         .read_text(encoding="utf-8"))
    assert "derived from documentation" in variant["source"]
    double = pushed_double(lab, "leaf1")
    _printing(double, hashing.TABLE, variant["output"][hashing.TABLE])
    seen = collected(leaf1, double)
    assert seen.errors == [] and seen.lb == leaf1.lb
    assert seen.not_modelled == {"SWITCH_HASH|GLOBAL ecmp_hash_algorithm CRC": (
        "flatfab models the fields an ECMP hash reads, not its algorithm")}
    driver = sonic_driver(double, read_only=True)
    intended = PLATFORM.render(leaf1)
    running, wanted = PLATFORM.drift_texts(driver, intended)
    assert PLATFORM.sections(running) == PLATFORM.sections(wanted)
    assert PLATFORM.change_notes(running, intended) == []
    driver.load_replace_candidate(config=intended)
    assert [op for op in driver.plan_patch(driver.running_db())
            if op["path"].startswith("/SWITCH_HASH")] == []


def test_changed_fields_are_drift_the_checks_name(lab: FabricState,
                                                  leaf1: DeviceState) -> None:
    double = pushed_double(lab, "leaf1")
    _printing(double, hashing.TABLE, {"GLOBAL": {"ecmp_hash": [
        "SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_DST_PORT"], "lag_hash": ["SRC_MAC"]}})
    seen = collected(leaf1, double)
    assert seen.lb == LoadBalancing(hash_fields=FIVE[:3] + FIVE[4:])
    assert sorted(_live(lab, seen)) == [
        ("lb.intent", "leaf1", "leaf1 hashes ECMP on src_ip, dst_ip, protocol, dst_port, the "
         "intent on src_ip, dst_ip, protocol, src_port, dst_port"),
        ("lb.roce_entropy", "leaf1", "leaf1 hashes ECMP on src_ip, dst_ip, protocol, "
         "dst_port, not the UDP source port: every queue pair between two hosts takes one "
         "path")]
    # a rollout puts the fields back and leaves the LAG hash alone
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    assert [op for op in driver.plan_patch(driver.running_db())
            if op["path"].startswith("/SWITCH_HASH")] == [
        {"op": "replace", "path": "/SWITCH_HASH/GLOBAL/ecmp_hash",
         "value": LAB_HASH.split(",")}]


def test_fields_flatfab_has_no_name_for_are_named_not_dropped(lab: FabricState,
                                                              leaf1: DeviceState) -> None:
    double = pushed_double(lab, "leaf1")
    _printing(double, hashing.TABLE, {"GLOBAL": {
        "ecmp_hash": ["IN_PORT", *LAB_HASH.split(","), "INNER_SRC_IP"],
        "ecmp_hash_ipv4": ["SRC_IP", "DST_IP"]}})
    seen = collected(leaf1, double)
    assert seen.lb == leaf1.lb
    assert seen.not_modelled == {
        "SWITCH_HASH|GLOBAL ecmp_hash IN_PORT": "flatfab's hash fields have no such field",
        "SWITCH_HASH|GLOBAL ecmp_hash INNER_SRC_IP": "flatfab's hash fields have no such field",
        "SWITCH_HASH|GLOBAL ecmp_hash_ipv4": (
            "a per-packet-type ECMP hash: those packets hash on it instead of ecmp_hash; "
            "flatfab models one hash per switch")}


def test_a_switch_stating_no_hash_is_not_judged(lab: FabricState, leaf1: DeviceState) -> None:
    """No `ecmp_hash` in CONFIG_DB: the switch hashes as its SAI does by default, which it
    does not state. Unknown, never guessed: the checks name it not judged."""
    double = pushed_double(lab, "leaf1")
    _printing(double, hashing.TABLE, {"GLOBAL": {"lag_hash": ["SRC_IP", "DST_IP"]}})
    seen = collected(leaf1, double)
    assert seen.errors == [] and seen.lb is None
    [(check, device, message)] = _live(lab, seen)
    assert (check, device) == ("lb.roce_entropy", "leaf1")
    assert "leaf1's ECMP hash is not judged" in message


def test_a_rollout_without_planned_hashing_leaves_the_switch_s_own(lab: FabricState,
                                                                    leaf1: DeviceState) -> None:
    """`lb` None: flatfab leaves SWITCH_HASH as it is (orchagent refuses its removal too)."""
    unplanned = leaf1.model_copy(update={"lb": None})
    double = pushed_double(lab, "leaf1")
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(unplanned))
    assert [op for op in driver.plan_patch(driver.running_db())
            if op["path"].startswith("/SWITCH_HASH")] == []
    running, wanted = PLATFORM.drift_texts(driver, PLATFORM.render(unplanned))
    assert hashing.TABLE not in running and hashing.TABLE not in wanted
    # a projection without an intended config to go by shows the field flatfab renders
    printed = configdb.normalize(double.config_db)[0]
    assert changes.project(printed)[hashing.TABLE] == {"GLOBAL": {hashing.FIELD: LAB_HASH}}
