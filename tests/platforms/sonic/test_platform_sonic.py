"""The sonic platform: render (golden files, SONiC's YANG models), collect, push, read-only.

Golden files: tests/golden/platforms/sonic/<fabric>/<device>.conf, regenerated with
FLATFAB_REGEN_GOLDEN=1. The switch is tests/doubles/sonic.py with recorded outputs.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import paramiko
import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.model.state import DeviceState, FabricState, IfKind, Interface, PortCounters
from flatfab.platforms import configdb
from flatfab.platforms.base import ReadOnlyDriver, ReadOnlyError
from flatfab.platforms.sonic import PLATFORM, changes
from flatfab.platforms.sonic.collect import PORT_MAP, QUEUE_MAP
from flatfab.platforms.sonic.driver import CommitRefusedError, SonicError
from flatfab.platforms.sonic.render import config_db
from tests.doubles.sonic import FACTORY_FRR, SonicDouble, factory_config_db, recorded
from tests.support.golden import match_golden
from tests.support.oracles import SONIC, usable
from tests.support.paths import ROOT
from tests.support.sonic import fabric, sonic_double, sonic_driver, switches

GOLDEN = ROOT / "tests" / "golden" / "platforms" / "sonic"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))
FABRICS = ("lab", "numbered", "mixed", "rail")


@pytest.fixture(scope="module")
def tmp_intents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sonic-intents")


@pytest.fixture(scope="module")
def lab(tmp_intents: Path) -> FabricState:
    return fabric("lab", tmp_intents)


@pytest.fixture(scope="module")
def leaf1(lab: FabricState) -> DeviceState:
    return lab.devices["leaf1"]


# ---- render ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", FABRICS)
def test_render_matches_golden_files(name: str, tmp_intents: Path) -> None:
    produced = {f"{name}/{d.name}.conf": PLATFORM.render(d)
                for d in switches(fabric(name, tmp_intents))}
    match_golden(GOLDEN, name, produced, ".conf")


def test_render_is_byte_identical(lab: FabricState) -> None:
    for device in switches(lab):
        assert PLATFORM.render(device) == PLATFORM.render(device.model_copy(deep=True))


def test_sections_split_config_db_and_frr(leaf1: DeviceState) -> None:
    sections = PLATFORM.sections(PLATFORM.render(leaf1))
    assert list(sections) == ["config_db", "frr"]
    db = configdb.load("\n".join(sections["config_db"]))
    assert not [t for t in db if t.startswith("FLATFAB_")]
    assert db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split"
    assert db["VLAN_SUB_INTERFACE"]["Ethernet400.100"] == {
        "admin_status": "up", "vlan": "100", "vrf_name": "Vrf_blue",
        "ipv6_use_link_local_only": "enable"}
    assert db["INTERFACE"]["Ethernet400"] == {"ipv6_use_link_local_only": "enable"}
    assert db["VLAN_MEMBER"]["Vlan100|Ethernet0"] == {"tagging_mode": "untagged"}
    assert "Vlan100|10.100.1.1/24" in db["VLAN_INTERFACE"]
    assert "router bgp 65101 vrf Vrf_blue" in sections["frr"]
    assert not any(line.startswith(" ip address") for line in sections["frr"])


def test_naming_follows_sonic_limits() -> None:
    names = PLATFORM.names
    assert names.physical(1) == "Ethernet0" and names.physical(64) == "Ethernet504"
    assert names.subinterface("Ethernet504", 100) == "Ethernet504.100"
    assert names.subinterface("Ethernet504", 1000) == "Eth504.1000"
    assert names.vrf("blue") == "Vrf_blue" and names.tenant_of("Vrf_blue") == "blue"
    assert names.vrf_problem("a-very-long-tenant") is not None  # Linux: 15 characters


# ---- YANG oracle -------------------------------------------------------------------------


def yang_violations(db: configdb.ConfigDb) -> list[str]:
    """SONiC's YANG verdict on rendered CONFIG_DB (tests/support/oracles.py)."""
    return usable(SONIC).config_db_violations(db)


@pytest.mark.parametrize("name", FABRICS)
def test_rendered_config_db_passes_sonic_yang(name: str, tmp_intents: Path) -> None:
    for device in switches(fabric(name, tmp_intents)):
        found = yang_violations(config_db(device, PLATFORM.names))
        assert found == [], f"{device.name}: {found}"


def test_unweighted_classes_get_the_smallest_dwrr_weight(leaf1: DeviceState) -> None:
    db = config_db(leaf1, PLATFORM.names)
    assert db["SCHEDULER"]["SCHED_DWRR_BEST_EFFORT"] == {"type": "DWRR", "weight": "1"}
    assert all(int(row["weight"]) >= 1 for row in db["SCHEDULER"].values() if "weight" in row)
    # and read back as "no ETS share", as planned
    _, ports = configdb.from_config_db(configdb.parse_json(db), virtual=False)
    assert ports["Ethernet400"].queues == leaf1.interfaces["Ethernet400"].qos.queues


def test_ports_read_back_share_one_model_per_queue_configuration(leaf1: DeviceState) -> None:
    """A spine's thousand ports name the same schedulers and profiles: each distinct queue
    is built once and shared, and every port still reads back as planned."""
    db = configdb.parse_json(config_db(leaf1, PLATFORM.names))
    _, ports = configdb.from_config_db(db, virtual=False)
    planned = {n: i.qos for n, i in leaf1.interfaces.items() if i.qos is not None}
    assert len(ports) >= 2
    for name, port in ports.items():
        assert port.queues == planned[name].queues, name
    first, second = (ports[n] for n in sorted(ports)[:2])
    assert all(first.queues[q] is second.queues[q] for q in first.queues)
    # a queue bound to another WRED profile is a model of its own
    key = next(k for k in db["QUEUE"] if k.startswith(f"{sorted(ports)[1]}|")
               and "wred_profile" in db["QUEUE"][k])
    db["WRED_PROFILE"]["OTHER"] = dict(db["WRED_PROFILE"][db["QUEUE"][key]["wred_profile"]],
                                       green_min_threshold="1000")
    db["QUEUE"][key] = dict(db["QUEUE"][key], wred_profile="OTHER")
    _, ports = configdb.from_config_db(db, virtual=False)
    q = int(key.partition("|")[2])
    changed = ports[sorted(ports)[1]].queues[q]
    assert changed.ecn is not None and changed.ecn.min_bytes == 1000
    assert ports[sorted(ports)[0]].queues[q].ecn != changed.ecn


def test_short_subinterface_names_validate(leaf1: DeviceState) -> None:
    device = leaf1.model_copy(deep=True)
    port = device.interfaces["Ethernet400"].model_copy(update={"name": "Ethernet504"})
    device.interfaces["Ethernet504"] = port
    sub = PLATFORM.names.subinterface("Ethernet504", 1000)
    device.interfaces[sub] = Interface(name=sub, kind=IfKind.FABRIC, vrf="blue", mtu=9216,
                                       up=True, parent="Ethernet504",
                                       addresses=["10.254.0.1/31"])
    db = config_db(device, PLATFORM.names)
    assert db["VLAN_SUB_INTERFACE"]["Eth504.1000"]["vlan"] == "1000"
    assert yang_violations(db) == []


def test_yang_oracle_rejects_what_sonic_rejects(leaf1: DeviceState) -> None:
    db = config_db(leaf1, PLATFORM.names)
    db["VRF"]["blue"] = {}  # no Vrf prefix
    db["VLAN_SUB_INTERFACE"]["Ethernet400.100"]["vrf_name"] = "Vrf_green"
    found = " ".join(yang_violations(db))
    assert "VRF|blue" in found and "Ethernet400.100" in found


# ---- the switch double --------------------------------------------------------------------


def _flatfab_part(double: SonicDouble, device: DeviceState) -> configdb.ConfigDb:
    """flatfab's part of the double's CONFIG_DB, read as the driver reads it (a list field,
    as apply-patch leaves it, as ``name@``)."""
    return changes.project(configdb.normalize(double.config_db)[0],
                           config_db(device, PLATFORM.names))


def test_collect_reads_recorded_outputs(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    seen = PLATFORM.collect(PLATFORM.read_only(sonic_driver(double, read_only=True)), leaf1, [])
    assert seen.errors == []
    assert seen.asn == 65101 and seen.router_id == "10.0.0.17"
    assert seen.loopback == "10.0.0.17/32" and seen.vrfs == {"blue": 100, "red": 200}
    vlan = seen.interfaces["Vlan100"]
    assert (vlan.kind, vlan.vrf, vlan.addresses) == (IfKind.BRIDGE, "blue", ["10.100.1.1/24"])
    host = seen.interfaces["Ethernet0"]
    assert (host.bridge, host.vrf, host.mtu, host.speed_mbps) == ("Vlan100", "blue", 9000,
                                                                  100000)
    assert host.peer is not None and host.peer.device == "host1"
    assert seen.interfaces["Ethernet8"].up is False  # FRR says oper down
    sub = seen.interfaces["Ethernet400.100"]
    assert (sub.vrf, sub.parent, sub.kind) == ("blue", "Ethernet400", IfKind.FABRIC)
    assert seen.bgp["blue"].peers["Ethernet400.100"].state == "Established"
    assert seen.bgp["red"].peers["Ethernet408.200"].state == "Active"
    assert seen.bgp["default"].peers["Ethernet400"].interface == "Ethernet400"
    assert seen.routes is not None
    hops = seen.routes["blue"]["10.100.2.0/24"].nexthops
    assert [h.interface for h in hops] == ["Ethernet400.100", "Ethernet408.100"]
    for port in ("Ethernet0", "Ethernet400"):
        assert seen.interfaces[port].qos == leaf1.interfaces[port].qos
    assert seen.qos is not None and leaf1.qos is not None
    assert seen.qos.pools == leaf1.qos.pools and seen.qos.profiles == leaf1.qos.profiles
    assert double.mutating == []


def test_counters_from_counters_db_and_queuestat(leaf1: DeviceState) -> None:
    driver = PLATFORM.read_only(sonic_driver(sonic_double(leaf1), read_only=True))
    assert PLATFORM.class_counters(driver)["Ethernet0"][3] == {"packets": 4000}
    pfc = PLATFORM.pfc_counters(driver, ["Ethernet0", "Ethernet400", "Ethernet999"])
    assert pfc["Ethernet0"]["rx"][3] == 17 and pfc["Ethernet400"]["tx"][3] == 42
    assert "Ethernet999" not in pfc


# leaf1's recorded COUNTERS_DB: Ethernet408 is in neither map (its counters are unknown)
PORT_OIDS = {"Ethernet0": "oid:0x1000000000002", "Ethernet8": "oid:0x1000000000003",
             "Ethernet400": "oid:0x1000000000033"}
QUEUE3_OIDS = {"Ethernet0": "oid:0x15000000000013", "Ethernet8": "oid:0x15000000000023",
               "Ethernet400": "oid:0x15000000000333"}


def _hgetall(oid: str) -> str:
    return f"sonic-db-cli COUNTERS_DB HGETALL COUNTERS:{oid}"


def _observed(lab: FabricState, seen: DeviceState) -> FabricState:
    return lab.model_copy(update={"devices": {**lab.devices, seen.name: seen}})


def _pause_without_marks(lab: FabricState, seen: DeviceState) -> list[tuple[str, str, str]]:
    findings = run_checks(CheckContext(state=_observed(lab, seen), plan=lab, stage=Stage.LIVE))
    return [(f.device, f.severity.value, f.message) for f in findings
            if f.check == "ecn.pause_without_marks"]


def test_pfc_and_ecn_counters_are_collected(lab: FabricState, leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    seen = PLATFORM.collect(PLATFORM.read_only(sonic_driver(double, read_only=True)), leaf1, [])
    assert seen.errors == []
    counters = {name: seen.interfaces[name].counters
                for name in ("Ethernet0", "Ethernet8", "Ethernet400", "Ethernet408")}
    assert counters == {
        "Ethernet0": PortCounters(pfc_rx_frames=17, pfc_tx_frames=5, ecn_marked={3: 250}),
        "Ethernet8": PortCounters(pfc_rx_frames=0, pfc_tx_frames=0, ecn_marked={3: 0}),
        "Ethernet400": PortCounters(pfc_rx_frames=0, pfc_tx_frames=42, ecn_marked={3: 12}),
        "Ethernet408": None,  # in no COUNTERS_DB map: unknown, not an error
    }
    assert all(i.counters is None for i in seen.interfaces.values() if i.qos is None)
    assert _pause_without_marks(lab, seen) == []
    # read-only reads: the two maps, then each port's hash and its lossless queue 3 only
    counter_reads = [c for c in double.commands if "COUNTERS" in c]
    assert counter_reads == [PORT_MAP, QUEUE_MAP, *(
        command for port in ("Ethernet0", "Ethernet400", "Ethernet8")
        for command in (_hgetall(PORT_OIDS[port]), _hgetall(QUEUE3_OIDS[port])))]
    assert all(PLATFORM.show_command(c) for c in double.commands)
    assert double.mutating == [] and not any("sudo" in c for c in double.commands)


def test_pauses_with_no_ecn_mark_are_named(lab: FabricState, leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    for oid in QUEUE3_OIDS.values():  # the recorded pauses, but no queue marked a packet
        double.outputs[_hgetall(oid)] = re.sub(r"(ECN_MARKED_\w+': )'\d+'", r"\1'0'",
                                               double.outputs[_hgetall(oid)])
    seen = PLATFORM.collect(PLATFORM.read_only(sonic_driver(double, read_only=True)), leaf1, [])
    assert seen.errors == []
    assert {n: c.ecn_marked for n, i in seen.interfaces.items() if (c := i.counters)} == {
        "Ethernet0": {3: 0}, "Ethernet8": {3: 0}, "Ethernet400": {3: 0}}
    found = _pause_without_marks(lab, seen)
    assert [(device, severity) for device, severity, _ in found] == [("leaf1", "warning")]
    assert found[0][2].startswith("leaf1 sent 47 PFC pause frames while its lossless queues")
    assert double.mutating == []


@pytest.mark.parametrize("missing", ["maps", "hashes", "fields"])
def test_counters_a_switch_does_not_have_are_unknown_not_errors(
        lab: FabricState, leaf1: DeviceState, missing: str) -> None:
    """sonic-vs and switches without PFC or WRED/ECN counter polling: an empty map, an
    empty hash, or a hash without the PFC and ECN fields."""
    double = sonic_double(leaf1, pushed=True)
    if missing == "maps":
        double.outputs.update({PORT_MAP: "{}\n", QUEUE_MAP: "{}\n"})
    for oid in (*PORT_OIDS.values(), *QUEUE3_OIDS.values()):
        double.outputs[_hgetall(oid)] = ("{}\n" if missing == "hashes" else
                                         "{'SAI_PORT_STAT_IF_IN_UCAST_PKTS': '90210'}\n")
    seen = PLATFORM.collect(PLATFORM.read_only(sonic_driver(double, read_only=True)), leaf1, [])
    assert seen.errors == []
    assert all(i.counters is None for i in seen.interfaces.values())
    assert _pause_without_marks(lab, seen) == []
    if missing == "maps":  # nothing to read beyond the two maps
        assert [c for c in double.commands if "COUNTERS" in c] == [PORT_MAP, QUEUE_MAP]


def test_malformed_counters_are_recorded_and_the_rest_is_read(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    double.broken[_hgetall(PORT_OIDS["Ethernet0"])] = "(error) WRONGTYPE Operation\n"
    double.outputs[_hgetall(QUEUE3_OIDS["Ethernet400"])] = \
        "{'SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS': 'n/a'}\n"
    seen = PLATFORM.collect(PLATFORM.read_only(sonic_driver(double, read_only=True)), leaf1, [])
    assert seen.errors == [
        "counters: COUNTERS:oid:0x1000000000002 (Ethernet0): not a sonic-db-cli hash "
        "('(error) WRONGTYPE Operation')",
        "counters: COUNTERS:oid:0x15000000000333 (Ethernet400 queue 3): "
        "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS is not a count ('n/a')"]
    counters = {n: i.counters for n, i in seen.interfaces.items() if i.counters}
    assert counters == {
        "Ethernet0": PortCounters(ecn_marked={3: 250}),  # its PFC frames are unknown
        "Ethernet8": PortCounters(pfc_rx_frames=0, pfc_tx_frames=0, ecn_marked={3: 0}),
        "Ethernet400": PortCounters(pfc_rx_frames=0, pfc_tx_frames=42)}
    assert seen.bgp["default"].peers and seen.interfaces["Ethernet0"].qos is not None
    double.broken = {QUEUE_MAP: "Error: Redis connection refused\n"}
    seen = PLATFORM.collect(PLATFORM.read_only(sonic_driver(double, read_only=True)), leaf1, [])
    assert len(seen.errors) == 1 and seen.errors[0].startswith(
        "counters: COUNTERS_QUEUE_NAME_MAP: not a sonic-db-cli hash")
    assert all(i.counters is None for i in seen.interfaces.values())
    assert seen.routes and double.mutating == []


def test_bad_device_output_is_one_clear_error(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    double.broken["show runningconfiguration all"] = "Error: Redis connection refused\n"
    with pytest.raises(SonicError, match="CONFIG_DB: no JSON") as caught:
        PLATFORM.collect(sonic_driver(double), leaf1, [])
    assert "\n" not in str(caught.value)
    double.broken = {"vtysh -c 'show bgp vrf all summary json'": "% bgpd is not running\n"}
    seen = PLATFORM.collect(sonic_driver(double), leaf1, [])
    assert seen.errors == ["bgp: bgp: no JSON in the output ('% bgpd is not running')"]


def test_drift_is_empty_after_a_push(leaf1: DeviceState) -> None:
    intended = PLATFORM.render(leaf1)
    running, wanted = PLATFORM.drift_texts(sonic_driver(sonic_double(leaf1, pushed=True)), intended)
    assert PLATFORM.sections(running) == PLATFORM.sections(wanted)


def test_commit_confirmed_keeps_the_change(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1)
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    assert "+  \"Vlan100|Ethernet0\"" in driver.compare_config()
    driver.commit_config(revert_in=120)
    assert driver.has_pending_commit()
    assert any(c.startswith("sudo -n config checkpoint flatfab-") for c in double.commands)
    assert any(c.startswith("sudo -n config apply-patch ") for c in double.commands)
    driver.confirm_commit()
    double.advance(600)
    assert not driver.has_pending_commit()
    assert _flatfab_part(double, leaf1) == config_db(leaf1, PLATFORM.names)
    assert double.saved == double.config_db
    assert double.config_db["PORT"]["Ethernet0"]["lanes"] == "0,1,2,3,4,5,6,7"  # kept
    assert "BUFFER_POOL" in double.config_db and "router bgp 65101" in double.frr


def test_unconfirmed_commit_is_rolled_back_by_the_timer(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1)
    before, frr_before = json.dumps(double.config_db, sort_keys=True), double.frr
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config(revert_in=60)
    assert json.dumps(double.config_db, sort_keys=True) != before
    double.advance(59)
    assert driver.has_pending_commit()
    double.advance(2)
    assert not driver.has_pending_commit()
    assert json.dumps(double.config_db, sort_keys=True) == before and double.frr == frr_before
    assert any(c.startswith("[timer flatfab-revert-") for c in double.commands)
    assert "config save -y" not in " ".join(double.commands)


def test_rollback_restores_the_last_checkpoint(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1)
    before = json.dumps(double.config_db, sort_keys=True)
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config()
    assert not driver.has_pending_commit() and double.saved == double.config_db
    driver.rollback()
    assert json.dumps(double.config_db, sort_keys=True) == before
    assert double.saved == double.config_db and double.frr == FACTORY_FRR
    assert any(c.startswith("sudo -n sh /etc/sonic/flatfab/revert-") for c in double.commands)


def test_rollback_of_a_pending_commit(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1)
    before = json.dumps(double.config_db, sort_keys=True)
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config(revert_in=300)
    driver.rollback()
    assert not driver.has_pending_commit()
    assert json.dumps(double.config_db, sort_keys=True) == before


def test_failed_apply_is_rolled_back_at_once(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1)
    before = json.dumps(double.config_db, sort_keys=True)
    double.fail["config apply-patch"] = "Error: Given patch will produce invalid config"
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    with pytest.raises(SonicError, match=r"rolled back: .*invalid config"):
        driver.commit_config(revert_in=60)
    assert json.dumps(double.config_db, sort_keys=True) == before
    assert not double.timers and not driver.has_pending_commit()


def test_first_lossless_push_onto_a_factory_switch_is_refused(leaf1: DeviceState) -> None:
    double = SonicDouble(factory_config_db("leaf1"), outputs=recorded("leaf1"))
    driver = sonic_driver(double)
    intended = PLATFORM.render(leaf1)
    running, _ = PLATFORM.drift_texts(driver, intended)
    notes = PLATFORM.change_notes(running, intended)
    assert "/BUFFER_POOL/ingress_lossless_pool/size" in notes[2]
    assert notes[-2].startswith("/DEVICE_METADATA/localhost/docker_routing_config_mode")
    assert notes[-1].startswith("/PFC_WD: GCU refuses") and "`config reload`" in notes[-1]
    driver.load_replace_candidate(config=intended)
    with pytest.raises(CommitRefusedError, match="config qos reload"):
        driver.commit_config(revert_in=60)
    assert double.mutating == []


def test_refused_buffer_edits_are_flagged_and_not_pushed(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    changed = leaf1.model_copy(deep=True)
    assert changed.qos is not None
    changed.qos.pools["ingress_lossless"].size += 1_000_000
    changed.qos.profiles["lossless_100000_3m_mtu9216"].size += 1024
    changed.qos.profiles["lossless_100000_3m_mtu9216"].xoff += 1024
    intended = PLATFORM.render(changed)
    running, _ = PLATFORM.drift_texts(sonic_driver(double), intended)
    notes = PLATFORM.change_notes(running, intended)
    assert notes == [
        "/BUFFER_POOL/ingress_lossless_pool/size: GCU does not resize or replace buffer pools;"
        " needs `config qos reload` (disruptive)",
        "/BUFFER_PROFILE/pg_lossless_100000_3m_mtu9216_profile/size: GCU edits only dynamic_th"
        " and xoff of a buffer profile; needs `config qos reload` (disruptive)"]
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=intended)
    double.log.clear()
    with pytest.raises(CommitRefusedError, match="config qos reload"):
        driver.commit_config(revert_in=60)
    assert double.mutating == []


def test_xoff_alone_goes_through_apply_patch(leaf1: DeviceState) -> None:
    changed = leaf1.model_copy(deep=True)
    assert changed.qos is not None
    changed.qos.profiles["lossless_100000_3m_mtu9216"].xoff += 1024
    running = PLATFORM.render(leaf1)
    assert PLATFORM.change_notes(running, PLATFORM.render(changed)) == []
    double = sonic_double(leaf1, pushed=True)
    driver = sonic_driver(double)
    driver.load_replace_candidate(config=PLATFORM.render(changed))
    driver.commit_config()
    patch_file = next(p for p in double.files if "/patch-" in p)
    assert json.loads(double.files[patch_file]) == [{
        "op": "replace", "path": "/BUFFER_PROFILE/pg_lossless_100000_3m_mtu9216_profile/xoff",
        "value": "113664"}]


def test_read_only_collect_and_drift_send_no_mutating_command(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    driver = PLATFORM.read_only(sonic_driver(double, read_only=True))
    assert isinstance(driver, ReadOnlyDriver)
    PLATFORM.collect(driver, leaf1, [])
    PLATFORM.drift_texts(driver, PLATFORM.render(leaf1))
    PLATFORM.class_counters(driver)
    assert driver.has_pending_commit() is False
    assert double.mutating == [] and not any("sudo" in c for c in double.commands)
    with pytest.raises(ReadOnlyError):
        driver.cli(["config save -y"])
    with pytest.raises(ReadOnlyError):
        driver.commit_config()
    inner = sonic_driver(double, read_only=True)  # the driver refuses too, below the wrapper
    inner.load_replace_candidate(config=PLATFORM.render(leaf1))
    with pytest.raises(ReadOnlyError):
        inner.commit_config(revert_in=60)
    assert double.mutating == []


@pytest.mark.parametrize(("command", "reads"), [
    ("show runningconfiguration all", True),
    ("vtysh -c 'show bgp vrf all summary json'", True),
    ("sonic-db-cli COUNTERS_DB HGETALL COUNTERS:oid:0x1000000000002", True),
    ("redis-cli -n 4 HGETALL 'PORT|Ethernet0'", True),
    ("sonic-db-cli STATE_DB HGETALL 'TRANSCEIVER_INFO|Ethernet0'", True),
    ("sonic-db-cli STATE_DB HGETALL PORT|Ethernet0", False),  # a pipe, not a key
    ("sonic-db-cli STATE_DB KEYS x | sh", False),
    ("sonic-db-cli STATE_DB HGETALL 'a' ; reboot", False),
    ("vtysh -c 'configure terminal'", False),
    ("show version; config reload -y", False),
    ("sonic-db-cli CONFIG_DB HSET PORT|Ethernet0 mtu 1500", False),
    ("config save -y", False),
])
def test_show_command_allows_reads_only(command: str, reads: bool) -> None:
    assert PLATFORM.show_command(command) is reads


def test_adapt_refuses_unverified_host_keys(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1)
    double.key_policy = paramiko.AutoAddPolicy()  # netmiko without ssh_strict
    with pytest.raises(SonicError, match="ssh_strict"):
        PLATFORM.adapt(double, read_only=True)
    with pytest.raises(TypeError):
        PLATFORM.adapt(object(), read_only=True)


def test_malformed_bgp_json_is_recorded_not_raised(leaf1: DeviceState) -> None:
    double = sonic_double(leaf1, pushed=True)
    double.broken["vtysh -c 'show bgp vrf all summary json'"] = json.dumps(
        {"default": {"ipv4Unicast": {"as": "not-a-number", "routerId": "10.0.0.17"}}})
    seen = PLATFORM.collect(sonic_driver(double), leaf1, [])
    # the unreadable AS number is named; the rest of the instance is still read
    assert seen.errors == ["bgp: VRF default: AS number 'not-a-number' is not asplain or asdot"]
    assert seen.asn is None and seen.router_id == "10.0.0.17"


def test_rollout_diff_carries_the_change_notes(leaf1: DeviceState) -> None:
    """What `rollout --dry-run` shows per device: the diff and what the change needs
    beyond a commit, read through the read-only guard."""
    from types import SimpleNamespace  # noqa: PLC0415

    from flatfab.workflows.commands.rollout import DeviceOutcome, _diff  # noqa: PLC0415

    double = SonicDouble(factory_config_db("leaf1"), outputs=recorded("leaf1"))
    host = SimpleNamespace(name="leaf1", platform="sonic",
                           connections={"netmiko": SimpleNamespace(connection=double)},
                           close_connections=lambda: None)  # the pass closes it after
    result = _diff(SimpleNamespace(host=host), {"leaf1": PLATFORM.render(leaf1)},  # type: ignore[arg-type]
                   read_only=True)
    outcome = result.result
    assert isinstance(outcome, DeviceOutcome) and outcome.diff
    assert outcome.notes[-1].startswith("/PFC_WD: GCU refuses")
    assert double.mutating == []
