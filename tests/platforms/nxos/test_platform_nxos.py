"""The nxos platform: golden renders, sections, the configure-replace commit through the
real driver over a stateful double of the switch, read-only, collect, refusals.

Golden files: tests/golden/platforms/nxos/<fabric>/<device>.conf, regenerated with
FLATFAB_REGEN_GOLDEN=1 (derived from Cisco's documentation: README.md there).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import jsonschema
import pytest
import yaml
from nornir import InitNornir
from nornir.core.plugins.connections import ConnectionPluginRegister
from nornir.core.task import Result, Task
from scrapli.driver.core import NXOSDriver

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import FlatfabError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.base import ReadOnlyDriver, ReadOnlyError
from flatfab.platforms.nxos import PLATFORM
from flatfab.platforms.nxos.collect import rows
from flatfab.platforms.nxos.driver import BACKUP, CANDIDATE, NxosDriver, NxosError
from flatfab.platforms.nxos.render import NxosRenderError, capability_problems, dscp_list
from flatfab.platforms.nxos.running import NxosConfig, dscp_map, port_qos
from flatfab.platforms.registry import PLATFORMS
from flatfab.workflows.devices import connections
from tests.doubles.nxos import NxosDouble, collect_cases, recorded
from tests.support.golden import match_golden
from tests.support.nxos import nxos_fabric, nxos_intent, nxos_switches
from tests.support.paths import ROOT, SHARED

GOLDEN = ROOT / "tests" / "golden" / "platforms" / "nxos"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))
FABRICS = ("lab", "numbered", "mixed", "rail")


# ---- render ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FABRICS)
def test_render_matches_golden_files(name: str) -> None:
    produced = {f"{name}/{d.name}.conf": PLATFORM.render(d)
                for d in nxos_switches(nxos_fabric(name))}
    match_golden(GOLDEN, name, produced, ".conf")


@pytest.mark.parametrize("name", FABRICS)
def test_sections_lose_no_line(name: str) -> None:
    for device in nxos_switches(nxos_fabric(name)):
        text = PLATFORM.render(device)
        assert text == PLATFORM.render(device.model_copy(deep=True))
        sections = PLATFORM.sections(text)
        assert list(sections) == [s for s in PLATFORM.facts.sections if s in sections]
        kept = sorted(line for lines in sections.values() for line in lines)
        assert kept == sorted(line for line in text.splitlines() if line.strip())


def test_the_lossless_plane_is_written_the_mqc_way() -> None:
    leaf = nxos_fabric("lab").devices["leaf1"]
    sections = PLATFORM.sections(PLATFORM.render(leaf))
    qos, pfc = sections["qos"], sections["pfc"]
    assert "  match dscp 26" in qos and "    set qos-group 3" in qos
    nq = qos.index("  class type network-qos c-8q-nq3")
    assert qos[nq + 1:nq + 3] == ["    pause pfc-cos 3", "    mtu 9216"]
    assert "    priority level 1" in qos  # CNP, qos-group 6
    assert ("    random-detect minimum-threshold 150000 bytes maximum-threshold 1500000 "
            "bytes drop-probability 10 weight 0 ecn") in qos
    assert qos[-3] == "system qos"
    assert pfc == ["priority-flow-control watch-dog-interval on",
                   "priority-flow-control watch-dog interval 200",
                   "priority-flow-control watch-dog shutdown-multiplier 1",
                   "priority-flow-control auto-restore multiplier 2"]
    interfaces = sections["interfaces"]
    start = interfaces.index("interface Ethernet1/51")
    assert interfaces[start + 1:start + 9] == [
        "  description spine1:Ethernet1/1", "  no switchport", "  mtu 9216",
        "  ipv6 address use-link-local-only", "  service-policy type qos input FLATFAB-IN",
        "  priority-flow-control mode on", "  priority-flow-control watch-dog-interval on",
        "  no shutdown"]
    assert "  neighbor Ethernet1/51" in sections["bgp"]


def test_dscp_lists_are_written_as_ranges_and_read_back() -> None:
    assert dscp_list([26]) == "26"
    assert dscp_list([24, 25, 26, 27, 28, 29, 30, 31, 48, 50, 51]) == "24-31,48,50-51"
    config = NxosConfig.read("class-map type qos match-any FLATFAB-TC3\n"
                             "  match dscp 24-31,48\npolicy-map type qos FLATFAB-IN\n"
                             "  class FLATFAB-TC3\n    set qos-group 3\n")
    table = dscp_map(config, "FLATFAB-IN")
    assert [d for d, tc in enumerate(table) if tc == 3] == [*range(24, 32), 48]


def test_get_facts_reads_show_version_and_the_interface_list() -> None:
    double = NxosDouble(recorded={
        "show version | json": json.dumps({"host_name": "leaf1", "chassis_id":
                                           "Nexus9000 C9364D-GX2A Chassis",
                                           "nxos_ver_str": "10.3(4a)",
                                           "proc_board_id": "FDO00000000"}),
        "show interface brief | json": json.dumps({"TABLE_interface": {"ROW_interface": [
            {"interface": "mgmt0"}, {"interface": "Ethernet1/1"}]}})})
    facts = _driver(double).get_facts()
    assert (facts["hostname"], facts["vendor"], facts["os_version"]) == (
        "leaf1", "Cisco", "10.3(4a)")
    assert facts["interface_list"] == ["mgmt0", "Ethernet1/1"]


@pytest.mark.parametrize("name", FABRICS)
def test_every_rendered_port_reads_back_as_planned(name: str) -> None:
    """The lossless plane round-trips: render, then read the text the way collect does."""
    for device in nxos_switches(nxos_fabric(name)):
        config = NxosConfig.read(PLATFORM.render(device))
        for port, iface in device.interfaces.items():
            if iface.qos is None or iface.parent is not None:
                continue
            seen = port_qos(config, port, iface.qos, iface.qos.mtu, iface.qos.speed_mbps)
            assert seen == iface.qos, (device.name, port)


def test_a_port_with_other_queues_takes_its_own_queuing_policy() -> None:
    device = nxos_fabric("lab").devices["leaf1"].model_copy(deep=True)
    shared = device.interfaces["Ethernet1/1"].qos
    assert shared is not None and shared.queues[3].ecn is not None
    odd = shared.model_copy(deep=True)  # the plan shares one PortQos between like ports
    assert odd.queues[3].ecn is not None
    odd.queues[3].ecn.min_bytes = 100_000
    device.interfaces["Ethernet1/1"].qos = odd
    text = PLATFORM.render(device)
    policies = [line for line in text.splitlines()
                if line.startswith("policy-map type queuing ")]
    assert len(policies) == 2
    config = NxosConfig.read(text)
    own = config.setting("Ethernet1/1", "service-policy type queuing output")
    assert own is not None and config.system_policy("queuing output") not in (own, None)
    assert config.setting("Ethernet1/2", "service-policy type queuing output") is None
    assert port_qos(config, "Ethernet1/1", odd, odd.mtu, odd.speed_mbps) == odd


def test_numbered_fabric_peers_by_address() -> None:
    text = PLATFORM.render(nxos_fabric("numbered").devices["lf-a"])
    assert "  ip address 10.254.0.1/31" in text
    assert "  neighbor 10.254.0.0\n    remote-as 64600\n" in text
    assert "interface Vlan3900\n" in text  # the default VRF's gateway, below 3968
    assert "use-link-local-only" not in text


def test_a_family_nexus_never_has_is_refused_at_load(tmp_path: Path) -> None:
    """The data file names the families NX-OS runs on; the render checks none itself."""
    nxos_intent(ROOT / "intents" / "lab", tmp_path, "spectrum-4")
    with pytest.raises(FlatfabError) as caught:
        load_intent(tmp_path, known_platforms=PLATFORMS)
    assert "asics.nxos.family: platform nxos does not run on ASIC family 'spectrum-4'; it " \
        "runs on generic, trident" in str(caught.value)
    assert capability_problems(nxos_fabric("lab").devices["leaf1"]) == []


def test_watchdog_timers_that_are_no_multiple_are_refused() -> None:
    device = nxos_fabric("lab").devices["leaf1"].model_copy(deep=True)
    for iface in device.interfaces.values():
        if iface.qos is not None and iface.qos.watchdog is not None:
            iface.qos.watchdog.restore_ms = 450
    with pytest.raises(NxosRenderError, match="restore 450 ms is not 0-100 times"):
        PLATFORM.render(device)


def _intent(tmp_path: Path, qos: str) -> Path:
    nxos_intent(ROOT / "intents" / "lab", tmp_path, "generic")
    (tmp_path / "qos.yaml").write_text(qos)
    return tmp_path


@pytest.mark.parametrize(("qos", "feature"), [
    ("buffers: {mode: dynamic}\nasics:\n  nxos: {family: generic}\n", "buffers"),
    ("pfc:\n  priorities: [3]\n  watchdog: {enabled: true, action: forward}\n"
     "asics:\n  nxos: {family: generic}\n", "pfc_watchdog_forward"),
    ("pfc:\n  priorities: [3]\n  watchdog: {enabled: true, action: alert}\n"
     "asics:\n  nxos: {family: generic}\n", "pfc_watchdog_alert"),
    ("asics:\n  nxos: {family: trident-3}\n", "pfc_watchdog"),
])
def test_what_nxos_cannot_express_is_refused_at_load(tmp_path: Path, qos: str,
                                                      feature: str) -> None:
    with pytest.raises(FlatfabError) as caught:
        load_intent(_intent(tmp_path, qos), known_platforms=PLATFORMS)
    assert f"({feature})" in str(caught.value)


def test_render_cost_per_device_on_the_rail_fabric() -> None:
    devices = nxos_switches(nxos_fabric("rail"))
    start = time.perf_counter()
    rounds = 20
    for _ in range(rounds):
        for device in devices:
            PLATFORM.render(device)
    per_device_ms = (time.perf_counter() - start) * 1000 / (rounds * len(devices))
    print(f"nxos render: {per_device_ms:.2f} ms/device over {len(devices)} rail switches")
    assert per_device_ms < 50


# ---- the commit through the real driver ----------------------------------------------------

def _driver(double: NxosDouble, read_only: bool = False) -> NxosDriver:
    driver = PLATFORM.adapt(double, read_only=read_only)
    assert isinstance(driver, NxosDriver)
    return driver


@pytest.fixture
def intended() -> str:
    return PLATFORM.render(nxos_fabric("lab").devices["leaf1"])


def test_replace_with_a_timer_commits_when_confirmed(intended: str) -> None:
    double = NxosDouble()
    driver = _driver(double)
    driver.load_replace_candidate(config=intended)
    assert "+router bgp 65101" in driver.compare_config()
    driver.commit_config(revert_in=120)
    assert driver.has_pending_commit()
    assert "interface mgmt0" in double.running  # management kept: a full config replaces
    assert "router bgp 65101" in double.running
    assert double.startup == double.files[BACKUP]  # not saved until confirmed
    driver.confirm_commit()
    assert not driver.has_pending_commit()
    double.advance(600)
    assert "router bgp 65101" in double.running and double.startup == double.running
    assert f"configure replace {CANDIDATE} commit-timeout 120" in double.log
    assert double.log.index(f"copy running-config {BACKUP}") < double.log.index(
        f"configure replace {CANDIDATE} commit-timeout 120")


def test_an_unconfirmed_replace_reverts_when_the_timer_runs_out(intended: str) -> None:
    double = NxosDouble()
    driver = _driver(double)
    before = double.running
    driver.load_replace_candidate(config=intended)
    driver.commit_config(revert_in=60)
    double.advance(59)
    assert driver.has_pending_commit() and "router bgp" in double.running
    double.advance(1)
    assert not driver.has_pending_commit()
    assert double.running == before
    with pytest.raises(NxosError, match="no pending commit"):
        driver.confirm_commit()


def test_rollback_returns_to_the_saved_config(intended: str) -> None:
    double = NxosDouble()
    driver = _driver(double)
    before = double.running
    driver.load_replace_candidate(config=intended)
    driver.commit_config()
    assert "router bgp" in double.startup
    driver.rollback()
    assert double.running == before and double.startup == before


def test_a_failed_replace_raises_and_the_switch_keeps_its_config(intended: str) -> None:
    double = NxosDouble(refuse=("feature bgp",))
    driver = _driver(double)
    before = double.running
    driver.load_replace_candidate(config=intended)
    with pytest.raises(NxosError, match="configure replace failed"):
        driver.commit_config(revert_in=60)
    assert double.running == before and not driver.has_pending_commit()


def test_timer_outside_nxos_range_and_second_commit_are_refused(intended: str) -> None:
    driver = _driver(NxosDouble())
    driver.load_replace_candidate(config=intended)
    with pytest.raises(NxosError, match="outside NX-OS's commit-timeout range"):
        driver.commit_config(revert_in=10)
    driver.commit_config(revert_in=60)
    driver.load_replace_candidate(config=intended)
    with pytest.raises(NxosError, match="waiting for its commit"):
        driver.commit_config(revert_in=60)


def test_a_candidate_touching_mgmt0_is_refused_at_load(intended: str) -> None:
    driver = _driver(NxosDouble())
    with pytest.raises(NxosError, match="management interface"):
        driver.load_replace_candidate(config=intended + "interface mgmt0\n  shutdown\n")


def test_drift_reads_back_what_was_pushed(intended: str) -> None:
    double = NxosDouble()
    driver = _driver(double)
    driver.load_replace_candidate(config=intended)
    driver.commit_config()
    running, wanted = PLATFORM.drift_texts(driver, intended)
    assert running == wanted


def test_replace_keeps_what_the_operator_owns(intended: str) -> None:
    double = NxosDouble()
    driver = _driver(double)
    driver.load_replace_candidate(config=intended)
    driver.commit_config(revert_in=60)
    for kept in ("feature nxapi", "class-map type qos match-any OPERATOR-MGMT",
                 "interface mgmt0", "vrf context management", "boot nxos"):
        assert f"{kept}\n" in double.running or f"{kept} " in double.running, kept
    written = double.files[CANDIDATE]
    assert written.startswith("version 10.3(4a)") and written.endswith(intended)


def test_rollback_undoes_a_pending_replace(intended: str) -> None:
    double = NxosDouble()
    driver = _driver(double)
    before = double.running
    driver.load_replace_candidate(config=intended)
    driver.commit_config(revert_in=300)
    driver.rollback()
    assert double.running == before and not driver.has_pending_commit()
    double.advance(600)
    assert double.running == before


def test_a_merge_sends_lines_and_has_no_timer() -> None:
    double = NxosDouble()
    driver = _driver(double)
    driver.load_merge_candidate(config="vrf context blue\n")
    with pytest.raises(NxosError, match="no NX-OS commit timer"):
        driver.commit_config(revert_in=60)
    assert "+vrf context blue" in driver.compare_config()
    driver.commit_config()
    assert double.running.endswith("vrf context blue\n") and double.startup == double.running
    assert "configuration: vrf context blue" in double.log
    with pytest.raises(NxosError, match="nothing to roll back"):
        _driver(NxosDouble()).rollback()


def test_drift_sees_only_flatfab_blocks(intended: str) -> None:
    double = NxosDouble()
    driver = _driver(double)
    driver.load_replace_candidate(config=intended)
    driver.commit_config()
    double.running += "vrf context stale\nfeature scp-server\n"
    running, wanted = PLATFORM.drift_texts(driver, intended)
    assert running == wanted + "vrf context stale\n"
    assert PLATFORM.sections(running)["vrfs"][-1] == "vrf context stale"
    assert "feature nxapi" not in running and "OPERATOR-MGMT" not in running


# ---- read-only, connection ---------------------------------------------------------------

def test_read_only_refuses_config_and_allows_strict_shows() -> None:
    double = NxosDouble()
    guarded = PLATFORM.read_only(_driver(double, read_only=True))
    assert isinstance(guarded, ReadOnlyDriver)
    for method in ("load_replace_candidate", "commit_config", "confirm_commit", "rollback"):
        with pytest.raises(ReadOnlyError):
            getattr(guarded, method)()
    for command in ("configure terminal", "show run > bootflash:x", "show run | redirect x",
                    "show version ; reload", "copy running-config startup-config",
                    "show version\nreload", "show version\n", "show run | include x"):
        with pytest.raises(ReadOnlyError):
            guarded.cli([command])
    assert "version" in guarded.cli(["show running-config"])["show running-config"]
    # the driver opened read-only refuses too, even without the wrapper
    inner = _driver(double, read_only=True)
    inner.load_replace_candidate(config="hostname x\n")
    with pytest.raises(ReadOnlyError):
        inner.commit_config()
    assert not [c for c in double.log if not c.startswith("show ")]


def test_adapt_refuses_a_connection_that_does_not_check_host_keys() -> None:
    double = NxosDouble()
    double.auth_strict_key = False
    with pytest.raises(NxosError, match="auth_strict_key"):
        PLATFORM.adapt(double, read_only=False)
    with pytest.raises(TypeError):
        PLATFORM.adapt(object(), read_only=False)


def test_the_nornir_scrapli_plugin_opens_a_driver_flatfab_adapts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """nornir-scrapli's `scrapli` plugin builds scrapli's NXOSDriver from the extras flatfab
    gives it; the SSH open is the one thing replaced (no switch here)."""
    ConnectionPluginRegister.auto_register()
    plugin = ConnectionPluginRegister.get_plugin("scrapli")()
    monkeypatch.setattr(NXOSDriver, "open", lambda self: None)
    extras = PLATFORM.connection_extras({"ssh_known_hosts_file": "/dev/null"}, read_only=True)
    plugin.open(hostname="leaf1", username="admin", password="x", port=22,
                platform=PLATFORM.facts.connection.driver, extras=extras, configuration=None)
    connection: Any = plugin.connection
    assert isinstance(connection, NXOSDriver) and connection.auth_strict_key is True
    driver = PLATFORM.adapt(connection, read_only=True)
    assert isinstance(driver, NxosDriver) and driver.conn is connection
    extras = PLATFORM.connection_extras({"auth_strict_key": False}, read_only=False)
    plugin.open(hostname="leaf1", username="admin", password="x", port=22,
                platform="cisco_nxos", extras=extras, configuration=None)
    with pytest.raises(NxosError, match="auth_strict_key"):
        PLATFORM.adapt(plugin.connection, read_only=False)


def test_the_lab_kind_is_one_containerlab_knows() -> None:
    schema_file = SHARED / "schemas" / "clab.schema.json"
    if not schema_file.is_file():
        pytest.skip(f"containerlab's schema not found at {schema_file} (set FLATFAB_SHARED)")
    # Python's re has no \\p{..}: the schema's letter-or-digit class, rewritten
    text = schema_file.read_text(encoding="utf-8").replace(r"[\\p{N}\\p{L}]", r"[^\\W_]")
    validator = jsonschema.Draft7Validator(json.loads(text))
    lab = PLATFORM.facts.lab
    assert lab.embedded is False
    doc = {"name": "nx", "topology": {"nodes": {"leaf1": {"kind": lab.kind,
                                                          "image": lab.image}}}}
    assert not list(validator.iter_errors(doc))
    doc["topology"]["nodes"]["leaf1"]["kind"] = "cisco_n9k_typo"
    assert list(validator.iter_errors(doc))


def test_a_nornir_run_reaches_the_switch_through_nornir_scrapli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """flatfab's own connection path (tasks/workflows/devices/connections.py) on a plain Nornir
    inventory: nornir-scrapli builds scrapli's NXOSDriver, whose channel is the double."""
    double = NxosDouble()
    monkeypatch.setattr(NXOSDriver, "open", lambda self: None)
    monkeypatch.setattr(NXOSDriver, "close", lambda self: None)
    monkeypatch.setattr(NXOSDriver, "send_command",
                        lambda self, command, **kw: double.send_command(command, **kw))
    monkeypatch.setattr(NXOSDriver, "send_configs",
                        lambda self, configs, **kw: double.send_configs(configs, **kw))
    (tmp_path / "hosts.yaml").write_text(yaml.safe_dump({"leaf1": {
        "hostname": "192.0.2.10", "platform": "nxos", "username": "admin",
        "connection_options": {"scrapli": {"extras": {
            "ssh_known_hosts_file": str(tmp_path / "known_hosts")}}}}}))
    nornir = InitNornir(inventory={"plugin": "SimpleInventory", "options": {
        "host_file": str(tmp_path / "hosts.yaml")}}, logging={"enabled": False})

    def read(task: Task) -> Result:
        opened = connections.driver(task, read_only=True)
        with pytest.raises(ReadOnlyError):
            opened.cli(["configure terminal"])
        return Result(host=task.host, result=opened.get_config(retrieve="running"))

    result = nornir.run(task=read)
    assert not result.failed, result["leaf1"].exception
    assert "interface mgmt0" in result["leaf1"].result["running"]
    connection = nornir.inventory.hosts["leaf1"].connections["scrapli"].connection
    assert isinstance(connection, NXOSDriver) and connection.auth_strict_key is True
    assert double.log == ["show running-config"]
    nornir.close_connections()


# ---- collect ---------------------------------------------------------------------------------

def test_collect_from_recorded_outputs_reads_back_as_planned() -> None:
    case = collect_cases()[0]
    observed = PLATFORM.collect(PLATFORM.read_only(case.driver), case.planned, [])
    assert observed.errors == []
    assert all(PLATFORM.show_command(c) for c in case.commands())
    for name, planned in case.planned.interfaces.items():
        got = observed.interfaces[name]
        assert (got.vrf, got.addresses, got.bridge) == (planned.vrf, planned.addresses,
                                                        planned.bridge), name
        if planned.mtu is not None:
            assert got.mtu == planned.mtu, name
        if planned.qos is not None:
            assert got.qos == planned.qos, name
        if planned.peer is not None and planned.parent is None:
            assert got.peer == planned.peer, name
    for vrf, instance in case.planned.bgp.items():
        got_bgp = observed.bgp[vrf]
        assert (got_bgp.asn, got_bgp.router_id) == (instance.asn, instance.router_id)
        assert set(got_bgp.peers) == set(instance.peers)
        for key, peer in instance.peers.items():
            assert got_bgp.peers[key].state == "Established"
            assert got_bgp.peers[key].remote_asn == peer.remote_asn
            assert got_bgp.peers[key].peer_device == peer.peer_device
    assert observed.vrfs == case.planned.vrfs
    assert observed.interfaces["Ethernet1/51"].counters is not None


def test_rows_read_every_json_table_form() -> None:
    one = {"TABLE_vrf": {"ROW_vrf": {"vrf-name-out": "default"}}}
    many = {"TABLE_vrf": {"ROW_vrf": [{"vrf-name-out": "a"}, {"vrf-name-out": "b"}]}}
    held = {"TABLE_vrf": [{"ROW_vrf": {"vrf-name-out": "a"}},
                          {"ROW_vrf": [{"vrf-name-out": "b"}]}]}
    assert [r["vrf-name-out"] for r in rows(one, "vrf")] == ["default"]
    assert [r["vrf-name-out"] for r in rows(many, "vrf")] == ["a", "b"]
    assert [r["vrf-name-out"] for r in rows(held, "vrf")] == ["a", "b"]
    assert rows({}, "vrf") == [] and rows("", "vrf") == []


def test_unreadable_replies_are_errors_not_crashes() -> None:
    running, outputs = recorded("lab-leaf1")
    outputs["show interface | json"] = "% Invalid command at '^' marker."
    outputs["show bgp ipv4 unicast summary vrf all | json"] = "{not json"
    double = NxosDouble(running, outputs)
    leaf = collect_cases()[0].planned
    seen = PLATFORM.collect(PLATFORM.read_only(_driver(double, read_only=True)), leaf, [])
    assert any(e.startswith("show bgp ipv4 unicast summary vrf all: ") for e in seen.errors)
    assert seen.bgp == {}


def _observed(state: FabricState, leaf: str, running: str) -> FabricState:
    """The fabric as planned, with one nxos leaf collected from a changed running config."""
    _, outputs = recorded("lab-leaf1")
    double = NxosDouble(running, outputs)
    device = PLATFORM.collect(PLATFORM.read_only(_driver(double, read_only=True)),
                              state.devices[leaf], [])
    devices = dict(state.devices)
    for name, iface in device.interfaces.items():  # same ports, the leaf's observed QoS
        planned = devices[leaf].interfaces.get(name)
        if planned is not None and planned.qos is not None:
            assert iface.qos is not None
    devices[leaf] = devices[leaf].model_copy(update={"interfaces": {
        n: i.model_copy(update={"qos": device.interfaces[n].qos})
        if n in device.interfaces else i for n, i in devices[leaf].interfaces.items()}})
    return state.model_copy(update={"devices": devices})


@pytest.mark.parametrize(("change", "expected"), [
    # leaf1 pauses CoS 4 where its eos spine and its hosts pause 3: pfc.link_symmetry
    (("    pause pfc-cos 3", "    pause pfc-cos 4"),
     "pfc.link_symmetry leaf1:ethernet1/51 pfc differs across leaf1:ethernet1/51--"
     "spine1:ethernet1: leaf1:ethernet1/51 on 4, spine1:ethernet1 on 3"),
    # a threshold NX-OS takes but that marks nothing before the max: ecn.thresholds
    (("minimum-threshold 150000 bytes", "minimum-threshold 1600000 bytes"), "ecn.thresholds"),
    # the lossless queue without its WRED ECN line: ecn.attached
    (("drop-probability 10 weight 0 ecn", "drop-probability 10 weight 0"), "ecn.attached"),
])
def test_a_lossless_disagreement_across_a_vendor_boundary_is_named(
        change: tuple[str, str], expected: str) -> None:
    """An nxos leaf read back with another PFC CoS or ECN setting than its eos spine
    peers (the lab fabric with its spines on eos, other leaves on frr): the existing
    checks name it. (A sane but different ECN threshold is named by none: no check compares
    thresholds across a link or with the intent.)"""
    state = _mixed_lab()
    running, _ = recorded("lab-leaf1")
    assert change[0] in running
    observed = _observed(state, "leaf1", running.replace(change[0], change[1]))
    found = _findings(state, observed)
    assert found, "no check named the disagreement"
    assert any(text.lower().startswith(expected) for text in found), found
    assert not [t for t in _findings(state, _observed(state, "leaf1", running))
                if t.lower().startswith(expected.split(maxsplit=1)[0])]


def _findings(plan: FabricState, observed: FabricState) -> list[str]:
    findings = run_checks(CheckContext(state=observed, plan=plan, stage=Stage.LIVE))
    return [f"{f.check} {f.device}:{f.port} {f.message}" for f in findings
            if f.severity.value in ("critical", "error") and f.device in ("leaf1", "spine1",
                                                                           "spine2")]


def _mixed_lab() -> FabricState:
    """lab with leaf1 on nxos and the spines on eos (tomahawk: default buffers)."""
    with TemporaryDirectory() as tmp:
        folder = Path(tmp)
        nxos_intent(ROOT / "intents" / "lab", folder, "generic")
        fabric = yaml.safe_load((folder / "fabric.yaml").read_text())
        fabric["platform"] = "frr"
        fabric["spines"] = [{"name": s["name"], "platform": "eos"} for s in fabric["spines"]]
        fabric["leaves"][0]["platform"] = "nxos"
        fabric.pop("load_balancing", None)  # eos and nxos refuse it at load
        (folder / "fabric.yaml").write_text(yaml.safe_dump(fabric))
        qos = yaml.safe_load((folder / "qos.yaml").read_text())
        qos["asics"]["eos"] = {"family": "tomahawk-5"}
        (folder / "qos.yaml").write_text(yaml.safe_dump(qos))
        return plan(load_intent(folder, known_platforms=PLATFORMS))
