"""The junos platform: render (golden files, Juniper's QFX YANG), push through NAPALM's real
JunOSDriver over a double of Junos's commit mechanism, read-only guard, collect.

Golden files: tests/golden/platforms/junos/<fabric>/<device>.conf of representative
switches (not-kept.sha256 holds the others'), regenerated with FLATFAB_REGEN_GOLDEN=1 (which
also rewrites the recorded outputs under tests/fixtures/junos/). The switch is
tests/doubles/junos.py.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from napalm import get_network_driver
from napalm.base.exceptions import CommitConfirmException

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FIVE_TUPLE, DeviceState, FabricState, IfKind, LoadBalancing
from flatfab.platforms.base import ReadOnlyDriver, ReadOnlyError
from flatfab.platforms.junos import PLATFORM, normal_form
from flatfab.platforms.junos import collect as junos_collect
from flatfab.platforms.junos.driver import JunosDriver, JunosDriverError, revert_minutes
from flatfab.platforms.junos.render import JunosRenderError, configuration
from flatfab.platforms.junos.text import split_sections, to_text
from flatfab.platforms.junos.verified import FlatfabJunosDriver
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.junos import (
    LLDP_AGE,
    LLDP_TTL,
    MANAGEMENT_ADDRESS,
    RECORDED,
    JunosDevice,
    collect_cases,
    fixture_folder,
    fixture_name,
    healthy_outputs,
    junos_fabric,
    junos_switches,
    napalm_driver,
    recorded,
)
from tests.support.golden import match_golden
from tests.support.on_platform import intent_on
from tests.support.oracles import JUNOS, usable
from tests.support.paths import SHARED

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden" / "platforms" / "junos"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))
FABRICS = ("lab", "numbered", "mixed", "rail")


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return junos_fabric("lab")


@pytest.fixture(scope="module")
def leaf1(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


# ---- render ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", FABRICS)
def test_render_matches_golden_files(name: str) -> None:
    """The representatives' renders as files, the others' sha256 (the YANG oracle below
    judges every device's render)."""
    switches = junos_switches(junos_fabric(name))
    produced = {f"{name}/{d.name}.conf": PLATFORM.render(d) for d in switches}
    match_golden(GOLDEN, name, produced, ".conf", {d.name: d.role.value for d in switches},
                 "tests/platforms/junos/test_junos.py::test_every_render_passes_junos_yang")


def test_render_is_byte_identical(lab: FabricState) -> None:
    for device in junos_switches(lab):
        assert PLATFORM.render(device) == PLATFORM.render(device.model_copy(deep=True))


def test_mixed_fabric_keeps_the_other_vendors() -> None:
    mixed = junos_fabric("mixed")
    platforms = {d.name: d.platform for d in mixed.devices.values() if d.role.value != "host"}
    assert platforms["spine1"] == "eos" and platforms["leaf3"] == "frr"
    assert platforms["leaf1"] == "junos"


def test_sections_split_each_hierarchy_losing_no_line(leaf1: DeviceState) -> None:
    text = PLATFORM.render(leaf1)
    sections = PLATFORM.sections(text)
    assert list(sections) == list(PLATFORM.facts.sections)  # all of them, in render order
    assert sections["interfaces"][0].startswith("# flatfab: leaf1")
    kept = sorted(line for lines in sections.values() for line in lines)
    assert kept == sorted(line for line in text.splitlines() if line.strip())
    assert "replace: class-of-service {" in sections["class-of-service"]
    assert "    replace: blue {" in sections["routing-instances"]


def test_sections_read_a_running_config_too() -> None:
    running = "## Last commit: 2025-11-24 16:00:00 UTC by flatfab\nversion 24.4R1.9-EVO;\n" \
              "system {\n    host-name leaf1;\n}\ninterfaces {\n" \
              "    et-0/0/0 {\n        mtu 9216;\n    }\n}\n"
    sections = split_sections(running)
    assert list(sections) == ["version", "system", "interfaces"]
    assert sections["version"][0].startswith("## Last commit")
    assert sections["interfaces"][1] == "    et-0/0/0 {"


def test_facts_say_how_junos_is_reached_and_spelled() -> None:
    facts = PLATFORM.facts
    # NAPALM's junos driver with host keys checked, found by NAPALM as its own drivers are
    assert (facts.connection.plugin, facts.connection.driver) == ("napalm", "flatfab_junos")
    assert get_network_driver(facts.connection.driver) is FlatfabJunosDriver
    sot = facts.source_of_truth
    assert (sot.network_driver, sot.manufacturer, sot.napalm_driver) == (
        "juniper_junos", "Juniper", "junos")
    assert facts.capabilities.commit_confirm.value == "native"
    assert facts.capabilities.read_only.value == "driver"
    assert facts.lab.embedded is False
    schema = SHARED / "schemas" / "clab.schema.json"
    if not schema.is_file():
        pytest.skip(f"containerlab schema not found at {schema}")
    assert f'"{facts.lab.kind}"' in schema.read_text(encoding="utf-8")


def test_naming_follows_qfx_ports() -> None:
    names = PLATFORM.names
    assert names.physical(1) == "et-0/0/0" and names.physical(64) == "et-0/0/63"
    assert names.subinterface("et-0/0/63", 4094) == "et-0/0/63.4094"
    assert names.gateway(100) == "irb.100" and names.gateway(None) == "irb.4000"
    assert names.is_port("et-0/0/12:3") and not names.is_port("xe-0/0/1")
    assert names.vrf_problem("mgmt_junos") is not None
    assert names.vrf_problem("master") is not None and names.vrf_problem("blue") is None


def test_numbered_sessions_are_neighbors_not_auto_discovered() -> None:
    lf_a = junos_fabric("numbered").devices["lf-a"]
    tree = configuration(lf_a, PLATFORM.names)["configuration"]
    group = tree["protocols"]["bgp"]["group"]
    assert [g["name"] for g in group] == ["fabric"]
    assert group[0]["neighbor"] == [
        {"name": "10.254.0.0", "description": "sp-a", "peer-as": "64600"},
        {"name": "10.254.0.2", "description": "sp-b", "peer-as": "64600"}]
    assert "router-advertisement" not in tree["protocols"]
    assert group[0]["hold-time"] == 3


def test_the_render_decisions_are_in_the_config(leaf1: DeviceState) -> None:
    tree = configuration(leaf1, PLATFORM.names)["configuration"]
    port = next(i for i in tree["interfaces"]["interface"] if i["name"] == "et-0/0/50")
    assert port["vlan-tagging"] == [None] and port["native-vlan-id"] == 1
    assert [u["name"] for u in port["unit"]] == [0, 100, 200]
    group = tree["protocols"]["bgp"]["group"][0]
    assert group["dynamic-neighbor"][0]["peer-auto-discovery"]["interface"] == [
        {"name": "et-0/0/50.0"}, {"name": "et-0/0/51.0"}]
    assert group["family"]["inet"]["unicast"]["extended-nexthop"] == [None]
    cos = tree["class-of-service"]
    rdma = next(c for c in cos["forwarding-classes"]["class"] if c["name"] == "tc3")
    assert rdma == {"name": "tc3", "queue-num": 3, "no-loss": [None], "pfc-priority": 3}
    cnp = next(s for s in cos["schedulers"] if s.get("priority") == "strict-high")
    assert cnp["name"] == "s-tc6-strict"
    ecn = next(s for s in cos["schedulers"] if "explicit-congestion-notification" in s)
    assert ecn["drop-profile-map"][0]["drop-profile"].startswith("ecn-")
    watchdog = cos["congestion-notification-profile"][0]["pfc-watchdog"]
    assert watchdog == {"poll-interval": 200, "detection": 1, "recovery": 400,
                        "watchdog-action": "drop"}
    assert tree["vlans"]["@"] == {"operation": "replace"}
    assert tree["vlans"]["vlan"][0] == {"name": "v100", "vlan-id": 100,
                                         "l3-interface": "irb.100"}


def test_a_plan_junos_cannot_express_is_one_clear_error(leaf1: DeviceState) -> None:
    port = leaf1.interfaces["et-0/0/50"]
    assert port.qos is not None and port.qos.watchdog is not None
    odd = port.qos.model_copy(update={"watchdog": port.qos.watchdog.model_copy(
        update={"detect_ms": 250})})
    bad = leaf1.model_copy(deep=True)
    bad.interfaces["et-0/0/50"].qos = odd
    with pytest.raises(JunosRenderError, match=r"^leaf1: .*250 ms is not a whole number"):
        PLATFORM.render(bad)


@pytest.mark.parametrize("family", ["spectrum-4", "generic", "trident-4"])
def test_a_family_that_is_no_qfx52xx_is_refused_at_load(tmp_path: Path, family: str) -> None:
    """The data file names the QFX52xx families; the render checks none itself."""
    intent_on(ROOT / "intents" / "lab", tmp_path, "junos", family)
    with pytest.raises(InputError) as caught:
        load_intent(tmp_path, known_platforms=PLATFORMS)
    assert [p.reason for p in caught.value.problems] == [
        f"platform junos does not run on ASIC family {family!r}; it runs on tomahawk-3, "
        "tomahawk-4, tomahawk-5"]


# ---- the YANG oracle ---------------------------------------------------------------------


@pytest.mark.parametrize("name", FABRICS)
def test_every_render_passes_junos_yang(name: str) -> None:
    """The tree each switch's render is printed from passes Juniper's QFX YANG and the commit
    rules of the oracle; the render is exactly that tree printed. Every switch: the golden
    files keep representatives only."""
    oracle = usable(JUNOS)  # tests/support/oracles.py
    for device in junos_switches(junos_fabric(name)):
        found = oracle.validate(device.name, PLATFORM.render(device), device)
        assert not found, f"{name}/{device.name}:\n" + "\n".join(found)


def test_the_oracle_catches_a_bad_pfc_priority(leaf1: DeviceState) -> None:
    oracle = usable(JUNOS)
    tree = configuration(leaf1, PLATFORM.names)
    cos = tree["configuration"]["class-of-service"]
    next(c for c in cos["forwarding-classes"]["class"] if "no-loss" in c)["pfc-priority"] = 9
    cos["interfaces"]["interface"][0]["scheduler-map"] = "no-such-map"
    violations = oracle.tree_violations(tree)
    assert any("pfc-priority" in v for v in violations)
    assert any("no-such-map" in v for v in violations)


# ---- push: NAPALM's JunOSDriver over the double ---------------------------------------------


def _switch(running: str = "") -> tuple[JunosDevice, JunosDriver]:
    device = JunosDevice(running_text=running or FACTORY)
    driver = PLATFORM.adapt(napalm_driver(device), read_only=False)
    assert isinstance(driver, JunosDriver)
    return device, driver


FACTORY = """system {
    host-name qfx;
    root-authentication {
        encrypted-password "$6$x";
    }
}
interfaces {
    re0:mgmt-0 {
        unit 0 {
            family {
                inet {
                    address 192.0.2.10/24;
                }
            }
        }
    }
}
"""


def test_push_loads_replace_keeps_management_and_commits_confirmed(leaf1: DeviceState) -> None:
    device, driver = _switch()
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    assert "load replace format=text" in device.log  # never `load override`
    diff = driver.compare_config()
    assert "+    et-0/0/50 {" in diff and "re0:mgmt-0" not in diff.replace(" re0:mgmt-0 {", "")
    driver.commit_config(message="flatfab", revert_in=90)
    assert 'commit confirmed 2 comment "flatfab"' in device.log  # 90 s rounds UP to 2 min
    assert driver.has_pending_commit()
    running = driver.get_config(retrieve="running")["running"]
    assert "re0:mgmt-0 {" in running and "host-name qfx;" in running
    assert "class-of-service {" in running
    driver.confirm_commit()
    assert not driver.has_pending_commit()
    device.advance(600)
    assert "class-of-service {" in driver.get_config(retrieve="running")["running"]


def test_an_unconfirmed_commit_is_rolled_back_by_the_switch(leaf1: DeviceState) -> None:
    device, driver = _switch()
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config(revert_in=60)
    device.advance(59)
    assert driver.has_pending_commit()
    device.advance(1)
    assert not driver.has_pending_commit()
    running = driver.get_config(retrieve="running")["running"]
    assert "class-of-service" not in running and "re0:mgmt-0" in running
    assert "rollback: commit confirmed expired" in device.log


def test_rollback_restores_the_previous_commit(leaf1: DeviceState) -> None:
    device, driver = _switch()
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config()
    driver.rollback()  # NAPALM: rollback 1, then commit
    assert "rollback 1" in device.log
    assert "class-of-service" not in driver.get_config(retrieve="running")["running"]


def test_a_second_load_replaces_what_flatfab_owns(leaf1: DeviceState) -> None:
    _, driver = _switch()
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config()
    changed = leaf1.model_copy(deep=True)
    changed.interfaces["et-0/0/50"].mtu = 9100
    driver.load_replace_candidate(config=PLATFORM.render(changed))
    diff = driver.compare_config()
    assert "-        mtu 9216;" in diff and "+        mtu 9100;" in diff
    driver.discard_config()
    assert driver.compare_config() == ""
    again = leaf1.model_copy(deep=True)
    driver.load_replace_candidate(config=PLATFORM.render(again))
    assert driver.compare_config() == ""  # idempotent


def test_revert_time_rounds_up_to_whole_minutes() -> None:
    assert [revert_minutes(s) for s in (1, 60, 61, 90, 120, 300)] == [1, 1, 2, 2, 2, 5]
    with pytest.raises(JunosDriverError):
        revert_minutes(0)
    # NAPALM alone refuses what is not a multiple of 60; flatfab's driver never sends one
    device = JunosDevice(running_text=FACTORY)
    with pytest.raises(CommitConfirmException):
        napalm_driver(device).commit_config(revert_in=90)


def test_a_candidate_touching_management_is_refused() -> None:
    _, driver = _switch()
    with pytest.raises(JunosDriverError, match="re0:mgmt-0"):
        driver.load_replace_candidate(config="interfaces {\n    re0:mgmt-0 {\n"
                                             "        disable;\n    }\n}\n")


def test_adapt_refuses_another_driver() -> None:
    with pytest.raises(TypeError, match="NAPALM's junos driver"):
        PLATFORM.adapt(object(), read_only=False)


def test_drift_ignores_tags_header_and_order(leaf1: DeviceState) -> None:
    text = PLATFORM.render(leaf1)
    assert "replace:" not in normal_form(text) and "# flatfab" not in normal_form(text)
    _, driver = _switch()
    driver.load_replace_candidate(config=text)
    driver.commit_config()
    running, wanted = PLATFORM.drift_texts(driver, text)
    have, want = PLATFORM.sections(running), PLATFORM.sections(wanted)
    for section in ("policy-options", "protocols", "routing-instances", "class-of-service"):
        assert have[section] == want[section], section
    assert "    re0:mgmt-0 {" in have["interfaces"]  # the switch's own, not flatfab's
    # Junos prints in its schema's order: the same statements in another order are no drift
    swapped = text.replace("replace: routing-options {", "replace: zz {", 1)
    assert normal_form(swapped) != normal_form(text)
    blocks = text.split("\nreplace: ")
    reordered = "\nreplace: ".join([blocks[0], *reversed(blocks[1:-1]), blocks[-1]])
    assert reordered != text and normal_form(reordered) == normal_form(text)


@pytest.mark.parametrize("name", FABRICS)
def test_every_render_splits_into_declared_sections(name: str) -> None:
    """What the shared contract test asks once an example fabric runs junos."""
    for device in junos_switches(junos_fabric(name)):
        text = PLATFORM.render(device)
        sections = PLATFORM.sections(text)
        assert set(sections) <= set(PLATFORM.facts.sections), (device.name, set(sections))
        kept = sorted(line for lines in sections.values() for line in lines)
        body = sorted(line for line in text.splitlines()
                      if line.strip() and not line.startswith("!! "))
        assert kept == body, device.name


def test_change_notes_name_what_load_replace_leaves_behind(leaf1: DeviceState) -> None:
    running = FACTORY + ("interfaces {\n    et-0/0/9 {\n        mtu 9216;\n    }\n}\n"
                         "routing-instances {\n    old {\n        instance-type vrf;\n    }\n"
                         "    mgmt_junos {\n        description mgmt;\n    }\n}\n")
    notes = PLATFORM.change_notes(running, PLATFORM.render(leaf1))
    assert len(notes) == 2
    assert notes[0].startswith("interfaces et-0/0/9 is configured on the switch but not planned")
    assert notes[1].startswith("routing-instances old ")
    assert PLATFORM.change_notes(PLATFORM.render(leaf1), PLATFORM.render(leaf1)) == []


def test_why_not_napalms_replace_it_would_load_override(leaf1: DeviceState) -> None:
    """NAPALM's own load_replace_candidate is `load override`: the switch would lose its
    system hierarchy and management address. flatfab's driver never sends it."""
    device = JunosDevice(running_text=FACTORY)
    raw = napalm_driver(device)
    raw.load_replace_candidate(config=PLATFORM.render(leaf1))
    assert "load override format=text" in device.log
    assert "-    host-name qfx;" in raw.compare_config()
    raw.discard_config()


# ---- read-only ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    "show configuration | display json", "show bgp neighbor | display json",
    "show interfaces et-0/0/1 extensive | no-more", "show route table blue.inet.0",
    "show class-of-service congestion-notification | match cnp"])
def test_show_commands_pass_the_guard(command: str) -> None:
    assert PLATFORM.show_command(command)


@pytest.mark.parametrize("command", [
    "configure exclusive", "request system reboot", "show configuration | save /tmp/x",
    "show version; request system halt", "clear bgp neighbor", "commit confirmed 1",
    "show interfaces | request system zeroize", "rollback 1", "start shell"])
def test_everything_else_is_refused(command: str) -> None:
    assert not PLATFORM.show_command(command)


def test_read_only_driver_refuses_changes() -> None:
    device, driver = _switch()
    guarded = PLATFORM.read_only(driver)
    assert isinstance(guarded, ReadOnlyDriver)
    for method in ("load_replace_candidate", "commit_config", "rollback", "confirm_commit"):
        with pytest.raises(ReadOnlyError):
            getattr(guarded, method)()
    with pytest.raises(ReadOnlyError):
        guarded.cli(["request system reboot"])
    guarded.get_config(retrieve="running")
    assert not [e for e in device.log if e.startswith(("load", "commit", "rollback"))]


# ---- collect -------------------------------------------------------------------------------


@pytest.mark.parametrize(("fabric", "name"), RECORDED)
def test_recorded_outputs_are_the_healthy_fabric(fabric: str, name: str) -> None:
    folder = fixture_folder(fabric, name)
    outputs = healthy_outputs(junos_fabric(fabric), name)
    if REGEN:
        folder.mkdir(parents=True, exist_ok=True)
        for command, text in outputs.items():
            (folder / fixture_name(command)).write_text(text, encoding="utf-8")
    assert recorded(folder) == outputs, "fixtures are stale: FLATFAB_REGEN_GOLDEN=1"


@pytest.mark.parametrize("case", collect_cases(), ids=lambda c: c.name)
def test_collect_reads_back_as_planned(case: Any) -> None:
    guarded = PLATFORM.read_only(case.driver)
    seen = PLATFORM.collect(guarded, case.planned, [])
    planned: DeviceState = case.planned
    assert seen.errors == []
    assert (seen.asn, seen.router_id, seen.loopback) == (planned.asn, planned.router_id,
                                                         planned.loopback)
    assert seen.vrfs == planned.vrfs
    for name, iface in planned.interfaces.items():
        got = seen.interfaces.get(name)
        assert got is not None, name
        assert (got.mtu, got.vrf, got.kind, got.parent, got.bridge) == (
            iface.mtu, iface.vrf, iface.kind, iface.parent, iface.bridge), name
        assert sorted(got.addresses) == sorted(iface.addresses), name
        if iface.qos is not None:
            assert got.qos is not None, name
            # the switch sizes lossless PGs itself: said, never judged
            assert set(got.qos.unknown) == {"pgs.3"}, name
            assert got.qos.model_copy(update={"unknown": {}}) == iface.qos, name
        else:
            assert got.qos is None, name
        if iface.peer is not None and iface.parent is None:
            # as planned, heard LLDP_AGE seconds ago with the hold time every neighbour sends
            assert got.peer == iface.peer.model_copy(update={
                "age_s": LLDP_AGE, "expires_s": LLDP_TTL - LLDP_AGE}), name
            assert got.lldp_neighbours == [], name
    for vrf, instance in planned.bgp.items():
        for key, peer in instance.peers.items():
            got_peer = seen.bgp[vrf].peers[key]
            assert (got_peer.state, got_peer.remote_asn) == ("Established", peer.remote_asn)
            assert (got_peer.peer_device, got_peer.interface, got_peer.address) == (
                peer.peer_device, peer.interface, peer.address), key
    # the ECMP hash as planned, or Junos's default (the 5-tuple) where the plan has none
    assert seen.lb == (planned.lb or LoadBalancing(hash_fields=list(FIVE_TUPLE)))
    # what the switch has beyond the model is named: its management port, with its address
    assert list(seen.not_modelled) == ["re0:mgmt-0"]
    assert MANAGEMENT_ADDRESS in seen.not_modelled["re0:mgmt-0"]
    assert all(c.startswith("show ") for c in case.commands())
    assert set(case.commands()) == set(junos_collect.COMMANDS)


def _collect_with(planned: DeviceState, outputs: dict[str, str]) -> DeviceState:
    driver = PLATFORM.adapt(napalm_driver(JunosDevice(shows=outputs)), read_only=True)
    return PLATFORM.collect(PLATFORM.read_only(driver), planned, [])


def _changed_config(outputs: dict[str, str], change: Any) -> dict[str, str]:
    config = json.loads(outputs[junos_collect.CONFIG])
    change(config["configuration"]["class-of-service"])
    return {**outputs, junos_collect.CONFIG: json.dumps(config)}


def _observed(fabric: FabricState, seen: DeviceState) -> FabricState:
    return fabric.model_copy(update={"devices": {**fabric.devices, seen.name: seen}})


def test_a_pfc_priority_that_disagrees_with_the_eos_spine_is_named() -> None:
    """mixed: junos leaf1 under eos spines. The leaf's RoCE class pauses on priority 4."""
    mixed = junos_fabric("mixed")
    planned = mixed.devices["leaf1"]
    outputs = recorded(fixture_folder("mixed", "leaf1"))

    def shift(cos: dict[str, Any]) -> None:
        for fc in cos["forwarding-classes"]["class"]:
            if "no-loss" in fc:
                fc["pfc-priority"] = 4
        for cnp in cos["congestion-notification-profile"]:
            cnp["output"]["ieee-802.1"]["code-point"] = [
                {"name": "100", "flow-control-queue": [3]}]

    seen = _collect_with(planned, _changed_config(outputs, shift))
    uplink = seen.interfaces["et-0/0/32"].qos
    assert uplink is not None and uplink.pfc == [4]
    assert mixed.devices["spine1"].platform == "eos"
    findings = run_checks(CheckContext(state=_observed(mixed, seen), plan=mixed,
                                       stage=Stage.LIVE))
    named = {(f.check, f.device) for f in findings if f.severity.rank <= 1}
    assert ("pfc.link_symmetry", "leaf1") in named, sorted(named)


def test_ecn_thresholds_read_at_the_switch_resolution_are_judged() -> None:
    """mixed: leaf1's ECN drop profile starts marking above where it stops (a hand edit on
    the switch): ecn.thresholds names it, the eos spines and frr leaves keep the plan."""
    mixed = junos_fabric("mixed")
    planned = mixed.devices["leaf1"]
    outputs = recorded(fixture_folder("mixed", "leaf1"))

    def crossed(cos: dict[str, Any]) -> None:
        for drop in cos["drop-profiles"]:
            low, high = drop["interpolate"]["fill-level"]
            drop["interpolate"]["fill-level"] = [high, low]

    seen = _collect_with(planned, _changed_config(outputs, crossed))
    queue = seen.interfaces["et-0/0/32"].qos
    planned_queue = planned.interfaces["et-0/0/32"].qos
    assert queue is not None and planned_queue is not None
    assert queue.queues[3].ecn != planned_queue.queues[3].ecn
    findings = run_checks(CheckContext(state=_observed(mixed, seen), plan=mixed,
                                       stage=Stage.LIVE))
    named = {(f.check, f.device) for f in findings if f.severity.rank <= 1}
    assert ("ecn.thresholds", "leaf1") in named, sorted(named)


def test_a_queue_without_ecn_on_the_switch_is_named() -> None:
    mixed = junos_fabric("mixed")
    planned = mixed.devices["leaf1"]

    def unmarked(cos: dict[str, Any]) -> None:
        for scheduler in cos["schedulers"]:
            scheduler.pop("explicit-congestion-notification", None)

    seen = _collect_with(planned, _changed_config(recorded(fixture_folder("mixed", "leaf1")),
                                                  unmarked))
    findings = run_checks(CheckContext(state=_observed(mixed, seen), plan=mixed,
                                       stage=Stage.LIVE))
    named = {(f.check, f.device) for f in findings if f.severity.rank <= 1}
    assert ("ecn.attached", "leaf1") in named, sorted(named)


def test_a_healthy_junos_leaf_has_no_lossless_findings() -> None:
    mixed = junos_fabric("mixed")
    seen = _collect_with(mixed.devices["leaf1"], recorded(fixture_folder("mixed", "leaf1")))
    findings = run_checks(CheckContext(state=_observed(mixed, seen), plan=mixed,
                                       stage=Stage.LIVE))
    assert not [(f.check, f.message) for f in findings
                if f.device == "leaf1" and f.severity.rank <= 1]


def test_an_unreadable_reply_is_recorded_not_fatal(leaf1: DeviceState) -> None:
    outputs = recorded(fixture_folder("lab", "leaf1"))
    outputs[junos_collect.ROUTES] = "<html>"
    del outputs[junos_collect.LLDP]
    seen = _collect_with(leaf1, outputs)
    assert any(e.startswith(junos_collect.ROUTES + ": ") for e in seen.errors)
    assert any(e.startswith(junos_collect.LLDP + ": ") for e in seen.errors)
    assert seen.bgp["default"].peers  # the rest was still read


def _as_device_prints(value: Any) -> Any:
    """Numbers as strings, one-element leaf-lists as scalars: how `display json` may print."""
    if isinstance(value, dict):
        return {k: _as_device_prints(v) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) == 1 and isinstance(value[0], (int, str)):
            return _as_device_prints(value[0])
        return [_as_device_prints(v) for v in value]
    return str(value) if isinstance(value, int) else value


def test_collect_reads_numbers_as_strings_and_single_leaf_lists(leaf1: DeviceState) -> None:
    outputs = recorded(fixture_folder("lab", "leaf1"))
    config = json.loads(outputs[junos_collect.CONFIG])
    outputs[junos_collect.CONFIG] = json.dumps(_as_device_prints(config))
    seen = _collect_with(leaf1, outputs)
    assert seen.errors == []
    for name in ("et-0/0/0", "et-0/0/50"):
        got, want = seen.interfaces[name].qos, leaf1.interfaces[name].qos
        assert got is not None and got.model_copy(update={"unknown": {}}) == want, name


def test_host_ports_read_as_gateway_members(leaf1: DeviceState) -> None:
    seen = _collect_with(leaf1, recorded(fixture_folder("lab", "leaf1")))
    host = seen.interfaces["et-0/0/0"]
    assert (host.kind, host.bridge, host.vrf, host.mtu) == (IfKind.HOST_PORT, "irb.100",
                                                            "blue", 9000)
    assert seen.interfaces["irb.100"].addresses == ["10.100.1.1/24"]
    assert seen.routes is not None and seen.routes["blue"]["10.100.1.0/24"].protocol == \
        "connected"


# ---- refusal at load ----------------------------------------------------------------------


def test_buffers_on_a_qfx52xx_are_refused_at_load(tmp_path: Path) -> None:
    for file in (ROOT / "intents" / "lab").glob("*.yaml"):
        shutil.copy(file, tmp_path / file.name)
    fabric = yaml.safe_load((tmp_path / "fabric.yaml").read_text())
    fabric["platform"] = "junos"
    (tmp_path / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    qos = yaml.safe_load((tmp_path / "qos.yaml").read_text())
    qos["asics"]["junos"] = {"family": "tomahawk-4"}  # QFX5230; lab sets qos.buffers
    (tmp_path / "qos.yaml").write_text(yaml.safe_dump(qos))
    with pytest.raises(InputError, match=r"platform junos on tomahawk-4 hardware cannot do "
                                         r"this \(buffers\)"):
        load_intent(tmp_path, known_platforms=PLATFORMS)


# ---- render cost --------------------------------------------------------------------------


def test_render_cost_on_rail_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    """ms per device on the rail fabric, without and with the oracle (printed with -s)."""
    devices = junos_switches(junos_fabric("rail"))
    started = time.perf_counter()
    for device in devices:
        PLATFORM.render(device)
    plain = 1000 * (time.perf_counter() - started) / len(devices)
    line = f"junos render on rail: {plain:.2f} ms/device ({len(devices)} devices)"
    if JUNOS.missing() is None:
        JUNOS.load()
        started = time.perf_counter()
        for device in devices:
            tree = configuration(device, PLATFORM.names)
            to_text(tree["configuration"])
            JUNOS.tree_violations(tree)
        checked = 1000 * (time.perf_counter() - started) / len(devices)
        line += f"; with the YANG oracle {checked:.2f} ms/device (modules already loaded)"
    print(line)
    assert plain < 1000


def test_the_junos_driver_has_ncclient_check_the_switch_s_host_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """NAPALM's own junos driver leaves PyEZ's hostkey_verify off, and ncclient then takes
    any key; flatfab's asks for the check, as every other session of flatfab checks it."""
    asked: dict[str, Any] = {}

    def connect(**kwargs: Any) -> None:
        asked.update(kwargs)
        raise ConnectionRefusedError("stop here")

    monkeypatch.setattr("jnpr.junos.device.netconf_ssh.connect", connect)
    driver = FlatfabJunosDriver("192.0.2.1", "netops", "secret",
                                optional_args={"port": 830})
    with pytest.raises(Exception, match=r"stop here|ConnectRefused"):
        driver.open()
    assert asked["hostkey_verify"] is True
    plain = get_network_driver("junos")("192.0.2.1", "netops", "secret")
    assert plain.device._hostkey_verify is False  # what NAPALM alone would have done
    with pytest.raises(TypeError, match="flatfab_junos"):
        PLATFORM.adapt(plain, read_only=True)
