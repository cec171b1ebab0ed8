"""Reading Nautobot into a snapshot, on an API double shaped like pynautobot's: related
objects by id (never fetched one by one), loopbacks from interface assignments, the ASN
custom field, cables by interface terminations; API failures are one line naming the URL."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import requests
from pynautobot.core.query import RequestError

from tasks.sot.nautobot import SourceError, read_snapshot

URL = "http://127.0.0.1:58080/api/"


class _Record:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def serialize(self) -> dict[str, Any]:
        return dict(self.data)


class _Endpoint:
    def __init__(self, rows: list[dict[str, Any]], fail: Exception | None = None) -> None:
        self.rows, self.fail, self.filters = rows, fail, None

    def all(self) -> list[_Record]:
        if self.fail is not None:
            raise self.fail
        return [_Record(r) for r in self.rows]

    def filter(self, **filters: Any) -> list[_Record]:
        self.filters = filters
        return self.all()


def _api(fail: Exception | None = None) -> Any:
    devices = [
        {"id": "d1", "name": "leaf1", "role": "r-leaf", "platform": "p-frr", "tenant": None,
         "primary_ip4": "ip-m1", "custom_fields": {"bgp_asn": 65101}},
        {"id": "d2", "name": "spine1", "role": "r-spine", "platform": "p-frr", "tenant": None,
         "primary_ip4": None, "custom_fields": {}},
        {"id": "d3", "name": "leaf1-h1", "role": {"id": "r-host"}, "platform": "p-linux",
         "tenant": "t-blue", "primary_ip4": None, "custom_fields": {"bgp_asn": None}},
    ]
    interfaces = [
        {"id": "i1", "device": "d1", "name": "swp51"}, {"id": "i2", "device": "d2", "name": "swp1"},
        {"id": "i3", "device": "d1", "name": "lo"}, {"id": "i4", "device": "d3", "name": "eth1"},
        {"id": "i5", "device": "d1", "name": "swp1"}, {"id": "i9", "device": "dx", "name": "p1"},
    ]
    return SimpleNamespace(
        extras=SimpleNamespace(roles=_Endpoint([
            {"id": "r-leaf", "name": "leaf"}, {"id": "r-spine", "name": "spine"},
            {"id": "r-host", "name": "gpu-host"}], fail)),
        dcim=SimpleNamespace(
            platforms=_Endpoint([{"id": "p-frr", "name": "FRR", "network_driver": "frr"},
                                 {"id": "p-linux", "name": "linux", "network_driver": ""}]),
            devices=_Endpoint(devices), interfaces=_Endpoint(interfaces),
            cables=_Endpoint([
                {"id": "c1", "termination_a_type": "dcim.interface", "termination_a_id": "i1",
                 "termination_b_type": "dcim.interface", "termination_b_id": "i2"},
                {"id": "c2", "termination_a_type": "dcim.interface", "termination_a_id": "i4",
                 "termination_b_type": "dcim.interface", "termination_b_id": "i5"},
                {"id": "c3", "termination_a_type": "dcim.frontport", "termination_a_id": "f1",
                 "termination_b_type": "dcim.interface", "termination_b_id": "i1"}])),
        tenancy=SimpleNamespace(tenants=_Endpoint([{"id": "t-blue", "name": "blue"}])),
        ipam=SimpleNamespace(
            ip_addresses=_Endpoint([{"id": "ip-lo", "address": "10.0.0.17/32"},
                                    {"id": "ip-m1", "address": "192.0.2.13/24"}]),
            ip_address_to_interface=_Endpoint([{"ip_address": "ip-lo", "interface": "i3"}])))


def test_devices_cables_loopbacks_asns_and_tenants_are_read_by_id() -> None:
    api = _api()
    snap = read_snapshot(api, URL, {"location": "dc1"}, ["lo"])
    assert api.dcim.devices.filters == {"location": "dc1"}
    assert [(d.name, d.role, d.platform, d.loopback, d.asn, d.tenant, d.primary_ip4)
            for d in snap.devices] == [
        ("leaf1", "leaf", "frr", "10.0.0.17", 65101, None, "192.0.2.13"),
        ("leaf1-h1", "gpu-host", "linux", None, None, "blue", None),
        ("spine1", "spine", "frr", None, None, None, None)]
    assert [(c.ref.id, c.a_device, c.a_port, c.b_device, c.b_port) for c in snap.cables] == [
        ("c2", "leaf1-h1", "eth1", "leaf1", "swp1"), ("c1", "leaf1", "swp51", "spine1", "swp1")]
    assert str(snap.devices[0].ref) == "dcim.device leaf1 (d1)"
    assert [t.name for t in snap.tenants] == ["blue"]


@pytest.mark.parametrize(("fail", "reason"), [
    (RequestError(SimpleNamespace(status_code=403, reason="Forbidden", text="{}",
                                  json=lambda: {},
                                  url=URL, request=SimpleNamespace(body=None))),
     "the token is refused"),
    (requests.ConnectionError("refused"), "no answer (ConnectionError)"),
])
def test_an_api_that_fails_is_one_line_naming_the_url(fail: Exception, reason: str) -> None:
    with pytest.raises(SourceError) as caught:
        read_snapshot(_api(fail), URL, {}, ["lo"])
    [problem] = caught.value.problems
    assert str(problem) == f"{URL}: extras.roles: {reason}"
