"""The embedded lab runs each node as its platform's data file says (`lab.runtime`): the frr
switch's own folders, day-0 files, start command, pid files and lldpd ports; the host's
state folder. Checked without root: the runtime's command runner records the commands
instead of running them, and they are the ones `lab up` issued when these were written
into tasks/lab/ (the live lab tests run them for real)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from flatfab.lab import netns, topology
from flatfab.lab.netns import LabPaths, LabState, NetnsRuntime
from flatfab.platforms.registry import DEFAULT_HOST, DEFAULT_SWITCH, PLATFORMS
from tests.support.paths import ROOT

FRRINIT = "/usr/lib/frr/frrinit.sh"


class Recorded:
    """Every command the runtime runs, answered with success (and a pid where asked)."""

    def __init__(self) -> None:
        self.ran: list[list[str]] = []
        self.in_node: list[tuple[str, list[str]]] = []

    def run(self, args: Sequence[str], **_: Any) -> subprocess.CompletedProcess[str]:
        self.ran.append(list(args))
        return subprocess.CompletedProcess(list(args), 0, "4242\n", "")

    def node_exec(self, paths: LabPaths, node: str, command: list[str], **_: Any) -> str:
        self.in_node.append((node, command))
        return "4242\n"


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Recorded:
    commands = Recorded()
    monkeypatch.setattr(netns, "RUN_ROOT", tmp_path)
    monkeypatch.setattr(netns, "run", commands.run)
    monkeypatch.setattr(netns, "node_exec", commands.node_exec)
    return commands


def _lab() -> tuple[NetnsRuntime, LabState]:
    spec = topology.read(ROOT / "labs" / "lab.clab.yml", prefix="zz")
    state = LabState(name=spec.name, prefix=spec.prefix, topology=str(spec.file),
                     mgmt_subnet=str(spec.mgmt_subnet), controller=str(spec.mgmt_subnet[1]),
                     nodes={name: {} for name in spec.nodes})
    runtime = NetnsRuntime(spec)
    assert Path("/run/flatfab") != netns.RUN_ROOT, "use the recorded fixture"
    runtime.paths.ns_dir.mkdir(parents=True, exist_ok=True)  # under the test's RUN_ROOT
    return runtime, state


def _script(recorded: Recorded) -> list[str]:
    """The steps of the shell script that made the node's mount namespace."""
    [unshare] = [c for c in recorded.ran if "unshare" in c]
    return unshare[-1].split(" && ")


@pytest.mark.usefixtures("recorded")  # its RUN_ROOT: the test writes nothing under /run
def test_the_lab_needs_its_own_commands_and_its_platforms() -> None:
    runtime, _ = _lab()
    assert runtime._commands() == (*netns.COMMANDS, FRRINIT, "vtysh")


def test_a_switch_gets_its_frr_folders_day0_files_and_start(
        recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(NetnsRuntime, "_start_sshd", lambda *_: None)
    runtime, state = _lab()
    runtime._start_node(runtime.spec.nodes["leaf1"], state)
    ndir = runtime.paths.node_dir("leaf1")
    binds = ("/etc/frr", "/run/frr", "/var/log/frr", "/var/lib/flatfab")
    assert _script(recorded)[-len(binds) - 1:] == [
        *(f"mount --bind {ndir}/{t.strip('/').replace('/', '-')} {t}" for t in binds),
        f"mount --rbind {ndir}/vrfns /run/netns"]
    assert ["chown", "-R", "frr:frr", f"{ndir}/etc-frr", f"{ndir}/run-frr"] in recorded.ran
    assert ["chown", "-R", "frr:adm", f"{ndir}/var-log-frr"] in recorded.ran
    day0 = {p.name: p.read_text() for p in (ndir / "etc-frr").iterdir()}
    assert sorted(day0) == ["daemons", "frr.conf", "vtysh.conf"]
    source = (ROOT / "labs" / "lab" / "leaf1" / "daemons").read_text()
    assert day0["daemons"] == source.replace('zebra_options="', 'zebra_options=" -n')
    assert 'zebra_options=" -n  -A 127.0.0.1' in day0["daemons"]
    starts = [c for node, c in recorded.in_node if node == "leaf1" and "lldpd" not in c[-1]]
    assert starts == [[FRRINIT, "start"]]
    lldpd = [c[-1] for _, c in recorded.in_node if "lldpd" in c[-1]]
    lldpd += [c[-1] for c in recorded.ran if "lldpd" in c[-1]]
    assert "-I 'swp*' " in lldpd[0]
    assert all("-I 'swp*,!swp*.*' " in c for c in lldpd[1:]) and len(lldpd) > 1


def test_a_host_gets_its_state_folder_only(recorded: Recorded,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(NetnsRuntime, "_start_sshd", lambda *_: None)
    runtime, state = _lab()
    host = next(n for n in runtime.spec.nodes.values() if n.role == "host")
    runtime._start_node(host, state)
    ndir = runtime.paths.node_dir(host.name)
    assert _script(recorded)[-1] == f"mount --bind {ndir}/var-lib-flatfab /var/lib/flatfab"
    assert not [c for c in recorded.ran if c[0] == "chown"]
    assert [c for _, c in recorded.in_node if "lldpd" not in c[-1]] == []
    assert "-I 'eth*,!eth0' " in recorded.in_node[0][1][-1]


def test_each_namespace_of_a_node_has_a_carrier_watcher_logging_in_utc(
        recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(NetnsRuntime, "_start_sshd", lambda *_: None)
    runtime, state = _lab()
    leaf = runtime.spec.nodes["leaf1"]
    runtime._start_node(leaf, state)
    logs = runtime.paths.node_dir("leaf1") / "var-lib-flatfab" / "carrier"
    watchers = {c[1]: c[-1] for c in recorded.ran if "monitor link" in c[-1]}
    spaces = {"main": runtime.paths.netns("leaf1")}
    spaces |= {vrf: runtime.paths.vrf_netns("leaf1", vrf) for vrf in leaf.vrfs}
    assert len(spaces) > 1  # the lab's leaves carry VRFs
    assert watchers == {f"--net=/run/netns/{ns}": f"TZ=UTC ip -ts -o monitor link >>{logs}/"
                        f"{name}.log 2>&1 </dev/null & echo $!" for name, ns in spaces.items()}
    assert logs.is_dir()
    assert state.nodes["leaf1"]["carrier_pids"] == dict.fromkeys(spaces, 4242)


def test_clearing_counters_stamps_each_node_and_names_one_the_lab_lacks(
        recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netns, "require_root", lambda _: None)
    runtime, state = _lab()
    paths = runtime.paths
    for name in ("leaf1", "leaf2"):
        (paths.node_dir(name) / "var-lib-flatfab" / "carrier").mkdir(parents=True)
    before = time.time()
    assert netns.clear_counters(paths, state, ["leaf1"]) == ["leaf1"]
    stamp = paths.node_dir("leaf1") / "var-lib-flatfab" / "carrier" / "cleared"
    assert before <= float(stamp.read_text()) <= time.time()
    assert stamp.stat().st_mode & 0o777 == 0o644  # the node's login user reads it
    assert not (paths.node_dir("leaf2") / "var-lib-flatfab" / "carrier" / "cleared").exists()
    assert len(netns.clear_counters(paths, state)) == len(state.nodes)
    with pytest.raises(netns.LabError, match="has no node 'leaf9'"):
        netns.clear_counters(paths, state, ["leaf9"])


def test_status_reads_the_platform_s_daemons(recorded: Recorded) -> None:
    runtime, state = _lab()
    paths = runtime.paths
    state.nodes = {"leaf1": {"netns": "zz-leaf1", "role": "leaf", "platform": "frr",
                             "mgmt_ipv4": "127.0.0.1"},
                   "old": {"netns": "zz-old", "role": "spine", "mgmt_ipv4": "127.0.0.1"},
                   "h1": {"netns": "zz-h1", "role": "host", "platform": "linux_host",
                          "mgmt_ipv4": "127.0.0.1"}}
    state.save(paths)
    rows = {row["node"]: row["processes"] for row in NetnsRuntime.status_of(paths)}
    daemons = ["sshd", "watchfrr", "zebra", "bgpd", "staticd", "lldpd"]
    assert list(rows["leaf1"]) == daemons
    assert list(rows["old"]) == daemons  # a state saved before platforms were recorded
    assert list(rows["h1"]) == ["sshd", "lldpd"]


def test_the_defaults_are_the_embedded_lab_s_platforms() -> None:
    """What an intent gets where it names no platform runs in the embedded lab."""
    switch, host = PLATFORMS[DEFAULT_SWITCH], PLATFORMS[DEFAULT_HOST]
    assert (switch.facts.role, host.facts.role) == ("switch", "host")
    assert switch.facts.lab.runtime is not None and host.facts.lab.runtime is not None
    assert switch.facts.lab.runtime.start and switch.facts.lab.runtime.telemetry
