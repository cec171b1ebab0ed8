"""The rail fabric (intents/rail: super-spines, pods, two planes, GPU servers with a NIC per
rail, a storage server cabled by hand) against a real Nautobot: `sot sync --create` writes
it (roles, each switch's plane/pod/SU/rail, every NIC with its own cable) once; import gives
back an intent that plans the same, also into an intent that lost SUs, servers and a
profile; a NIC moved to the other rail in Nautobot is named by `sot check` (server, NIC,
leaf, port, rails) and refused by import naming server and cable; a sync puts the planned
cables back.

Runs after test_zz_cli.py, in its own location `rail`."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.flatfab import Run, flatfab
from tests.support.nautobot_service import Service, api_of, one
from tests.support.paths import ROOT

pytestmark = pytest.mark.nautobot
FABRIC = "rail"


def _id(value: Any) -> str:
    return str(value["id"] if isinstance(value, dict) else value)


@pytest.fixture(scope="module")
def location(nautobot: Service) -> Service:
    """The fabric's location, as an operator has it before the first sync."""
    with api_of(nautobot) as api:
        active = one(api, "extras/statuses/", name="Active")["id"]
        kinds = api.fetch("dcim/location-types/", name="Site")
        kind = kinds[0] if kinds else api.request("POST", "dcim/location-types/", body={
            "name": "Site", "content_types": ["dcim.device"]})
        if "dcim.device" not in kind.get("content_types", ["dcim.device"]):
            api.request("PATCH", f"dcim/location-types/{kind['id']}/", body={
                "content_types": sorted({*kind["content_types"], "dcim.device"})})
        if not api.fetch("dcim/locations/", name=FABRIC):
            api.request("POST", "dcim/locations/", body={
                "name": FABRIC, "location_type": kind["id"], "status": active})
    return nautobot


def _project(root: Path, service: Service) -> Path:
    shutil.copytree(ROOT / "intents" / FABRIC, root / "intents" / FABRIC)
    inventory = root / "inventory" / FABRIC
    inventory.mkdir(parents=True)
    (inventory / "source.yaml").write_text(
        f"nautobot:\n  url: {service.url}/\n  token_env: FFR_NAUTOBOT_TOKEN\n"
        f"  filters: {{location: {FABRIC}}}\n")
    return root


def cli(root: Path, service: Service, *args: str) -> Run:
    return flatfab("--root", str(root), "--fabric", FABRIC, *args,
                   env={"FFR_NAUTOBOT_TOKEN": service.token})


def _plan(root: Path) -> Any:
    run = flatfab("--root", str(root), "--fabric", FABRIC, "plan", "--format", "json")
    assert run.code == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def synced(location: Service, tmp_path_factory: pytest.TempPathFactory) -> Service:
    root = _project(tmp_path_factory.mktemp("sync"), location)
    dry = cli(root, location, "sot", "sync", "--create", "--format", "json")
    assert dry.code == 0, dry.stderr
    planned = json.loads(dry.stdout)["changes"]
    started = time.monotonic()
    wrote = cli(root, location, "sot", "sync", "--create", "--write", "--format", "json")
    took = time.monotonic() - started
    assert wrote.code == 0, wrote.stderr
    assert sorted(json.loads(wrote.stdout)["changes"]) == sorted(planned)
    assert {"create roles: super-spine", "create roles: storage-host",
            "create devices: p2-ss2", "create interfaces: su2-s2:eth4",
            "create cables: su2-s2:eth4--su2-leaf4:swp2",
            "create cables: store1:eth2--su1-leaf3:swp3"} <= set(planned), planned
    again = cli(root, location, "sot", "sync", "--create", "--write", "--format", "json")
    assert again.code == 0 and json.loads(again.stdout)["changes"] == [], again.stdout
    print(f"\nsot sync --create --write of the rail fabric: {took:.2f} s "
          f"({len(planned)} changes)")
    return location


def test_sync_writes_roles_positions_and_a_cable_per_nic(synced: Service) -> None:
    with api_of(synced) as api:
        leaf = one(api, "dcim/devices/", name="su2-leaf3")
        assert {k: v for k, v in leaf["custom_fields"].items() if k.startswith("fabric_")} \
            == {"fabric_plane": 2, "fabric_pod": 2, "fabric_su": 2, "fabric_rail": 3}
        top = one(api, "dcim/devices/", name="p1-ss1")
        role = api.request("GET", f"extras/roles/{_id(top['role'])}/")
        assert role["name"] == "super-spine"
        nics = api.fetch("dcim/interfaces/", device="su1-s1",
                         name=["eth1", "eth2", "eth3", "eth4"])
        assert all(nic["cable"] for nic in nics) and len(nics) == 4
        far = {i["id"]: i for i in api.fetch("dcim/interfaces/", id=sorted(
            _id(nic["connected_endpoint"]) for nic in nics))}
        names = {d["id"]: d["name"] for d in api.fetch("dcim/devices/", id=sorted(
            {_id(i["device"]) for i in far.values()}))}
        assert sorted((nic["name"], names[_id(far[_id(nic["connected_endpoint"])]["device"])],
                       far[_id(nic["connected_endpoint"])]["name"]) for nic in nics) == [
            ("eth1", "su1-leaf1", "swp1"), ("eth2", "su1-leaf2", "swp1"),
            ("eth3", "su1-leaf3", "swp1"), ("eth4", "su1-leaf4", "swp1")]


def test_import_plans_the_same_and_check_agrees(synced: Service, tmp_path: Path) -> None:
    root = _project(tmp_path, synced)
    before = {p.name: p.read_bytes() for p in (root / "intents" / FABRIC).iterdir()}
    started = time.monotonic()
    run = cli(root, synced, "sot", "import", "--write")
    took = time.monotonic() - started
    assert run.code == 0 and "no changes" in run.stderr, run.stdout + run.stderr
    assert {p.name: p.read_bytes() for p in (root / "intents" / FABRIC).iterdir()} == before
    assert _plan(root) == _plan(ROOT)
    check = cli(root, synced, "sot", "check", "--format", "json")
    assert check.code == 0 and json.loads(check.stdout)["agree"] is True, check.stdout
    print(f"\nsot import of the rail fabric: {took:.2f} s (CLI, incl. start-up)")


def test_an_intent_that_lost_sus_and_servers_is_imported_back_to_the_same_plan(
        synced: Service, tmp_path: Path) -> None:
    root = _project(tmp_path, synced)
    intent = root / "intents" / FABRIC
    fabric = (intent / "fabric.yaml").read_text()
    (intent / "fabric.yaml").write_text(fabric.replace("  count: 2\n  servers: 2\n",
                                                       "  count: 1\n  servers: 1\n"))
    hosts = (intent / "hosts.yaml").read_text()
    (intent / "hosts.yaml").write_text(hosts[:hosts.index("servers:")].replace(
        "  storage: {role: storage, nics: {names: [eth1, eth2]}}\n", ""))
    tenants = (intent / "tenants.yaml").read_text()
    (intent / "tenants.yaml").write_text(tenants.replace(', "store*"', ""))
    assert _plan(root) != _plan(ROOT)
    run = cli(root, synced, "sot", "import", "--write")
    assert run.code == 0, run.stderr
    assert "wrote fabric.yaml, hosts.yaml, tenants.yaml" in run.stderr, run.stderr
    assert _plan(root) == _plan(ROOT)
    assert cli(root, synced, "sot", "check").code == 0


def test_a_nic_moved_to_the_other_rail_is_named_by_check_and_refused_by_import(
        synced: Service, tmp_path: Path) -> None:
    """su1-s1's eth1 and eth2 swapped between their rail leaves (rail 1 and rail 2)."""
    root = _project(tmp_path, synced)
    with api_of(synced) as api:
        connected = one(api, "extras/statuses/", name="Connected")["id"]
        eth1 = one(api, "dcim/interfaces/", device="su1-s1", name="eth1")
        eth2 = one(api, "dcim/interfaces/", device="su1-s1", name="eth2")
        rail1 = one(api, "dcim/interfaces/", device="su1-leaf1", name="swp1")
        rail2 = one(api, "dcim/interfaces/", device="su1-leaf2", name="swp1")
        for nic in (eth1, eth2):
            api.request("DELETE", f"dcim/cables/{_id(nic['cable'])}/")
        made = [api.request("POST", "dcim/cables/", body={
            "termination_a_type": "dcim.interface", "termination_a_id": nic["id"],
            "termination_b_type": "dcim.interface", "termination_b_id": port["id"],
            "status": connected}) for nic, port in ((eth1, rail2), (eth2, rail1))]
    try:
        check = cli(root, synced, "sot", "check", "--format", "json")
        assert check.code == 1, check.stderr
        found = {(d["device"], d["object"], d["message"])
                 for d in json.loads(check.stdout)["disagreements"]}
        assert ("su1-s1", f"dcim.cable su1-s1:eth1 - su1-leaf2:swp1 ({made[0]['id']})",
                "server su1-s1 NIC eth1 is cabled to su1-leaf2:swp1 (rail 2); the plan puts "
                "it on rail 1, su1-leaf1:swp1 and plans su1-leaf2:swp1 for su1-s1 NIC eth2"
                ) in found, found
        assert ("su1-s1", f"dcim.cable su1-s1:eth2 - su1-leaf1:swp1 ({made[1]['id']})",
                "server su1-s1 NIC eth2 is cabled to su1-leaf1:swp1 (rail 1); the plan puts "
                "it on rail 2, su1-leaf2:swp1 and plans su1-leaf1:swp1 for su1-s1 NIC eth1"
                ) in found, found
        refused = cli(root, synced, "sot", "import", "--write")
        lines = [line for line in refused.stderr.splitlines() if line.strip()]
        assert refused.code == 2 and lines == [
            f"error: {synced.url}/api/: dcim.cable su1-s1:eth1 - su1-leaf2:swp1 "
            f"({made[0]['id']}): su1-s1 is server 1 of SU 1, which the intent generates with "
            "NIC eth1 on rail 1 (su1-leaf1, port 1); the source cables eth1 to su1-leaf2:swp1 "
            "(rail 2): the intent cannot say this"], refused.stderr
    finally:
        with api_of(synced) as api:
            for cable in made:
                api.request("DELETE", f"dcim/cables/{cable['id']}/")
    # the planned cables back, by a sync
    back = cli(root, synced, "sot", "sync", "--create", "--write", "--format", "json")
    assert back.code == 0, back.stderr
    assert sorted(json.loads(back.stdout)["changes"]) == [
        "create cables: su1-s1:eth1--su1-leaf1:swp1",
        "create cables: su1-s1:eth2--su1-leaf2:swp1"]
    assert cli(root, synced, "sot", "check").code == 0
