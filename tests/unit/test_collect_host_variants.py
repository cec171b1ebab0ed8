"""linux_host collect against each release's documented shape of what flatfab reads.

Variants: tests/fixtures/linux_host/variants/*.json (derived from documentation, each naming
the iproute2 or nftables release and the command). Each answers its command in place of the
embedded lab's recording (tests/unit/test_host_driver.py's fake shell); the host is then read
through its driver and collect: what a release adds is tolerated, what flatfab cannot read is
named in the device's errors and not judged, and the host is never refused for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tasks.intent.loader import load_intent
from tasks.model.state import DeviceState
from tasks.plan.planner import plan
from tasks.platforms.linux_host import nic_qos
from tasks.platforms.linux_host.collect import collect
from tasks.platforms.linux_host.config import HostRoute
from tasks.platforms.linux_host.driver import LinuxHostDriver
from tests.conftest import ROOT
from tests.unit.test_frr_driver import FakeShell, Reply
from tests.unit.test_host_driver import STATE_DIR, host_driver

VARIANTS = Path(__file__).resolve().parents[1] / "fixtures" / "linux_host" / "variants"
NFT = "nft -j list table inet flatfab 2>/dev/null || true"
QOS = f"cat {STATE_DIR}/nic/qos.conf 2>/dev/null || true"
SETTINGS = nic_qos.NicSettings(
    trust="dscp", pfc=(3,), tos=106, cnp_dscp=48, cnp_priority=6, ecn_np=(3,), ecn_rp=(3,),
    dcqcn=True, strict=(6,), tc_bw=(50, 0, 0, 50, 0, 0, 0, 0), pfc_prevention_ms=100,
    dscp_to_priority=tuple(d >> 3 for d in range(64)))


def variant(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VARIANTS / name).read_text(encoding="utf-8"))
    return data


def text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, indent=1) + "\n"


@pytest.fixture(scope="module")
def planned() -> DeviceState:
    return plan(load_intent(ROOT / "intents" / "lab")).devices["leaf1-h1"]


def driver_with(**answers: Any) -> tuple[LinuxHostDriver, FakeShell]:
    driver, shell = host_driver(read_only=True)
    for command, output in answers.items():
        shell.answers[command] = Reply(text(output))
    return driver, shell


def test_every_variant_says_where_it_comes_from() -> None:
    found = sorted(VARIANTS.glob("*.json"))
    assert len(found) >= 7
    for path in found:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert "derived from documentation" in data["source"], path
        assert data["release"] and data["command"], path


def test_iproute2_6_link_extras(planned: DeviceState) -> None:
    out = variant("ip_link_iproute2_6_extras.json")
    driver, _ = driver_with(**{out["command"]: out["output"],
                               "ip -j link show": out["output"]})
    state = driver.read_host_state()
    assert (state.nics["eth1"].mtu, state.nics["eth1"].up) == (9000, True)
    assert "eth0" not in state.nics and state.unread == {}
    assert driver.get_interfaces()["eth1"]["is_up"] is True
    assert driver.get_facts()["interface_list"] == ["eth0", "eth1", "lo"]
    seen = collect(driver, planned, [])
    assert seen.interfaces["eth1"].mtu == 9000 and seen.errors == []


def test_a_nic_without_mtu_is_named_not_judged(planned: DeviceState) -> None:
    out = variant("ip_link_no_mtu.json")
    driver, _ = driver_with(**{out["command"]: out["output"]})
    state = driver.read_host_state()
    assert "eth2" not in state.nics
    assert state.unread == {"nic eth2": "`ip -j link` prints no mtu for it"}
    assert driver.get_interfaces()["eth2"]["mtu"] == 0  # NAPALM's model wants an int
    seen = collect(driver, planned, [])
    assert "eth2" not in seen.interfaces
    assert seen.errors == ["nic eth2: `ip -j link` prints no mtu for it"]
    assert seen.interfaces["eth1"].mtu == 9000


def test_addr_info_extras_and_empty_entries(planned: DeviceState) -> None:
    out = variant("ip_addr_extras.json")
    driver, _ = driver_with(**{out["command"]: out["output"]})
    assert driver.read_host_state().nics["eth1"].addresses == ("10.100.1.11/24",
                                                               "10.100.9.11/24")
    assert driver.get_interfaces_ip()["eth1"]["ipv6"] == {"fe80::11:1": {"prefix_length": 64}}
    assert collect(driver, planned, []).interfaces["eth1"].addresses == [
        "10.100.1.11/24", "10.100.9.11/24"]


def test_routes_flatfab_cannot_express_are_named(planned: DeviceState) -> None:
    out = variant("ip_route_multipath_via.json")
    driver, _ = driver_with(**{out["command"]: out["output"]})
    state = driver.read_host_state()
    assert state.routes == (HostRoute(prefix="0.0.0.0/0", via="10.100.1.1", nic="eth1"),)
    assert set(state.unread) == {"route 10.50.0.0/16 dev eth1", "route 10.60.0.0/16 dev eth1"}
    seen = collect(driver, planned, [])
    assert [r.prefix for r in seen.static_routes] == ["0.0.0.0/0"]
    assert any("multipath" in e for e in seen.errors)
    assert any("inet6" in e for e in seen.errors)


@pytest.mark.parametrize("name", ["nft_1_0_names.json", "nft_0_9_numbers_counters.json"])
def test_every_nftables_release_gives_the_marking(planned: DeviceState, name: str) -> None:
    out = variant(name)
    expected = {nic: tuple(v) for nic, v in out["expect"].items()}
    assert nic_qos.read_marks(text(out["output"])) == (expected, {})
    assert nic_qos.marks_from_nft(text(out["output"])) == expected
    stored = nic_qos.NicSettings(**{**SETTINGS.__dict__, "tos": 0, "cnp_dscp": 0})
    driver, _ = driver_with(**{NFT: out["output"], QOS: stored.line("eth1") + "\n"})
    assert driver.read_host_state().qos["eth1"] == SETTINGS  # as the kernel marks
    seen = collect(driver, planned, [])
    nic = seen.interfaces["eth1"].nic
    assert nic is not None and (nic.roce_tos, nic.cnp_dscp) == (106, 48)


def test_a_marking_flatfab_cannot_read_is_unread_and_the_host_still_read(
        planned: DeviceState) -> None:
    out = variant("nft_unknown_name.json")
    marks, problems = nic_qos.read_marks(text(out["output"]))
    assert marks == {} and set(problems) == {out["unread"]}
    with pytest.raises(nic_qos.NicQosError, match="some-new-name"):
        nic_qos.marks_from_nft(text(out["output"]))
    driver, _ = driver_with(**{NFT: out["output"], QOS: SETTINGS.line("eth1") + "\n"})
    state = driver.read_host_state()
    assert state.qos["eth1"] == SETTINGS  # the config text keeps the stored settings
    seen = collect(driver, planned, [])
    assert seen.interfaces["eth1"].nic is None  # not judged
    assert any(e.startswith("qos eth1:") and "some-new-name" in e for e in seen.errors)
    assert seen.interfaces["eth1"].mtu == 9000


def test_nft_output_that_is_not_json_marks_every_nic_unread(planned: DeviceState) -> None:
    driver, _ = driver_with(**{NFT: "Error: syntax error\n", QOS: SETTINGS.line("eth1") + "\n"})
    seen = collect(driver, planned, [])
    assert seen.interfaces["eth1"].nic is None
    assert seen.errors == ["qos eth1: `nft -j list table` did not print JSON"]
