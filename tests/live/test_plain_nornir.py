"""A plain Nornir script over the inventory `flatfab lab up` writes: nothing of flatfab's.

InitNornir with SimpleInventory pointed at the lab's inventory files and nornir_napalm's
napalm_get, running every getter flatfab's drivers implement; each result is checked against
NAPALM's models (napalm.base.models, with NAPALM's own test helper) and against the plan:
LLDP neighbours are the planned cabling, every planned BGP session is up, every VRF is a
network instance.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from napalm.base import models
from napalm.base.test import helpers
from nornir import InitNornir
from nornir.core import Nornir
from nornir.core.task import AggregatedResult
from nornir_napalm.plugins.tasks import napalm_get

from flatfab.intent.loader import load_intent
from flatfab.plan.planner import plan
from tests.support.lab import Lab
from tests.support.paths import ROOT

pytestmark = pytest.mark.live

PLAN = plan(load_intent(ROOT / "intents" / "lab"))
GETTERS = {
    "frr": ["get_facts", "get_interfaces", "get_interfaces_ip", "get_network_instances",
            "get_bgp_neighbors", "get_lldp_neighbors", "get_config"],
    "linux_host": ["get_facts", "get_interfaces", "get_interfaces_ip", "get_config"],
}


@pytest.fixture(scope="module")
def nornir(lab: Lab) -> Iterator[Nornir]:
    rollout = lab.cli("rollout")  # BGP and LLDP need the fabric configured (a no-op if it is)
    assert rollout.code == 0, rollout.stdout + rollout.stderr
    runner = InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": 14}},
        inventory={"plugin": "SimpleInventory", "options": {
            "host_file": str(lab.inventory / "hosts.yaml"),
            "group_file": str(lab.inventory / "groups.yaml"),
            "defaults_file": str(lab.inventory / "defaults.yaml")}},
        logging={"enabled": False})
    try:
        yield runner
    finally:
        runner.close_connections()


def _get(nornir: Nornir, platform: str) -> dict[str, dict[str, Any]]:
    results: AggregatedResult = nornir.filter(platform=platform).run(
        task=napalm_get, getters=GETTERS[platform])
    failed = {name: str(r.exception or r[0].result)[-300:] for name, r in results.items()
              if r.failed}
    assert not failed, failed
    return {name: r[0].result for name, r in results.items()}


def _model(model: Any, data: dict[str, Any], where: str) -> None:
    assert helpers.test_model(model, data), f"{where}: {sorted(data)} is not {model.__name__}"


def _check_common(name: str, got: dict[str, Any]) -> None:
    for getter in GETTERS[PLAN.devices[name].platform]:
        assert got[getter], f"{name}: {getter} is empty"
    _model(models.FactsDict, got["get_facts"], f"{name} facts")
    assert got["get_facts"]["hostname"] == name
    for ifname, data in got["get_interfaces"].items():
        _model(models.InterfaceDict, data, f"{name} {ifname}")
    for ifname, families in got["get_interfaces_ip"].items():
        assert set(families) <= {"ipv4", "ipv6"}, (name, ifname)
        for addresses in families.values():
            for data in addresses.values():
                _model(models.InterfacesIPDictEntry, data, f"{name} {ifname}")
    _model(models.ConfigDict, got["get_config"], f"{name} config")
    assert got["get_config"]["running"] and got["get_config"]["candidate"] == ""
    for ifname in PLAN.devices[name].interfaces:
        if ifname != "lo":
            assert ifname in got["get_interfaces"], f"{name}: {ifname} missing"
            assert got["get_interfaces"][ifname]["is_up"], f"{name}: {ifname} is down"


def test_switch_getters_have_napalm_s_shape_and_the_plan(nornir: Nornir) -> None:
    switches = sorted(n for n, d in PLAN.devices.items() if d.platform == "frr")
    deadline = time.monotonic() + 60
    while True:  # sessions of a freshly rolled-out fabric may still be coming up
        seen = _get(nornir, "frr")
        down = [(n, vrf, peer) for n, got in seen.items()
                for vrf, data in got["get_bgp_neighbors"].items()
                for peer, info in data["peers"].items() if not info["is_up"]]
        if not down or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert sorted(seen) == switches
    assert down == []
    for name, got in seen.items():
        planned = PLAN.devices[name]
        _check_common(name, got)
        # BGP: NAPALM's PeerDict and AFDict, every planned session, in every VRF
        bgp = got["get_bgp_neighbors"]
        assert "global" in bgp
        for vrf, instance in planned.bgp.items():
            key = "global" if vrf == "default" else vrf
            assert isinstance(bgp[key]["router_id"], str) and bgp[key]["router_id"]
            assert set(bgp[key]["peers"]) == set(instance.peers), (name, vrf)
            for peer_key, info in bgp[key]["peers"].items():
                _model(models.PeerDict, info, f"{name} {vrf} {peer_key}")
                for family in info["address_family"].values():
                    _model(models.AFDict, family, f"{name} {vrf} {peer_key}")
                assert info["local_as"] == instance.asn
                assert info["remote_as"] == instance.peers[peer_key].remote_asn
        # network instances: the default and every planned VRF with its interfaces
        instances = got["get_network_instances"]
        assert set(instances) == {"default", *planned.vrfs}
        for vrf, instance_data in instances.items():
            _model(models.NetworkInstanceDict, instance_data, f"{name} {vrf}")
            _model(models.NetworkInstanceStateDict, instance_data["state"], f"{name} {vrf}")
            _model(models.NetworkInstanceInterfacesDict, instance_data["interfaces"],
                   f"{name} {vrf}")
        for ifname, iface in planned.interfaces.items():
            if ifname != "lo":
                assert ifname in instances[iface.vrf]["interfaces"]["interface"], (name, ifname)
        # LLDP: NAPALM's LLDPNeighborDict, and the plan's cabling between switches
        lldp = got["get_lldp_neighbors"]
        for ifname, neighbours in lldp.items():
            for neighbour in neighbours:
                _model(models.LLDPNeighborDict, neighbour, f"{name} {ifname}")
        for ifname, iface in planned.interfaces.items():
            if iface.peer is None or "." in ifname:
                continue
            want = [{"hostname": iface.peer.device, "port": iface.peer.port}]
            if PLAN.devices[iface.peer.device].platform == "frr":
                assert lldp.get(ifname) == want, (name, ifname)
            elif ifname in lldp:  # hosts run no lldpd in the lab; if one answers, it agrees
                assert lldp[ifname] == want, (name, ifname)
        assert set(lldp) <= set(planned.interfaces), (name, sorted(lldp))


def test_host_getters_have_napalm_s_shape_and_the_plan(nornir: Nornir) -> None:
    seen = _get(nornir, "linux_host")
    assert sorted(seen) == sorted(n for n, d in PLAN.devices.items()
                                  if d.platform == "linux_host")
    for name, got in seen.items():
        _check_common(name, got)
        for ifname, iface in PLAN.devices[name].interfaces.items():
            want = {a.split("/")[0] for a in iface.addresses}
            assert want <= set(got["get_interfaces_ip"].get(ifname, {}).get("ipv4", {})), (
                name, ifname)
