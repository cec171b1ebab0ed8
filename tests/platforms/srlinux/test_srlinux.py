"""The srlinux platform: render (golden files, SR Linux's YANG models), sections, push
through napalm-srlinux's real driver against a JSON-RPC double, read-only, collect.

Golden files: tests/golden/platforms/srlinux/<fabric>/<device>.json of representative
switches (not-kept.sha256 holds the others'), regenerated with FLATFAB_REGEN_GOLDEN=1. The
oracle is the shared SR Linux YANG validator, through
tests/support/oracles.py (skipped with one line when it or libyang is absent).
"""

from __future__ import annotations

import json
import os
import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from napalm.base.exceptions import CommitError, ReplaceConfigException

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, PortCounters
from flatfab.plan.planner import plan
from flatfab.platforms.base import ReadOnlyDriver, ReadOnlyError
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.srlinux import PLATFORM
from flatfab.platforms.srlinux.render import RenderError, as_tree, config_tree
from flatfab.platforms.srlinux.sections import normalized_running
from tests.doubles.srlinux import (
    LLDP_AGE,
    SrlinuxDouble,
    collect_cases,
    running_of,
    state_outputs,
)
from tests.support.golden import match_golden
from tests.support.oracles import SRLINUX, usable
from tests.support.paths import ROOT
from tests.support.srlinux import srlinux_intent

GOLDEN = ROOT / "tests" / "golden" / "platforms" / "srlinux"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))
FABRICS = ("lab", "numbered", "mixed", "rail")


@cache
def fabric(name: str, tmp: Path) -> FabricState:
    return plan(load_intent(srlinux_intent(name, tmp), known_platforms=PLATFORMS))


@pytest.fixture(scope="module")
def tmp_intents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("srlinux-intents")


def switches(state: FabricState) -> list[DeviceState]:
    return [d for d in state.devices.values() if d.platform == "srlinux"]


@pytest.fixture(scope="module")
def leaf1(tmp_intents: Path) -> DeviceState:
    return fabric("lab", tmp_intents).devices["leaf1"]


# ---- the YANG oracle ----------------------------------------------------------------------


def yang_violations(text: str, device: str = "leaf1") -> list[str]:
    """The SR Linux YANG oracle's verdict on a rendered config (tests/support/oracles.py)."""
    return usable(SRLINUX).validate(device, text)


# ---- render -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", FABRICS)
def test_render_matches_golden_files(name: str, tmp_intents: Path) -> None:
    """The representatives' renders as files, the others' sha256 (the YANG oracle judges
    every device's render: the test after this one)."""
    devices = switches(fabric(name, tmp_intents))
    produced = {f"{name}/{d.name}.json": PLATFORM.render(d) for d in devices}
    match_golden(GOLDEN, name, produced, ".json", {d.name: d.role.value for d in devices},
                 "tests/platforms/srlinux/test_srlinux.py::"
                 "test_every_render_passes_the_srlinux_yang_oracle")


@pytest.mark.parametrize("name", FABRICS)
def test_every_render_passes_the_srlinux_yang_oracle(name: str, tmp_intents: Path) -> None:
    """Every switch's render (the golden files keep representatives only)."""
    devices = switches(fabric(name, tmp_intents))
    assert devices
    for device in devices:
        text = PLATFORM.render(device)
        sections = PLATFORM.sections(text)  # and the split loses no line of any of them
        assert set(sections) <= set(PLATFORM.facts.sections), device.name
        assert sorted(line for lines in sections.values() for line in lines) == sorted(
            line for line in text.splitlines() if line.strip()), device.name
        found = yang_violations(text, device.name)
        assert found == [], f"{name}/{device.name}: {found}"


def test_the_oracle_catches_a_violation(leaf1: DeviceState) -> None:
    tree = as_tree(config_tree(leaf1, PLATFORM.names))
    tree["qos"]["pfc-mapping-profile"][0]["received-traffic"]["unicast-mapping"][
        "pfc-queue"][0]["pfc-pause-frame-priority"] = 8
    text = json.dumps({"replaces": [{"path": "/qos", "value": tree["qos"]}]})
    assert any("pfc-pause-frame-priority" in v for v in yang_violations(text))


def test_render_is_json_for_napalm_and_byte_identical(leaf1: DeviceState) -> None:
    text = PLATFORM.render(leaf1)
    assert text == PLATFORM.render(leaf1.model_copy(deep=True))
    paths = [e["path"] for e in json.loads(text)["replaces"]]
    assert "/" not in paths and not [p for p in paths if "mgmt" in p]
    # the lab intent sets ECMP hashing: its hash options come last, never /system whole
    assert paths[-3:] == ["/routing-policy", "/qos", "/system/load-balancing/hash-options"]


def test_sections_split_loses_no_line(leaf1: DeviceState) -> None:
    text = PLATFORM.render(leaf1)
    sections = PLATFORM.sections(text)
    assert list(sections) == list(PLATFORM.facts.sections)
    kept = sorted(line for lines in sections.values() for line in lines)
    assert kept == sorted(line for line in text.splitlines() if line.strip())
    assert any('"pfc-mapping-profile"' in line for line in sections["qos"])


def test_running_config_reads_back_in_the_rendered_form(leaf1: DeviceState) -> None:
    text = PLATFORM.render(leaf1)
    tree = as_tree(config_tree(leaf1, PLATFORM.names))
    running = json.dumps(running_of(tree))
    assert normalized_running(running, text) == text
    # a changed ECN threshold shows as drift in the qos section only
    changed = json.loads(running)
    slope = changed["srl_nokia-qos:qos"]["buffer-management"]["queue-management-profile"][0]
    slope["wred"]["wred-slope"][0]["min-threshold"] = 99
    now = PLATFORM.sections(normalized_running(json.dumps(changed), text))
    wanted = PLATFORM.sections(text)
    assert [s for s in wanted if now.get(s) != wanted[s]] == ["qos"]


def test_drift_through_the_driver_is_empty_when_the_box_runs_the_render(
        leaf1: DeviceState) -> None:
    intended = PLATFORM.render(leaf1)
    running = running_of(as_tree(config_tree(leaf1, PLATFORM.names)))
    double = SrlinuxDouble(running=running)
    driver = PLATFORM.read_only(double.driver())
    now, wanted = PLATFORM.drift_texts(driver, intended)
    assert now == wanted == intended
    assert PLATFORM.diff(driver, intended, read_only=True) == ""
    assert [e.split(" ", 1)[0] for e in double.log] == ["get", "get"]  # reads only


def test_naming() -> None:
    names = PLATFORM.names
    assert names.physical(1) == "ethernet-1/1" and names.subinterface("ethernet-1/1", 100) \
        == "ethernet-1/1.100"
    assert names.gateway(100) == "irb0.100" and names.loopback == "system0"
    assert names.vrf_problem("mgmt") is not None and names.vrf_problem("blue") is None


def test_values_outside_srlinux_ranges_are_one_clear_error(leaf1: DeviceState) -> None:
    device = leaf1.model_copy(deep=True)
    qos = device.interfaces["ethernet-1/51"].qos
    assert qos is not None and qos.watchdog is not None
    qos.watchdog.detect_ms = 5000
    with pytest.raises(RenderError, match=r"detect_ms 5000 is outside SR Linux's 10\.\.1500"):
        PLATFORM.render(device)


def test_srlinux_without_its_asic_family_is_refused_at_load(tmp_intents: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(srlinux_intent("lab", tmp_intents, family="spectrum-4"),
                    known_platforms=PLATFORMS)
    assert "SR Linux runs on no NVIDIA Spectrum switch" in str(caught.value)


def test_change_notes_name_what_the_replaces_leave(leaf1: DeviceState) -> None:
    intended = PLATFORM.render(leaf1)
    tree = as_tree(config_tree(leaf1, PLATFORM.names))
    tree["network-instance"].append({"name": "old-tenant", "type": "ip-vrf"})
    notes = PLATFORM.change_notes(json.dumps(running_of(tree)), intended)
    assert notes == ["/network-instance[name=old-tenant] is on the switch but not in the "
                     "intended config: the push leaves it as it is (delete it by hand if "
                     "flatfab put it there)"]
    assert PLATFORM.change_notes("not json", intended)[0].startswith("running config unreadable")


def test_an_mtu_above_the_7220_limit_is_one_clear_error(leaf1: DeviceState) -> None:
    device = leaf1.model_copy(deep=True)
    device.interfaces["ethernet-1/1"].mtu = 9400  # + 14 B header: 9414 > 9412
    with pytest.raises(RenderError, match=r"ethernet-1/1: port mtu 9414 is outside SR "
                                          r"Linux's 1500\.\.9412"):
        PLATFORM.render(device)


def test_pfc_on_a_7220_without_pfc_is_refused_at_load(tmp_intents: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(srlinux_intent("lab", tmp_intents, family="trident-3"),
                    known_platforms=PLATFORMS)
    assert "platform srlinux on trident-3 hardware cannot do this (pfc)" in str(caught.value)
    assert "7220 IXR-D1/D2/D3" in str(caught.value)


# ---- push: napalm-srlinux's driver against the JSON-RPC double ------------------------------


@pytest.fixture
def double() -> SrlinuxDouble:
    return SrlinuxDouble(running={"interface": [{"name": "mgmt0", "admin-state": "enable"}]})


def test_commit_confirmed_then_accepted(double: SrlinuxDouble, leaf1: DeviceState) -> None:
    if not SRLINUX.missing():  # the box validates the candidate as its YANG says
        double.validator = SRLINUX.tree_violations
    driver = PLATFORM.adapt(double.driver(), read_only=False)
    driver.open()
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    assert "ff-pfc" in driver.compare_config()
    driver.commit_config(revert_in=120)
    assert driver.has_pending_commit()
    assert any(e.endswith("confirm-timeout 120") for e in double.log)
    driver.confirm_commit()
    assert not driver.has_pending_commit()
    names = [i["name"] for i in double.running["interface"]]
    assert "mgmt0" in names and "ethernet-1/51" in names  # replaces never touch mgmt0
    assert "/tools system configuration confirmed-accept" in " ".join(double.log)


def test_commit_confirmed_not_accepted_reverts(double: SrlinuxDouble,
                                               leaf1: DeviceState) -> None:
    before = json.loads(json.dumps(double.running))
    driver = double.driver()
    driver.open()
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config(revert_in=60)
    assert "qos" in double.running
    double.expire()  # nobody accepted: the timer runs out
    assert double.running == before and not driver.has_pending_commit()
    with pytest.raises(CommitError):
        driver.confirm_commit()


def test_rollback_rejects_a_pending_commit_and_restores_a_checkpoint(
        double: SrlinuxDouble, leaf1: DeviceState) -> None:
    before = json.loads(json.dumps(double.running))
    driver = double.driver()
    driver.open()
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config(revert_in=60)
    driver.rollback()  # pending: confirmed-reject
    assert double.running == before
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config()
    assert "qos" in double.running
    driver.rollback()  # committed: load the checkpoint taken before it
    assert double.running == before
    assert any(e.startswith("cli load checkpoint name NAPALM-") for e in double.log)


def test_a_candidate_the_box_refuses_is_not_committed(leaf1: DeviceState) -> None:
    double = SrlinuxDouble(validator=lambda tree: ["qos: refused by the box"])
    driver = double.driver()
    driver.open()
    with pytest.raises(ReplaceConfigException, match="refused by the box"):
        driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    assert double.commits == []


def test_adapt_refuses_another_napalm_driver() -> None:
    from napalm.base import get_network_driver  # noqa: PLC0415

    other = get_network_driver("eos")("h", "u", "p")
    with pytest.raises(TypeError, match="napalm-srlinux"):
        PLATFORM.adapt(other, read_only=False)
    assert PLATFORM.facts.connection.driver == "srlinux"
    assert get_network_driver("srlinux").__name__ == "NokiaSRLinuxDriver"


def test_read_only_guard(double: SrlinuxDouble) -> None:
    guarded = PLATFORM.read_only(double.driver())
    assert isinstance(guarded, ReadOnlyDriver)
    for method in ("load_replace_candidate", "commit_config", "confirm_commit", "rollback"):
        with pytest.raises(ReadOnlyError):
            getattr(guarded, method)()
    for command in ("/tools system configuration confirmed-accept", "commit now",
                    "enter candidate private", "info from state /qos; commit now"):
        with pytest.raises(ReadOnlyError):
            guarded.cli([command])
    assert double.log == []


# ---- collect ---------------------------------------------------------------------------------


def test_collect_cases_read_back_as_planned() -> None:
    for case in collect_cases():
        seen = PLATFORM.collect(PLATFORM.read_only(case.driver), case.planned, [])
        assert seen.errors == [], case.name
        for name, planned in case.planned.interfaces.items():
            got = seen.interfaces[name]
            assert (got.kind, got.vrf, got.mtu, got.addresses, got.bridge, got.parent) == (
                planned.kind, planned.vrf, planned.mtu, planned.addresses, planned.bridge,
                planned.parent), name
            # as planned; a port's neighbour heard LLDP_AGE seconds before the box's clock
            # (SR Linux keeps no hold time: no expiry), a VRF sub-interface's end unaged
            heard = LLDP_AGE if planned.peer is not None and planned.parent is None else None
            assert got.peer == (planned.peer.model_copy(update={"age_s": heard})
                                if planned.peer is not None else None), name
            if planned.qos is not None:
                assert got.qos is not None
                skip = {"unknown", "watchdog"}
                assert got.qos.model_dump(exclude=skip) == planned.qos.model_dump(exclude=skip)
                assert got.qos.watchdog is not None and planned.qos.watchdog is not None
                assert got.qos.watchdog.unknown.keys() == {"poll_ms"}
                assert got.qos.watchdog.action == "forward"  # SR Linux's only recovery
                assert (got.qos.watchdog.detect_ms, got.qos.watchdog.restore_ms) == (
                    planned.qos.watchdog.detect_ms, planned.qos.watchdog.restore_ms)
        for vrf, instance in case.planned.bgp.items():
            for key, peer in instance.peers.items():
                got_peer = seen.bgp[vrf].peers[key]
                assert (got_peer.state, got_peer.remote_asn, got_peer.peer_device) == (
                    "Established", peer.remote_asn, peer.peer_device)
        assert (seen.asn, seen.router_id, seen.loopback) == (
            case.planned.asn, case.planned.router_id, case.planned.loopback)
        # the lab's 5-tuple, from the running config's hash options
        assert case.planned.lb is not None and seen.lb == case.planned.lb
        assert all(PLATFORM.show_command(c) for c in case.commands())
        assert seen.interfaces["ethernet-1/51"].counters == PortCounters(
            pfc_rx_frames=17, pfc_tx_frames=5, ecn_marked={3: 250})
        assert seen.interfaces["ethernet-1/52"].counters == PortCounters(
            pfc_rx_frames=0, pfc_tx_frames=0, ecn_marked={3: 0})
        # ECMP over both uplinks; the next hops are irb1.51/.52, read as their ports
        assert seen.routes is not None
        route = seen.routes["default"]["10.0.0.18/32"]
        assert route.protocol == "bgp"
        assert [h.interface for h in route.nexthops] == ["ethernet-1/51", "ethernet-1/52"]


# ---- a lossless disagreement across a vendor boundary -----------------------------------------


@cache
def _boundary(tmp: Path) -> FabricState:
    """intents/lab with srlinux leaves under frr spines."""
    return plan(load_intent(srlinux_intent("lab", tmp, leaves_only=True),
                            known_platforms=PLATFORMS))


def _errors_with(tmp: Path, change: Any) -> list[tuple[str, str]]:
    """leaf1's error findings when its box runs the rendered config changed by `change`
    (spines as planned); ecmp.leaf_paths is left out (the double's route tables are empty)."""
    state = _boundary(tmp)
    leaf = state.devices["leaf1"]
    assert leaf.platform == "srlinux" and state.devices["spine1"].platform == "frr"
    tree = as_tree(config_tree(leaf, PLATFORM.names))
    change(tree["qos"])
    driver = SrlinuxDouble(running=running_of(tree), outputs=state_outputs(leaf, tree)).driver()
    driver.open()
    seen = PLATFORM.collect(PLATFORM.read_only(driver), leaf, [])
    assert seen.errors == []
    observed = state.model_copy(update={"devices": {**state.devices, "leaf1": seen}})
    return [(f.check, f.message)
            for f in run_checks(CheckContext(state=observed, plan=state, stage=Stage.LIVE))
            if f.device == "leaf1" and f.severity.value == "error"
            and f.check != "ecmp.leaf_paths"]


def test_the_box_as_rendered_raises_no_lossless_error(tmp_intents: Path) -> None:
    assert _errors_with(tmp_intents, lambda qos: None) == []


def _pfc_on_4(qos: Any) -> None:
    profile = qos["pfc-mapping-profile"][0]
    profile["received-traffic"]["unicast-mapping"]["pfc-queue"][0][
        "pfc-pause-frame-priority"] = 4
    profile["received-pfc-pause-frames"]["queue"][0]["pfc-pause-frame-priority"] = 4


def test_a_pfc_priority_disagreeing_with_the_frr_spine_is_named(tmp_intents: Path) -> None:
    found = _errors_with(tmp_intents, _pfc_on_4)
    # named at the vendor boundary: the srlinux leaf's port against the frr spine's
    assert ("pfc.link_symmetry", "PFC differs across leaf1:ethernet-1/51--spine1:swp1: "
            "leaf1:ethernet-1/51 on 4, spine1:swp1 on 3") in found
    assert ("pfc.intent", "leaf1:ethernet-1/51 has PFC on 4, the intent says 3") in found


def _ecn_max_60mb(qos: Any) -> None:
    slope = qos["buffer-management"]["queue-management-profile"][0]["wred"]["wred-slope"][0]
    slope["max-threshold"] = 60_000_000


def test_an_ecn_threshold_beyond_the_pool_is_named(tmp_intents: Path) -> None:
    # no check compares ECN thresholds across a link or with the intent: a threshold that
    # differs from the frr spine's is named only when it breaks a rule of its own
    found = _errors_with(tmp_intents, _ecn_max_60mb)
    assert ("ecn.thresholds", "leaf1:ethernet-1/51 queue 3 ECN max 60000000 B exceeds its "
            "egress pool (48000000 B)") in found


# ---- render cost -----------------------------------------------------------------------------


def test_render_cost_per_device_on_the_rail_fabric(tmp_intents: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    devices = switches(fabric("rail", tmp_intents))
    started = time.perf_counter()
    texts = [PLATFORM.render(d) for d in devices]
    render_ms = 1000 * (time.perf_counter() - started) / len(devices)
    line = f"srlinux rail: {len(devices)} devices, render {render_ms:.1f} ms/device"
    if not SRLINUX.missing():
        SRLINUX.load()  # models load once (~0.2 s), not per device
        started = time.perf_counter()
        for text in texts:
            assert yang_violations(text) == []
        oracle_ms = 1000 * (time.perf_counter() - started) / len(devices)
        line += f", with oracle {render_ms + oracle_ms:.1f} ms/device"
    with capsys.disabled():
        print(f"\n{line}")
    assert render_ms < 200


# ---- through flatfab's Nornir connection path ------------------------------------------------


class _Task:
    def __init__(self, host: Any, nornir: Any) -> None:
        self.host, self.nornir = host, nornir


def test_nornir_napalm_opens_napalm_srlinux_and_the_guard_wraps_it(
        monkeypatch: pytest.MonkeyPatch, leaf1: DeviceState) -> None:
    import httpx  # noqa: PLC0415
    from napalm_srlinux.device import SRLinuxDevice  # noqa: PLC0415
    from nornir.core import Nornir  # noqa: PLC0415
    from nornir.core.inventory import ConnectionOptions, Host, Hosts, Inventory  # noqa: PLC0415
    from nornir.core.plugins.connections import ConnectionPluginRegister  # noqa: PLC0415

    from flatfab.workflows.devices import connections  # noqa: PLC0415

    double = SrlinuxDouble(running={"interface": [{"name": "mgmt0"}]})
    made: list[Any] = []

    def client(self: Any) -> httpx.Client:  # the box is the double: no network
        made.append(self)
        return httpx.Client(transport=httpx.MockTransport(double.handle))

    monkeypatch.setattr(SRLinuxDevice, "_new_jsonrpc_client", client)
    ConnectionPluginRegister.auto_register()
    options = {"napalm": ConnectionOptions(extras={"optional_args": {"skip_verify": True}})}
    host = Host("leaf1", hostname="192.0.2.11", username="admin", password="x",
                platform="srlinux", connection_options=options)
    nornir = Nornir(inventory=Inventory(hosts=Hosts({"leaf1": host})))
    guarded = connections.driver(_Task(host, nornir), read_only=True)  # type: ignore[arg-type]
    assert isinstance(guarded, ReadOnlyDriver)
    assert made and made[0].skip_verify is True and made[0].jsonrpc_port == 443
    assert json.loads(guarded.get_config(retrieve="running")["running"]) == double.running
    with pytest.raises(ReadOnlyError):
        guarded.load_replace_candidate(config=PLATFORM.render(leaf1))
    host.close_connections()
    writer = connections.driver(_Task(host, nornir), read_only=False)  # type: ignore[arg-type]
    writer.load_replace_candidate(config=PLATFORM.render(leaf1))
    writer.commit_config(revert_in=30)
    assert writer.has_pending_commit()
    writer.confirm_commit()
    assert "qos" in double.running
