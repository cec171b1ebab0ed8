"""The embedded lab a live session runs against, as the tests hold it: its prefix and
management subnet (overridable, so two checkouts can run live tests side by side), flatfab
and root shells against it, and a device's NAPALM driver opened from its inventory."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from napalm import get_network_driver

from flatfab.lab.netns import LabPaths, node_exec
from tests.support.flatfab import Run, flatfab

# Overridable so two checkouts (or two developers) can run live tests side by side.
PREFIX = os.environ.get("FLATFAB_TEST_LAB_PREFIX", "fft")
SUBNET = os.environ.get("FLATFAB_TEST_LAB_SUBNET", "172.31.250.0/24")
# the rail lab (intents/rail: 5 stages, 2 planes, multi-NIC servers) beside it
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
            assert rolled.code == 0, rolled.stdout[-3000:] + rolled.stderr
        yield handle
    finally:
        flatfab("lab", "down", "--sweep", "--prefix", prefix)
