"""The connect timeout against a switch that silently drops every packet, on a lab of its own.

leaf2's management interface drops everything it receives (nftables, inside leaf2's own
namespace): no refusal, no ICMP, a SYN that is never answered (not a missing route, which
fails at once). With `--connect-timeout 3`, leaf2's read gives up after about 3 s (without
it, the kernel would retry the SYN for two minutes); verify and rollout --dry-run name it
unread, "timed out after 3 s connecting to <its address>:22", judge the rest of the fabric
as usual (nothing else is found: leaf2's data plane still forwards) and exit 3. Prefix `fh`
and 172.31.238.0/24 are this module's own; `make test` runs it (marker own_lab) in the
ownlab session.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from flatfab.platforms.base import Timeouts
from flatfab.sot import inventory as sot_inventory
from flatfab.workflows.devices.collect import collect_devices
from flatfab.workflows.devices.connections import with_timeouts
from flatfab.workflows.project.layout import Project
from tests.support.lab import Lab, own_lab
from tests.support.paths import ROOT

pytestmark = [pytest.mark.live, pytest.mark.own_lab]

PREFIX = "fh"
SUBNET = "172.31.238.0/24"
DROPPED = "leaf2"
CONNECT_S = 3
TABLE = "fh_drop"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The classic lab, rolled out (so every device but the one dropped verifies clean)."""
    with own_lab(tmp_path_factory.mktemp("honest"), PREFIX, SUBNET, rolled_out=True) as handle:
        yield handle


def _address(lab: Lab, node: str) -> str:
    status = lab.cli("lab", "status", "--prefix", PREFIX, "--format", "json")
    assert status.code == 0, status.stderr
    return str({n["node"]: n for n in status.json()["nodes"]}[node]["mgmt_ipv4"])


@pytest.fixture(scope="module")
def dropped(lab: Lab) -> Iterator[str]:
    """leaf2 drops every packet its management interface receives; its address."""
    address = _address(lab, DROPPED)
    lab.sh(DROPPED, f"nft add table inet {TABLE} && nft add chain inet {TABLE} input "
                    "'{ type filter hook input priority -300; policy accept; }' && "
                    f"nft add rule inet {TABLE} input iifname eth0 drop")
    try:
        yield address
    finally:
        lab.sh(DROPPED, f"nft delete table inet {TABLE}")


def _reason(address: str) -> str:
    return f"timed out after {CONNECT_S} s connecting to {address}:22"


def test_a_silently_dropped_device_is_given_up_on_within_the_connect_timeout(
        lab: Lab, dropped: str) -> None:
    project = Project(root=ROOT, fabric="lab", inventory_override=lab.inventory)
    nornir = with_timeouts(sot_inventory.build(lab.inventory, project.plan, 4,
                                               project.address_spaces),
                           Timeouts(connect=CONNECT_S))
    started = time.monotonic()
    read = collect_devices(nornir, project.plan, only={DROPPED}, close=True)
    took = time.monotonic() - started
    assert not read[DROPPED].reachable
    assert read[DROPPED].errors == [_reason(dropped)]
    assert CONNECT_S - 0.2 < took < CONNECT_S + 5, took  # about the timeout, not minutes


def test_verify_names_it_and_judges_the_rest(lab: Lab, dropped: str) -> None:
    started = time.monotonic()
    run = lab.cli("--connect-timeout", str(CONNECT_S), "verify", "--format", "json")
    took = time.monotonic() - started
    assert run.code == 3, run.stdout[-3000:] + run.stderr
    report = run.json()
    assert report["unread"] == {DROPPED: _reason(dropped)}
    assert f"{DROPPED}: not read: {_reason(dropped)}" in run.stderr.splitlines()
    # the rest of the fabric read and judged: nothing but that leaf2 was not read
    assert [(f["check"], f["device"]) for f in report["findings"]] == [
        ("device.reachable", DROPPED)]
    assert "Traceback" not in run.stderr
    assert took < 120  # a SYN the kernel retried unbounded would take longer on its own


def test_a_dry_run_names_it_and_diffs_the_rest(lab: Lab, dropped: str) -> None:
    run = lab.cli("--connect-timeout", str(CONNECT_S), "rollout", "--dry-run",
                  "--format", "json")
    assert run.code == 3, run.stdout[-3000:] + run.stderr
    summary = run.json()
    assert summary["unread"] == {DROPPED: _reason(dropped)}
    assert summary["diffs"] == {}  # every other device is at intent
    table = lab.cli("--connect-timeout", str(CONNECT_S), "rollout", "--dry-run")
    assert table.code == 3 and "Traceback" not in table.stderr
    assert "dry run INCOMPLETE: 0 of 13 devices read would change, 1 not read (leaf2)" \
        in table.stdout
