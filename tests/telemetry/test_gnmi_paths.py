"""The path table: every metric round-trips through its gNMI leaf, and wildcards match."""

from __future__ import annotations

import pytest

from flatfab.telemetry import paths
from flatfab.telemetry.samples import Metric


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
    # `...` is any number of elements, none included; what follows it must match
    ("/...", True),
    ("/qos/.../transmit-pkts", True),
    ("/qos/.../dropped-pkts", False),
    ("/.../queue[name=3]/state", True),
    ("/.../queue[name=4]", False),
    ("/qos/interfaces/interface/.../output/queues/queue/state/transmit-pkts", True),
    ("/qos/.../queues/.../transmit-pkts", True),
    ("/qos/.../transmit-pkts/more", False),
])
def test_subscription_paths_match_as_prefixes(request_path: str, hit: bool) -> None:
    leaf = paths.parse(paths.leaf_path(Metric.QUEUE_TX, "swp1", 3))
    assert paths.matches(paths.parse(request_path), leaf) is hit


def test_oper_status_values() -> None:
    assert paths.sample_value(Metric.OPER_UP, paths.leaf_value(Metric.OPER_UP, 1)) == 1
    assert paths.sample_value(Metric.OPER_UP, "LOWER_LAYER_DOWN") == 0
    # JSON IETF may qualify the enum with its module; a value outside it is unread, not down
    assert paths.sample_value(Metric.OPER_UP, "openconfig-interfaces:UP") == 1
    with pytest.raises(ValueError, match="not an oper-status"):
        paths.sample_value(Metric.OPER_UP, "")
    with pytest.raises(paths.PathError):
        paths.leaf_path(Metric.PFC_RX, "swp1")


# --- the table-driven decode agrees with the templates' regexes --------------------------

SONIC_LIKE = paths.PathTable(
    "sonic-like",
    (paths.Leaf(Metric.PFC_RX, "/COUNTERS/{port}/SAI_PORT_STAT_PFC_{key}_RX_PKTS", True),
     paths.Leaf(Metric.QUEUE_TX, "/queues/queue[port={port}][index={key}]/state/packets", True),
     paths.Leaf(Metric.OPER_UP, "/ports/port[name={port}][kind=phys]/oper", False)),
    ("/COUNTERS",), (), target="COUNTERS_DB")


@pytest.mark.parametrize(("path", "hit"), [
    ("/COUNTERS/Ethernet0/SAI_PORT_STAT_PFC_3_RX_PKTS", (Metric.PFC_RX, "Ethernet0", 3)),
    ("/COUNTERS/Ethernet0/SAI_PORT_STAT_PFC_x_RX_PKTS", None),
    ("/queues/queue[port=Ethernet0][index=5]/state/packets", (Metric.QUEUE_TX, "Ethernet0", 5)),
    ("/queues/queue[index=5][port=Ethernet0]/state/packets", (Metric.QUEUE_TX, "Ethernet0", 5)),
    ("/queues/queue[port=Ethernet0][index=q5]/state/packets", None),
    ("/queues/queue[port=Ethernet0]/state/packets", None),
    ("/ports/port[kind=phys][name=Ethernet1/1]/oper", (Metric.OPER_UP, "Ethernet1/1", None)),
    ("/ports/port[kind=lag][name=Ethernet1/1]/oper", None),
    ("/ports/port[kind=phys][name=]/oper", None),
])
def test_name_embedded_and_key_valued_templates_decode(path: str, hit: object) -> None:
    assert SONIC_LIKE.metric_of(path) == hit
    assert SONIC_LIKE.decode(paths.parse(path)) == hit
    # the regex over the rendered path, the way every path was decoded before shapes
    assert SONIC_LIKE._by_pattern(paths.render(paths.parse(path))) == hit


def test_key_valued_leaves_are_shapes_and_name_embedded_ones_are_not() -> None:
    shaped = {s.leaf.metric for shapes in SONIC_LIKE._shapes.values() for s in shapes}
    assert shaped == {Metric.QUEUE_TX, Metric.OPER_UP}
    assert SONIC_LIKE._first_unshaped == 0  # so a shape's hit is checked by the regexes
    flatfab = {s.leaf.metric for shapes in paths.FLATFAB._shapes.values() for s in shapes}
    assert flatfab == set(Metric)


@pytest.mark.parametrize("metric", list(Metric))
@pytest.mark.parametrize("port", ["Ethernet1/1", "swp1s0", "et-0/0/1:2", "a=b", "x.y*"])
def test_shapes_agree_with_the_regexes(metric: Metric, port: str) -> None:
    leaf = next(leaf for leaf in paths.LEAVES if leaf.metric is metric)
    path = paths.leaf_path(metric, port, 7 if leaf.keyed else None)
    elems = paths.parse(path)
    assert paths.FLATFAB._by_shape(elems) is not None
    assert paths.FLATFAB.decode(elems) == paths.FLATFAB._by_pattern(paths.render(elems))
