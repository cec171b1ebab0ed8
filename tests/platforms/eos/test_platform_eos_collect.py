"""EOS read-back through NAPALM's real EOSDriver: show commands answered by the eAPI double
from recorded outputs (tests/fixtures/eos/, derived from documentation) and a running config
that is flatfab's own render, as the switch holds it after a push."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.model.state import DeviceState, FabricState, IfKind
from flatfab.platforms.eos import PLATFORM
from flatfab.platforms.eos.collect import JSON_COMMANDS, RUNNING
from tests.support.eos import FIXTURES, eos_collect, eos_double, eos_fabric

MUTATING = ("configure", "copy", "write", "rollback", "bash")


@pytest.fixture
def planned() -> DeviceState:
    return eos_fabric("lab").devices["leaf1"]


def test_collect_reads_what_the_switch_reports(planned: DeviceState) -> None:
    seen = eos_collect(eos_double(PLATFORM.render(planned)), planned)
    assert seen.errors == []
    assert (seen.asn, seen.router_id, seen.loopback) == (65101, "10.0.0.17", "10.0.0.17/32")
    assert seen.vrfs == {"blue": 100, "red": 200}
    host = seen.interfaces["Ethernet1"]
    assert (host.kind, host.bridge, host.vrf, host.mtu, host.speed_mbps) == (
        IfKind.HOST_PORT, "Vlan100", "blue", 9000, 100000)
    assert host.peer is not None and host.peer.device == "leaf1-h1"
    assert seen.interfaces["Ethernet2"].up is False and seen.interfaces["Ethernet2"].peer is None
    sub = seen.interfaces["Ethernet51.200"]
    assert (sub.vrf, sub.parent, sub.speed_mbps) == ("red", "Ethernet51", 100000)
    assert seen.interfaces["Vlan100"].addresses == ["10.100.1.1/24"]
    # unnumbered sessions show as link-local%short-name: they are keyed by interface
    peer = seen.bgp["default"].peers["Ethernet51"]
    assert (peer.interface, peer.address, peer.remote_asn, peer.peer_device, peer.state) == (
        "Ethernet51", None, 65000, "spine1", "Established")
    assert seen.bgp["red"].peers["Ethernet52.200"].state == "Active"
    assert seen.routes is not None
    hops = seen.routes["blue"]["10.100.2.0/24"].nexthops
    assert [h.interface for h in hops] == ["Ethernet51.100", "Ethernet52.100"]
    assert seen.routes["default"]["10.0.0.1/32"].protocol == "bgp"


def test_lossless_state_reads_back_as_planned(planned: DeviceState) -> None:
    seen = eos_collect(eos_double(PLATFORM.render(planned)), planned)
    for port in ("Ethernet1", "Ethernet51"):
        assert seen.interfaces[port].qos == planned.interfaces[port].qos, port
    assert seen.qos is not None and planned.qos is not None
    # Trident: one switch-wide headroom, so each lossless PG reads the largest planned one
    largest = max(p.xoff for p in planned.qos.profiles.values())
    lossless = [p for p in seen.qos.profiles.values() if p.xoff > 0]
    assert lossless and all(p.xoff == largest for p in lossless)


def test_read_only_collect_sends_only_show_commands(planned: DeviceState) -> None:
    double = eos_double(PLATFORM.render(planned))
    eos_collect(double, planned)
    assert RUNNING in double.log and all(c in double.log for c in JSON_COMMANDS)
    assert not [c for c in double.log if c.startswith(MUTATING)]


def _fabric_with(seen: DeviceState) -> FabricState:
    state = eos_fabric("lab")
    return state.model_copy(update={"devices": {**state.devices, seen.name: seen}})


def test_a_value_changed_on_the_switch_is_named_by_the_catalog(planned: DeviceState) -> None:
    text = PLATFORM.render(planned).replace("priority-flow-control priority 3 no-drop",
                                            "priority-flow-control priority 4 no-drop")
    seen = eos_collect(eos_double(text), planned)
    observed = _fabric_with(seen)
    findings = run_checks(CheckContext(state=observed, plan=eos_fabric("lab"),
                                       stage=Stage.LIVE))
    named = {(f.check, f.device) for f in findings if f.severity.rank <= 1}
    assert ("pfc.link_symmetry", "leaf1") in named and ("pfc.lossy_class", "leaf1") in named


def test_a_clean_switch_has_only_the_recorded_faults(planned: DeviceState) -> None:
    """The fixtures record one port down, one session Active and one tenant route on a
    single path; with flatfab's render running, nothing else is found."""
    seen = eos_collect(eos_double(PLATFORM.render(planned)), planned)
    findings = run_checks(CheckContext(state=_fabric_with(seen), plan=eos_fabric("lab"),
                                       stage=Stage.LIVE))
    named = {f.check for f in findings if f.device == "leaf1" and f.severity.rank <= 1}
    assert named == {"interface.up", "bgp.session", "ecmp.leaf_paths"}


def test_an_unreadable_reply_is_recorded_not_fatal(planned: DeviceState, tmp_path: Path) -> None:
    for file in FIXTURES.glob("*.json"):
        (tmp_path / file.name).write_text(file.read_text())
    (tmp_path / "show_ip_route_vrf_all.json").unlink()
    seen = eos_collect(eos_double(PLATFORM.render(planned), tmp_path), planned)
    assert [e for e in seen.errors if e.startswith("show ip route vrf all: ")]
    assert seen.bgp["default"].peers  # the rest was still read


def test_an_unmapped_dscp_is_reported(planned: DeviceState) -> None:
    text = PLATFORM.render(planned).replace("qos map dscp 26 to traffic-class 3\n", "")
    seen = eos_collect(eos_double(text), planned)
    assert "qos map dscp leaves DSCP 26 unmapped (EOS default applies)" in seen.errors


def test_a_trident_without_its_queue_profile_is_named(planned: DeviceState) -> None:
    text = "\n".join(line for line in PLATFORM.render(planned).splitlines()
                     if not line.startswith(("platform trident", "    ")))
    seen = eos_collect(eos_double(text), planned)
    assert seen.qos is not None and seen.qos.profiles == {}
    findings = run_checks(CheckContext(state=_fabric_with(seen), plan=eos_fabric("lab"),
                                       stage=Stage.LIVE))
    assert ("buffer.coverage", "leaf1") in {(f.check, f.device) for f in findings
                                            if f.severity.rank <= 1}


def test_switch_managed_buffers_are_said_not_judged() -> None:
    """A Tomahawk keeps its own buffers: the planned pools and profiles stand for them, with
    every pool size and lossless PG unknown, so the class chain is followed through them
    and nothing about their sizes is judged (as on Junos)."""
    plan = eos_fabric("numbered", family="tomahawk-5")
    planned = plan.devices["lf-a"]
    seen = eos_collect(eos_double(PLATFORM.render(planned)), planned)
    assert seen.qos is not None and planned.qos is not None
    assert seen.qos.model_copy(update={"unknown": {}}) == planned.qos
    assert sorted(seen.qos.unknown) == [f"pools.{p}.size" for p in sorted(planned.qos.pools)]
    port = seen.interfaces["Ethernet51"].qos
    assert port is not None  # the lossless plane itself is read (speed: leaf1's recording)
    assert sorted(port.unknown) == ["pgs.3"]
    assert port.model_copy(update={"speed_mbps": 400000, "unknown": {}}) == \
        planned.interfaces["Ethernet51"].qos
    state = plan.model_copy(update={"devices": {**plan.devices, "lf-a": seen}})
    findings = [f for f in run_checks(CheckContext(state=state, plan=plan, stage=Stage.LIVE))
                if f.device == "lf-a" and (f.check.startswith(("buffer.", "qos.", "state.")))]
    assert {(f.check, f.severity.value) for f in findings} == {("state.unknown", "not-judged")}
    assert all("is not judged: Tomahawk EOS switches expose no configurable buffer profiles"
               in f.message for f in findings)


def test_pfc_and_ecn_counters_are_read(planned: DeviceState) -> None:
    seen = eos_collect(eos_double(PLATFORM.render(planned)), planned)
    uplink, host = seen.interfaces["Ethernet51"].counters, seen.interfaces["Ethernet1"].counters
    assert uplink is not None and host is not None
    assert (uplink.pfc_rx_frames, uplink.pfc_tx_frames, uplink.ecn_marked) == (3, 40, {3: 0})
    assert host.ecn_marked == {3: 250}  # "-": queues without ECN are not counted


def _with_marks(tmp_path: Path, marks: int | None) -> Path:
    for file in FIXTURES.glob("*.json"):
        (tmp_path / file.name).write_text(file.read_text())
    ecn = tmp_path / "show_qos_interfaces_ecn_counters_queue.json"
    if marks is None:
        ecn.unlink()
    else:
        ecn.write_text(re.sub(r'"3": "\d+"', f'"3": "{marks}"', ecn.read_text()))
    return tmp_path


def test_pauses_without_any_ecn_mark_are_named(planned: DeviceState, tmp_path: Path) -> None:
    seen = eos_collect(eos_double(PLATFORM.render(planned), _with_marks(tmp_path, 0)), planned)
    findings = [f for f in run_checks(CheckContext(state=_fabric_with(seen),
                                                   plan=eos_fabric("lab"), stage=Stage.LIVE))
                if f.check == "ecn.pause_without_marks"]
    assert [(f.device, f.severity.value) for f in findings] == [("leaf1", "warning")]
    assert findings[0].message.startswith("leaf1 sent 52 PFC pause frames while its lossless")


def test_counters_a_switch_does_not_have_are_unknown_not_errors(planned: DeviceState,
                                                                tmp_path: Path) -> None:
    seen = eos_collect(eos_double(PLATFORM.render(planned), _with_marks(tmp_path, None)), planned)
    assert seen.errors == []
    counters = seen.interfaces["Ethernet51"].counters
    assert counters is not None and counters.ecn_marked == {}
    assert not [f for f in run_checks(CheckContext(state=_fabric_with(seen),
                                                   plan=eos_fabric("lab"), stage=Stage.LIVE))
                if f.check == "ecn.pause_without_marks"]
