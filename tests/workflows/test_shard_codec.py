"""A shard's output through the wire format: every DeviceState comes back equal, field for
field (values the models leave out of their JSON while empty included), as do drift and
diffs; the blob is compressed JSON."""

from __future__ import annotations

import json
import zlib

import pytest

from flatfab.model.state import (
    DeviceState,
    IfKind,
    Interface,
    NextHop,
    Probe,
    Role,
    Route,
    StaticRoute,
)
from flatfab.reports.model import DeviceDrift, SectionDrift
from flatfab.workflows.commands.rollout import DeviceOutcome
from flatfab.workflows.project.layout import Project
from flatfab.workflows.sharding.shard_codec import as_data, from_data, pack, unpack
from flatfab.workflows.sharding.shard_run import ShardOutput
from tests.doubles.shard_devices import HealthyFabric
from tests.support.paths import ROOT


def _round_trip(output: ShardOutput) -> ShardOutput:
    return from_data(unpack(pack(as_data(output))))


@pytest.mark.parametrize("fabric", ["lab", "rail", "multivendor"])
def test_observed_devices_come_back_equal(fabric: str) -> None:
    plan = Project(root=ROOT, fabric=fabric).plan
    healthy = HealthyFabric(plan)
    output = ShardOutput(shard="all", devices={n: healthy.device(n, []) for n in plan.devices})
    back = _round_trip(output)
    assert back.devices == output.devices
    assert list(back.devices) == list(output.devices)


def test_values_pydantic_would_leave_out_come_back() -> None:
    device = DeviceState(
        name="leaf1", role=Role.LEAF, platform="frr", rail=0, pod=0, server_role="",
        sysctls={}, interfaces={"pc1": Interface(name="pc1", kind=IfKind.LAG, lag="",
                                                 members=[], rail=0)},
        static_routes=[StaticRoute(prefix="0.0.0.0/0", interface="eth1", table=0, source="")],
        probes=[Probe(target="h", address="10.0.0.1", size=56, dont_fragment=False,
                      expect_reply=True, source="", nic="", left_by="")])
    assert DeviceState.model_validate(device.model_dump(mode="json")) != device  # why
    back = _round_trip(ShardOutput(shard="s", devices={"leaf1": device}))
    assert back.devices["leaf1"] == device
    assert back.devices["leaf1"].rail == 0 and back.devices["leaf1"].interfaces["pc1"].lag == ""


def test_drift_diffs_and_timings_come_back() -> None:
    output = ShardOutput(
        shard="leaves-001",
        drift=[DeviceDrift(device="leaf2", sections=(SectionDrift(
            section="frr", missing=("a",), unexpected=("b", "c"), diff="-b\n+a\n"),)),
            DeviceDrift(device="leaf3", error="no route to host")],
        diffs={"leaf2": DeviceOutcome(diff="-x\n+y\n", notes=["restarts bgpd"]),
               "leaf3": DeviceOutcome(error="timeout")},
        seconds={"drift_s": 1.5, "collect_s": 2.0})
    assert _round_trip(output) == output


def test_the_blob_is_compressed_json_of_a_known_format() -> None:
    blob = pack(as_data(ShardOutput(shard="s")))
    assert json.loads(zlib.decompress(blob))["format"] == 1
    with pytest.raises(ValueError, match="format"):
        from_data({"format": 99})


def test_routes_come_back_sharing_their_next_hop_lists() -> None:
    uplinks = [NextHop(interface="swp51"), NextHop(interface="swp52")]
    leaf = DeviceState(name="leaf1", role=Role.LEAF, platform="frr", routes={
        "default": {f"10.0.0.{i}/32": Route(protocol="bgp",
                                            nexthops=list(uplinks)) for i in range(2, 50)},
        "blue": {"10.1.0.0/24": Route(protocol="bgp", nexthops=[
            NextHop(address="169.254.0.1", interface="swp51.100")]),
                 "odd-key": Route(protocol="static", nexthops=[])}})
    host = DeviceState(name="h1", role=Role.HOST, platform="linux_host")  # routes unread
    empty = DeviceState(name="h2", role=Role.HOST, platform="linux_host", routes={})
    back = _round_trip(ShardOutput(shard="s", devices={"leaf1": leaf, "h1": host, "h2": empty}))
    assert back.devices == {"leaf1": leaf, "h1": host, "h2": empty}
    assert back.devices["h1"].routes is None and back.devices["h2"].routes == {}
    routes = back.devices["leaf1"].routes
    assert routes is not None
    assert len({id(r) for r in routes["default"].values()}) == 1  # one Route for all 48
    assert routes["blue"]["odd-key"].protocol == "static"
