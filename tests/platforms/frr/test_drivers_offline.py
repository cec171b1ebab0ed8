"""FrrDriver (a NAPALM driver) against recorded device output, no network.

A fake session (tests/doubles/frr.py's FakeSession) answers commands from
tests/fixtures/frr/ (recorded on the embedded lab) and speaks the drivers'
batching protocol: several commands in one `sh -s`, each preceded by an
`echo '@@flatfab@@ <key>'` marker line.
"""

from __future__ import annotations

import re

import pytest
from napalm.base.exceptions import ReplaceConfigException

from flatfab.platforms.frr import ecmp
from flatfab.platforms.frr.driver import FrrDriver, normalize_frr
from flatfab.transport.ssh import ReadOnlyError, SshOptions
from tests.doubles.frr import FakeSession
from tests.support.paths import FIXTURES


def _file(node: str, name: str) -> tuple[str, int, str]:
    return (FIXTURES / "frr" / node / name).read_text(), 0, ""


def _leaf1() -> dict[str, tuple[str, int, str]]:
    answers = {
        # before the first lossless rollout: no virtual ASIC file, no flatfab queues
        r"cat \S+/asic/config_db\.json .*": ("", 0, ""),
        r"tc (-n \S+ )?-j (-s )?(qdisc|filter) show dev \S+": ("[]\n", 0, ""),
        r"tc (-n \S+ )?class show dev \S+": ("", 0, ""),
        r"ip netns list": _file("leaf1", "ip_netns_list.txt"),
        r"vtysh -c 'show bgp vrf all summary json'":
            _file("leaf1", "show_bgp_vrf_all_summary.json"),
        r"vtysh -c 'show running-config'": _file("leaf1", "show_running_config.txt"),
        r"vtysh -c 'show version'": _file("leaf1", "show_version.txt"),
        r"/usr/sbin/lldpcli -u \S+ -f json show neighbors":
            _file("leaf1", "lldpcli_show_neighbors.json"),
        r"hostname": ("leaf1\n", 0, ""), r"hostname -f .*": ("leaf1\n", 0, ""),
        r"cat /proc/uptime": ("5000.12 9000.00\n", 0, ""), r"uname -m": ("x86_64\n", 0, ""),
        r"cat /etc/machine-id .*": ("0123abcd\n", 0, ""),
    }
    for vrf in ("default", "blue", "red"):
        answers[rf"vtysh -c 'show ip route vrf {vrf} json'"] = _file(
            "leaf1", f"show_ip_route_vrf_{vrf}.json")
        ns = "" if vrf == "default" else f"-n {vrf} "
        answers[rf"ip {re.escape(ns)}-j -d link show"] = _file("leaf1", f"ip_link_{vrf}.json")
        answers[rf"ip {re.escape(ns)}-j -d addr show"] = _file("leaf1", f"ip_addr_{vrf}.json")
        answers[re.escape(ecmp.readback_command(vrf))] = _file("leaf1", f"ecmp_{vrf}.txt")
    return answers


def frr(read_only: bool = False, **extra: tuple[str, int, str]) -> FrrDriver:
    driver = FrrDriver("fake", "u", None, optional_args={"lldp_socket": "/run/x.sock"})
    driver.session = FakeSession({**_leaf1(), **extra},  # type: ignore[assignment]
                                 options=SshOptions(host="fake", username="u",
                                                    read_only=read_only))
    return driver


def test_bgp_neighbors_are_napalm_shaped_per_vrf() -> None:
    bgp = frr().get_bgp_neighbors()
    assert sorted(bgp) == ["blue", "global", "red"]
    peer = bgp["global"]["peers"]["swp51"]
    assert peer["is_up"] is True and peer["remote_as"] == 65000 and peer["local_as"] == 65101
    assert isinstance(peer["address_family"]["ipv4"]["received_prefixes"], int)
    assert set(bgp["blue"]["peers"]) == {"swp51.100", "swp52.100"}
    assert bgp["global"]["router_id"] == "10.0.0.17"


def test_interfaces_addresses_lldp_routes_and_facts() -> None:
    driver = frr()
    interfaces = driver.get_interfaces()
    assert interfaces["swp51"]["mtu"] == 9216 and interfaces["swp51"]["is_enabled"]
    assert set(interfaces["swp1"]) == {"is_up", "is_enabled", "description", "last_flapped",
                                       "speed", "mtu", "mac_address"}  # NAPALM's model only
    assert driver.get_interface_links()["swp1"] == {"vrf": "blue", "master": "br100"}
    addresses = driver.get_interfaces_ip()
    assert addresses["br100"]["ipv4"]["10.100.1.1"] == {"prefix_length": 24}
    assert driver.get_lldp_neighbors()["swp51"] == [{"hostname": "spine1", "port": "swp1"}]
    routes = driver.get_route_table()
    assert sorted(routes) == ["blue", "default", "red"]
    hops = [h["interfaceName"] for h in routes["blue"]["10.100.2.0/24"][0]["nexthops"]]
    assert sorted(hops) == ["swp51.100", "swp52.100"]
    facts = driver.get_facts()
    assert facts["hostname"] == "leaf1" and facts["vendor"] == "FRRouting"
    assert facts["os_version"].startswith("FRRouting 8.4.4")


def test_running_config_is_links_then_normalized_frr() -> None:
    running = frr().get_config(retrieve="running")["running"]
    assert running.startswith("!! links\nlink swp51 mtu 9216 up\n")
    for noise in ("frr version", "Building configuration", " netns /run/netns/"):
        assert noise not in running
    assert "!! frr\nfrr defaults datacenter\nhostname leaf1\n" in running


def test_cli_runs_show_commands_only() -> None:
    driver = frr()
    assert "router bgp 65101" in driver.cli(["show running-config"])["show running-config"]
    with pytest.raises(Exception, match="show commands only"):
        driver.cli(["configure terminal"])


def test_a_read_only_session_refuses_to_commit() -> None:
    driver = frr(read_only=True, **{r"f=\$\(mktemp\).*vtysh -C.*": ("", 0, ""),
                                    r"p=\$\(cat .*revert.pid.*": ("", 0, "")})
    running = driver.get_config(retrieve="running")["running"]
    driver.load_replace_candidate(config=running.replace("mtu 9216", "mtu 9100"))
    assert "-link swp51 mtu 9216 up" in driver.compare_config()
    with pytest.raises(ReadOnlyError):
        driver.commit_config()
    assert not any(c.mutating for c in driver.session.log)


def test_frr_syntax_errors_are_refused_before_anything_changes() -> None:
    driver = frr(**{r"f=\$\(mktemp\).*vtysh -C.*": ("line 3: % Unknown command: neighbour",
                                                    1, "")})
    with pytest.raises(ReplaceConfigException, match="FRR rejects the candidate"):
        driver.load_replace_candidate(config="!! links\n!! frr\nrouter bgp 1\n neighbour x\n")
    assert not any(c.mutating for c in driver.session.log)


def test_bgpd_down_is_a_clear_error() -> None:
    driver = frr(**{r"vtysh -c 'show bgp vrf all summary json'": ("", 1,
                                                                   "bgpd is not running")})
    with pytest.raises(Exception, match="bgpd is not running"):
        driver.get_bgp_neighbors()


def test_normalize_frr_drops_runtime_only_lines() -> None:
    text = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n" \
           "hostname x\nvrf blue\n netns /run/netns/blue\nexit-vrf\nend\n"
    assert normalize_frr(text) == "hostname x\nvrf blue\nexit-vrf\nend\n"
