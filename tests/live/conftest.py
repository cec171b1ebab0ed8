"""One embedded lab for the whole live session, swept before and after.

The lab uses its own prefix and management subnet, so it coexists with a demo lab.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tasks.lab.netns import LabPaths, node_exec
from tests.sot.conftest import nautobot  # noqa: F401  (the SoT audit tests use both)
from tests.support.flatfab import Run, flatfab
from tests.support.paths import ROOT

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


def _sweep(prefix: str) -> None:
    flatfab("lab", "down", "--sweep", "--prefix", prefix)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if os.geteuid() != 0:
        pytest.fail("live lab tests need root (network namespaces, mounts, users)")
    work = tmp_path_factory.mktemp("lab")
    handle = Lab(prefix=PREFIX, inventory=work / "inventory", state_dir=work / "state")
    _sweep(PREFIX)
    up = handle.cli("lab", "up", "--prefix", PREFIX, "--mgmt-subnet", SUBNET)
    assert up.code == 0, up.stderr
    try:
        yield handle
    finally:
        _sweep(PREFIX)


@pytest.fixture(scope="session")
def rail(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The rail lab, rolled out by runbooks/rail-bring-up.yaml (canary SU with its pod,
    then pods, then super-spines one by one), shared by every test that needs it."""
    if os.geteuid() != 0:
        pytest.fail("live lab tests need root (network namespaces, mounts, users)")
    work = tmp_path_factory.mktemp("rail")
    handle = Lab(prefix=RAIL_PREFIX, inventory=work / "inventory", state_dir=work / "state",
                 fabric="rail")
    _sweep(RAIL_PREFIX)
    try:
        up = handle.cli("lab", "up", "--prefix", RAIL_PREFIX, "--mgmt-subnet", RAIL_SUBNET)
        assert up.code == 0, up.stderr
        rolled = handle.cli("rollout", "--runbook", str(ROOT / "runbooks" / "rail-bring-up.yaml"),
                            "--format", "json", timeout=1200)
        assert rolled.code == 0, rolled.stdout[-3000:] + rolled.stderr
        yield handle
    finally:
        _sweep(RAIL_PREFIX)


__all__ = ["ROOT", "Lab"]
