"""A JSON object sent for a whole subtree, as SONiC's telemetry container answers its
wildcard COUNTERS_DB views: each member is a leaf below the update's path, decoded with the
platform's table; and each target is subscribed with its own platform's table."""

from __future__ import annotations

import json

from pygnmi.spec.v080 import gnmi_pb2

from flatfab.platforms.registry import PLATFORMS
from flatfab.telemetry import paths
from flatfab.telemetry.gnmi_client import GnmiSubscriber
from flatfab.telemetry.samples import Metric, Sample
from flatfab.workflows.commands.watch import table_of

SONIC = PLATFORMS["sonic"].telemetry_paths()


def _update(path: str, tree: object) -> object:
    return gnmi_pb2.Update(path=paths.to_proto(path),
                           val=gnmi_pb2.TypedValue(json_ietf_val=json.dumps(tree).encode()))


def _decoded(*updates: object) -> tuple[list[Sample], int]:
    assert SONIC is not None
    got: list[Sample] = []
    sub = GnmiSubscriber("sonic1", "127.0.0.1", 1, ca_file=None, insecure=True,
                         on_sample=got.append, on_state=lambda *_: None, table=SONIC)
    notif = gnmi_pb2.Notification(timestamp=5_000_000_000, update=list(updates),
                                  prefix=gnmi_pb2.Path(target="COUNTERS_DB"))
    sub._notification(notif)
    return got, sub.unknown_paths


def test_port_and_queue_objects_become_samples() -> None:
    got, unknown = _decoded(
        _update("/COUNTERS/Ethernet*", {
            "Ethernet0": {"SAI_PORT_STAT_PFC_3_RX_PKTS": "12", "SAI_PORT_STAT_PFC_3_TX_PKTS": "4",
                          "SAI_PORT_STAT_IF_IN_OCTETS": "99"},  # not a metric: skipped
            "Ethernet4": {"SAI_PORT_STAT_PFC_4_RX_PKTS": "7"}}),
        _update("/COUNTERS/Ethernet*/Queues", {
            "Ethernet0:3": {"SAI_QUEUE_STAT_PACKETS": "100",
                            "SAI_QUEUE_STAT_DROPPED_PACKETS": "2"}}))
    assert unknown == 0
    assert {(s.port, s.metric, s.key, s.value) for s in got} == {
        ("Ethernet0", Metric.PFC_RX, 3, 12), ("Ethernet0", Metric.PFC_TX, 3, 4),
        ("Ethernet4", Metric.PFC_RX, 4, 7), ("Ethernet0", Metric.QUEUE_TX, 3, 100),
        ("Ethernet0", Metric.QUEUE_DROPS, 3, 2)}
    assert {s.time for s in got} == {5.0} and {s.device for s in got} == {"sonic1"}


def test_json_that_holds_no_known_member_is_counted_unknown() -> None:
    got, unknown = _decoded(_update("/COUNTERS/Ethernet*", {"Ethernet0": {"X": "1"}}),
                            _update("/COUNTERS/Ethernet*", ["not", "an", "object"]))
    assert got == [] and unknown == 2


def test_each_platform_is_subscribed_with_its_own_table() -> None:
    assert table_of("sonic") is SONIC and SONIC is not None
    assert table_of("eos") == PLATFORMS["eos"].telemetry_paths()
    # the lab's frr switches and the GPU hosts: flatfab's own paths
    assert table_of("frr") == paths.FLATFAB and table_of("linux_host") == paths.FLATFAB
    assert table_of(None) == paths.FLATFAB and table_of("vyos") == paths.FLATFAB
