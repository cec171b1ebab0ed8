"""One embedded lab for the whole live session, swept before and after.

The lab uses its own prefix and management subnet, so it coexists with a demo lab.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.flatfab import flatfab
from tests.support.lab import PREFIX, RAIL_PREFIX, RAIL_SUBNET, SUBNET, Lab
from tests.support.nautobot_service import nautobot  # noqa: F401  (the SoT audit tests use both)
from tests.support.paths import ROOT


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
        assert rolled.code == 0, handle.rollout_failed(rolled)
        yield handle
    finally:
        _sweep(RAIL_PREFIX)

