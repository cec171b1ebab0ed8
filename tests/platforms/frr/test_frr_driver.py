"""FrrDriver against recorded switch output, without a network.

`driver.session` is replaced by `FakeShell` (tests/doubles/frr.py), which has SshSession's
`run()` and `log` and answers every command from tests/fixtures/frr/leaf1, recorded on leaf1
of the embedded lab: default VRF plus VRF namespaces blue and red, eBGP unnumbered to
spine1/spine2. The ip, vtysh and lldpcli files are verbatim lab output; hostname.txt,
proc_uptime.txt, machine_id.txt, uname_m.txt and vtysh_bgpd_not_running.stderr are written
by hand. The drivers batch show commands into one `sh -s` whose script separates them with
`echo '@@flatfab@@ <key>'` lines; FakeShell executes such scripts the way sh would.
"""

from __future__ import annotations

from typing import Any

import pytest
from napalm.base.exceptions import CommitError, ReplaceConfigException

from flatfab.platforms.frr.collect import BGP_SUMMARY
from flatfab.platforms.frr.driver import FrrDriver, split_shows
from flatfab.platforms.shell_driver import MARK, DeviceCommandError
from flatfab.transport.ssh import (
    ReadOnlyError,
    SshOptions,
    SshSession,
    TransportError,
)
from tests.doubles.frr import (
    LEAF1,
    LLDP_SOCKET,
    STATE_DIR,
    FakeShell,
    ReadOnlyShell,
    Reply,
    leaf1_answers,
    leaf1_driver,
)


@pytest.fixture
def leaf1() -> tuple[FrrDriver, FakeShell]:
    return leaf1_driver()


def running(driver: FrrDriver) -> str:
    return driver.get_config(retrieve="running")["running"]


# ---- the fake itself ------------------------------------------------------------------------


def test_fake_shell_runs_the_batch_protocol() -> None:
    shell = FakeShell({"hostname": Reply("leaf1\n"), "false": Reply("", "boom\n", 1)})
    script = f"echo; echo '{MARK} a'\nhostname\necho; echo '{MARK} b'\nfalse\n"
    result = shell.run("sh -s", stdin=script)
    assert result.stdout == f"\n{MARK} a\nleaf1\n\n{MARK} b\n"
    assert (result.stderr, result.exit_status) == ("boom\n", 1)
    with pytest.raises(AssertionError, match="no recorded answer"):
        shell.run("reboot")


# ---- getters ------------------------------------------------------------------------------


def test_batch_output_without_a_final_newline_stays_apart() -> None:
    driver = FrrDriver("192.0.2.13", "ff-admin", None)
    driver.session = FakeShell({"cat a": Reply("{}"), "cat b": Reply("x\n")})  # type: ignore[assignment]
    assert driver._batch({"a": "cat a", "b": "cat b"}) == {"a": "{}", "b": "x"}


def test_get_facts(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    driver, shell = leaf1
    facts = driver.get_facts()
    assert facts["hostname"] == "leaf1"
    assert facts["fqdn"] == "leaf1"
    assert facts["vendor"] == "FRRouting"
    assert facts["model"] == "Linux x86_64"
    assert facts["os_version"] == "FRRouting 8.4.4 (leaf1) on Linux(6.18.44-fc-v657)."
    assert facts["serial_number"] == "5e1d0c0a7b3f4e0c9a1d2b3c4d5e6f70"
    assert facts["uptime"] == pytest.approx(5067.42)
    assert facts["interface_list"] == sorted(
        ["lo", "eth0", "swp51", "swp52", "swp1", "br100", "swp51.100", "swp52.100", "swp2",
         "br200", "swp51.200", "swp52.200"])
    assert all(not entry.mutating for entry in shell.log)


def test_getters_batch_commands_into_one_round_trip(leaf1: tuple[FrrDriver, FakeShell]
                                                    ) -> None:
    driver, shell = leaf1
    driver.get_interfaces()
    # one `ip netns list`, then all three namespaces in a single `sh -s`
    assert [entry.command for entry in shell.log] == ["ip netns list", "sh -s"]


def test_get_interfaces(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    interfaces = leaf1[0].get_interfaces()
    assert "lo" not in interfaces
    assert interfaces["swp51"] == {
        "is_up": True, "is_enabled": True, "description": "", "last_flapped": -1.0,
        "speed": -1.0, "mtu": 9216, "mac_address": "02:64:70:57:63:D3"}
    assert (interfaces["swp1"]["mtu"], interfaces["swp1"]["is_enabled"]) == (9000, True)
    assert interfaces["br200"]["mtu"] == 9000


def test_get_interface_links_has_vrf_and_bridge(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    links = leaf1[0].get_interface_links()
    assert "lo" not in links
    assert links["swp1"] == {"vrf": "blue", "master": "br100"}
    assert links["br200"] == {"vrf": "red", "master": ""}
    assert links["eth0"] == links["swp51"] == {"vrf": "", "master": ""}
    assert set(links) == set(leaf1[0].get_interfaces())


def test_get_network_instances(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    instances = leaf1[0].get_network_instances()
    assert set(instances) == {"default", "blue", "red"}
    assert instances["default"]["type"] == "DEFAULT_INSTANCE"
    assert set(instances["default"]["interfaces"]["interface"]) == {"lo", "swp51", "swp52",
                                                                    "eth0"}
    assert instances["blue"] == {
        "name": "blue", "type": "L3VRF", "state": {"route_distinguisher": ""},
        "interfaces": {"interface": {"swp51.100": {}, "swp52.100": {}, "br100": {},
                                     "swp1": {}}}}
    assert set(leaf1[0].get_network_instances("red")) == {"red"}
    assert leaf1[0].get_network_instances("green") == {}


def test_get_interfaces_ip(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    addresses = leaf1[0].get_interfaces_ip()
    assert addresses["br100"]["ipv4"] == {"10.100.1.1": {"prefix_length": 24}}
    assert addresses["br200"]["ipv4"] == {"10.200.1.1": {"prefix_length": 24}}
    assert addresses["eth0"]["ipv4"] == {"172.31.255.13": {"prefix_length": 24}}
    assert addresses["swp51"] == {"ipv6": {"fe80::64:70ff:fe57:63d3": {"prefix_length": 64}}}


def test_get_interfaces_ip_keeps_default_vrf_loopback(leaf1: tuple[FrrDriver, FakeShell]
                                                      ) -> None:
    # Regression: _ip_json keys interfaces by name across namespaces, and every VRF namespace has
    # its own `lo`; red's (127.0.0.1 only) replaces the switch's 10.0.0.17/32 loopback.
    addresses = leaf1[0].get_interfaces_ip()
    assert addresses["lo"]["ipv4"].get("10.0.0.17") == {"prefix_length": 32}


def test_get_bgp_neighbors(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    bgp = leaf1[0].get_bgp_neighbors()
    assert set(bgp) == {"global", "blue", "red"}
    assert bgp["global"]["router_id"] == "10.0.0.17"
    assert set(bgp["global"]["peers"]) == {"swp51", "swp52"}
    assert set(bgp["blue"]["peers"]) == {"swp51.100", "swp52.100"}
    assert set(bgp["red"]["peers"]) == {"swp51.200", "swp52.200"}
    peer = bgp["global"]["peers"]["swp51"]
    assert peer == {
        "local_as": 65101, "remote_as": 65000, "remote_id": "spine1", "is_up": True,
        "is_enabled": True, "description": "spine1", "uptime": 5062,
        "address_family": {"ipv4": {"received_prefixes": 4, "accepted_prefixes": 4,
                                    "sent_prefixes": 6}}}
    for vrf in bgp.values():
        for info in vrf["peers"].values():
            assert info["is_up"] is True
            assert info["remote_as"] == 65000
            assert isinstance(info["address_family"]["ipv4"]["received_prefixes"], int)
    assert bgp["blue"]["peers"]["swp52.100"]["address_family"]["ipv4"]["received_prefixes"] == 3


def test_get_bgp_neighbors_when_bgpd_is_down() -> None:
    driver, shell = leaf1_driver()
    stderr = (LEAF1 / "vtysh_bgpd_not_running.stderr").read_text(encoding="utf-8")
    shell.answers["vtysh -c 'show bgp vrf all summary json'"] = Reply("", stderr, 1)
    with pytest.raises(DeviceCommandError, match="bgpd is not running") as info:
        driver.get_bgp_neighbors()
    assert "exit 1" in str(info.value)


def test_get_lldp_neighbors(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    assert leaf1[0].get_lldp_neighbors() == {
        "swp51": [{"hostname": "spine1", "port": "swp1"}],
        "swp52": [{"hostname": "spine2", "port": "swp1"}]}


def test_get_lldp_neighbors_single_neighbour_is_a_dict() -> None:
    driver, shell = leaf1_driver()
    # lldpcli prints `interface` as an object, not a list, when there is one neighbour
    shell.answers[f"/usr/sbin/lldpcli -u {LLDP_SOCKET} -f json show neighbors"] = Reply(
        '{"lldp": {"interface": {"swp51": {"chassis": {"spine1": {}}, '
        '"port": {"id": {"type": "ifname", "value": "swp1"}}}}}}\n')
    assert driver.get_lldp_neighbors() == {"swp51": [{"hostname": "spine1", "port": "swp1"}]}


def test_get_route_table(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    tables = leaf1[0].get_route_table()
    assert set(tables) == {"default", "blue", "red"}
    assert tables["default"]["10.0.0.17/32"][0]["protocol"] == "connected"
    blue = tables["blue"]["10.100.2.0/24"][0]
    assert blue["protocol"] == "bgp"
    assert {hop["interfaceName"] for hop in blue["nexthops"]} == {"swp51.100", "swp52.100"}
    assert "10.100.2.0/24" not in tables["red"]


def test_get_route_table_names_the_vrf_whose_output_is_not_json() -> None:
    driver, shell = leaf1_driver()
    shell.answers["vtysh -c 'show ip route vrf blue json'"] = Reply("% garbage\n")
    with pytest.raises(DeviceCommandError, match="route table of VRF blue is not JSON"):
        driver.get_route_table()


# ---- cli ----------------------------------------------------------------------------------


def test_cli_runs_show_commands(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    driver, _ = leaf1
    out = driver.cli(["show version"])
    assert out["show version"].startswith("FRRouting 8.4.4 (leaf1)")
    data = driver.cli(["show bgp vrf all summary json"], encoding="json")
    assert data["show bgp vrf all summary json"]["red"]["ipv4Unicast"]["as"] == 65101


@pytest.mark.parametrize("command", [
    "configure terminal", "write memory", "clear bgp *", " show version", "shows", "show"])
def test_cli_refuses_everything_but_show(leaf1: tuple[FrrDriver, FakeShell],
                                         command: str) -> None:
    driver, shell = leaf1
    with pytest.raises(DeviceCommandError, match="show commands only"):
        driver.cli([command])
    assert shell.log == []  # refused before anything reached the switch


def test_cli_refuses_config_hidden_after_a_newline(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    # Regression: `vtysh -c` runs each line of its argument as a command, but cli() only checks
    # that the text starts with "show ", so this would reconfigure the switch.
    driver, shell = leaf1
    command = "show version\nconfigure terminal\nno router bgp 65101"
    # what vtysh would print: the version, then nothing for the two config lines it runs
    shell.answers[f"vtysh -c '{command}'"] = shell.answers["vtysh -c 'show version'"]
    with pytest.raises(DeviceCommandError):
        driver.cli([command])
    assert shell.log == []


# ---- configuration ------------------------------------------------------------------------

LEAF1_LINKS = """\
!! links
link swp51 mtu 9216 up
link swp52 mtu 9216 up
link br100 vrf blue type bridge mtu 9000 up
link swp1 vrf blue master br100 mtu 9000 up
link swp51.100 vrf blue mtu 9216 up
link swp52.100 vrf blue mtu 9216 up
link br200 vrf red type bridge mtu 9000 up
link swp2 vrf red master br200 mtu 9000 up
link swp51.200 vrf red mtu 9216 up
link swp52.200 vrf red mtu 9216 up
!! qos
!! ecmp
ipv4 policy 1
ipv6 policy 0
seed 0
!! frr
"""


def test_get_config_running(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    text = running(leaf1[0])
    assert text.startswith(LEAF1_LINKS)
    assert text[len(LEAF1_LINKS):].startswith("frr defaults datacenter\nhostname leaf1\n")
    assert text.endswith("\nend\n")
    lines = text.splitlines()
    assert not [line for line in lines
                if line.startswith(("frr version", "Building configuration",
                                    "Current configuration", " netns /run/netns/"))]
    assert "vrf blue" in lines and "router bgp 65101 vrf red" in lines


def test_get_config_all(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    config = leaf1[0].get_config()
    assert config["running"].startswith("!! links\n")
    assert (config["startup"], config["candidate"]) == ("", "")


def test_running_config_as_candidate_shows_no_difference(leaf1: tuple[FrrDriver, FakeShell]
                                                         ) -> None:
    driver, shell = leaf1
    driver.load_replace_candidate(config=running(driver))
    assert driver.compare_config() == ""
    assert shell.applied == []


def test_compare_config_shows_link_changes(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    driver, _ = leaf1
    driver.load_replace_candidate(config=running(driver).replace(
        "link swp52 mtu 9216 up", "link swp52 mtu 9000 up"))
    diff = driver.compare_config()
    assert "\n-link swp52 mtu 9216 up\n+link swp52 mtu 9000 up\n" in diff
    assert diff.startswith("--- running/config\n+++ candidate/config\n")


def test_bad_links_line_is_refused_at_load(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    driver, _ = leaf1
    with pytest.raises(ReplaceConfigException, match=r"192\.0\.2\.13: links line 2: cannot parse"):
        driver.load_replace_candidate(config="!! links\nlink swp51 mtu 9216 up\nlink swp52\n"
                                             "!! frr\nend\n")


def test_frr_syntax_error_is_refused_at_load() -> None:
    driver, shell = leaf1_driver()
    check = "f=$(mktemp) && cat > $f && vtysh -C -f $f; rc=$?; rm -f $f; exit $rc"
    shell.answers[check] = Reply("line 2: % Unknown command: router bgpp 65101\n", "", 1)
    with pytest.raises(ReplaceConfigException, match="FRR rejects the candidate: line 2"):
        driver.load_replace_candidate(config="frr defaults datacenter\nrouter bgpp 65101\n")


def test_commit_without_candidate_is_refused(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    driver, shell = leaf1
    with pytest.raises(CommitError, match="no candidate loaded"):
        driver.commit_config()
    assert shell.log == []


def test_commit_writes_backup_and_revert_before_applying(leaf1: tuple[FrrDriver, FakeShell]
                                                         ) -> None:
    driver, shell = leaf1
    before = running(driver)
    driver.load_replace_candidate(config=before.replace("link swp52 mtu 9216 up",
                                                        "link swp52 mtu 9000 up"))
    driver.commit_config()
    commands = [command for command, _ in shell.applied]
    assert commands == [f"mkdir -p {STATE_DIR} && cat > {STATE_DIR}/rollback.conf",
                        f"cat > {STATE_DIR}/revert.sh", "sh -s", "sh -s"]
    backup, revert, forward, save = (stdin or "" for _, stdin in shell.applied)
    assert backup == before
    assert "\nip link set swp52 mtu 9000\n" in forward
    assert "\nip link set swp52 mtu 9216\n" in revert
    for script in (forward, revert):
        assert script.startswith("set -e\n")
        # frr-reload needs the netns lines that get_config hides
        assert "vrf blue\n netns /run/netns/blue\n" in script
        assert "/usr/lib/frr/frr-reload.py --reload " in script
    assert save.endswith("vtysh -c 'write memory' >/dev/null\n")


def test_commit_with_revert_timer_starts_it_before_applying_and_does_not_save(
        leaf1: tuple[FrrDriver, FakeShell]) -> None:
    driver, shell = leaf1
    driver.load_replace_candidate(config=running(driver).replace("link swp52 mtu 9216 up",
                                                                 "link swp52 mtu 9000 up"))
    driver.commit_config(revert_in=90)
    commands = [command for command, _ in shell.applied]
    assert len(commands) == 4
    assert commands[2].startswith(f"rm -f {STATE_DIR}/revert.pid; setsid sh -c 'echo $$ > "
                                  f"{STATE_DIR}/revert.pid; sleep 90; sh {STATE_DIR}/revert.sh; ")
    assert commands[3] == "sh -s"


def test_commit_dropping_a_port_from_the_config(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    # Regression: commit_config plans the revert from the parsed candidate, which has no line for
    # the dropped port, so plan_ops(desired, current) reports swp52 as missing from the
    # device and the commit is refused (CommitError "no such interface on the device").
    driver, shell = leaf1
    driver.load_replace_candidate(config=running(driver).replace("link swp52 mtu 9216 up\n",
                                                                 ""))
    driver.commit_config()
    forward = shell.applied[2][1] or ""
    assert "\nip link set swp52 mtu 1500 down\n" in forward


# ---- read-only sessions -------------------------------------------------------------------


def test_read_only_session_refuses_changes_before_connecting() -> None:
    session = SshSession(SshOptions(host="192.0.2.13", username="ff-admin", read_only=True))
    with pytest.raises(ReadOnlyError, match="refused on a read-only session: ip link set"):
        session.run("ip link set swp1 up", mutating=True, privileged=True)
    # a read would need the connection: the refusal above came first, without one
    with pytest.raises(TransportError, match="not connected"):
        session.run("hostname")
    assert session.log == []
    assert not session.is_alive


def test_read_only_driver_refuses_commit_config() -> None:
    driver = FrrDriver("192.0.2.13", "ff-admin", None, optional_args={"read_only": True})
    real = driver.session
    assert real.options.read_only
    shell = ReadOnlyShell(leaf1_answers(), real=real)
    driver.session = shell
    driver.load_replace_candidate(config=running(driver).replace("mtu 9216 up", "mtu 9000 up"))
    with pytest.raises(ReadOnlyError, match="read-only"):
        driver.commit_config()
    assert not any(entry.mutating for entry in shell.log)
    assert real.log == []
    assert not real.is_alive


def test_read_only_driver_getters_still_work() -> None:
    driver = FrrDriver("192.0.2.13", "ff-admin", None, optional_args={"read_only": True})
    driver.session = ReadOnlyShell(leaf1_answers(), real=driver.session)
    neighbours: dict[str, Any] = driver.get_bgp_neighbors()
    assert neighbours["global"]["peers"]["swp51"]["is_up"] is True


# ---- collect: NAPALM getters, cli() and the driver's own reads ---------------------------


def test_collect_takes_vrf_bridge_and_bgp_state_outside_the_napalm_getters(
        leaf1: tuple[FrrDriver, FakeShell]) -> None:
    from flatfab.intent.loader import load_intent  # noqa: PLC0415
    from flatfab.plan.planner import plan  # noqa: PLC0415
    from flatfab.platforms.frr.collect import collect  # noqa: PLC0415
    from tests.support.paths import ROOT  # noqa: PLC0415

    planned = plan(load_intent(ROOT / "intents" / "lab")).devices["leaf1"]
    driver, shell = leaf1
    seen = collect(driver, planned.model_copy(update={"qos": None}), [])
    assert seen.errors == []
    assert (seen.interfaces["swp1"].vrf, seen.interfaces["swp1"].bridge) == ("blue", "br100")
    assert (seen.interfaces["swp51"].vrf, seen.interfaces["swp51"].bridge) == ("default", None)
    assert seen.interfaces["br200"].vrf == "red"
    assert seen.interfaces["swp51"].peer is not None
    assert seen.interfaces["swp51"].peer.device == "spine1"
    assert set(seen.bgp) == {"default", "blue", "red"}
    peer = seen.bgp["default"].peers["swp51"]
    assert (peer.state, peer.remote_asn, peer.peer_device, peer.interface) == (
        "Established", 65000, "spine1", "swp51")
    assert seen.bgp["default"].asn == 65101
    assert seen.bgp["blue"].peers["swp52.100"].prefixes_received == 3
    assert seen.loopback == "10.0.0.17/32"
    # the peer state came from FRR's own summary, read through cli() from the read-ahead's
    # one vtysh: no vtysh of its own
    sent = [e.command for e in shell.log]
    assert sent[:2] == ["ip netns list", "sh -s"] and len(sent) == 3  # and lldpcli
    assert not [c for c in sent if c.startswith("vtysh")]


def test_collect_reads_asdot_as_numbers(leaf1: tuple[FrrDriver, FakeShell]) -> None:
    from flatfab.intent.loader import load_intent  # noqa: PLC0415
    from flatfab.plan.planner import plan  # noqa: PLC0415
    from flatfab.platforms.frr.collect import collect  # noqa: PLC0415
    from tests.support.paths import ROOT  # noqa: PLC0415

    driver, shell = leaf1
    summary = (LEAF1 / "show_bgp_vrf_all_summary.json").read_text(encoding="utf-8")
    shell.answers["vtysh -c 'show bgp vrf all summary json'"] = Reply(
        summary.replace('"remoteAs":65000', '"remoteAs":"1.10"'))
    planned = plan(load_intent(ROOT / "intents" / "lab")).devices["leaf1"]
    seen = collect(driver, planned.model_copy(update={"qos": None}), [])
    assert seen.bgp["default"].peers["swp51"].remote_asn == 65546
    assert driver.get_bgp_neighbors()["global"]["peers"]["swp51"]["remote_as"] == 65546


# ---- every VRF's route table from one vtysh ---------------------------------------------


def test_route_tables_and_the_bgp_summary_split_as_each_alone_prints_them() -> None:
    tables = [(LEAF1 / f"show_ip_route_vrf_{vrf}.json").read_text(encoding="utf-8")
              for vrf in ("default", "blue", "red")]
    # every VRF's summary: several lines that are `}` at their start, one JSON object
    bgp = (LEAF1 / "show_bgp_vrf_all_summary.json").read_text(encoding="utf-8")
    assert split_shows("".join(tables) + bgp, 3) == (tables, bgp)
    empty = split_shows("".join(tables) + "{}\n" + bgp, 4)  # a VRF without routes
    assert empty == ([*tables, "{}\n"], bgp)
    assert split_shows("".join(tables) + bgp, 4) is None  # one missing: read alone after
    assert split_shows('{"10.0.0.1/32":[]}\n{}\n' + bgp, 2) is None  # not pretty-printed
    error = "% VRF nosuch not found\n"
    assert split_shows(tables[0] + error + "".join(tables[1:]) + bgp, 3) is None
    assert split_shows("".join(tables) + error, 3) is None  # bgpd down: nothing kept
    assert split_shows("".join(tables) + bgp[:-40], 3) is None  # cut short


def test_a_collects_read_ahead_gets_every_route_table_and_bgp_in_its_one_round_trip(
        leaf1: tuple[FrrDriver, FakeShell]) -> None:
    driver, shell = leaf1
    with driver.cached_reads():
        driver.read_ahead()
        sent = len(shell.log)
        tables = dict(driver.route_tables())
        summary = driver.cli([BGP_SUMMARY], encoding="json")[BGP_SUMMARY]
        assert len(shell.log) == sent  # nothing more asked of the switch
    assert summary == driver.cli([BGP_SUMMARY], encoding="json")[BGP_SUMMARY]  # as alone
    assert sorted(tables) == ["blue", "default", "red"]
    with driver.cached_reads():
        alone = dict(driver.route_tables())  # no read_ahead: a vtysh per VRF
    assert alone == tables
