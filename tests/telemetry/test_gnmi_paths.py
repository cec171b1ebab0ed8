"""The path table: every metric round-trips through its gNMI leaf, and wildcards match."""

from __future__ import annotations

import pytest

from tasks.telemetry import paths
from tasks.telemetry.samples import Metric


@pytest.mark.parametrize("metric", list(Metric))
def test_every_metric_has_a_leaf_that_maps_back(metric: Metric) -> None:
    key = 3 if paths.LEAVES[[leaf.metric for leaf in paths.LEAVES].index(metric)].keyed else None
    path = paths.leaf_path(metric, "Ethernet1/1", key)
    assert paths.metric_of(path) == (metric, "Ethernet1/1", key)


def test_openconfig_spellings() -> None:
    assert paths.leaf_path(Metric.QUEUE_ECN, "swp1", 3) == (
        "/qos/interfaces/interface[interface-id=swp1]/output/queues/queue[name=3]"
        "/state/ecn-marked-pkts")
    assert paths.leaf_path(Metric.OPER_UP, "swp1") == (
        "/interfaces/interface[name=swp1]/state/oper-status")


def test_slashes_inside_keys_stay_in_the_key() -> None:
    elems = paths.parse("/interfaces/interface[name=Ethernet1/1]/state/oper-status")
    assert elems[1] == ("interface", (("name", "Ethernet1/1"),))
    assert paths.from_proto(paths.to_proto(elems)) == elems


def test_unknown_leaves_map_to_nothing() -> None:
    assert paths.metric_of("/interfaces/interface[name=swp1]/state/counters/in-octets") is None


@pytest.mark.parametrize(("request_path", "hit"), [
    ("/qos/interfaces/interface/output/queues/queue/state", True),
    ("/qos/interfaces/interface[interface-id=swp1]", True),
    ("/qos/interfaces/interface[interface-id=*]/output", True),
    ("/qos/interfaces/interface[interface-id=swp2]", False),
    ("/qos/*/interface/output/queues/queue/state/transmit-pkts", True),
    ("/qos/...", True),
    ("/interfaces", False),
])
def test_subscription_paths_match_as_prefixes(request_path: str, hit: bool) -> None:
    leaf = paths.parse(paths.leaf_path(Metric.QUEUE_TX, "swp1", 3))
    assert paths.matches(paths.parse(request_path), leaf) is hit


def test_oper_status_values() -> None:
    assert paths.sample_value(Metric.OPER_UP, paths.leaf_value(Metric.OPER_UP, 1)) == 1
    assert paths.sample_value(Metric.OPER_UP, "LOWER_LAYER_DOWN") == 0
    with pytest.raises(paths.PathError):
        paths.leaf_path(Metric.PFC_RX, "swp1")
