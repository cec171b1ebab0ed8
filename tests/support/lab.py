"""The embedded lab a live session runs against, as the tests hold it: its prefix and
management subnet (overridable, so two checkouts can run live tests side by side), flatfab
and root shells against it, and a device's NAPALM driver opened from its inventory."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from napalm import get_network_driver

from flatfab.lab import hardware
from flatfab.lab.netns import STATE_DIR, LabPaths, node_exec, node_folder
from flatfab.platforms import lab_carrier
from tests.support.flatfab import Run, flatfab

# Overridable so two checkouts (or two developers) can run live tests side by side.
PREFIX = os.environ.get("FLATFAB_TEST_LAB_PREFIX", "fft")
SUBNET = os.environ.get("FLATFAB_TEST_LAB_SUBNET", "172.31.250.0/24")
# the rail lab (intents/rail: 5 stages, 2 planes, multi-NIC servers) beside it
# the lab switch's virtual ASIC: its CONFIG_DB as JSON (flatfab.platforms.frr.dcb)
ASIC_DB = "/var/lib/flatfab/asic/config_db.json"
RAIL_PREFIX = os.environ.get("FLATFAB_TEST_RAIL_PREFIX", "ftr")
RAIL_SUBNET = os.environ.get("FLATFAB_TEST_RAIL_SUBNET", "172.31.247.0/24")


@dataclass
class Lab:
    prefix: str
    inventory: Path
    state_dir: Path
    fabric: str = "lab"

    @property
    def paths(self) -> LabPaths:
        return LabPaths(self.prefix)

    def cli(self, *args: str, timeout: float = 600, env: dict[str, str] | None = None) -> Run:
        """flatfab against this lab (its inventory and a private journal directory)."""
        return flatfab("--fabric", self.fabric, "--inventory", str(self.inventory),
                       "--state-dir", str(self.state_dir), *args, timeout=timeout, env=env)

    def sh(self, node: str, command: str) -> str:
        """A root shell command inside a lab node (for injecting faults)."""
        return node_exec(self.paths, node, ["sh", "-c", command])

    def edit_asic(self, node: str, mutation: str) -> None:
        """Change a lab switch's virtual ASIC (its CONFIG_DB JSON, `d` in `mutation`) the way
        an operator's hand would."""
        self.sh(node, f"python3 - <<'EOF'\nimport json\np = {ASIC_DB!r}\nd = json.load(open(p))"
                      f"\n{mutation}\njson.dump(d, open(p, 'w'), indent=1, sort_keys=True)\nEOF")

    def swap_ports(self, node: str, one: str, other: str) -> None:
        """Trade two ports' cables on `node` (their names trade places on the box)."""
        self.sh(node, f"ip link set {one} down; ip link set {other} down; "
                      f"ip link set {one} name fftmp; ip link set {other} name {one}; "
                      f"ip link set fftmp name {other}; ip link set {one} up; "
                      f"ip link set {other} up")

    def phy_file(self, node: str) -> Path:
        """The node's stand-in for the modules in its ports (flatfab.lab.hardware)."""
        return node_folder(self.paths.node_dir(node), STATE_DIR) / hardware.FILE

    def edit_phy(self, node: str, port: str, change: Callable[[dict[str, Any]], None]) -> None:
        """Change what a port's module states (a physical fault, as the lab shows one)."""
        path = self.phy_file(node)
        doc = json.loads(path.read_text(encoding="utf-8"))
        change(doc["ports"][port])
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    def carrier(self, node: str) -> dict[str, lab_carrier.Carrier]:
        """The node's ports' carrier history as its watchers logged it so far."""
        logs = node_folder(self.paths.node_dir(node), STATE_DIR) / lab_carrier.DIR
        return lab_carrier.history(
            (log.read_text(encoding="utf-8") for log in sorted(logs.glob("*.log"))), None)

    def bounce(self, node: str, port: str, far: tuple[str, str], timeout: float = 20.0) -> None:
        """Flap a link for real: down until the watchers of both ends logged the carrier lost,
        then up until both logged it back. A quick down-up is not enough: the kernel's link
        watch may fold the far end's loss and return into no event at all."""
        ends = ((node, port), far)

        def changes() -> list[int]:
            return [seen.transitions if (seen := self.carrier(n).get(p)) is not None else 0
                    for n, p in ends]

        before = changes()
        for command, wanted in (("down", 1), ("up", 2)):
            self.sh(node, f"ip link set {port} {command}")
            deadline = time.monotonic() + timeout
            while any(now < was + wanted for now, was in zip(changes(), before, strict=True)):
                if time.monotonic() > deadline:
                    raise AssertionError(f"{ends}: the watchers logged no carrier {command} "
                                         f"within {timeout:g} s: {changes()} from {before}")
                time.sleep(0.05)

    def lldp_heard(self, node: str, port: str) -> set[str]:
        """The `device:port` neighbours the node's lldpd lists on a port (stale ones too)."""
        socket = self.paths.lldp_socket(node)
        out = self.sh(node, f"lldpcli -u {socket} -f keyvalue show neighbors ports {port}")
        # one neighbour's lines after another: its chassis name, then its port's name
        heard, device = set(), ""
        for line in out.splitlines():
            key, _, value = line.partition("=")
            if key.endswith(".chassis.name"):
                device = value
            elif key.endswith(".port.ifname"):
                heard.add(f"{device}:{value}")
        return heard

    def wait_lldp_heard(self, expected: dict[tuple[str, str], str], timeout: float = 30) -> None:
        """Wait until every (node, port) lists its expected `device:port` neighbour."""
        deadline = time.monotonic() + timeout
        while missing := {key: far for key, far in expected.items()
                          if far not in self.lldp_heard(*key)}:
            if time.monotonic() > deadline:
                raise AssertionError(f"LLDP never heard {missing}")
            time.sleep(0.5)

    def rollout_failed(self, run: Run) -> str:
        """Why a bring-up rollout failed: its reason and gate findings and, for each device
        they name, what FRR and the kernel said then (the lab is gone by the time anyone
        reads a CI log)."""
        try:
            result = run.json()
        except ValueError:
            return run.stdout[-3000:] + run.stderr
        findings = result.get("gate_findings") or []
        lines = [f"rollout: {result.get('reason')}",
                 *(f"  {f['check']} {f['device']} {f['port']}: {f['message']}"
                   for f in findings)]
        shows = ("vtysh -c 'show bgp vrf all summary'",
                 "vtysh -c 'show interface vrf all' | grep -E '^Interface|vrf:|inet6|ND router'",
                 "ip -br link; ip -6 -br addr", "tail -n 40 /var/log/frr/frr.log")
        for device in sorted({f["device"] for f in findings}):
            for show in shows:
                try:
                    said = self.sh(device, show)
                except Exception as exc:  # noqa: BLE001 - a diagnosis must not hide the failure
                    said = f"(could not run: {exc})"
                lines.append(f"--- {device}: {show}\n{said.rstrip()}")
        return "\n".join(lines) + "\n" + run.stderr

    def wait_verified(self, timeout: float = 90, *extra: str) -> Run:
        """Poll verify until it passes (after restoring a fault)."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.cli("verify", "--format", "json", *extra)
            if result.code == 0 or time.monotonic() > deadline:
                return result
            time.sleep(2)


def open_driver(lab: Lab, node: str, *, read_only: bool) -> Any:
    hosts = yaml.safe_load((lab.inventory / "hosts.yaml").read_text())
    defaults = yaml.safe_load((lab.inventory / "defaults.yaml").read_text())
    host = hosts[node]
    # as Nornir resolves them: the host's own extras, else the defaults' (never merged)
    options = host.get("connection_options") or defaults["connection_options"]
    optional = dict(options["napalm"]["extras"]["optional_args"])
    optional["read_only"] = read_only
    driver = get_network_driver(host["platform"])(host["hostname"], defaults["username"], None,
                                                  optional_args=optional)
    driver.open()
    return driver


@contextmanager
def own_lab(work: Path, prefix: str, subnet: str, *, rolled_out: bool) -> Iterator[Lab]:
    """The classic lab under a module's own prefix and subnet (swept before and after), rolled
    out from the factory when asked: for modules that `make test` runs in its ownlab session."""
    if os.geteuid() != 0:
        raise RuntimeError("live lab tests need root (network namespaces, mounts, users)")
    handle = Lab(prefix=prefix, inventory=work / "inventory", state_dir=work / "state")
    flatfab("lab", "down", "--sweep", "--prefix", prefix)
    try:
        up = handle.cli("lab", "up", "--prefix", prefix, "--mgmt-subnet", subnet)
        assert up.code == 0, up.stderr
        if rolled_out:
            rolled = handle.cli("rollout", "--format", "json", timeout=1200)
            assert rolled.code == 0, handle.rollout_failed(rolled)
            # counters cleared after turn-up, as on switches: flaps count from here
            cleared = handle.cli("lab", "clear-counters", "--prefix", prefix)
            assert cleared.code == 0, cleared.stderr
        yield handle
    finally:
        flatfab("lab", "down", "--sweep", "--prefix", prefix)
