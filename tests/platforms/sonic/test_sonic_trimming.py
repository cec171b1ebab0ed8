"""Packet trimming on sonic (qos.yaml `profile: lossy-trimming`): rendered as SONiC's
packet-trimming design gives it (configdb; sonic-net/SONiC doc/packet_trimming/
packet-trimming-design.md), pushed through GCU with the refusals orchagent forces
(flatfab.platforms.sonic.trimming), read back through collect as the plan.

What the SONiC YANG oracle (shared/schemas/sonic-yang) can judge of it, and what not:
- `SWITCH_TRIMMING`: no model (the oracle loads no sonic-trimming.yang). An unmodelled table
  passes it unvalidated, with a note, whatever it holds: the test below says so, and the row
  is judged here against the design's schema instead (its ABNF, 2.6.1.1, and the model it
  adds, 2.9: field names, digits, ranges, "from-tc", "dynamic").
- `TC_TO_DSCP_MAP`, `PORT_QOS_MAP` `tc_to_dscp_map` and `BUFFER_PROFILE`
  `packet_discard_action` are in the models the oracle loads (sonic-tc-dscp-map,
  sonic-port-qos-map, sonic-buffer-profile): the oracle judges them, and an unknown field of a
  modelled table is a violation, not a note. So only SWITCH_TRIMMING (and SWITCH_HASH,
  tests/platforms/sonic/test_sonic_hashing.py) is left out of what the oracle validates.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
import yaml

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import PROFILE_EGRESS_TRIM, TRIM, DeviceState, FabricState
from flatfab.plan.planner import plan
from flatfab.platforms import configdb
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.sonic import PLATFORM, changes, hashing, trimming
from flatfab.platforms.sonic.collect import RUNNING
from flatfab.platforms.sonic.driver import CommitRefusedError, SonicError
from flatfab.platforms.sonic.render import OWNED_TABLES, config_db
from tests.doubles.sonic import FIXTURES, SonicDouble, healthy_outputs
from tests.support.checks import live_findings
from tests.support.on_platform import intent_on, switches_on
from tests.support.oracles import SONIC, usable
from tests.support.paths import ROOT
from tests.support.sonic import collected, pushed_double, sonic_double, sonic_driver

FAMILY = "tomahawk-4"
TRIMMING = "lossy-trimming"
CHECKS = ["trim.dscp", "trim.queue", "trim.intent"]
# the lab's trimming: qos.yaml `trimming` defaults (size 256, DSCP 44 to hosts and 45 to the
# fabric, TC and queue 7), as SONiC spells them
PLANNED_ROW = {"size": "256", "dscp_value": "from-tc", "tc_value": "7", "queue_index": "7"}
UNMODELLED = (trimming.TABLE, hashing.TABLE)  # tables the oracle has no model for
UINT8, UINT32 = 0xFF, 0xFFFF_FFFF


@cache
def _fabric(profile: str) -> FabricState:
    """intents/lab on sonic in a lossy congestion profile."""
    with TemporaryDirectory() as tmp:
        target = Path(tmp)
        intent_on(ROOT / "intents" / "lab", target, "sonic", FAMILY)
        qos = yaml.safe_load((target / "qos.yaml").read_text())
        qos["profile"] = profile
        qos["pfc"].pop("priorities")  # the lab spells out lossless's [3]
        if profile == TRIMMING:
            qos["ets"].pop("strict")  # the profile's own: CNP's and the trim TC
        (target / "qos.yaml").write_text(yaml.safe_dump(qos))
        return plan(load_intent(target, known_platforms=PLATFORMS))


@pytest.fixture(scope="module")
def fabric() -> FabricState:
    return _fabric(TRIMMING)


@pytest.fixture(scope="module")
def leaf1(fabric: FabricState) -> DeviceState:
    return fabric.devices["leaf1"]


def _printing(double: SonicDouble, tables: dict[str, Any]) -> None:
    """The double prints its CONFIG_DB with `tables` in place of its own."""
    printed: dict[str, Any] = json.loads(json.dumps(double.config_db))
    printed.update(tables)
    double.broken[RUNNING] = json.dumps(printed, indent=4)


def _patch(double: SonicDouble) -> list[dict[str, Any]]:
    [patch] = [json.loads(text) for path, text in double.files.items() if "/patch-" in path]
    assert isinstance(patch, list)
    return patch


def _about(ops: list[dict[str, Any]], *tables: str) -> list[dict[str, Any]]:
    return [op for op in ops if op["path"].split("/")[1] in tables]


def _live(fabric: FabricState, *seen: DeviceState) -> list[tuple[str, str | None, str]]:
    return [(f.check, f.device, f.message) for f in live_findings(fabric, *seen, only=CHECKS)]


def design_violations(row: dict[str, str]) -> list[str]:
    """What SONiC's packet-trimming design finds wrong with a `SWITCH_TRIMMING|GLOBAL` row:
    its ABNF (2.6.1.1: size 1*10DIGIT, dscp_value 1*2DIGIT or "from-tc", tc_value 1*3DIGIT,
    queue_index 1*3DIGIT or "dynamic") within the integer types of the model it adds (2.9:
    size uint32, dscp_value 0..63, tc_value and queue_index uint8), and "from-tc" taking
    the DSCP through tc_value. The oracle's stand-in: its models have no sonic-trimming."""
    found = [f"{name}: not a field of SWITCH_TRIMMING" for name in sorted(row)
             if name not in trimming.FIELDS]
    limits = {"size": (10, UINT32), "dscp_value": (2, 63), "tc_value": (3, UINT8),
              "queue_index": (3, UINT8)}
    words = {"dscp_value": "from-tc", "queue_index": "dynamic"}
    for name, (digits, top) in limits.items():
        value = row.get(name)
        if value is None or value == words.get(name):
            continue
        if not re.fullmatch(rf"[0-9]{{1,{digits}}}", value) or int(value) > top:
            found.append(f"{name}: {value!r} is not 0..{top}"
                         + (f" or {words[name]!r}" if name in words else ""))
    if row.get("dscp_value") == "from-tc" and "tc_value" not in row:
        found.append("dscp_value from-tc: no tc_value to take the DSCP from")
    return found


# ---- render ---------------------------------------------------------------------------------


def test_every_switch_renders_trimming_as_the_design_gives_it(fabric: FabricState) -> None:
    switches = switches_on(fabric, "sonic")
    assert len(switches) == 6
    for device in switches:
        db = config_db(device, PLATFORM.names)
        assert db[trimming.TABLE] == {trimming.KEY: PLANNED_ROW}, device.name
        # each port's trimmed packets take the DSCP of its direction from TC 7's entry
        maps = db[trimming.MAP_TABLE]
        assert maps == {f"FLATFAB_TRIM_{d}": {"7": str(d)} for d in
                        {i.qos.trim_dscp for i in device.interfaces.values() if i.qos}}
        for name, iface in device.interfaces.items():
            if iface.qos is not None:
                bound = db["PORT_QOS_MAP"][name]["tc_to_dscp_map"]
                assert maps[bound] == {"7": str(iface.qos.trim_dscp)}, (device.name, name)
        # the RoCE queue (3) trims what it cannot admit; the others drop it
        profiles = db["BUFFER_PROFILE"]
        trims = {n for n, p in profiles.items() if p.get(trimming.DISCARD) == TRIM}
        assert trims == {configdb.profile_key(PROFILE_EGRESS_TRIM)}
        assert {k for k, q in db["BUFFER_QUEUE"].items() if q["profile"] in trims} == {
            f"{n}|3" for n, i in device.interfaces.items() if i.qos}
    # a leaf's Ethernet0 faces a host, a spine's the fabric
    first = {d.name: d.interfaces["Ethernet0"].qos for d in switches}
    assert {n: q.trim_dscp if q else None for n, q in first.items()
            if n in ("leaf1", "spine1")} == {"leaf1": 44, "spine1": 45}


def test_a_lossless_or_lossy_fabric_renders_no_trimming() -> None:
    """The lab (lossless) and a lossy fabric: none of trimming's tables or fields."""
    with TemporaryDirectory() as tmp:
        target = Path(tmp)
        intent_on(ROOT / "intents" / "lab", target, "sonic", FAMILY)
        lab = plan(load_intent(target, known_platforms=PLATFORMS))
    for fabric in (lab, _fabric("lossy")):
        for device in switches_on(fabric, "sonic"):
            text = PLATFORM.render(device)
            assert trimming.TABLE not in text and trimming.MAP_TABLE not in text
            assert "tc_to_dscp_map" not in text and trimming.DISCARD not in text


def test_the_oracle_accepts_every_render_and_all_it_judges(fabric: FabricState) -> None:
    """Every switch's render passes the oracle. With the tables it has no model for taken out
    first (SWITCH_TRIMMING, SWITCH_HASH), it passes leaving unvalidated only what it leaves
    of the same switch in a lossy fabric (a leaf's VLAN tables): TC_TO_DSCP_MAP,
    tc_to_dscp_map and packet_discard_action are among what it judged."""
    module, oracle = usable(SONIC).load()
    lossy = _fabric("lossy")

    def verdict(device: DeviceState) -> tuple[list[str], list[str]]:
        db = config_db(device, PLATFORM.names)
        judged = {t: rows for t, rows in db.items() if t not in UNMODELLED}  # stripped
        base = {"PORT": {n: {"lanes": ",".join(str(int(n[8:]) + i) for i in range(8))}
                         for n in db["PORT"]}}
        found: tuple[list[str], list[str]] = oracle.validate(
            module.merge(base, json.loads(json.dumps(judged))))
        return found

    for device in switches_on(fabric, "sonic"):
        assert SONIC.validate(device.name, PLATFORM.render(device), device) == []
        violations, notes = verdict(device)
        assert violations == [] and notes == verdict(lossy.devices[device.name])[1]
        assert not [n for n in notes if n.startswith((trimming.MAP_TABLE, "PORT_QOS_MAP",
                                                      "BUFFER_"))], device.name


def test_switch_trimming_holds_to_the_design_schema(fabric: FabricState) -> None:
    for device in switches_on(fabric, "sonic"):
        row = config_db(device, PLATFORM.names)[trimming.TABLE][trimming.KEY]
        assert design_violations(row) == [], device.name
        assert sorted(row) == sorted(trimming.FIELDS)  # every field: none is left to default


@pytest.mark.parametrize(("row", "found"), [
    ({**PLANNED_ROW, "dscp_value": "64"}, ["dscp_value: '64' is not 0..63 or 'from-tc'"]),
    ({**PLANNED_ROW, "queue_index": "256"}, ["queue_index: '256' is not 0..255 or 'dynamic'"]),
    ({**PLANNED_ROW, "size": "4294967296"}, ["size: '4294967296' is not 0..4294967295"]),
    ({**PLANNED_ROW, "tc_value": "-1"}, ["tc_value: '-1' is not 0..255"]),
    ({"size": "256", "dscp_value": "from-tc", "queue_index": "dynamic"},
     ["dscp_value from-tc: no tc_value to take the DSCP from"]),
    ({**PLANNED_ROW, "trim_size": "256"}, ["trim_size: not a field of SWITCH_TRIMMING"]),
    ({"size": "128", "dscp_value": "48", "queue_index": "dynamic"}, []),  # symmetric
])
def test_the_design_schema_judges_what_the_oracle_cannot(row: dict[str, str],
                                                         found: list[str]) -> None:
    assert design_violations(row) == found


# ---- what SONiC's YANG oracle holds ---------------------------------------------------------


def test_the_oracle_holds_no_trimming_model_so_switch_trimming_is_not_validated(
        leaf1: DeviceState) -> None:
    """An unmodelled table passes the oracle with a note, whatever it holds: its pass says
    nothing of SWITCH_TRIMMING. When this fails, shared/schemas/sonic-yang has gained
    sonic-trimming.yang: validate SWITCH_TRIMMING through it and drop the exception from
    platform.yaml's `proven.rendered`."""
    module, oracle = usable(SONIC).load()
    assert trimming.TABLE not in oracle.tables
    nonsense = {trimming.KEY: {"size": "a lot", "dscp_value": "99", "no_such_field": "x"}}
    for rows in (config_db(leaf1, PLATFORM.names)[trimming.TABLE], nonsense):
        violations, notes = oracle.validate(module.merge({}, {trimming.TABLE: rows}))
        assert violations == [] and notes == ["SWITCH_TRIMMING: no YANG model, not validated"]
    rendered = " ".join(PLATFORM.facts.proven.rendered.split())
    assert "except `SWITCH_TRIMMING`" in rendered and "packet-trimming design" in rendered


EDITS = {  # what breaks each modelled piece of trimming, and what the oracle then says
    "a discard action SONiC has not": (
        ("BUFFER_PROFILE", "egress_lossy_trim_profile", trimming.DISCARD, "cut"),
        'Invalid enumeration value "cut"'),
    "an unknown field of a modelled table": (
        ("BUFFER_PROFILE", "egress_lossy_trim_profile", "packet_trim_action", "trim"),
        'Node "packet_trim_action" not found'),
    "DSCP 64 in a TC to DSCP map": (
        (trimming.MAP_TABLE, "FLATFAB_TRIM_44", "7", "64"), "Invalid DSCP"),
    "a port bound to a map that does not exist": (
        ("PORT_QOS_MAP", "Ethernet0", "tc_to_dscp_map", "FLATFAB_TRIM_9"),
        'Invalid leafref value "FLATFAB_TRIM_9"'),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_the_oracle_judges_the_maps_bindings_and_discard_action(leaf1: DeviceState,
                                                                name: str) -> None:
    """Modelled in what the oracle loads, so judged: a broken one is a violation of its row."""
    (table, key, field, value), message = EDITS[name]
    db = copy.deepcopy(config_db(leaf1, PLATFORM.names))
    db[table][key] = {**db[table][key], field: value}  # this row only: ports share rows
    usable(SONIC)
    [found] = SONIC.config_db_violations(db)
    assert found.startswith(f"{table}|{key}: ") and message in found


# ---- refused at load no more ----------------------------------------------------------------


def test_sonic_takes_the_trimming_profile_at_load() -> None:
    caps = PLATFORM.facts.capabilities
    assert "packet_trimming" not in caps.unsupported
    assert "packet_trimming" not in caps.family_limits(FAMILY)
    notes = " ".join(PLATFORM.facts.notes.split())
    assert "202511" in notes and "202505" in notes  # the releases that have it, and not


def test_trimming_on_tomahawk_5_is_refused_at_load_with_the_reason(tmp_path: Path) -> None:
    """Tomahawk-5 trims to one fixed size on a fixed queue: the intent cannot ask for that."""
    intent_on(ROOT / "intents" / "lab", tmp_path, "sonic", "tomahawk-5")
    qos = yaml.safe_load((tmp_path / "qos.yaml").read_text())
    qos["profile"] = TRIMMING
    qos["pfc"].pop("priorities")
    qos["ets"].pop("strict")
    (tmp_path / "qos.yaml").write_text(yaml.safe_dump(qos))
    with pytest.raises(InputError) as caught:
        load_intent(tmp_path, known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("qos.yaml") and problem.path == "profile"
    assert problem.reason.startswith("platform sonic on tomahawk-5 hardware cannot do this "
                                     "(packet_trimming): SONiC on Tomahawk-5 trims to one "
                                     "fixed size (206 bytes)")


# ---- push and read back ---------------------------------------------------------------------


def test_a_push_adds_trimming_and_collect_reads_the_plan_on_every_switch(
        fabric: FabricState) -> None:
    assert run_checks(CheckContext(state=fabric, plan=fabric, stage=Stage.STATIC)) == []
    seen = []
    for device in switches_on(fabric, "sonic"):
        double = sonic_double(device)  # a factory switch: no trimming
        double.outputs = healthy_outputs(fabric, device.name, PLATFORM.names.vrf)
        assert collected(device, double).qos is None
        driver = sonic_driver(double)
        intended = PLATFORM.render(device)
        running = driver.get_config(retrieve="running")["running"]
        # applied, with the one thing a rollback of it cannot undo named
        notes = [n for n in PLATFORM.change_notes(running, intended) if "TRIM" in n]
        assert notes == [f"/{trimming.TABLE}: {trimming.ONCE_ON}; needs `config reload` "
                         "(disruptive)"]
        driver.load_replace_candidate(config=intended)
        driver.commit_config()
        ops = _patch(double)
        assert {"op": "add", "path": f"/{trimming.TABLE}",
                "value": {trimming.KEY: PLANNED_ROW}} in ops
        [maps] = _about(ops, trimming.MAP_TABLE)
        assert maps["op"] == "add" and sorted(maps["value"]) == sorted(
            config_db(device, PLATFORM.names)[trimming.MAP_TABLE])
        assert double.asic_trimming == PLANNED_ROW and double.orchagent_errors == []
        observed = collected(device, double)
        assert observed.errors == [] and observed.not_modelled == {}, device.name
        assert observed.qos is not None and device.qos is not None
        assert observed.qos.trimming == device.qos.trimming
        assert observed.qos.profiles == device.qos.profiles  # the trim profile's discard
        for name, iface in device.interfaces.items():
            if iface.qos is not None:
                assert observed.interfaces[name].qos == iface.qos, (device.name, name)
        seen.append(observed)
    state = fabric.model_copy(update={"devices": {**fabric.devices,
                                                  **{d.name: d for d in seen}}})
    assert run_checks(CheckContext(state=state, plan=fabric, stage=Stage.LIVE)) == []
    assert _live(fabric, *seen) == []


def test_a_pushed_switch_shows_no_drift_and_needs_no_change(fabric: FabricState) -> None:
    double = pushed_double(fabric, "leaf1")
    driver = sonic_driver(double, read_only=True)
    intended = PLATFORM.render(fabric.devices["leaf1"])
    running, wanted = PLATFORM.drift_texts(driver, intended)
    assert PLATFORM.sections(running) == PLATFORM.sections(wanted)
    assert PLATFORM.change_notes(running, intended) == []
    driver.load_replace_candidate(config=intended)
    assert _about(driver.plan_patch(driver.running_db()), trimming.TABLE, trimming.MAP_TABLE,
                  "PORT_QOS_MAP", "BUFFER_PROFILE") == []


def test_changed_trimming_is_drift_the_checks_name_and_a_rollout_replaces(
        fabric: FabricState, leaf1: DeviceState) -> None:
    double = pushed_double(fabric, "leaf1")
    maps = double.config_db["PORT_QOS_MAP"]
    _printing(double, {
        trimming.TABLE: {trimming.KEY: {**PLANNED_ROW, "size": "512"}},
        "PORT_QOS_MAP": {**maps, "Ethernet0": {**maps["Ethernet0"],
                                               "tc_to_dscp_map": "FLATFAB_TRIM_45"}}})
    seen = collected(leaf1, double)
    assert sorted(_live(fabric, seen)) == [
        ("trim.intent", "leaf1", "leaf1 trims 512 B into TC 7, queue 7, the intent says "
         "256 B into TC 7, queue 7"),
        ("trim.intent", "leaf1", "leaf1:Ethernet0 marks trimmed packets with DSCP 45, the "
         "intent sets 44")]
    driver = sonic_driver(double)
    intended = PLATFORM.render(leaf1)
    running, wanted = PLATFORM.drift_texts(driver, intended)
    assert PLATFORM.sections(running) != PLATFORM.sections(wanted)
    assert PLATFORM.change_notes(running, intended) == []  # GCU and orchagent take both
    driver.load_replace_candidate(config=intended)
    assert _about(driver.plan_patch(driver.running_db()), trimming.TABLE, "PORT_QOS_MAP") == [
        {"op": "replace", "path": "/PORT_QOS_MAP/Ethernet0/tc_to_dscp_map",
         "value": "FLATFAB_TRIM_44"},
        {"op": "replace", "path": "/SWITCH_TRIMMING/GLOBAL/size", "value": "256"}]


def test_a_symmetric_switch_is_read_named_and_made_asymmetric(fabric: FabricState,
                                                              leaf1: DeviceState) -> None:
    """A 202511 switch trimming with one DSCP and a dynamic queue, an ACL rule exempting a
    subnet (variants/running_202511_switch_trimming.json): read as it is, what flatfab has no
    place for named; a rollout replaces the fields and adds tc_value, which orchagent takes
    at run time (the design: symmetric to asymmetric), with the note its rollback needs."""
    variant = json.loads((FIXTURES / "variants" / "running_202511_switch_trimming.json")
                         .read_text(encoding="utf-8"))
    assert "derived from documentation" in variant["source"]
    double = pushed_double(fabric, "leaf1")
    _printing(double, variant["output"])
    seen = collected(leaf1, double)
    assert seen.errors == [] and seen.qos is not None and seen.qos.trimming is not None
    assert seen.qos.trimming.size == 128
    # symmetric DSCP states no TC: unknown, said why, never judged as TC 0
    assert seen.qos.unknown["trimming.tc"] == ("SWITCH_TRIMMING|GLOBAL has no tc_value "
                                               "(symmetric DSCP)")
    assert {i.qos.trim_dscp for i in seen.interfaces.values() if i.qos} == {48}
    assert seen.not_modelled == {
        "SWITCH_TRIMMING|GLOBAL queue_index dynamic": (
            "the switch picks the trimmed packet's queue through its DSCP's maps: read as "
            "the queue of tc_value"),
        "ACL_RULE|TRIM_EXEMPT|STORAGE DISABLE_TRIM": (
            "the packets it matches are dropped, not trimmed: flatfab models trimming per "
            "queue, not per flow")}
    assert {check for check, _, _ in _live(fabric, seen)} == {"trim.dscp", "trim.intent"}
    driver = sonic_driver(double)
    intended = PLATFORM.render(leaf1)
    running = driver.get_config(retrieve="running")["running"]
    assert PLATFORM.change_notes(running, intended) == [
        f"/{trimming.TABLE}/{trimming.KEY}/tc_value: {trimming.ONCE_ON}; needs `config "
        "reload` (disruptive)"]
    driver.load_replace_candidate(config=intended)
    assert _about(driver.plan_patch(driver.running_db()), trimming.TABLE) == [
        {"op": "replace", "path": "/SWITCH_TRIMMING/GLOBAL/dscp_value", "value": "from-tc"},
        {"op": "replace", "path": "/SWITCH_TRIMMING/GLOBAL/queue_index", "value": "7"},
        {"op": "replace", "path": "/SWITCH_TRIMMING/GLOBAL/size", "value": "256"},
        {"op": "add", "path": "/SWITCH_TRIMMING/GLOBAL/tc_value", "value": "7"}]


def test_a_field_beyond_the_design_s_four_stays_the_switch_s(fabric: FabricState,
                                                             leaf1: DeviceState) -> None:
    double = pushed_double(fabric, "leaf1")
    _printing(double, {trimming.TABLE: {trimming.KEY: {**PLANNED_ROW, "mode": "fast"}}})
    seen = collected(leaf1, double)
    assert seen.not_modelled == {
        "SWITCH_TRIMMING|GLOBAL mode": "flatfab's trimming has no such field"}
    assert _live(fabric, seen) == []
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    assert _about(driver.plan_patch(driver.running_db()), trimming.TABLE) == []


# ---- what GCU and orchagent refuse ----------------------------------------------------------


def test_turning_trimming_off_is_refused_naming_what_it_needs(fabric: FabricState) -> None:
    """lossy-trimming -> lossy: everything else goes by apply-patch (the trim profile and maps
    go whole, the ports' bindings field by field); SWITCH_TRIMMING's removal orchagent would
    refuse, so the commit is refused and nothing is pushed."""
    lossy = _fabric("lossy").devices["leaf1"]
    double = pushed_double(fabric, "leaf1")
    before = copy.deepcopy(double.config_db)
    driver = sonic_driver(double)
    intended = PLATFORM.render(lossy)
    refused = f"/{trimming.TABLE}: {trimming.REMOVAL_REFUSED}; needs `config reload` (disruptive)"
    running = driver.get_config(retrieve="running")["running"]
    assert PLATFORM.change_notes(running, intended) == [refused]
    running, wanted = PLATFORM.drift_texts(driver, intended)
    assert trimming.TABLE in running and trimming.TABLE not in wanted
    driver.load_replace_candidate(config=intended)
    now = driver.running_db()
    ops = changes.patch(now, changes.target(now, config_db(lossy, PLATFORM.names)))
    assert {"op": "remove", "path": f"/{trimming.TABLE}"} in ops
    assert {"op": "remove", "path": f"/{trimming.MAP_TABLE}"} in ops
    assert {"op": "remove", "path": "/BUFFER_PROFILE/egress_lossy_trim_profile"} in ops
    assert {"op": "remove", "path": "/PORT_QOS_MAP/Ethernet0/tc_to_dscp_map"} in ops
    assert [r for r in changes.refusals(ops) if r.blocking] == [
        changes.Refusal(f"/{trimming.TABLE}", trimming.REMOVAL_REFUSED, "config reload")]
    with pytest.raises(CommitRefusedError, match=re.escape(refused)):
        driver.commit_config()
    assert double.config_db == before and double.mutating == []


@pytest.mark.parametrize("op", [
    {"op": "remove", "path": "/SWITCH_TRIMMING/GLOBAL"},
    {"op": "remove", "path": "/SWITCH_TRIMMING/GLOBAL/tc_value"},
])
def test_removing_a_row_or_field_of_trimming_is_refused(op: dict[str, Any]) -> None:
    [refusal] = changes.refusals([op])
    assert refusal.blocking and refusal.needs == "config reload"
    assert refusal.why == trimming.REMOVAL_REFUSED


def test_removing_a_discard_action_is_refused_and_adding_one_is_too() -> None:
    """bufferorch does not remove packet_discard_action, and GCU edits neither way: flatfab
    puts it on a profile of its own, added and removed whole (no refusal)."""
    path = f"/BUFFER_PROFILE/egress_lossy_profile/{trimming.DISCARD}"
    removed, added = changes.refusals([{"op": "remove", "path": path},
                                       {"op": "add", "path": path, "value": TRIM}])
    assert removed.blocking and removed.needs == "config qos reload"
    assert removed.why.startswith(trimming.DISCARD_REMOVAL)
    assert added.blocking and added.why.startswith("GCU edits only dynamic_th and xoff")
    whole = {"op": "add", "path": "/BUFFER_PROFILE/egress_lossy_trim_profile",
             "value": {"pool": "egress_lossy_pool", "size": "0", trimming.DISCARD: TRIM}}
    assert changes.refusals([whole, {**whole, "op": "remove"}]) == []


def test_a_rollback_of_the_push_that_turned_trimming_on_leaves_the_asic_trimming(
        fabric: FabricState, leaf1: DeviceState) -> None:
    """What the push's note said: commit-confirm's revert takes SWITCH_TRIMMING out of
    CONFIG_DB, orchagent refuses it, the ASIC trims on. collect reads CONFIG_DB, so it then
    reads no trimming: the note before the push is what tells."""
    double = sonic_double(leaf1)
    double.outputs = healthy_outputs(fabric, "leaf1", PLATFORM.names.vrf)
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config(revert_in=300)
    assert double.config_db[trimming.TABLE] == {trimming.KEY: PLANNED_ROW}
    double.advance(301)
    assert trimming.TABLE not in double.config_db
    assert double.asic_trimming == PLANNED_ROW
    assert double.orchagent_errors == [
        "switch trimming: removal of dscp_value, queue_index, size, tc_value refused: the "
        "ASIC and CONFIG_DB differ"]
    seen = collected(leaf1, double)
    assert seen.qos is None  # CONFIG_DB holds no QoS any more: unread, as after any revert


def test_an_older_release_s_gcu_refuses_the_patch_and_the_commit_is_rolled_back(
        leaf1: DeviceState) -> None:
    """Before 202511 the YANG models GCU validates with have no SWITCH_TRIMMING: it refuses a
    patch that touches a table without one, and the driver rolls the commit back."""
    double = sonic_double(leaf1)
    double.fail["config apply-patch"] = (
        "Error: Given patch is not valid because it has changes to tables without YANG models")
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    with pytest.raises(SonicError, match=r"commit failed and was rolled back: .*YANG models"):
        driver.commit_config()
    assert trimming.TABLE not in double.config_db and double.asic_trimming == {}


def test_the_trim_maps_are_flatfab_s_and_switch_trimming_merged() -> None:
    assert trimming.MAP_TABLE in OWNED_TABLES
    assert changes.FIXED_FIELDS == {trimming.TABLE: trimming.FIELDS}
    # a projection without an intended config to go by shows trimming's four fields
    db = {trimming.TABLE: {trimming.KEY: {**PLANNED_ROW, "mode": "fast"}}}
    assert changes.project(db) == {trimming.TABLE: {trimming.KEY: PLANNED_ROW}}
