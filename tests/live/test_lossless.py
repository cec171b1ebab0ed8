"""The lossless plane on the live lab: applied, read back, traffic followed by class
counters, and a fault matrix where each injected fault is found by the right check, on the
right device and port. Every fault is repaired by a rollout, which must bring it back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.live.conftest import Lab

pytestmark = pytest.mark.live
ASIC = "/var/lib/flatfab/asic/config_db.json"
NIC = "/var/lib/flatfab/nic/qos.conf"


def _json(result: Any) -> dict[str, Any]:
    assert result.code in (0, 1), result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _named(data: dict[str, Any], check: str) -> set[tuple[str, str | None]]:
    return {(f["device"], f["port"]) for f in data["findings"] if f["check"] == check}


@pytest.fixture(scope="module")
def rolled_out(lab: Lab) -> Lab:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr
    return lab


def _repair(lab: Lab) -> None:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr


def test_traffic_is_queued_in_its_class_on_every_hop(rolled_out: Lab) -> None:
    data = _json(rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json"))
    assert data["passed"], data["findings"]
    assert data["timings"]["traffic_packets"] > 0
    assert {"traffic.class", "traffic.lossless_drops"} <= set(data["checks"])


def test_a_spine_that_classifies_roce_into_the_wrong_class_is_named(rolled_out: Lab) -> None:
    rolled_out.sh("spine2", "tc -n blue filter replace dev swp3.100 parent 1: protocol ip "
                            "prio 1 handle 800::800 u32 match ip dsfield 0x68 0xfc flowid 1:10")
    try:
        data = _json(rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json"))
        assert not data["passed"]
        assert ("spine2", "swp3.100") in _named(data, "traffic.class")
        assert all(f["device"] == "spine2" for f in data["findings"]
                   if f["check"] == "traffic.class")
        # the kernel drift is in the config diff too, and a rollout repairs it
        dry = rolled_out.cli("rollout", "--dry-run")
        assert '-   "dscp_to_tc": "26:0,48:6",' in dry.stdout
    finally:
        _repair(rolled_out)
    data = _json(rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json"))
    assert data["passed"], data["findings"]


def test_a_host_that_marks_roce_wrong_is_caught_on_its_path(rolled_out: Lab) -> None:
    rolled_out.sh("leaf3-h1", "nft flush chain inet flatfab roce_marking")
    try:
        data = _json(rolled_out.cli("verify", "--traffic", "--no-probes", "--format", "json"))
        assert not data["passed"]
        assert ("leaf3", "swp51.100,swp52.100") in _named(data, "traffic.class")
    finally:
        _repair(rolled_out)
