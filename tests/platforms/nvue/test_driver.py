"""The nvue platform's driver and collect, against the stateful double (tests/doubles/nvue.py):
commit with NVUE's confirm timer (kept, expired, rolled back), rollback, the read-only
guard, collect from recorded outputs, and a lossless disagreement across a vendor boundary.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import paramiko
import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.model.state import DeviceState, FabricState, IfKind, PortCounters
from flatfab.platforms.base import ReadOnlyDriver, ReadOnlyError
from flatfab.platforms.nvue import PLATFORM
from flatfab.platforms.nvue.driver import STATE_DIR, NvueDriver, NvueError, owned
from flatfab.platforms.nvue.nvyaml import merge
from flatfab.platforms.nvue.render import tree
from tests.doubles.nvue import (
    NvueDouble,
    collect_cases,
    double_for,
    factory_tree,
    recorded,
    synthesized,
)
from tests.support.nvue import fabric


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return fabric("lab")


@pytest.fixture(scope="module")
def leaf1(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


def _driver(double: NvueDouble, *, read_only: bool = False) -> NvueDriver:
    driver = PLATFORM.adapt(double, read_only=read_only)
    assert isinstance(driver, NvueDriver)
    driver.clock = lambda: 1_795_000_000 + double.now
    return driver


def _factory(device: DeviceState) -> NvueDouble:
    return double_for(device, push=False)


def _plan_applied(double: NvueDouble, device: DeviceState) -> bool:
    return owned(double.applied) == owned(merge(factory_tree(device.name),
                                                tree(device, PLATFORM.names)))


# ---- push ------------------------------------------------------------------------------


def test_commit_confirmed_and_kept(leaf1: DeviceState) -> None:
    double = _factory(leaf1)
    driver = _driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    diff = driver.compare_config()
    assert "+      swp1:" in diff and "+    qos:" in diff
    assert double.mutating == []  # a diff changes nothing
    driver.commit_config(revert_in=90)
    assert driver.has_pending_commit()
    assert "nv config apply --confirm 2 -y" in double.commands  # 90 s: whole minutes, up
    assert any(c.startswith(f"nv config patch {STATE_DIR}/patch-") for c in double.commands)
    assert _plan_applied(double, leaf1)
    driver.confirm_commit()
    double.advance(3600)
    assert not driver.has_pending_commit()
    assert _plan_applied(double, leaf1) and double.saved == double.applied
    assert double.applied["interface"]["eth0"]["vrf"] == "mgmt"  # management kept
    assert driver.compare_config() == ""  # nothing loaded any more


def test_an_unconfirmed_commit_rolls_back_when_the_timer_expires(leaf1: DeviceState) -> None:
    double = _factory(leaf1)
    before = copy.deepcopy(double.applied)
    driver = _driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config(revert_in=60)
    assert double.applied != before
    double.advance(59)
    assert driver.has_pending_commit()
    double.advance(2)
    assert not driver.has_pending_commit()
    assert double.applied == before and double.saved == before
    assert any(line.startswith("[timer] confirm expired") for line in double.log)
    with pytest.raises(NvueError, match="no pending commit"):
        driver.confirm_commit()


def test_rollback_of_a_pending_commit(leaf1: DeviceState) -> None:
    double = _factory(leaf1)
    before = copy.deepcopy(double.applied)
    driver = _driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config(revert_in=300)
    driver.rollback()
    assert "nv config apply --confirm-no" in double.commands
    assert not driver.has_pending_commit() and double.applied == before


def test_rollback_of_a_confirmed_commit_restores_the_backup(leaf1: DeviceState) -> None:
    double = _factory(leaf1)
    before = copy.deepcopy(double.applied)
    driver = _driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config()
    assert _plan_applied(double, leaf1) and double.saved == double.applied
    driver.rollback()
    assert double.applied == before
    assert any(c.startswith(f"nv config replace {STATE_DIR}/before-") for c in double.commands)
    with pytest.raises(NvueError, match="nothing to roll back"):
        driver.rollback()


def test_a_second_push_replaces_what_flatfab_owns(leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    double.applied["vrf"]["stale"] = {"table": "auto"}
    double.applied["interface"]["swp9"] = {"type": "swp"}
    double.applied["qos"]["roce"] = {"state": "enabled", "mode": "lossless"}
    driver = _driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    diff = driver.compare_config()
    assert "-      swp9:" in diff and "-      stale:" in diff and "-      roce:" in diff
    driver.commit_config()
    assert _plan_applied(double, leaf1)
    assert "mgmt" in double.applied["vrf"] and "aaa" in double.applied["system"]


def test_a_failed_apply_leaves_nothing_pending(leaf1: DeviceState) -> None:
    double = _factory(leaf1)
    before = copy.deepcopy(double.applied)
    double.fail["nv config apply"] = "Invalid config [rev_id: 2]: qos pfc: port-buffer too big"
    driver = _driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    with pytest.raises(NvueError, match=r"commit failed, nothing applied: .*port-buffer") as exc:
        driver.commit_config(revert_in=60)
    assert "\n" not in str(exc.value)
    assert double.applied == before and double.pending is None
    assert double.commands[-1] == "nv config detach"


def test_a_switch_of_the_other_release_line_is_refused(leaf1: DeviceState) -> None:
    double = _factory(leaf1)
    double.outputs["nv show system -o json"] = '{"build": "Cumulus Linux 5.14.0"}\n'
    driver = _driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    with pytest.raises(NvueError, match=r"runs Cumulus Linux 5.14.0; .* spelled for "
                                        r"Cumulus Linux 5.15\+"):
        driver.commit_config(revert_in=60)
    assert double.mutating == []


def test_a_bad_candidate_is_one_clear_error(leaf1: DeviceState) -> None:
    driver = _driver(_factory(leaf1))
    with pytest.raises(NvueError, match="candidate: expected a list of set/unset"):
        driver.load_replace_candidate(config="interface: {}\n")
    with pytest.raises(NvueError, match="candidate: not YAML"):
        driver.load_replace_candidate(config="- set: [\n")


def _reversed(value: object) -> object:
    if isinstance(value, dict):
        return {k: _reversed(v) for k, v in reversed(list(value.items()))}
    return value


def test_drift_is_empty_after_a_push(leaf1: DeviceState) -> None:
    intended = PLATFORM.render(leaf1)
    double = double_for(leaf1)
    running, wanted = PLATFORM.drift_texts(_driver(double), intended)
    assert PLATFORM.sections(running) == PLATFORM.sections(wanted)
    double.applied = _reversed(double.applied)  # type: ignore[assignment]  # the switch's order
    running, wanted = PLATFORM.drift_texts(PLATFORM.read_only(_driver(double)), intended)
    assert running == wanted
    double.applied["qos"]["pfc-watchdog"]["robustness"] = 3
    running, wanted = PLATFORM.drift_texts(_driver(double), intended)
    drifted = {name for name, lines in PLATFORM.sections(running).items()
               if lines != PLATFORM.sections(wanted).get(name)}
    assert drifted == {"qos"}
    facts = _driver(double_for(leaf1)).get_facts()
    assert facts["os_version"] == "Cumulus Linux 5.15.0" and "swp51" in facts["interface_list"]


# ---- read-only -------------------------------------------------------------------------------


def test_read_only_collect_and_drift_send_only_reads(leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    driver = PLATFORM.read_only(_driver(double, read_only=True))
    assert isinstance(driver, ReadOnlyDriver)
    PLATFORM.collect(driver, leaf1, [])
    PLATFORM.drift_texts(driver, PLATFORM.render(leaf1))
    assert driver.has_pending_commit() is False
    assert PLATFORM.diff(driver, PLATFORM.render(leaf1), read_only=True) == ""
    assert double.mutating == [] and all(PLATFORM.show_command(c) for c in double.commands)
    for command in ("nv set qos roce", "nv config apply -y", "nv unset interface swp1"):
        with pytest.raises(ReadOnlyError):
            driver.cli([command])
    with pytest.raises(ReadOnlyError):
        driver.commit_config()
    inner = _driver(double, read_only=True)  # the driver refuses too, below the wrapper
    inner.load_replace_candidate(config=PLATFORM.render(leaf1))
    with pytest.raises(ReadOnlyError):
        inner.commit_config(revert_in=60)
    with pytest.raises(ReadOnlyError):
        inner.rollback()
    assert double.mutating == []


@pytest.mark.parametrize(("command", "reads"), [
    ("nv show interface -o json", True),
    ("nv show vrf blue router bgp neighbor -o json", True),
    ("nv config show -o json", True),
    ("nv config revision -o json", True),
    ("nv config apply --confirm-status", True),
    ("nv show interface; nv config apply -y", False),
    ("nv show interface -o json > /etc/passwd", False),
    ("nv show interface $(reboot)", False),
    ("nv set interface swp1 link state down", False),
    ("nv config apply -y", False),
    ("nv config patch /tmp/x.yaml", False),
    ("nv action clear interface swp1 qos roce counters", False),
    ("sudo reboot", False),
])
def test_show_command_allows_reads_only(command: str, reads: bool) -> None:
    assert PLATFORM.show_command(command) is reads


def test_adapt_refuses_unverified_host_keys(leaf1: DeviceState) -> None:
    double = _factory(leaf1)
    double.key_policy = paramiko.AutoAddPolicy()  # netmiko without ssh_strict
    with pytest.raises(NvueError, match="ssh_strict"):
        PLATFORM.adapt(double, read_only=True)
    with pytest.raises(TypeError):
        PLATFORM.adapt(object(), read_only=True)


# ---- collect ---------------------------------------------------------------------------------


def _without_unknown(device: DeviceState) -> DeviceState:
    copy_ = device.model_copy(deep=True)
    for iface in copy_.interfaces.values():
        if iface.qos is not None:
            iface.qos.unknown = {}
            if iface.qos.watchdog is not None:
                iface.qos.watchdog.unknown = {}
    return copy_


def test_collect_reads_recorded_outputs_back_as_planned(leaf1: DeviceState) -> None:
    (case,) = collect_cases()
    seen = PLATFORM.collect(PLATFORM.read_only(case.driver), case.planned, [])
    assert seen.errors == []
    assert (seen.asn, seen.router_id, seen.loopback) == (65101, "10.0.0.17", "10.0.0.17/32")
    assert seen.vrfs == {"blue": 100, "red": 200}
    for name, planned in leaf1.interfaces.items():
        got = seen.interfaces[name]
        assert (got.kind, got.vrf, got.addresses, got.bridge, got.parent, got.up) == (
            planned.kind, planned.vrf, planned.addresses, planned.bridge, planned.parent,
            planned.up), name
        assert planned.mtu is None or got.mtu == planned.mtu, name  # lo: NVUE says 65536
        assert got.speed_mbps == planned.speed_mbps, name
        if planned.parent is None and planned.peer is not None:  # LLDP runs on ports
            assert got.peer is not None, name
            assert (got.peer.device, got.peer.port) == (planned.peer.device,
                                                        planned.peer.port), name
            assert (got.peer.age_s, got.peer.expires_s) == (86190, 120), name  # as stated
    assert "swp3" not in seen.interfaces  # in the operational list, never configured
    for vrf, instance in leaf1.bgp.items():
        got_bgp = seen.bgp[vrf]
        assert (got_bgp.asn, got_bgp.router_id, got_bgp.networks, got_bgp.maximum_paths,
                got_bgp.keepalive, got_bgp.hold) == (
            instance.asn, instance.router_id, instance.networks, instance.maximum_paths,
            instance.keepalive, instance.hold)
        for key, peer in instance.peers.items():
            observed = got_bgp.peers[key]
            assert (observed.state, observed.remote_asn, observed.interface,
                    observed.peer_device) == ("Established", peer.remote_asn, peer.interface,
                                              peer.peer_device)
    plain = _without_unknown(seen)
    for name, planned in leaf1.interfaces.items():
        assert plain.interfaces[name].qos == planned.qos, name
    watchdog = seen.interfaces["swp51"].qos.watchdog  # type: ignore[union-attr]
    assert watchdog is not None and set(watchdog.unknown) == {"restore_ms"}
    assert seen.qos is not None and leaf1.qos is not None
    assert seen.qos.pools == leaf1.qos.pools and seen.qos.profiles == leaf1.qos.profiles
    assert "pools.egress_lossless" in seen.qos.unknown
    commands = case.commands()
    assert commands and all(PLATFORM.show_command(c) for c in commands)


def test_collect_names_what_it_cannot_read(leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    double.outputs["nv show vrf red router bgp neighbor -o json"] = "Error: bgpd is down\n"
    double.outputs["nv show interface -o json"] = "not json\n"
    seen = PLATFORM.collect(PLATFORM.read_only(_driver(double, read_only=True)), leaf1, [])
    assert seen.errors[0].startswith("interfaces: nv show interface: no JSON")
    assert any(e.startswith("bgp: nv show vrf red router bgp neighbor -o json: no JSON")
               for e in seen.errors)
    assert seen.bgp["red"].peers["swp51.200"].state is None
    assert seen.bgp["blue"].peers["swp51.100"].state == "Established"
    assert seen.interfaces["swp51"].up is None  # unread: unknown, never the admin state
    double.outputs["nv config show -o json"] = "Error: nvued is not running\n"
    with pytest.raises(NvueError, match="leaf1: applied config: no JSON") as caught:
        PLATFORM.collect(_driver(double), leaf1, [])
    assert "\n" not in str(caught.value)


def test_an_oper_down_port_is_down(leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    oper = json.loads(recorded("leaf1")["nv show interface -o json"])
    oper["swp52"]["link"]["oper-status"] = "down"  # admin up, no carrier
    double.outputs["nv show interface -o json"] = json.dumps(oper)
    seen = PLATFORM.collect(_driver(double), leaf1, [])
    assert sorted(n for n, i in seen.interfaces.items() if i.up is False) == ["swp52"]


# ---- a lossless disagreement across a vendor boundary ------------------------------------


def test_an_nvue_leaf_disagreeing_with_its_eos_spines_is_named() -> None:
    """mixed: EOS spines, nvue leaves 1-2, FRR leaves 3-4. leaf1 runs PFC on priority 4
    (and marks ECN later) where its EOS spines pause 3: the existing checks say so."""
    mixed = fabric("mixed")
    leaf1 = mixed.devices["leaf1"]
    assert {mixed.devices[p.peer.device].platform for p in leaf1.interfaces.values()
            if p.peer and p.kind is IfKind.FABRIC and p.parent is None} == {"eos"}
    double = double_for(leaf1, outputs=synthesized(leaf1))
    pfc = double.applied["qos"]["pfc"]
    for profile in pfc.values():
        profile["switch-priority"] = {"4": {}}
    marks = double.applied["qos"]["congestion-control"]["default-global"]["traffic-class"]["3"]
    marks["min-threshold"] = 3_000_000  # above max: and after PFC would fire
    seen = PLATFORM.collect(PLATFORM.read_only(_driver(double, read_only=True)), leaf1, [])
    assert seen.errors == []
    observed = mixed.model_copy(update={"devices": {**mixed.devices, "leaf1": seen}})
    findings = run_checks(CheckContext(state=observed, plan=mixed, stage=Stage.LIVE))
    messages = {(f.check, f.message) for f in findings if f.device == "leaf1"}
    assert ("pfc.link_symmetry", "PFC differs across leaf1:swp33--spine1:Ethernet1: "
            "leaf1:swp33 on 4, spine1:Ethernet1 on 3") in messages
    assert ("pfc.link_symmetry", "PFC differs across leaf1:swp34--spine2:Ethernet1: "
            "leaf1:swp34 on 4, spine2:Ethernet1 on 3") in messages
    assert ("ecn.thresholds", "leaf1:swp33 queue 3 ECN min 3000000 B is not below its max "
            "1500000 B") in messages
    assert ("pfc.intent", "leaf1:swp33 has PFC on 4, the intent says 3") in messages


def test_a_merge_adds_without_clearing(leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    double.applied["interface"]["swp9"] = {"type": "swp"}
    driver = _driver(double)
    driver.load_merge_candidate(config="- set:\n    interface:\n      swp10:\n        type: swp\n")
    diff = driver.compare_config()
    assert "+      swp10:" in diff and "-      swp9:" not in diff
    driver.commit_config()
    assert {"swp9", "swp10", "swp51"} <= set(double.applied["interface"])


def test_the_5_14_spelling_goes_to_a_5_14_switch(leaf1: DeviceState) -> None:
    from flatfab.platforms.nvue.render import RELEASES, render  # noqa: PLC0415

    double = _factory(leaf1)
    double.outputs["nv show system -o json"] = '{"build": "Cumulus Linux 5.14.0"}\n'
    driver = _driver(double)
    driver.release = RELEASES["5.14"]
    driver.load_replace_candidate(config=render(leaf1, PLATFORM.names, RELEASES["5.14"]))
    driver.commit_config(revert_in=120)
    driver.confirm_commit()
    assert double.applied["interface"]["vlan100"]["ip"] == {
        "address": {"10.100.1.1/24": {}}, "vrf": "blue"}


def test_the_lab_reaches_a_node_with_keys_and_verified_host_keys(tmp_path: Path) -> None:
    options = PLATFORM.lab_connection(key_file=tmp_path / "id", known_hosts=tmp_path / "kh")
    assert options == {"netmiko": {"extras": {
        "use_keys": True, "key_file": str(tmp_path / "id"), "ssh_strict": True,
        "alt_host_keys": True, "alt_key_file": str(tmp_path / "kh")}}}
    assert PLATFORM.facts.connection.plugin == "netmiko"
    assert PLATFORM.connection_extras({"ssh_strict": True}, read_only=True) == {
        "ssh_strict": True, "conn_timeout": 10.0, "banner_timeout": 10.0, "auth_timeout": 10.0}


# ---- counters ----------------------------------------------------------------------------


def _counters_of(seen: DeviceState) -> dict[str, PortCounters | None]:
    return {n: i.counters for n, i in seen.interfaces.items() if i.qos is not None}


def test_pfc_and_ecn_counters_are_collected(lab: FabricState, leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    seen = PLATFORM.collect(PLATFORM.read_only(_driver(double, read_only=True)), leaf1, [])
    assert seen.errors == []
    assert _counters_of(seen) == {
        "swp1": PortCounters(pfc_rx_frames=17, pfc_tx_frames=5, ecn_marked={3: 250}),
        "swp2": PortCounters(pfc_rx_frames=0, pfc_tx_frames=0, ecn_marked={3: 0}),
        "swp51": PortCounters(pfc_rx_frames=0, pfc_tx_frames=42, ecn_marked={3: 12}),
        "swp52": PortCounters(pfc_rx_frames=0, pfc_tx_frames=0, ecn_marked={3: 3})}
    observed = lab.model_copy(update={"devices": {**lab.devices, "leaf1": seen}})
    findings = run_checks(CheckContext(state=observed, plan=lab, stage=Stage.LIVE),
                          only=["ecn.pause_without_marks"])
    assert findings == []
    assert PLATFORM.class_counters(PLATFORM.read_only(_driver(double, read_only=True)))[
        "swp1"][3] == {"packets": 4000}
    assert double.mutating == []


def test_pauses_with_no_ecn_mark_are_named(lab: FabricState, leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    for command, text in list(double.outputs.items()):
        if command.endswith("counters qos -o json"):
            double.outputs[command] = re.sub(r'"ecn-marked-frames": \d+',
                                             '"ecn-marked-frames": 0', text)
    seen = PLATFORM.collect(_driver(double), leaf1, [])
    observed = lab.model_copy(update={"devices": {**lab.devices, "leaf1": seen}})
    findings = run_checks(CheckContext(state=observed, plan=lab, stage=Stage.LIVE),
                          only=["ecn.pause_without_marks"])
    assert [f.device for f in findings] == ["leaf1"]
    assert findings[0].message.startswith("leaf1 sent 47 PFC pause frames while its lossless")


def test_counters_a_switch_does_not_report_are_unknown(leaf1: DeviceState) -> None:
    double = double_for(leaf1)
    for command in list(double.outputs):
        if command.endswith("counters qos -o json"):
            double.outputs[command] = '{"port-stats": {"rx-stats": {"rx-frames": 1}}}\n'
    seen = PLATFORM.collect(_driver(double), leaf1, [])
    assert seen.errors == [] and all(c is None for c in _counters_of(seen).values())
    del double.outputs["nv show interface swp1 counters qos -o json"]
    seen = PLATFORM.collect(_driver(double), leaf1, [])
    assert len(seen.errors) == 1 and seen.errors[0].startswith(
        "counters: `nv show interface swp1 counters qos -o json` failed")
