"""Reading Nautobot into a snapshot, through flatfab's client against an API double: related
objects by id (never fetched one by one), only the selected devices' interfaces and cables,
loopbacks from interface assignments, the ASN custom field, and cable paths from each port's
connected endpoint: direct, through patch panels, to a device outside the fabric, or
stopping short of an interface."""

from __future__ import annotations

from typing import Any

from flatfab.sot.client import Nautobot
from flatfab.sot.nautobot import read_snapshot
from tests.doubles.nautobot import TOKEN, ApiDouble, serving


def _ref(kind: str, id_: str) -> dict[str, str]:
    """A related object as the API gives it at depth 0."""
    return {"id": id_, "object_type": kind, "url": f"http://x/api/{id_}/"}


def _objects() -> dict[str, list[dict[str, Any]]]:
    devices: list[dict[str, Any]] = [
        {"id": "d1", "name": "leaf1", "role": _ref("extras.role", "r-leaf"),
         "platform": _ref("dcim.platform", "p-frr"), "tenant": None, "location": "dc1",
         "primary_ip4": _ref("ipam.ipaddress", "ip-m1"), "custom_fields": {"bgp_asn": 65101}},
        {"id": "d2", "name": "spine1", "role": "r-spine", "platform": "p-frr", "tenant": None,
         "location": "dc1", "primary_ip4": None, "custom_fields": {}},
        {"id": "d3", "name": "leaf1-h1", "role": "r-host", "platform": "p-linux",
         "tenant": "t-blue", "location": "dc1", "primary_ip4": None,
         "custom_fields": {"bgp_asn": None}},
        {"id": "dx", "name": "other", "role": "r-leaf", "platform": "p-frr", "tenant": None,
         "location": "dc2", "primary_ip4": None, "custom_fields": {}},
    ]
    interfaces: list[dict[str, Any]] = [
        {"id": "i1", "device": _ref("dcim.device", "d1"), "name": "swp51"},
        {"id": "i2", "device": "d2", "name": "swp1"}, {"id": "i3", "device": "d1", "name": "lo"},
        {"id": "i4", "device": "d3", "name": "eth1"}, {"id": "i5", "device": "d1", "name": "swp1"},
        {"id": "i9", "device": "dx", "name": "p1"}, {"id": "i6", "device": "d1", "name": "swp9"},
        {"id": "i7", "device": "d1", "name": "eth0", "mgmt_only": True},
        {"id": "i8", "device": "dx", "name": "p2"},
        {"id": "i10", "device": "d1", "name": "swp52"}, {"id": "i11", "device": "d2",
                                                         "name": "swp2"},
        {"id": "i12", "device": "d1", "name": "swp53"},
    ]
    port = {i["id"]: i for i in interfaces}

    def direct(cable: str, a: str, b: str) -> dict[str, Any]:
        """A cable between two interfaces, as both ports and the cable show it."""
        for near, far in ((a, b), (b, a)):
            port[near].update(cable=_ref("dcim.cable", cable),
                              cable_peer_type="dcim.interface",
                              cable_peer=_ref("dcim.interface", far),
                              connected_endpoint_type="dcim.interface",
                              connected_endpoint=_ref("dcim.interface", far))
        return {"id": cable, "termination_a_type": "dcim.interface", "termination_a_id": a,
                "termination_b_type": "dcim.interface", "termination_b_id": b}

    def patched(a: str, b: str, cables: tuple[str, str]) -> None:
        """Two ports whose path runs through patch panels (front ports at each end)."""
        for near, far, cable in ((a, b, cables[0]), (b, a, cables[1])):
            port[near].update(cable=_ref("dcim.cable", cable), cable_peer_type="dcim.frontport",
                              cable_peer=_ref("dcim.frontport", f"fp-{near}"),
                              connected_endpoint_type="dcim.interface",
                              connected_endpoint=_ref("dcim.interface", far))

    cables = [{**direct("c1", "i1", "i2"), "length": 3,
               "length_unit": {"value": "m", "label": "Meters"}},
              {**direct("c2", "i4", "i5"), "length": 10, "length_unit": "ft"},
              direct("c4", "i6", "i9"),  # to a device the filters do not select
              direct("c5", "i7", "i8")]  # a management cable
    patched("i10", "i11", ("c6", "c8"))
    # a path that stops at a patch panel with nothing beyond
    port["i12"].update(cable=_ref("dcim.cable", "c9"), cable_peer_type="dcim.frontport",
                       cable_peer=_ref("dcim.frontport", "fp-x"), connected_endpoint=None,
                       connected_endpoint_type=None)

    return {
        "extras/roles/": [{"id": "r-leaf", "name": "leaf"}, {"id": "r-spine", "name": "spine"},
                          {"id": "r-host", "name": "gpu-host"}],
        "dcim/platforms/": [{"id": "p-frr", "name": "FRR", "network_driver": "frr"},
                            {"id": "p-linux", "name": "linux", "network_driver": ""}],
        "tenancy/tenants/": [{"id": "t-blue", "name": "blue"}],
        "dcim/devices/": devices, "dcim/interfaces/": interfaces, "dcim/cables/": cables,
        "ipam/ip-addresses/": [{"id": "ip-lo", "address": "10.0.0.17/32"},
                               {"id": "ip-m1", "address": "192.0.2.13/24"}],
        "ipam/ip-address-to-interface/": [{"id": "a1", "ip_address": "ip-lo",
                                           "interface": "i3"}],
    }


def test_devices_cables_loopbacks_asns_and_tenants_are_read_by_id() -> None:
    with serving(ApiDouble(_objects())) as double, Nautobot(double.url, TOKEN) as api:
        snap = read_snapshot(api, {"location": "dc1"}, ["lo"])
    assert [(d.name, d.role, d.platform, d.loopback, d.asn, d.tenant, d.primary_ip4)
            for d in snap.devices] == [
        ("leaf1", "leaf", "frr", "10.0.0.17", 65101, None, "192.0.2.13"),
        ("leaf1-h1", "gpu-host", "linux", None, None, "blue", None),
        ("spine1", "spine", "frr", None, None, None, None)]
    assert [(c.ref.label, c.ref.id, c.outside, c.length_m) for c in snap.cables] == [
        ("leaf1-h1:eth1 - leaf1:swp1", "c2", [], 3.048),  # the cable's own a and b
        ("leaf1:swp51 - spine1:swp1", "c1", [], 3.0),
        ("leaf1:swp52 - spine1:swp2 (patched)", "c6", [], None),  # named by its first cable
        ("leaf1:swp53 - dcim.frontport", "c9", ["(no interface)"], None),
        ("leaf1:swp9 - other:p1", "c4", ["other"], None)]
    assert [(c.a_device, c.a_port, c.b_device, c.b_port) for c in snap.cables][2] == (
        "leaf1", "swp52", "spine1", "swp2")
    assert str(snap.devices[0].ref) == "dcim.device leaf1 (d1)"
    assert [t.name for t in snap.tenants] == ["blue"]
    assert snap.source == f"{double.url}/api/"
    # one read per listing; the interfaces only of the selected devices, never one by one;
    # the far end of the cable to nowhere (interface, then device) and the direct cables
    # (their ends' order and length) read by id
    paths = [path.split("?")[0] for _, path in double.requests]
    assert sorted(paths) == sorted(f"/api/{e}" for e in (
        "extras/roles/", "dcim/platforms/", "tenancy/tenants/", "dcim/devices/",
        "dcim/interfaces/", "ipam/ip-address-to-interface/", "ipam/ip-addresses/",
        "dcim/cables/", "dcim/interfaces/", "dcim/devices/"))
    interfaces = next(p for _, p in double.requests if p.startswith("/api/dcim/interfaces/"))
    assert "device_id=d1" in interfaces and "device_id=dx" not in interfaces
    assert ("GET", "/api/dcim/interfaces/?limit=1000&id=i9") in double.requests
    assert ("GET", "/api/dcim/cables/?limit=1000&id=c1&id=c2&id=c4") in double.requests

def test_a_reply_without_the_documented_fields_is_one_line() -> None:
    objects = _objects()
    del objects["dcim/devices/"][0]["id"]
    with serving(ApiDouble(objects)) as double, Nautobot(double.url, TOKEN) as api:
        try:
            read_snapshot(api, {}, ["lo"])
        except Exception as exc:  # noqa: BLE001 (the assertion names the type)
            assert type(exc).__name__ == "ApiError"
            assert str(exc) == f"{double.url}/api/: fabric read: unexpected reply " \
                               "(KeyError: 'id')"
        else:
            raise AssertionError("a device without id was read")
