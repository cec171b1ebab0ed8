"""The demo fabric on the live embedded lab: rollout, idempotency, verify, injected faults.

Tests run in file order on one session lab; each fault test restores what it broke and
waits until verify passes again before it ends.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from flatfab.lab.system import run
from tests.support.lab import SUBNET, Lab

pytestmark = pytest.mark.live

SWITCHES = ["spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"]
HOSTS = [f"leaf{j}-h{k}" for j in range(1, 5) for k in (1, 2)]


def _findings(result: Any, check: str) -> list[dict[str, Any]]:
    return [f for f in result.json()["findings"] if f["check"] == check]


def test_lab_status_lists_every_node_healthy(lab: Lab) -> None:
    result = lab.cli("lab", "status", "--prefix", lab.prefix, "--format", "json")
    assert result.code == 0, result.stdout
    status = result.json()
    assert status["healthy"] is True
    nodes = {n["node"]: n for n in status["nodes"]}
    assert sorted(nodes) == sorted(SWITCHES + HOSTS)
    for name, node in nodes.items():
        assert node["netns"] == f"{lab.prefix}-{name}"
        assert node["mgmt_ipv4"].startswith(SUBNET.rsplit(".", 1)[0] + ".")
        assert node["ssh"] is True
    assert set(nodes["leaf1"]["processes"]) == {"sshd", "watchfrr", "zebra", "bgpd", "staticd",
                                                "lldpd", "carrier"}


def test_first_rollout_changes_every_device_and_confirms(lab: Lab) -> None:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout + result.stderr
    report = result.json()
    assert report["ok"] is True
    assert sorted(report["changed"]) == sorted(SWITCHES + HOSTS)
    assert sorted(report["confirmed"]) == sorted(SWITCHES + HOSTS)
    assert report["rolled_back"] == []
    assert "router bgp 65101" in report["diffs"]["leaf1"]
    # confirmed means the revert timers are gone, on every device
    for node in SWITCHES + HOSTS:
        # the bracket keeps the pattern from matching this very shell command; the lab
        # shares the machine's PID namespace, so only this node's mount and network
        # namespaces are looked in (other labs' rollouts may run their timers meanwhile)
        assert lab.sh(node, "pgrep --ns $$ --nslist mnt,net -af '[r]evert.sh' || true"
                      ).strip() == "", node
    journal = lab.state_dir / "runs" / report["run_id"]
    assert (journal / "events.jsonl").exists()
    assert (journal / "backups" / "leaf1.conf").exists()
    assert (journal / "diffs" / "spine1.diff").exists()


def test_second_rollout_reports_zero_changes(lab: Lab) -> None:
    result = lab.cli("rollout")
    assert result.code == 0, result.stdout + result.stderr
    assert "no changes: all 14 devices already match the intent" in result.stdout
    as_json = lab.cli("rollout", "--format", "json").json()
    assert as_json["changed"] == [] and as_json["diffs"] == {}


def test_verify_passes_on_the_clean_fabric(lab: Lab) -> None:
    result = lab.cli("verify", "--format", "json")
    assert result.code == 0, result.stdout
    report = result.json()
    assert report["findings"] == []
    for check in ("bgp.session", "ecmp.leaf_paths", "tenant.reachability", "tenant.mtu",
                  "tenant.isolation", "interface.mtu", "link.mtu_match"):
        assert check in report["checks"]


def test_lowered_mtu_on_one_fabric_port_is_named(lab: Lab) -> None:
    lab.sh("leaf2", "ip link set swp52 mtu 1500")
    try:
        result = lab.cli("verify", "--format", "json")
        assert result.code == 1
        mtu = _findings(result, "interface.mtu")
        assert [(f["device"], f["port"], f["expected"], f["actual"]) for f in mtu] == [
            ("leaf2", "swp52", "9216", "1500")]
        mismatch = _findings(result, "link.mtu_match")
        assert [(f["device"], f["port"]) for f in mismatch] == [("leaf2", "swp52")]
        assert "leaf2:swp52--spine2:swp2" in mismatch[0]["link"]
    finally:
        lab.sh("leaf2", "ip link set swp52 mtu 9216")
    assert lab.wait_verified().code == 0


def test_a_repaired_tenant_path_verifies_clean_at_once(lab: Lab) -> None:
    """Hosts remember a lower path MTU for ten minutes after a router said "fragmentation
    needed"; verify judges the path as it is, not that memory."""
    lab.sh("leaf2", "ip netns exec blue ip link set br100 mtu 1500")  # leaf2-h1's gateway
    try:
        result = lab.cli("verify", "--format", "json")
        assert result.code == 1
        towards = [f for f in _findings(result, "tenant.mtu") if "-> leaf2-h1 " in f["message"]]
        assert towards, result.stdout
        assert all("needs fragmentation (next-hop MTU 1500)" in f["message"] for f in towards)
        sender = towards[0]["device"]
        learned = lab.sh(sender, "ip route get 10.100.2.11")
        assert "mtu 1500" in learned, learned  # the sender's cache now holds the fault
    finally:
        lab.sh("leaf2", "ip netns exec blue ip link set br100 mtu 9000")
    result = lab.cli("verify", "--format", "json")
    assert result.code == 0, result.stdout
    assert "mtu 1500" in lab.sh(sender, "ip route get 10.100.2.11")  # still cached: ignored


def test_a_stale_neighbour_entry_on_a_host_does_not_fail_its_own_probes(lab: Lab) -> None:
    """leaf1-h1 still holds a MAC for its gateway that nobody has (a replaced switch that
    sent no gratuitous ARP): its own ping fails until the entry ages out. Verify's probes
    from leaf1-h1 resolve the gateway themselves, so none of them blames the network.

    Probes *to* leaf1-h1 are another matter: its kernel answers them through the dead MAC
    until an ARP reply overrides the entry (after the 1 s locktime, arp(7)), so whether
    they are answered depends on which host probes first. While it lasts, leaf1-h1 truly
    cannot answer, and saying so is the only other finding verify may make."""
    lab.sh("leaf1-h1", "ip neigh replace 10.100.1.1 lladdr 02:00:00:00:de:ad dev eth1 "
           "nud reachable")
    try:
        ping = lab.sh("leaf1-h1", "ping -n -c 1 -W 1 10.100.2.11 >/dev/null; echo $?")
        assert ping.strip() == "1"
        lab.sh("leaf1-h1", "ip neigh replace 10.100.1.1 lladdr 02:00:00:00:de:ad dev eth1 "
               "nud reachable")
        result = lab.cli("verify", "--format", "json")
        assert result.code in (0, 1), result.stdout + result.stderr
        findings = result.json()["findings"]
        assert [f for f in findings if f["device"] == "leaf1-h1"] == []
        assert all(f["check"] == "tenant.reachability" and " -> leaf1-h1 " in f["message"]
                   for f in findings), findings
        assert result.code == (1 if findings else 0)
    finally:
        lab.sh("leaf1-h1", "ip neigh del 10.100.1.1 dev eth1 || true")
    assert lab.wait_verified().code == 0


def _cabling(lab: Lab) -> tuple[int, list[dict[str, Any]]]:
    result = lab.cli("verify", "--no-probes", "--check", "cabling.lldp", "--format", "json")
    return result.code, _findings(result, "cabling.lldp")


def test_a_cable_moved_and_put_back_is_named_then_settles(lab: Lab) -> None:
    """Two leaf uplinks traded at the spine are named once LLDP hears the new neighbours; put
    back and heard again by LLDP, the next verify never fails the port: it is clean, or (while
    lldpd still holds the moved cable's entry) names the port not judged, says when the entry
    expires and exits 3, and a verify after that hold time is clean."""
    lab.swap_ports("spine1", "swp1", "swp2")
    swapped = True
    try:
        deadline = time.monotonic() + 60
        while True:
            code, found = _cabling(lab)
            errors = {(f["device"], f["port"]) for f in found if f["severity"] == "error"}
            if {("leaf1", "swp51"), ("leaf2", "swp51")} <= errors or time.monotonic() > deadline:
                break
            time.sleep(3)
        assert {("leaf1", "swp51"), ("leaf2", "swp51")} <= errors, found
        assert code == 1
        lab.swap_ports("spine1", "swp1", "swp2")
        swapped = False
        # once LLDP has heard each put-back cable (what a check can know of it): never an error
        lab.wait_lldp_heard({("spine1", "swp1"): "leaf1:swp51", ("spine1", "swp2"): "leaf2:swp51",
                             ("leaf1", "swp51"): "spine1:swp1", ("leaf2", "swp51"): "spine1:swp2"})
        code, found = _cabling(lab)
        assert not [f for f in found if f["severity"] == "error"], found
        assert code in (0, 3), found
        if code == 3:
            assert all(f["severity"] == "not-judged" and "verify again then" in f["message"]
                       for f in found), found
        settled = time.monotonic() + 40
        while code != 0 and time.monotonic() < settled:
            time.sleep(3)
            code, found = _cabling(lab)
        assert code == 0, found
    finally:
        if swapped:
            lab.swap_ports("spine1", "swp1", "swp2")
    assert lab.wait_verified(120).code == 0


def test_stopped_spine_bgpd_names_sessions_and_ecmp_paths(lab: Lab) -> None:
    run_frr = lab.paths.node_dir("spine2") / "run-frr"
    # watchfrr would restart bgpd at once: stop the supervisor, then the daemon
    lab.sh("spine2", f"kill -9 $(cat {run_frr}/watchfrr.pid); kill $(cat {run_frr}/bgpd.pid)")
    try:
        deadline = time.monotonic() + 30  # hold time is 9 s
        while True:
            result = lab.cli("verify", "--no-probes", "--format", "json")
            down = {(f["device"], f["port"]) for f in _findings(result, "bgp.session")}
            if all((leaf, "swp52") in down for leaf in ("leaf1", "leaf2", "leaf3", "leaf4")) \
                    or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert result.code == 1
        sessions = _findings(result, "bgp.session")
        spine_side = {(f["port"], f["vrf"]) for f in sessions if f["device"] == "spine2"}
        assert spine_side == {(f"swp{j}{sub}", vrf) for j in range(1, 5)
                              for sub, vrf in (("", "default"), (".100", "blue"),
                                               (".200", "red"))}
        assert all("bgpd is not running" in f["message"] for f in sessions
                   if f["device"] == "spine2")
        leaf_side = {(f["device"], f["port"]) for f in sessions if f["device"] != "spine2"}
        assert leaf_side == {(f"leaf{j}", f"swp52{sub}") for j in range(1, 5)
                             for sub in ("", ".100", ".200")}
        ecmp = {(f["device"], f["vrf"], f["port"]) for f in _findings(result, "ecmp.leaf_paths")}
        assert ecmp == {(f"leaf{j}", vrf, f"swp52{sub}") for j in range(1, 5)
                        for sub, vrf in (("", "default"), (".100", "blue"), (".200", "red"))}
        assert all("spine2" in f["message"] for f in _findings(result, "ecmp.leaf_paths"))
    finally:
        lab.sh("spine2", "/usr/lib/frr/frrinit.sh start >/dev/null")
    assert lab.wait_verified().code == 0


def test_a_link_and_routes_joining_two_tenants_on_one_leaf_are_named(lab: Lab) -> None:
    """A cable between leaf1's blue and red VRFs (the lab's VRFs are network namespaces) and
    a route each way let its two hosts talk: the leak is named on the switch, per VRF, and
    the isolation probes between the two neighbours prove it."""
    blue, red = f"{lab.prefix}-leaf1_blue", f"{lab.prefix}-leaf1_red"
    run(["ip", "link", "add", "fftleak0", "netns", blue, "type", "veth", "peer", "name",
         "fftleak1", "netns", red])
    try:
        for netns, dev, mine, peer, other in ((blue, "fftleak0", "1", "2", "10.200.1.0/24"),
                                              (red, "fftleak1", "2", "1", "10.100.1.0/24")):
            run(["ip", "-n", netns, "addr", "add", f"169.254.77.{mine}/30", "dev", dev])
            run(["ip", "-n", netns, "link", "set", dev, "up"])
            run(["ip", "-n", netns, "route", "add", other, "via", f"169.254.77.{peer}"])
        result = lab.cli("verify", "--format", "json")
        assert result.code == 1
        leak = {(f["device"], f["vrf"], f["message"]) for f in _findings(result, "tenant.leak")}
        assert leak == {
            ("leaf1", "blue", "leaf1 VRF blue has a kernel route to 10.200.1.0/24 of tenant red"),
            ("leaf1", "red", "leaf1 VRF red has a kernel route to 10.100.1.0/24 of tenant blue")}
        assert all(f["severity"] == "critical" for f in _findings(result, "tenant.leak"))
        crossed = {f["message"].split(" (")[0] for f in _findings(result, "tenant.isolation")}
        assert crossed == {"leaf1-h1 -> leaf1-h2", "leaf1-h2 -> leaf1-h1"}
    finally:
        run(["ip", "-n", blue, "link", "del", "fftleak0"], check=False)
    assert lab.wait_verified().code == 0


def test_dry_run_shows_drift_and_pushes_nothing(lab: Lab) -> None:
    lab.sh("leaf3", "ip link set swp51 mtu 9000")
    dry = lab.cli("rollout", "--dry-run", "--format", "json")
    assert dry.code == 0, dry.stdout + dry.stderr
    report = dry.json()
    assert list(report["diffs"]) == ["leaf3"]
    assert "-link swp51 mtu 9000 up" in report["diffs"]["leaf3"]
    assert "+link swp51 mtu 9216 up" in report["diffs"]["leaf3"]
    assert report["changed"] == []
    still = lab.cli("verify", "--no-probes", "--check", "interface.mtu", "--format", "json")
    assert still.code == 1  # nothing was pushed
    fixed = lab.cli("rollout", "--format", "json")
    assert fixed.code == 0 and fixed.json()["changed"] == ["leaf3"]
    assert lab.cli("verify", "--no-probes", "--format", "json").code == 0


def test_read_only_verify_runs_no_mutating_command(lab: Lab) -> None:
    """verify opens read-only sessions; the transport refuses anything marked mutating."""
    from flatfab.transport.ssh import ReadOnlyError  # noqa: PLC0415
    from tests.support.lab import open_driver  # noqa: PLC0415

    driver = open_driver(lab, "leaf1", read_only=True)
    try:
        driver.get_bgp_neighbors()
        driver.load_replace_candidate(config=driver.get_config()["running"])
        with pytest.raises(ReadOnlyError):
            driver.commit_config()
        assert all(not c.mutating for c in driver.command_log)
    finally:
        driver.close()


def test_unconfirmed_commit_reverts_by_itself(lab: Lab) -> None:
    from tests.support.lab import open_driver  # noqa: PLC0415

    driver = open_driver(lab, "leaf4", read_only=False)
    try:
        before = driver.get_config(retrieve="running")["running"]
        changed = before.replace("link swp51 mtu 9216 up", "link swp51 mtu 9100 up")
        assert changed != before
        driver.load_replace_candidate(config=changed)
        # the timer starts before the change is applied: long enough to outlast applying
        # and reading it back on a loaded machine (three test sessions share two cores)
        driver.commit_config(revert_in=15)
        assert driver.has_pending_commit()
        assert "link swp51 mtu 9100 up" in driver.get_config(retrieve="running")["running"]
        assert driver.wait_pending_revert(timeout=60)
        assert driver.get_config(retrieve="running")["running"] == before
    finally:
        driver.close()


def test_confirmed_commit_outlives_its_revert_timer(lab: Lab) -> None:
    """Regression: confirm must stop the timer, not only forget its pid."""
    from tests.support.lab import open_driver  # noqa: PLC0415

    driver = open_driver(lab, "leaf1-h2", read_only=False)
    try:
        before = driver.get_config(retrieve="running")["running"]
        changed = before.replace("nic eth1 mtu 9000 up", "nic eth1 mtu 8000 up")
        driver.load_replace_candidate(config=changed)
        driver.commit_config(revert_in=10)  # outlasts the commit on a loaded machine
        driver.confirm_commit()
        assert not driver.has_pending_commit()
        time.sleep(12)  # past the revert time
        assert driver.get_config(retrieve="running")["running"] == changed
        driver.load_replace_candidate(config=before)
        driver.commit_config()
        assert driver.get_config(retrieve="running")["running"] == before
    finally:
        driver.close()


def test_merge_candidate_adds_without_replacing(lab: Lab) -> None:
    from tests.support.lab import open_driver  # noqa: PLC0415

    driver = open_driver(lab, "leaf2", read_only=False)
    try:
        before = driver.get_config(retrieve="running")["running"]
        driver.load_merge_candidate(config="router bgp 65102\n neighbor FABRIC description "
                                           "fabric-uplinks\n")
        diff = driver.compare_config()
        assert "+ neighbor FABRIC description fabric-uplinks" in diff
        assert "\n-" not in diff  # a merge removes nothing
        driver.commit_config()
        running = driver.get_config(retrieve="running")["running"]
        assert " neighbor FABRIC description fabric-uplinks" in running
        assert running.replace(" neighbor FABRIC description fabric-uplinks\n", "") == before
        driver.rollback()
        assert driver.get_config(retrieve="running")["running"] == before
    finally:
        driver.close()


def test_nornir_napalm_tasks_drive_the_frr_driver(lab: Lab) -> None:
    """The stock nornir-napalm tasks work with flatfab's drivers (platform frr/linux_host)."""
    from nornir import InitNornir  # noqa: PLC0415
    from nornir_napalm.plugins.tasks import napalm_configure, napalm_get  # noqa: PLC0415

    nornir = InitNornir(inventory={"plugin": "SimpleInventory", "options": {
        "host_file": str(lab.inventory / "hosts.yaml"),
        "group_file": str(lab.inventory / "groups.yaml"),
        "defaults_file": str(lab.inventory / "defaults.yaml")}}, logging={"enabled": False})
    try:
        switches = nornir.filter(filter_func=lambda h: h.platform == "frr")
        bgp = switches.run(task=napalm_get, getters=["facts", "bgp_neighbors"])
        assert not bgp.failed and len(bgp) == 6
        assert bgp["spine1"][0].result["bgp_neighbors"]["global"]["peers"]["swp1"]["is_up"]
        facts = nornir.run(task=napalm_get, getters=["facts"])
        assert not facts.failed
        assert facts["leaf1-h1"][0].result["facts"]["hostname"] == "leaf1-h1"
        running = nornir.run(task=napalm_get, getters=["config"])["leaf3"][0].result
        dry = nornir.filter(name="leaf3").run(
            task=napalm_configure, configuration=running["config"]["running"], replace=True,
            dry_run=True)
        assert not dry.failed and dry["leaf3"][0].changed is False
    finally:
        nornir.close_connections()


def test_rollback_restores_the_previous_config(lab: Lab) -> None:
    from tests.support.lab import open_driver  # noqa: PLC0415

    driver = open_driver(lab, "spine1", read_only=False)
    try:
        before = driver.get_config(retrieve="running")["running"]
        changed = before.replace(" neighbor FABRIC timers 3 9", " neighbor FABRIC timers 4 12")
        driver.load_replace_candidate(config=changed)
        driver.commit_config()
        assert "timers 4 12" in driver.get_config(retrieve="running")["running"]
        driver.rollback()
        assert driver.get_config(retrieve="running")["running"] == before
    finally:
        driver.close()
    assert lab.wait_verified(60, "--no-probes").code == 0


def test_journal_events_are_json_lines(lab: Lab) -> None:
    runs = sorted((lab.state_dir / "runs").iterdir())
    assert runs
    for line in (runs[0] / "events.jsonl").read_text().splitlines():
        assert "event" in json.loads(line)
