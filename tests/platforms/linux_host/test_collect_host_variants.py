"""linux_host collect against each release's documented shape of what flatfab reads.

Variants: tests/fixtures/linux_host/variants/*.json (derived from documentation, each naming
the iproute2 or nftables release and the command; or captured here on Debian 12 with the
command by tests/fixtures/linux_host/capture_multinic.py: a one-NIC host, rail's su1-s1 as
the driver configured it, and rules and routes flatfab does not express). Each answers its
command in place of the embedded lab's recording (tests/doubles/linux_host.py's fake
shell); the host is then read through its driver and collect: what a release adds is
tolerated, what flatfab cannot read is named in the device's errors and not judged, and the
host is never refused for it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState
from flatfab.plan.planner import plan
from flatfab.platforms.linux_host import nic_qos
from flatfab.platforms.linux_host.collect import collect
from flatfab.platforms.linux_host.config import HostRoute, HostRule, format_config, parse_config
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from tests.doubles.frr import FakeShell, Reply
from tests.doubles.linux_host import STATE_DIR, SYSCTL_RECORD, host_driver
from tests.support.paths import FIXTURES, ROOT

VARIANTS = FIXTURES / "linux_host" / "variants"
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
        assert data["source"].startswith(("derived from documentation",
                                          "captured here on Debian 12")), path
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


# ---- per-NIC routing: captured here (Debian 12, iproute2 6.1) ---------------------------------


def captured_driver(case: str, *whats: str) -> tuple[LinuxHostDriver, dict[str, Any]]:
    """The recorded host with `case`'s captured outputs in place of its recordings."""
    answers: dict[str, Any] = {}
    data: dict[str, Any] = {}
    for what in whats:
        data = variant(f"{case}_{what}.json")
        answers[data["command"]] = data["output"]
    answers[SYSCTL_RECORD] = data["record"]
    answers[QOS] = data["qos"]
    return driver_with(**answers)[0], data


def test_a_rail_server_reads_back_as_the_driver_configured_it() -> None:
    driver, data = captured_driver("rail_server", "ip_link", "ip_addr", "nft",
                                   "ip_route_table_all", "ip_rule", "sysctl_proc")
    state = driver.read_host_state()
    assert state.unread == {}
    assert format_config(state) == data["config"]  # the committed text, qos included
    wanted = parse_config(data["config"])
    assert set(state.routes) == set(wanted.routes)
    assert any(r.via is None and r.table == 102 and r.source == "10.100.2.11"
               for r in state.routes)
    assert HostRule(priority=102, source="10.100.2.11", table=102) in state.rules
    assert state.sysctls == wanted.sysctls and "net.ipv4.conf.eth0.rp_filter" not in \
        state.sysctl_values  # the management NIC is not read
    # the record keeps each key's value from before flatfab
    assert state.sysctl_before["net.ipv4.conf.eth2.arp_ignore"] == "0"


def test_collect_of_a_rail_server_gives_the_plans_host_routing_in_its_order() -> None:
    driver, data = captured_driver("rail_server", "ip_link", "ip_addr", "nft",
                                   "ip_route_table_all", "ip_rule", "sysctl_proc")
    # a plan holding this config's host routing, its routes in an order of its own
    planned = collect(driver, DeviceState(name="su1-s1", role="host", platform="linux_host"),
                      [])
    wanted = parse_config(data["config"])
    planned.static_routes = list(reversed(planned.static_routes))
    seen = collect(driver, planned, [])
    assert seen.errors == []
    assert seen.static_routes == planned.static_routes  # in the plan's order
    assert {(r.prefix, r.via, r.interface, r.table, r.source) for r in seen.static_routes} \
        == {(r.prefix, r.via, r.nic, r.table, r.source) for r in wanted.routes}
    assert [(r.priority, r.source, r.table) for r in seen.rules] == [
        (r.priority, r.source, r.table) for r in sorted(wanted.rules)]
    assert seen.sysctls == wanted.sysctls


def test_a_one_nic_host_has_no_table_rule_or_sysctl(planned: DeviceState) -> None:
    driver, _ = captured_driver("one_nic", "ip_route_table_all", "ip_rule", "sysctl_proc")
    state = driver.read_host_state()
    assert state.rules == () and state.sysctls == {} and state.unread == {}
    assert state.routes == (HostRoute(prefix="0.0.0.0/0", via="10.100.1.1", nic="eth1"),)
    seen = collect(driver, planned, [])
    assert (seen.static_routes, seen.rules, seen.sysctls) == (
        planned.static_routes, planned.rules, planned.sysctls)


def test_rules_and_routes_flatfab_does_not_express_are_named_and_kept() -> None:
    driver, _ = captured_driver("foreign", "ip_route_table_all", "ip_rule", "sysctl_proc")
    state = driver.read_host_state()
    assert state.rules == (HostRule(priority=101, source="10.100.1.11", table=101),)
    assert state.routes == (
        HostRoute(prefix="10.100.1.0/24", via=None, nic="eth1", table=101,
                  source="10.100.1.11"),
        HostRoute(prefix="10.9.0.0/16", via="10.100.1.1", nic="eth1", table=1000),
        HostRoute(prefix="0.0.0.0/0", via="10.100.1.1", nic="eth1"))
    assert state.unread == {
        "rule 200 src 10.100.0.0 srclen 16 table 200":
            "it has srclen, which flatfab does not express",
        "rule 300 src all fwmark 0x10 table 300": "it has fwmark, which flatfab does not express",
        "rule 400 src 10.1.1.1 iif eth1 table main":
            "it has iif, which flatfab does not express",
        "rule 500 not src 10.1.1.2 table 5": "it has not, which flatfab does not express",
        "rule 600 src 10.1.1.3 action unreachable":
            "it has action, which flatfab does not express",
        "route 10.50.0.0/16 dev eth1 table 101":
            "a multipath route, which flatfab does not express"}
    # a replace candidate without them deletes flatfab's own rule and routes only
    current = driver.read_host_state()
    script = driver._transition(current, driver._desired_state(
        current, "nic eth1 mtu 9000 up\naddress eth1 10.100.1.11/24\n", merge=False),
        merge=False, tag="candidate")
    assert script.splitlines() == [
        "set -e",
        "ip rule del from 10.100.1.11 table 101 priority 101",
        "ip route del 10.100.1.0/24 dev eth1 src 10.100.1.11 table 101",
        "ip route del 10.9.0.0/16 via 10.100.1.1 dev eth1 table 1000",
        "ip route del 0.0.0.0/0 via 10.100.1.1 dev eth1"]


def test_a_managed_sysctl_the_kernel_shows_no_value_for_is_named(planned: DeviceState) -> None:
    driver, _ = driver_with(**{SYSCTL_RECORD: "net.ipv4.conf.eth1.rp_filter 0\n"
                                              "net.ipv4.conf.eth7.arp_ignore 0\n"})
    state = driver.read_host_state()
    assert state.sysctls == {"net.ipv4.conf.eth1.rp_filter": "0"}
    assert state.unread == {"sysctl net.ipv4.conf.eth7.arp_ignore":
                            "no value under /proc/sys/net/ipv4/conf (no such NIC?)"}
    seen = collect(driver, planned, [])
    assert seen.sysctls == {"net.ipv4.conf.eth1.rp_filter": "0"}  # no default for eth7
    assert seen.errors == ["sysctl net.ipv4.conf.eth7.arp_ignore: no value under "
                           "/proc/sys/net/ipv4/conf (no such NIC?)"]


def test_planned_sysctls_are_collected_at_the_kernels_values_even_when_never_set() -> None:
    """A multi-NIC server flatfab never configured: the kernel's values of the planned keys
    (what host.routing judges), none of the keys the plan does not have."""
    driver, _ = captured_driver("one_nic", "ip_route_table_all", "ip_rule", "sysctl_proc")
    planned = DeviceState(name="su1-s1", role="host", platform="linux_host",
                          sysctls={"net.ipv4.conf.eth1.rp_filter": "2",
                                   "net.ipv4.conf.eth1.arp_ignore": "1",
                                   "net.ipv4.conf.eth3.arp_ignore": "1"})
    seen = collect(driver, planned, [])
    assert seen.sysctls == {"net.ipv4.conf.eth1.rp_filter": "0",
                            "net.ipv4.conf.eth1.arp_ignore": "0"}
    assert seen.errors == ["sysctl net.ipv4.conf.eth3.arp_ignore: no value under "
                           "/proc/sys/net/ipv4/conf (no such NIC?)"]
