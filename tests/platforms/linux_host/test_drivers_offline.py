"""LinuxHostDriver (a NAPALM driver) against recorded host output, no network.

A fake session (tests/doubles/frr.py's FakeSession) answers commands from
tests/fixtures/linux_host/ (recorded on the embedded lab) and speaks the drivers'
batching protocol: several commands in one `sh -s`, each preceded by an
`echo '@@flatfab@@ <key>'` marker line.
"""

from __future__ import annotations

import pytest
from napalm.base.exceptions import ReplaceConfigException

from flatfab.platforms.linux_host.driver import LinuxHostDriver
from flatfab.transport.ssh import CommandResult
from tests.doubles.frr import FakeSession
from tests.support.paths import FIXTURES


def _file(node: str, name: str) -> tuple[str, int, str]:
    return (FIXTURES / "linux_host" / node / name).read_text(), 0, ""


def _host() -> LinuxHostDriver:
    driver = LinuxHostDriver("fake", "u", None)
    answers = {r"ip -j -d link show": _file("leaf1-h1", "ip_link.json"),
               r"ip -j addr show": _file("leaf1-h1", "ip_addr.json"),
               r"ip -j route show": _file("leaf1-h1", "ip_route.json"),
               r"ip -4 -j route show table all": _file("leaf1-h1", "ip_route.json"),
               r"ip -j rule show": ("[]", 0, ""),
               r"grep -H \. /proc/sys/net/ipv4/conf/.*": ("", 0, ""),
               r"cat \S+/nic/sysctl\.conf .*": ("", 0, ""),
               r"cat \S+/nic/qos\.conf .*": ("", 0, ""),
               r"nft -j list table inet flatfab .*": ("", 0, ""),
               # no nccl.conf: the host manages none
               r"if \[ -e \S+/nccl\.conf \].*": ("@@flatfab-no-file\n", 0, "")}
    driver.session = FakeSession(answers)  # type: ignore[assignment]
    return driver


def test_host_state_and_getters() -> None:
    driver = _host()
    assert driver.get_config(retrieve="running")["running"] == (
        "nic eth1 mtu 9000 up\naddress eth1 10.100.1.11/24\n"
        "route 0.0.0.0/0 via 10.100.1.1 dev eth1\n")
    assert driver.get_interfaces()["eth1"]["mtu"] == 9000
    assert driver.get_interfaces_ip()["eth1"]["ipv4"]["10.100.1.11"]["prefix_length"] == 24


def test_host_refuses_to_manage_the_management_nic() -> None:
    with pytest.raises(ReplaceConfigException, match="management NIC eth0"):
        _host().load_replace_candidate(config="nic eth0 mtu 9000 up\n")


def test_probe_results_come_back_in_target_order() -> None:
    driver = _host()

    def answer(command: str, *, stdin: str | None = None, **_: object) -> CommandResult:
        assert stdin is not None and stdin.count('python3 -c "$ECHO_PROBE"') == 1
        assert " 10.0.0.1/56/0 10.0.0.2/8972/1 10.0.0.3/56/0" in stdin
        out = ("@@probe 2 1 2 packets transmitted, 0 received, 100% packet loss\n"
               "@@probe 0 0 rtt min/avg/max/mdev = 0.1/0.1/0.1/0.0 ms\n")
        return CommandResult(command, out, "", 0)

    driver.session.run = answer  # type: ignore[method-assign]
    results = driver.probe([("10.0.0.1", 56, False), ("10.0.0.2", 8972, True),
                            ("10.0.0.3", 56, False)])
    assert [r["replied"] for r in results] == [True, False, False]
    assert results[1]["detail"] == "no result"
    assert "100% packet loss" in results[2]["detail"]
