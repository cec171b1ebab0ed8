"""A multi-NIC server's per-NIC routing, applied and read back for real (root only).

The linux_host driver runs its whole command path (backup, revert script, apply, read back,
rollback) in a network namespace of this machine instead of over SSH (`NetnsSession` runs
each command with `ip netns exec`): the server is rail fabric's su1-s1 (two data NICs on
rails 1 and 2, a management NIC eth0), each NIC a veth to a second namespace standing in for
its leaf. Its config is what `flatfab render` writes; after the commit the driver must read
back exactly that text, and collect the plan's routes, rules and sysctls.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from napalm.base.exceptions import CommitError

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, Probe
from flatfab.plan.planner import plan
from flatfab.platforms.linux_host.collect import collect
from flatfab.platforms.linux_host.config import NIC_SYSCTLS, format_config, parse_config
from flatfab.platforms.linux_host.driver import LinuxHostDriver
from flatfab.platforms.linux_host.render import render
from flatfab.platforms.registry import PLATFORMS
from tests.support.multinic import Server, data_nics, make_server
from tests.support.paths import ROOT

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")


@pytest.fixture(scope="module")
def rail_plan() -> FabricState:
    return plan(load_intent(ROOT / "intents" / "rail", known_platforms=PLATFORMS))


@pytest.fixture(scope="module")
def rail(rail_plan: FabricState) -> dict[str, DeviceState]:
    return rail_plan.devices


def host_routing(planned: FabricState, seen: DeviceState) -> list[str]:
    """host.routing's findings on the plan with `seen` as the only device read live."""
    observed = planned.model_copy(update={"devices": {seen.name: seen}})
    return [f.message for f in run_checks(CheckContext(state=observed, plan=planned,
                                                       stage=Stage.LIVE),
                                          only=["host.routing"])]


@pytest.fixture
def server(tmp_path: Path, rail: dict[str, DeviceState]) -> Iterator[Server]:
    made, names = make_server(tmp_path, data_nics(rail["su1-s1"]))
    try:
        yield made
    finally:
        for netns in names:
            subprocess.run(["ip", "netns", "del", netns], check=False)


def numbered_routes(server: Server) -> list[dict[str, object]]:
    """The server's routes in tables other than main and local."""
    return [r for r in json.loads(server.sh("ip -4 -j route show table all"))
            if r.get("table", "main") not in ("main", "local")]


def kernel_values(server: Server, nics: tuple[str, ...]) -> dict[str, str]:
    """The per-NIC sysctls of the management NIC and `nics` as /proc shows them."""
    return {f"{nic}.{name}": server.sh(f"cat /proc/sys/net/ipv4/conf/{nic}/{name}").strip()
            for nic in ("eth0", *nics) for name in NIC_SYSCTLS}


@root_only
def test_a_rail_server_is_configured_read_back_and_rolled_back(
        server: Server, rail: dict[str, DeviceState], rail_plan: FabricState) -> None:
    planned = rail["su1-s1"]
    text = render(planned)
    driver = server.driver()
    factory_text = driver.get_config(retrieve="running")["running"]
    assert factory_text == ""  # NICs in factory state, no rules, no managed sysctls
    nics = data_nics(planned)
    before = kernel_values(server, nics)
    rules_before = server.sh("ip -j rule show")

    driver.load_replace_candidate(config=text)
    diff = driver.compare_config()
    assert "+rule from 10.100.2.11 table 102 priority 102\n" in diff
    assert "+sysctl net.ipv4.conf.eth2.rp_filter 2\n" in diff
    driver.commit_config()

    # the running config is the rendered one, and the kernel does what it says
    assert driver.get_config(retrieve="running")["running"] == text
    assert server.state_dir.joinpath("startup.conf").read_text(encoding="utf-8") == text
    assert "table 102" in server.sh("ip route get 10.200.0.1 from 10.100.2.11")
    assert "dev eth2" in server.sh("ip route get 10.200.0.1 from 10.100.2.11")
    assert "dev eth1" in server.sh("ip route get 10.200.0.1 from 10.100.1.11")
    assert "dev eth1" in server.sh("ip route get 10.200.0.1")  # the main table: first NIC
    values = kernel_values(server, nics)
    assert {k: values[k] for k in values if not k.startswith("eth0.")} == {
        f"{nic}.{name}": value for nic in nics
        for name, value in (("arp_ignore", "1"), ("arp_announce", "2"), ("rp_filter", "2"))}
    assert {k: values[k] for k in values if k.startswith("eth0.")} == {
        k: before[k] for k in before if k.startswith("eth0.")}  # never the management NIC

    # collect gives the plan's host routing back, in the plan's order
    seen = collect(driver, planned, [])
    assert seen.errors == []
    assert seen.static_routes == planned.static_routes
    assert seen.rules == planned.rules
    assert seen.sysctls == planned.sysctls
    assert {n: (i.mtu, i.up, i.addresses) for n, i in seen.interfaces.items()} == {
        n: (i.mtu, i.up, i.addresses) for n, i in planned.interfaces.items()}

    assert host_routing(rail_plan, seen) == []

    # the same config again changes nothing
    driver.load_replace_candidate(config=text)
    assert driver.compare_config() == ""

    # changed behind flatfab's back: host.routing names the NIC, drift names the lines
    server.sh("ip rule del from 10.100.2.11 table 102 priority 102 && "
              "sysctl -qw net.ipv4.conf.eth1.rp_filter=1")
    assert host_routing(rail_plan, collect(driver, planned, [])) == [
        "su1-s1 eth1: rp_filter is 1, planned 2",
        "su1-s1 eth2: no rule routes traffic from 10.100.2.11 by a table of its own; it leaves "
        "by the main table"]
    diff = driver.compare_config()
    assert "\n+rule from 10.100.2.11 table 102 priority 102\n" in diff
    assert "\n-sysctl net.ipv4.conf.eth1.rp_filter 1\n+sysctl net.ipv4.conf.eth1.rp_filter 2\n" \
        in diff

    # rollback (the backup of the commit) restores the factory state and the old values
    driver.rollback()
    assert driver.get_config(retrieve="running")["running"] == ""
    assert kernel_values(server, nics) == before
    assert server.sh("ip -j rule show") == rules_before
    assert numbered_routes(server) == []


@root_only
def test_a_pending_commit_is_reverted_and_a_replace_drops_a_nics_routing(
        server: Server, rail: dict[str, DeviceState]) -> None:
    planned = rail["su1-s1"]
    text = render(planned)
    driver = server.driver()
    driver.load_replace_candidate(config=text)
    driver.commit_config()
    # a replace that leaves eth2's table, rule and sysctls out: they go, its sysctls back to
    # the values they had before flatfab set them
    without_eth2 = "".join(line for line in text.splitlines(keepends=True)
                           if "eth2" not in line and "10.100.2." not in line)
    driver.load_replace_candidate(config=without_eth2)
    driver.commit_config(revert_in=60)
    assert driver.get_config(retrieve="running")["running"] == without_eth2
    assert server.sh("ip -4 route show table 102") == ""
    assert server.sh("cat /proc/sys/net/ipv4/conf/eth2/rp_filter").strip() == "0"
    assert server.sh("cat /proc/sys/net/ipv4/conf/eth1/rp_filter").strip() == "2"
    # not confirmed: rolled back to the first commit at once
    assert driver.has_pending_commit()
    driver.rollback()
    assert driver.get_config(retrieve="running")["running"] == text
    assert server.sh("cat /proc/sys/net/ipv4/conf/eth2/rp_filter").strip() == "2"


@root_only
def test_a_one_nic_host_reads_back_as_before(tmp_path: Path,
                                             rail: dict[str, DeviceState]) -> None:
    """A one-NIC host: no table, rule or sysctl line, whatever its NIC's sysctls are."""
    made, names = make_server(tmp_path, ("eth1",))
    try:
        made.sh("sysctl -qw net.ipv4.conf.eth1.rp_filter=1")  # a distribution's own setting
        text = ("nic eth1 mtu 9000 up\naddress eth1 10.100.1.11/24\n"
                "route 0.0.0.0/0 via 10.100.1.1 dev eth1\n")
        driver = made.driver()
        driver.load_replace_candidate(config=text)
        driver.commit_config()
        assert driver.get_config(retrieve="running")["running"] == text
        assert made.sh("cat /proc/sys/net/ipv4/conf/eth1/rp_filter").strip() == "1"
    finally:
        for netns in names:
            subprocess.run(["ip", "netns", "del", netns], check=False)


# ---- transitions between random states, on the real kernel --------------------------------

SUBNETS = {"eth1": ("10.100.1", "10.101.1"), "eth2": ("10.100.2", "10.101.2")}


def random_text(rng: random.Random) -> str:
    """A config the kernel can hold: routes only through up NICs with an address, gateways
    and connected prefixes on the NIC's subnets, sources the NIC's own addresses."""
    lines, routes, rules, sysctls = [], {}, set(), []
    for nic, subnets in SUBNETS.items():
        up = rng.random() < 0.8
        addresses = [f"{net}.{host}/24" for net in subnets for host in (11, 12)
                     if rng.random() < 0.4]
        mtu = rng.choice([1500, 9000])
        lines.append(f"nic {nic} mtu {mtu} {'up' if up else 'down'}")
        lines += [f"address {nic} {a}" for a in addresses]
        for name in NIC_SYSCTLS:
            if rng.random() < 0.4:
                sysctls.append(f"sysctl net.ipv4.conf.{nic}.{name} {rng.choice([0, 1, 2])}")
        if not up or not addresses:
            continue
        for table in (None, 101, 102):
            address = rng.choice(addresses)
            net = address.rsplit(".", 1)[0]
            source = address.split("/")[0]
            suffix = f" src {source} table {table}" if table else ""
            for prefix in ("0.0.0.0/0", "10.200.0.0/16"):
                if rng.random() < 0.4:
                    routes[(table, prefix)] = f"route {prefix} via {net}.1 dev {nic}{suffix}"
            if table and rng.random() < 0.5:
                routes[(table, f"{net}.0/24")] = f"route {net}.0/24 dev {nic}{suffix}"
            if table and rng.random() < 0.5:
                priority = table + rng.choice([0, 100])
                rules.add(f"rule from {source} table {table} priority {priority}")
    return "\n".join([*lines, *routes.values(), *sorted(rules), *sysctls, ""])


@root_only
@pytest.mark.parametrize("seed", range(2))
def test_random_configs_are_applied_and_read_back_exactly(tmp_path: Path, seed: int) -> None:
    made, names = make_server(tmp_path, tuple(SUBNETS))
    try:
        driver = made.driver()
        before = kernel_values(made, tuple(SUBNETS))
        rng = random.Random(seed)  # seeded: a failure is reproducible
        previous = ""
        for step in range(8):
            text = format_config(parse_config(random_text(rng)))
            driver.load_replace_candidate(config=text)
            if step % 3:
                driver.commit_config()
            else:  # a commit to confirm, then rolled back: the previous state exactly
                driver.commit_config(revert_in=120)
                assert driver.get_config(retrieve="running")["running"] == text, previous
                driver.rollback()
                assert driver.get_config(retrieve="running")["running"] == previous, text
                driver.load_replace_candidate(config=text)
                driver.commit_config()
            assert driver.get_config(retrieve="running")["running"] == text, previous
            previous = text
        driver.load_replace_candidate(config="")
        driver.commit_config()
        assert driver.get_config(retrieve="running")["running"] == ""
        assert kernel_values(made, tuple(SUBNETS)) == before
    finally:
        for netns in names:
            subprocess.run(["ip", "netns", "del", netns], check=False)


def rx_packets(server: Server, port: str) -> int:
    out = subprocess.run(["ip", "-n", server.leaf, "-s", "-j", "link", "show", port],
                         capture_output=True, text=True, check=True).stdout
    return int(json.loads(out)[0]["stats64"]["rx"]["packets"])


def _configured(server: Server, planned: DeviceState, nics: list[str]) -> LinuxHostDriver:
    """The server configured as planned through its driver; the leaf side (one namespace)
    answers ARP for each NIC's gateway."""
    driver = server.driver()
    driver.load_replace_candidate(config=render(planned))
    driver.commit_config()
    for index, nic in enumerate(nics, 1):
        gateway = next(r.via for r in planned.static_routes
                       if r.interface == nic and r.table is not None and r.via)
        subprocess.run(["ip", "-n", server.leaf, "addr", "add", f"{gateway}/24", "dev",
                        f"sw{index}"], check=True)
    return driver


@root_only
def test_traffic_from_a_nics_address_leaves_through_that_nic(
        server: Server, rail: dict[str, DeviceState]) -> None:
    planned = rail["su1-s1"]
    nics = data_nics(planned)
    driver = _configured(server, planned, nics)
    for nic in nics:
        address = planned.interfaces[nic].addresses[0].split("/")[0]
        before = {n: rx_packets(server, f"sw{i}") for i, n in enumerate(nics, 1)}
        sent = driver.send_roce("10.250.0.1", 49152, 2, 5, source=address)
        assert sent == 2 * (5 + 1)
        grown = {n: rx_packets(server, f"sw{i}") - before[n] for i, n in enumerate(nics, 1)}
        assert grown[nic] >= sent, (nic, grown)
        assert all(count < sent for other, count in grown.items() if other != nic), grown
    # without a source the main table chooses: the first NIC
    before = {n: rx_packets(server, f"sw{i}") for i, n in enumerate(nics, 1)}
    sent = driver.send_roce("10.250.0.1", 49152, 1, 3)
    assert rx_packets(server, "sw1") - before[nics[0]] >= sent


@root_only
def test_probes_from_each_nic_leave_by_it_and_host_routing_names_one_that_does_not(
        server: Server, rail: dict[str, DeviceState], rail_plan: FabricState) -> None:
    planned = rail["su1-s1"]
    nics = data_nics(planned)
    driver = _configured(server, planned, nics)
    # and a remote address that answers behind every leaf
    subprocess.run(["ip", "-n", server.leaf, "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "-n", server.leaf, "addr", "add", "10.250.0.1/32", "dev", "lo"],
                   check=True)
    probes = [Probe(target="far", address="10.250.0.1", size=56, dont_fragment=False,
                    expect_reply=True, nic=nic,
                    source=planned.interfaces[nic].addresses[0].split("/")[0])
              for nic in nics]
    seen = collect(driver, planned, probes)
    assert [(p.nic, p.replied, p.left_by) for p in seen.probes] == [
        (nic, True, nic) for nic in nics]
    assert host_routing(rail_plan, seen) == []
    # eth2's rule gone: its traffic takes the main table, out of the first NIC
    server.sh("ip rule del from 10.100.2.11 table 102 priority 102")
    seen = collect(driver, planned, probes)
    assert [p.left_by for p in seen.probes if p.nic == "eth2"] == ["eth1"]
    assert "su1-s1 eth2: no rule routes traffic from 10.100.2.11 by a table of its own; it " \
           "leaves by the main table" in host_routing(rail_plan, seen)


@root_only
def test_an_apply_that_fails_halfway_is_rolled_back_to_the_state_before(
        server: Server, rail: dict[str, DeviceState]) -> None:
    planned = rail["su1-s1"]
    nics = data_nics(planned)
    driver = server.driver()
    before = kernel_values(server, nics)
    # eth3's default route names a gateway on no subnet of eth3: the kernel refuses it after
    # the NICs, addresses, sysctls and some routes are in place
    text = render(planned).replace("route 0.0.0.0/0 via 10.100.3.1 dev eth3",
                                   "route 0.0.0.0/0 via 10.100.9.1 dev eth3")
    assert text != render(planned)
    driver.load_replace_candidate(config=text)
    with pytest.raises(CommitError, match="apply failed and was rolled back: Error: Nexthop "
                                          "has invalid gateway"):
        driver.commit_config()
    assert driver.get_config(retrieve="running")["running"] == ""
    assert kernel_values(server, nics) == before
    assert not server.state_dir.joinpath("nic", "sysctl.conf").exists()
    assert numbered_routes(server) == []
