"""EOS collect against documented variants of what flatfab reads (NAPALM's real EOSDriver on
the eAPI double): JSON shows from tests/fixtures/eos/variants/<variant>/ laid over leaf1's
recorded ones, running-config variants (tests/fixtures/eos/variants/running_*.cfg, or an
edit named in the test) laid over leaf1's pushed config."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.model.state import DeviceState, FabricState, IfKind
from flatfab.platforms.eos import PLATFORM
from tests.support.eos import FIXTURES, eos_collect, eos_double
from tests.support.paths import ROOT

VARIANTS = ROOT / "tests" / "fixtures" / "eos" / "variants"
WATCHDOG_ACTION = "priority-flow-control pause watchdog action drop"
PORT_ACTION = "   priority-flow-control pause watchdog port action drop"


def shows(tmp_path: Path, *variants: str) -> Path:
    """leaf1's recorded shows with the variants' files over them."""
    folder = tmp_path / "shows"
    shutil.copytree(FIXTURES, folder)
    for name in variants:
        for path in (VARIANTS / name).glob("*.json"):
            shutil.copy(path, folder / path.name)
    return folder


def snippet(name: str) -> str:
    text = (VARIANTS / name).read_text(encoding="utf-8")
    assert text.startswith("! derived from documentation"), name
    return text


def collect(planned: DeviceState, running: str, folder: Path = FIXTURES) -> DeviceState:
    return eos_collect(eos_double(running, folder), planned)


def test_every_variant_says_where_it_comes_from() -> None:
    files = list(VARIANTS.glob("*/*.json"))
    assert len(files) >= 4
    for path in files:
        assert "derived from documentation" in json.loads(path.read_text())["_provenance"]
    for path in VARIANTS.glob("*.cfg"):
        snippet(path.name)


def test_asdot_as_numbers_are_read(planned: DeviceState, tmp_path: Path) -> None:
    running = snippet("running_asdot.cfg") + PLATFORM.render(planned).replace(
        "router bgp 65101", "router bgp 65002.2048")
    seen = collect(planned, running, shows(tmp_path, "asdot"))
    assert seen.errors == []
    assert seen.asn == 65002 * 65536 + 2048 == seen.bgp["default"].asn
    remote = sorted((p.key, p.remote_asn) for p in seen.bgp["default"].peers.values())
    assert remote == [("Ethernet51", 65000 * 65536 + 1), ("Ethernet52", 65000)]


def test_an_unreadable_as_number_is_named(planned: DeviceState, tmp_path: Path) -> None:
    folder = shows(tmp_path)
    path = folder / "show_ip_bgp_summary_vrf_all.json"
    data = json.loads(path.read_text())
    data["vrfs"]["default"]["asn"] = "65002:2048"
    path.write_text(json.dumps(data))
    seen = collect(planned, PLATFORM.render(planned), folder)
    assert seen.asn is None
    assert seen.errors == ["bgp: VRF default: AS number '65002:2048' is not asplain or asdot"]


def test_port_channels_are_lags(lab: FabricState, planned: DeviceState, tmp_path: Path) -> None:
    running = PLATFORM.render(planned) + snippet("running_portchannel.cfg")
    seen = collect(planned, running, shows(tmp_path, "portchannel"))
    assert seen.errors == []
    lag = seen.interfaces["Port-Channel1"]
    assert (lag.kind, lag.members, lag.speed_mbps, lag.mtu) == (
        IfKind.LAG, ["Ethernet3", "Ethernet4"], 200000, 9214)
    assert seen.interfaces["Ethernet3"].lag == "Port-Channel1"
    sub = seen.interfaces["Port-Channel1.10"]
    assert (sub.parent, sub.vrf, sub.addresses) == ("Port-Channel1", "blue", ["10.10.9.0/31"])
    # the plan has no LAG: the catalog finds on this switch what it finds without them
    clean = collect(planned, PLATFORM.render(planned))
    found, before = (
        [f.message for f in run_checks(CheckContext(
            state=lab.model_copy(update={"devices": {**lab.devices, "leaf1": device}}),
            plan=lab, stage=Stage.LIVE))] for device in (seen, clean))
    assert found == before


def test_lag_members_from_the_config_alone(planned: DeviceState, tmp_path: Path) -> None:
    """A reply that lists no memberInterfaces: the members' channel-group lines say."""
    folder = shows(tmp_path, "portchannel")
    path = folder / "show_interfaces.json"
    data = json.loads(path.read_text())
    del data["interfaces"]["Port-Channel1"]["memberInterfaces"]
    path.write_text(json.dumps(data))
    seen = collect(planned, PLATFORM.render(planned) + snippet("running_portchannel.cfg"), folder)
    assert seen.interfaces["Port-Channel1"].members == ["Ethernet3", "Ethernet4"]
    assert seen.errors == []


def test_lldp_names_with_a_domain_are_the_device(planned: DeviceState, tmp_path: Path) -> None:
    seen = collect(planned, PLATFORM.render(planned), shows(tmp_path, "lldp_fqdn"))
    peer = seen.interfaces["Ethernet51"].peer
    assert peer is not None and (peer.device, peer.port) == ("spine1", "Ethernet1")


def test_routes_of_an_empty_vrf_and_a_static_next_hop(planned: DeviceState,
                                                      tmp_path: Path) -> None:
    seen = collect(planned, PLATFORM.render(planned), shows(tmp_path, "routes"))
    assert seen.routes is not None and seen.routes["mgmt"] == {}
    static = seen.routes["default"]["192.0.2.0/24"]
    assert static.protocol == "static"
    assert [(h.address, h.interface) for h in static.nexthops] == [("10.1.0.1", "Vlan100")]


def test_watchdog_without_an_action_line_has_no_invented_action(planned: DeviceState) -> None:
    running = "\n".join(line for line in PLATFORM.render(planned).splitlines()
                        if line not in (WATCHDOG_ACTION, PORT_ACTION))
    dog = collect(planned, running).interfaces["Ethernet51"].qos
    assert dog is not None and dog.watchdog is not None
    assert dog.watchdog.action is None
    assert "EOS applies its own default action" in dog.watchdog.unknown["action"]
    assert (dog.watchdog.detect_ms, dog.watchdog.restore_ms, dog.watchdog.poll_ms) == (
        200, 400, 200)


def test_switch_wide_action_without_a_port_action(planned: DeviceState) -> None:
    running = "\n".join(line for line in PLATFORM.render(planned).splitlines()
                        if line != PORT_ACTION)
    qos = collect(planned, running).interfaces["Ethernet51"].qos
    assert qos is not None and qos.watchdog is not None
    assert (qos.watchdog.action, qos.watchdog.unknown) == ("drop", {})


def test_a_port_timer_overrides_the_defaults(planned: DeviceState) -> None:
    running = PLATFORM.render(planned).replace(
        PORT_ACTION, PORT_ACTION + "\n" + snippet("running_watchdog_port_timer.cfg")
        .splitlines()[-1])
    qos = collect(planned, running).interfaces["Ethernet51"].qos
    assert qos is not None and qos.watchdog is not None
    assert (qos.watchdog.detect_ms, qos.watchdog.restore_ms) == (300, 600)
    assert qos.watchdog.unknown == {"poll_ms": "polling-interval is 'auto': EOS computes it"}


def test_missing_default_timers_are_unknown(planned: DeviceState) -> None:
    running = "\n".join(line for line in PLATFORM.render(planned).splitlines()
                        if not line.startswith("priority-flow-control pause watchdog default"))
    qos = collect(planned, running).interfaces["Ethernet51"].qos
    assert qos is not None and qos.watchdog is not None
    assert set(qos.watchdog.unknown) == {"detect_ms", "restore_ms", "poll_ms"}
    assert qos.watchdog.action == "drop"


def test_trust_left_unset_follows_the_port_mode(planned: DeviceState) -> None:
    running = PLATFORM.render(planned).replace("   qos trust dscp\n", "")
    seen = collect(planned, running)
    routed, switched = seen.interfaces["Ethernet51"].qos, seen.interfaces["Ethernet1"].qos
    assert routed is not None and switched is not None
    assert (routed.trust, switched.trust) == ("dscp", "pcp")


def test_trust_on_the_interface_wins_over_its_profile(planned: DeviceState) -> None:
    running = PLATFORM.render(planned).replace(
        "interface Ethernet51\n", "interface Ethernet51\n   qos trust cos\n")
    qos = collect(planned, running).interfaces["Ethernet51"].qos
    assert qos is not None and qos.trust == "pcp"
