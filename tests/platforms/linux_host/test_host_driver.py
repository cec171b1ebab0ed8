"""LinuxHostDriver against recorded host output, without a network.

Answers come from tests/fixtures/linux_host/leaf1-h1: `ip -j` output recorded on host
leaf1-h1 of the embedded lab (data NIC eth1, management NIC eth0, default route via the
leaf), byte-for-byte copies of the recordings in tests/fixtures/recorded as the lab was down
when these tests were written. hostname.txt, proc_uptime.txt, uname_*.txt, machine_id.txt
and probe_output.txt are written by hand in the shape the commands print. The routing tables,
rules and per-NIC sysctls (`ip -4 -j route show table all`, `ip -j rule show`, /proc/sys) are
tests/fixtures/linux_host/variants/one_nic_*.json, captured here in a namespace set up as
leaf1-h1 is (tests/fixtures/linux_host/capture_multinic.py). The fake session is
tests/doubles/linux_host.py's.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

import pytest
from napalm.base.exceptions import CommitError, ReplaceConfigException

from flatfab.platforms.linux_host.config import (
    HostConfig,
    HostRoute,
    Nic,
    format_config,
    parse_config,
)
from flatfab.platforms.linux_host.driver import (
    ECHO_PROBE_SOURCE,
    PROBE_MARK,
    RULE_READ,
    SYSCTL_READ,
    LinuxHostDriver,
)
from flatfab.transport.ssh import CommandResult, ReadOnlyError
from tests.doubles.frr import FakeShell, ReadOnlyShell, Reply, recorded
from tests.doubles.linux_host import (
    HOST,
    STATE_DIR,
    SYSCTL_RECORD,
    captured,
    host_answers,
    host_driver,
)

LEAF1_H1 = """\
nic eth1 mtu 9000 up
address eth1 10.100.1.11/24
route 0.0.0.0/0 via 10.100.1.1 dev eth1
"""


@pytest.fixture
def host() -> tuple[LinuxHostDriver, FakeShell]:
    return host_driver()


# ---- getters ------------------------------------------------------------------------------


def test_get_facts(host: tuple[LinuxHostDriver, FakeShell]) -> None:
    driver, shell = host
    facts = driver.get_facts()
    assert facts == {
        "hostname": "leaf1-h1", "fqdn": "leaf1-h1", "vendor": "Linux", "model": "x86_64",
        "os_version": "Linux 6.18.44-fc-v657",
        "serial_number": "0c7e5b1a9d8f4c2e8b6a4f3d2e1c0b9a",
        "uptime": pytest.approx(5061.88), "interface_list": ["eth0", "eth1", "lo"]}
    assert [entry.command for entry in shell.log] == ["sh -s"]  # one round trip


def test_get_interfaces(host: tuple[LinuxHostDriver, FakeShell]) -> None:
    interfaces = host[0].get_interfaces()
    assert set(interfaces) == {"eth0", "eth1"}
    assert interfaces["eth1"]["mtu"] == 9000
    assert interfaces["eth1"]["is_enabled"] is True
    assert interfaces["eth1"]["is_up"] is True
    assert interfaces["eth0"]["mtu"] == 1500
    assert interfaces["eth1"]["mac_address"] == interfaces["eth1"]["mac_address"].upper()


def test_get_interfaces_ip(host: tuple[LinuxHostDriver, FakeShell]) -> None:
    addresses = host[0].get_interfaces_ip()
    assert addresses["eth1"] == {
        "ipv4": {"10.100.1.11": {"prefix_length": 24}},
        "ipv6": {"fe80::444d:28ff:fe5b:9c81": {"prefix_length": 64}}}
    assert addresses["eth0"]["ipv4"] == {"172.31.255.17": {"prefix_length": 24}}
    assert addresses["lo"]["ipv4"] == {"127.0.0.1": {"prefix_length": 8}}


def test_read_host_state(host: tuple[LinuxHostDriver, FakeShell]) -> None:
    assert host[0].read_host_state() == HostConfig(
        nics={"eth1": Nic(name="eth1", mtu=9000, up=True, addresses=("10.100.1.11/24",))},
        routes=(HostRoute(prefix="0.0.0.0/0", via="10.100.1.1", nic="eth1"),))


def test_get_config_running(host: tuple[LinuxHostDriver, FakeShell]) -> None:
    assert host[0].get_config(retrieve="running")["running"] == LEAF1_H1


# ---- configuration ------------------------------------------------------------------------


def test_candidate_touching_the_management_nic_is_refused(
        host: tuple[LinuxHostDriver, FakeShell]) -> None:
    driver, shell = host
    with pytest.raises(ReplaceConfigException, match="management NIC eth0"):
        driver.load_replace_candidate(config=LEAF1_H1 + "nic eth0 mtu 9000 up\n")
    assert shell.log == []


def test_candidate_that_does_not_parse_is_refused(host: tuple[LinuxHostDriver, FakeShell]
                                                   ) -> None:
    with pytest.raises(ReplaceConfigException, match="line 2: cannot parse"):
        host[0].load_replace_candidate(config="nic eth1 mtu 9000 up\naddress eth1\n")


def test_compare_config(host: tuple[LinuxHostDriver, FakeShell]) -> None:
    driver, _ = host
    driver.load_replace_candidate(config=LEAF1_H1.replace("mtu 9000", "mtu 4200"))
    diff = driver.compare_config()
    assert "\n-nic eth1 mtu 9000 up\n+nic eth1 mtu 4200 up\n" in diff
    driver.load_replace_candidate(config=LEAF1_H1)
    assert driver.compare_config() == ""


def test_commit_config(host: tuple[LinuxHostDriver, FakeShell]) -> None:
    driver, shell = host
    driver.load_replace_candidate(config=LEAF1_H1.replace("mtu 9000", "mtu 4200"))
    driver.commit_config()
    assert shell.applied == [
        (f"mkdir -p {STATE_DIR} && cat > {STATE_DIR}/rollback.conf", LEAF1_H1),
        (f"cat > {STATE_DIR}/revert.sh", "set -e\nip link set eth1 mtu 9000\n"),
        ("sh -s", "set -e\nip link set eth1 mtu 4200\n"),
        ("sh -s", f"cat > {STATE_DIR}/startup.conf <<'FLATFAB_EOF'\n"
                  f"{LEAF1_H1.replace('mtu 9000', 'mtu 4200')}FLATFAB_EOF\n"),
    ]


@dataclass
class FailingApply(FakeShell):
    """The forward script fails after it changed eth1's MTU to 4200 (the host reads so)."""

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        result = super().run(command, stdin=stdin, mutating=mutating, timeout=timeout)
        if mutating and command.startswith("mkdir -p") and stdin is not None:
            self.answers[f"cat {STATE_DIR}/rollback.conf"] = Reply(stdin)  # the backup
        if mutating and command == "sh -s" and stdin and "mtu 4200" in stdin:  # forward
            link = recorded(HOST / "ip_link.json").stdout.replace('"mtu":9000', '"mtu":4200')
            self.answers["ip -j -d link show"] = Reply(link)
            return CommandResult(command, "", "Error: Nexthop has invalid gateway.\n", 2)
        return result


def test_failed_apply_is_reverted_at_once_from_where_it_stopped() -> None:
    # Regression: the revert script (written for the state a whole commit reaches) ran after
    # a failed apply: its first `ip route del` of a route never added failed, and nothing
    # was reverted. Now the revert goes from the host as it is to the backup.
    driver, _ = host_driver()
    shell = FailingApply(host_answers())
    driver.session = shell
    driver.load_replace_candidate(config=LEAF1_H1.replace("mtu 9000", "mtu 4200").replace(
        "via 10.100.1.1", "via 10.100.7.1"))
    with pytest.raises(CommitError, match="rolled back: Error: Nexthop has invalid gateway"):
        driver.commit_config()
    assert shell.applied[-1] == ("sh -s", "set -e\nip link set eth1 mtu 9000\n")


def test_without_a_backup_the_revert_script_runs(host: tuple[LinuxHostDriver, FakeShell]
                                                 ) -> None:
    driver, shell = host
    shell.answers[f"cat {STATE_DIR}/rollback.conf"] = Reply("", "No such file", 1)
    driver._revert_now()
    assert shell.applied[-1] == (f"sh {STATE_DIR}/revert.sh", None)


def test_rollback_to_the_factory_state(host: tuple[LinuxHostDriver, FakeShell]) -> None:
    # Regression: rollback.conf of a host in factory state is empty (unconfigured NICs have no
    # line). commit_config plans the revert as transition(desired, current) with desired
    # parsed from that text, so eth1 is "no such NIC on the host" and the rollback of a
    # first deployment is refused; the same happens for any candidate leaving a NIC out.
    driver, shell = host
    shell.answers[f"cat {STATE_DIR}/rollback.conf"] = Reply("")
    driver.rollback()
    assert ("sh -s", "set -e\nip route del 0.0.0.0/0 via 10.100.1.1 dev eth1\n"
                     "ip addr del 10.100.1.11/24 dev eth1\n"
                     "ip link set eth1 mtu 1500 down\n") in shell.applied


def test_read_only_driver_refuses_commit_config() -> None:
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None, optional_args={"read_only": True})
    real = driver.session
    shell = ReadOnlyShell(host_answers(), real=real)
    driver.session = shell
    driver.load_replace_candidate(config=LEAF1_H1.replace("mtu 9000", "mtu 4200"))
    with pytest.raises(ReadOnlyError, match="refused on a read-only session"):
        driver.commit_config()
    assert not any(entry.mutating for entry in shell.log)
    assert real.log == []
    assert not real.is_alive


# ---- probe --------------------------------------------------------------------------------


@dataclass
class ProbeShell(FakeShell):
    """Answers the probe script with fixed output and keeps the script for inspection."""

    output: str = ""
    scripts: list[str] = field(default_factory=list)

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        assert not mutating
        assert command == "sh -s" and stdin is not None and PROBE_MARK in stdin
        self.scripts.append(stdin)
        return CommandResult(command, self.output, "", 0)


TARGETS = [("10.100.1.1", 56, False), ("10.100.2.11", 8972, True), ("10.200.1.11", 56, False),
           ("10.100.3.11", 9000, True)]


def probe_driver(output: str) -> tuple[LinuxHostDriver, ProbeShell]:
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None)
    shell = ProbeShell({}, output=output)
    driver.session = shell
    return driver, shell


def test_probe_results_in_target_order_with_missing_one_not_replied() -> None:
    # the recorded output is out of order and has no line for target 1
    driver, _ = probe_driver((HOST / "probe_output.txt").read_text(encoding="utf-8"))
    assert driver.probe(TARGETS) == [
        {"replied": True, "detail": "rtt min/avg/max/mdev = 0.041/0.052/0.063/0.011 ms"},
        {"replied": False, "detail": "no result"},
        {"replied": False,
         "detail": "2 packets transmitted, 0 received, 100% packet loss, time 201ms"},
        {"replied": False, "detail": "2 packets transmitted, 0 received, +2 errors, "
                                     "100% packet loss, time 1ms"},
    ]


def test_probe_ignores_other_lines_and_keeps_empty_detail() -> None:
    output = ("sh: 1: cannot fork\n"
              f"{PROBE_MARK} x 0 nonsense\n"
              f"{PROBE_MARK} 1 0\n"
              f"{PROBE_MARK} 0 2 \n")
    driver, _ = probe_driver(output)
    assert driver.probe(TARGETS[:2]) == [{"replied": False, "detail": ""},
                                         {"replied": True, "detail": ""}]


def test_probe_script_sends_every_probe_at_once() -> None:
    driver, shell = probe_driver("")
    driver.probe(TARGETS, count=3, wait=0.5)
    # the prober's source is defined once, then one prober takes every target
    definition = f"ECHO_PROBE={shlex.quote(ECHO_PROBE_SOURCE)}\n"
    assert shell.scripts[0].startswith(definition)
    lines = shell.scripts[0][len(definition):].splitlines()
    listed = " ".join(f"{address}/{size}/{int(dont_fragment)}"
                      for address, size, dont_fragment in TARGETS)
    assert lines == [f'python3 -c "$ECHO_PROBE" {PROBE_MARK} 3 0.5 {listed}']


def test_probe_without_any_result() -> None:
    driver, _ = probe_driver("")
    assert driver.probe(TARGETS[:2]) == [{"replied": False, "detail": "no result"}] * 2


# ---- per-NIC routing of multi-NIC servers -------------------------------------------------

TWO_NICS = (LEAF1_H1 + "nic eth2 mtu 9000 up\naddress eth2 10.100.2.11/24\n"
            "route 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102\n"
            "route 10.100.2.0/24 dev eth2 src 10.100.2.11 table 102\n"
            "rule from 10.100.2.11 table 102 priority 102\n"
            "sysctl net.ipv4.conf.eth2.arp_ignore 1\n")


@pytest.mark.parametrize("key", ["net.ipv4.conf.eth0.arp_ignore", "net.ipv4.conf.all.rp_filter",
                                 "net.ipv4.conf.default.rp_filter"])
def test_a_sysctl_of_the_management_nic_or_of_every_nic_is_refused(
        host: tuple[LinuxHostDriver, FakeShell], key: str) -> None:
    driver, shell = host
    with pytest.raises(ReplaceConfigException, match=rf"sysctl {re.escape(key)}"):
        driver.load_replace_candidate(config=LEAF1_H1 + f"sysctl {key} 1\n")
    assert shell.log == []


def test_the_management_nics_sysctl_is_refused_by_name() -> None:
    driver, _ = host_driver()
    with pytest.raises(ReplaceConfigException,
                       match=r"refusing sysctl net\.ipv4\.conf\.eth0\.rp_filter: eth0 is "
                             r"the management NIC"):
        driver.load_replace_candidate(config="nic eth0 mtu 1500 up\n"
                                             "sysctl net.ipv4.conf.eth0.rp_filter 2\n")


def two_nic_host() -> tuple[LinuxHostDriver, FakeShell]:
    """leaf1-h1 with a second data NIC eth2 in factory state (its sysctls at 0)."""
    driver, shell = host_driver()
    links = json.loads((HOST / "ip_link.json").read_text(encoding="utf-8"))
    eth1 = next(link for link in links if link["ifname"] == "eth1")
    links.append({**eth1, "ifindex": 9, "ifname": "eth2", "mtu": 1500, "flags": ["BROADCAST"],
                  "operstate": "DOWN"})
    shell.answers["ip -j -d link show"] = Reply(json.dumps(links))
    proc = captured("one_nic", "sysctl_proc").stdout
    shell.answers[SYSCTL_READ] = Reply(proc + proc.replace("/eth1/", "/eth2/"))
    return driver, shell


def test_commit_of_a_second_nic_with_its_table_rule_and_sysctl() -> None:
    driver, shell = two_nic_host()
    assert driver.read_host_state().sysctl_values["net.ipv4.conf.eth2.arp_ignore"] == "0"
    driver.load_replace_candidate(config=TWO_NICS)
    added = [line for line in driver.compare_config().splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert added == [f"+{line}" for line in TWO_NICS.splitlines()[3:]]
    driver.commit_config(revert_in=30)
    record = f"{STATE_DIR}/nic/sysctl.conf"
    forward = next(stdin for command, stdin in shell.applied if command == "sh -s")
    assert forward == (
        "set -e\n"
        f"mkdir -p {STATE_DIR}/nic\n"  # on record before anything changes
        f"cat > {record} <<'FLATFAB_SYSCTL_EOF'\n"
        "net.ipv4.conf.eth2.arp_ignore 0\n"  # its value before flatfab
        "FLATFAB_SYSCTL_EOF\n"
        "ip link set eth2 mtu 9000 up\n"
        "ip addr add 10.100.2.11/24 dev eth2\n"
        "sysctl -qw net.ipv4.conf.eth2.arp_ignore=1\n"
        "ip route replace 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102\n"
        "ip route replace 10.100.2.0/24 dev eth2 src 10.100.2.11 table 102\n"
        "ip rule add from 10.100.2.11 table 102 priority 102\n")
    revert = dict(shell.applied)[f"cat > {STATE_DIR}/revert.sh"]
    assert revert == (
        "set -e\n"
        "ip rule del from 10.100.2.11 table 102 priority 102\n"
        "ip route del 0.0.0.0/0 via 10.100.2.1 dev eth2 src 10.100.2.11 table 102\n"
        "ip route del 10.100.2.0/24 dev eth2 src 10.100.2.11 table 102\n"
        "ip addr del 10.100.2.11/24 dev eth2\n"
        "ip link set eth2 mtu 1500 down\n"
        "sysctl -qw net.ipv4.conf.eth2.arp_ignore=0\n"
        f"rm -f {record}\n")  # off the record once restored


def test_a_merge_keeps_the_managed_sysctls_it_does_not_name() -> None:
    driver, shell = two_nic_host()
    shell.answers[SYSCTL_RECORD] = Reply("net.ipv4.conf.eth2.arp_ignore 0\n")
    proc = shell.answers[SYSCTL_READ].stdout
    shell.answers[SYSCTL_READ] = Reply(proc.replace("eth2/arp_ignore:0", "eth2/arp_ignore:1"))
    state = driver.read_host_state()
    assert state.sysctls == {"net.ipv4.conf.eth2.arp_ignore": "1"}
    # eth2 is in factory state but has a managed sysctl: its `nic` line stays, so the running
    # text (the backup a rollback loads) parses again
    running = driver.get_config(retrieve="running")["running"]
    assert "nic eth2 mtu 1500 down\n" in running
    assert format_config(parse_config(running)) == running
    driver.load_merge_candidate(config="nic eth2 mtu 9000 up\naddress eth2 10.100.2.11/24\n"
                                       "sysctl net.ipv4.conf.eth2.rp_filter 2\n")
    assert driver.compare_config().splitlines()[3:] == [
        " nic eth1 mtu 9000 up",
        " address eth1 10.100.1.11/24",
        "-nic eth2 mtu 1500 down",
        "+nic eth2 mtu 9000 up",
        "+address eth2 10.100.2.11/24",
        " route 0.0.0.0/0 via 10.100.1.1 dev eth1",
        " sysctl net.ipv4.conf.eth2.arp_ignore 1",
        "+sysctl net.ipv4.conf.eth2.rp_filter 2"]


def test_a_rule_from_the_management_address_is_not_flatfabs() -> None:
    driver, shell = host_driver()
    mgmt_rule = '{"priority":200,"src":"172.31.255.17","table":"200"}'
    shell.answers[RULE_READ] = Reply(captured("one_nic", "ip_rule").stdout.replace(
        '{"priority":32766', mgmt_rule + ',{"priority":32766'))
    state = driver.read_host_state()
    assert state.rules == () and state.unread == {}  # not read, so a replace never deletes it
    assert "172.31.255.17" in state.mgmt_addresses
    driver.load_replace_candidate(config=LEAF1_H1)
    assert driver.compare_config() == ""
    driver.load_replace_candidate(config=LEAF1_H1 + "rule from 172.31.255.17 table 201 "
                                                    "priority 201\n")
    with pytest.raises(ReplaceConfigException, match=r"refusing rule from 172\.31\.255\.17 "
                                                     r"table 201 priority 201: 172\.31\.255\.17 "
                                                     r"is a management NIC's address"):
        driver.compare_config()


@dataclass
class SenderShell(FakeShell):
    """Answers the traffic sender's script with a count and keeps the script."""

    scripts: list[str] = field(default_factory=list)

    def run(self, command: str, *, stdin: str | None = None, mutating: bool = False,
            privileged: bool = False, timeout: float = 60.0) -> CommandResult:
        assert command == "python3 -" and stdin is not None and not mutating
        self.scripts.append(stdin)
        return CommandResult(command, "12\n", "", 0)


def test_test_traffic_is_sent_from_the_nics_address_it_names() -> None:
    driver = LinuxHostDriver("192.0.2.17", "ff-admin", None)
    shell = SenderShell({})
    driver.session = shell
    assert driver.send_roce("10.100.3.12", 49152, 2, 5, source="10.100.2.11") == 12
    assert driver.send_roce("10.100.3.12", 49152, 2, 5) == 12
    assert "    s.bind(('10.100.2.11', base + i))\n" in shell.scripts[0]
    assert "    s.bind(('', base + i))\n" in shell.scripts[1]  # the host's choice
    with pytest.raises(ValueError, match="Only decimal digits permitted"):
        driver.send_roce("10.100.3.12", 49152, 1, 1, source="10.100.2.11'); import os #")
    assert len(shell.scripts) == 2


def test_a_probe_from_a_nics_address_names_the_nic_it_left_by() -> None:
    output = (f"{PROBE_MARK} 0 0 2 packets transmitted, 2 received, 0% packet loss, 84 B no DF,"
              " dev eth2\n"
              f"{PROBE_MARK} 1 1 2 packets transmitted, 0 received, 100% packet loss, 9000 B DF,"
              " dev eth1; 10.100.1.1 needs fragmentation (next-hop MTU 1500)\n"
              f"{PROBE_MARK} 2 0 2 packets transmitted, 2 received, 0% packet loss, 84 B no DF\n")
    driver, shell = probe_driver(output)
    results = driver.probe([("10.100.3.12", 56, False, "10.100.2.11"),
                            ("10.100.3.12", 8972, True, "10.100.2.11"),
                            ("10.100.1.1", 56, False)])
    assert [r.get("left_by", "-") for r in results] == ["eth2", "eth1", "-"]
    listed = shell.scripts[0].splitlines()[-1]
    assert listed.endswith(" 10.100.3.12/56/0/10.100.2.11 10.100.3.12/8972/1/10.100.2.11 "
                           "10.100.1.1/56/0")
    with pytest.raises(ValueError):
        driver.probe([("10.100.3.12", 56, False, "10.100.2.11/24")])
