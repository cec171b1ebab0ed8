"""The source of truth of an AI back-end (intents/rail: super-spines, pods, two planes, GPU
servers with a NIC per rail, a storage server cabled by hand): its own snapshot imports to
identical files; an intent that lost SUs, servers and a profile gets them back from the
source and plans the same; a NIC on the other rail is named by check and audit with server,
NIC, leaf and port, and refused by import (a generated server) or imported NIC by NIC (a
server cabled by hand); `sot sync --create` writes devices, NICs and cables, once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import Endpoint, FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.sot.audit import sot_findings
from flatfab.sot.snapshot import Snapshot, SotCable
from flatfab.sot.workflow import run_check, run_import
from tests.doubles.nautobot import TOKEN, ApiDouble, serving
from tests.support.flatfab import flatfab
from tests.support.paths import ROOT
from tests.support.sot_snapshot import CLOS_MAPPING, ref, snapshot_of

RAIL = plan(load_intent(ROOT / "intents" / "rail", known_platforms=PLATFORMS))


@pytest.fixture
def rail(tmp_path: Path) -> Path:
    return Path(shutil.copytree(ROOT / "intents" / "rail", tmp_path / "rail"))


def _plan(intent: Path) -> FabricState:
    return plan(load_intent(intent, known_platforms=PLATFORMS))


def _moved(snapshot: Snapshot, device: str, port: str, to: tuple[str, str]) -> Snapshot:
    """The cable on device:port re-cabled at its other end to `to` (device, port)."""
    def move(cable: SotCable) -> SotCable:
        if (cable.a_device, cable.a_port) == (device, port):
            return cable.model_copy(update={"b_device": to[0], "b_port": to[1]})
        if (cable.b_device, cable.b_port) == (device, port):
            return cable.model_copy(update={"a_device": to[0], "a_port": to[1]})
        return cable

    return snapshot.model_copy(update={"cables": [move(c) for c in snapshot.cables]})


def _swapped(snapshot: Snapshot, server: str, first: str, second: str) -> Snapshot:
    """Two NICs of a server swapped between their leaf ports."""
    def swap(cable: SotCable) -> SotCable:
        for end in ("a", "b"):
            if getattr(cable, f"{end}_device") == server:
                nic = getattr(cable, f"{end}_port")
                other = {first: second, second: first}.get(nic, nic)
                return cable.model_copy(update={f"{end}_port": other})
        return cable

    return snapshot.model_copy(update={"cables": [swap(c) for c in snapshot.cables]})


def test_the_rail_fabrics_own_snapshot_imports_to_identical_files(rail: Path) -> None:
    before = {p.name: p.read_bytes() for p in rail.iterdir()}
    report = run_import(snapshot_of(RAIL), rail, CLOS_MAPPING, write=True)
    assert (report.changed, report.diff, report.notes) == ([], "", [])
    assert {p.name: p.read_bytes() for p in rail.iterdir()} == before
    assert run_check(snapshot_of(RAIL), rail, CLOS_MAPPING) == []


def test_an_intent_that_lost_sus_and_servers_is_inferred_back_from_the_source(
        rail: Path) -> None:
    """One SU of one server, no storage server or profile: the source's switches give the
    SU count, its servers the servers per SU, the storage server's NICs a profile, its
    cables the NIC-by-NIC cabling; the result plans as intents/rail does."""
    fabric = (rail / "fabric.yaml").read_text()
    (rail / "fabric.yaml").write_text(fabric.replace("  count: 2\n  servers: 2\n",
                                                     "  count: 1\n  servers: 1\n"))
    hosts = (rail / "hosts.yaml").read_text()
    hosts = hosts[:hosts.index("servers:")].replace(
        "  storage: {role: storage, nics: {names: [eth1, eth2]}}\n", "")
    (rail / "hosts.yaml").write_text(hosts)
    tenants = (rail / "tenants.yaml").read_text()
    (rail / "tenants.yaml").write_text(tenants.replace(', "store*"', ""))
    assert _plan(rail) != RAIL
    report = run_import(snapshot_of(RAIL), rail, CLOS_MAPPING, write=True)
    assert report.changed == ["fabric.yaml", "hosts.yaml", "tenants.yaml"]
    assert "-  count: 1\n-  servers: 1\n+  count: 2\n+  servers: 2\n" in report.diff
    assert "+  storage-2nic: {role: storage, nics: {names: [eth1, eth2]}}\n" in report.diff
    assert ("+  - name: store1\n+    profile: storage-2nic\n+    cabling:\n"
            "+      - {leaf: su1-leaf1, port: 3}\n+      - {leaf: su1-leaf3, port: 3}\n"
            in report.diff)
    assert _plan(rail) == RAIL
    assert run_check(snapshot_of(RAIL), rail, CLOS_MAPPING) == []
    assert run_import(snapshot_of(RAIL), rail, CLOS_MAPPING, write=True).changed == []


def test_a_nic_on_the_other_rail_is_named_by_check_and_refused_by_import(rail: Path) -> None:
    snap = _swapped(snapshot_of(RAIL), "su1-s1", "eth1", "eth2")
    found = {(d.device, d.subject, d.message) for d in run_check(snap, rail, CLOS_MAPPING)}
    assert ("su1-s1", "dcim.cable su1-s1:eth2-su1-leaf2:swp1 (id-su1-s1:eth2-su1-leaf2:swp1)",
            "server su1-s1 NIC eth1 is cabled to su1-leaf2:swp1 (rail 2); the plan puts it "
            "on rail 1, su1-leaf1:swp1 and plans su1-leaf2:swp1 for su1-s1 NIC eth2") in found
    assert ("su1-s1", "dcim.cable su1-s1:eth1-su1-leaf1:swp1 (id-su1-s1:eth1-su1-leaf1:swp1)",
            "server su1-s1 NIC eth2 is cabled to su1-leaf1:swp1 (rail 1); the plan puts it "
            "on rail 2, su1-leaf2:swp1 and plans su1-leaf1:swp1 for su1-s1 NIC eth1") in found
    before = {p.name: p.read_bytes() for p in rail.iterdir()}
    with pytest.raises(InputError) as caught:
        run_import(snap, rail, CLOS_MAPPING, write=True)
    assert [(p.file, p.path, p.reason) for p in caught.value.problems] == [(
        "https://sot.test/api/",
        "dcim.cable su1-s1:eth2-su1-leaf2:swp1 (id-su1-s1:eth2-su1-leaf2:swp1)",
        "su1-s1 is server 1 of SU 1, which the intent generates with NIC eth1 on rail 1 "
        "(su1-leaf1, port 1); the source cables eth1 to su1-leaf2:swp1 (rail 2): the intent "
        "cannot say this")]
    assert {p.name: p.read_bytes() for p in rail.iterdir()} == before


def test_a_server_cabled_by_hand_is_imported_nic_by_nic(rail: Path) -> None:
    """store1's second NIC moved from SU 1's rail-3 leaf to its rail-4 leaf: check names it,
    import rewrites its cabling (and nothing else), then both agree."""
    snap = _moved(snapshot_of(RAIL), "store1", "eth2", ("su1-leaf4", "swp3"))
    found = [str(d) for d in run_check(snap, rail, CLOS_MAPPING)]
    assert ("store1: dcim.cable store1:eth2-su1-leaf3:swp3 (id-store1:eth2-su1-leaf3:swp3): "
            "server store1 NIC eth2 is cabled to su1-leaf4:swp3 (rail 4); the plan puts it on "
            "su1-leaf3:swp3") in found, found
    report = run_import(snap, rail, CLOS_MAPPING, write=True)
    assert report.changed == ["hosts.yaml"]
    assert ("-    cabling: [{leaf: su1-leaf1, port: 3}, {leaf: su1-leaf3, port: 3}]\n"
            "+    cabling:\n+      - {leaf: su1-leaf1, port: 3}\n"
            "+      - {leaf: su1-leaf4, port: 3}\n") in report.diff
    assert run_check(snap, rail, CLOS_MAPPING) == []


def test_a_server_in_another_su_slot_is_placed_there(rail: Path) -> None:
    """A GPU server cabled to every rail leaf of SU 2 at port 3, but named in no SU's pattern:
    a `servers:` entry with its SU and port."""
    snap = snapshot_of(RAIL)
    donor = [c for c in snap.cables if "su2-s2" in (c.a_device, c.b_device)]
    extra = next(d for d in snap.devices if d.name == "su2-s2").model_copy(
        update={"name": "gpu-x", "ref": ref("dcim.device", "gpu-x")})
    cables = [c.model_copy(update={
        "ref": ref("dcim.cable", f"gpu-x-{i}"),
        **({"a_device": "gpu-x", "b_port": "swp3"} if c.a_device == "su2-s2"
           else {"b_device": "gpu-x", "a_port": "swp3"})}) for i, c in enumerate(donor)]
    snap = snap.model_copy(update={"devices": [*snap.devices, extra],
                                   "cables": [*snap.cables, *cables]})
    report = run_import(snap, rail, CLOS_MAPPING, write=True)
    assert report.changed == ["hosts.yaml", "tenants.yaml"]
    assert "+  - {name: gpu-x, profile: gpu, su: 2, port: 3}\n" in report.diff
    state = _plan(rail)
    assert {i.peer.device for i in state.devices["gpu-x"].interfaces.values()
            if i.peer is not None} == {"su2-leaf1", "su2-leaf2", "su2-leaf3", "su2-leaf4"}
    assert run_check(snap, rail, CLOS_MAPPING) == []


def test_what_a_generated_fabric_cannot_say_is_refused_naming_device_and_cable(
        rail: Path) -> None:
    snap = snapshot_of(RAIL)
    odd = next(d for d in snap.devices if d.name == "su2-leaf4").model_copy(update={
        "name": "leaf-x", "ref": ref("dcim.device", "leaf-x"), "su": None, "rail": None})
    with pytest.raises(InputError) as caught:
        run_import(snap.model_copy(update={"devices": [*snap.devices, odd]}), rail,
                   CLOS_MAPPING, write=False)
    assert [(p.path, p.reason) for p in caught.value.problems] == [(
        "dcim.device leaf-x (id-leaf-x)",
        "the intent generates scalable_units named 'su{su}-leaf{leaf}' (fabric.yaml "
        "scalable_units); 'leaf-x' is not such a name and has no custom field saying where "
        "it sits: the intent cannot name it")]
    # a super-spine cabled straight to a leaf
    cable = SotCable(ref=ref("dcim.cable", "x"), a_device="su1-leaf1", a_port="swp60",
                     b_device="p1-ss1", b_port="swp60")
    with pytest.raises(InputError) as caught:
        run_import(snap.model_copy(update={"cables": [*snap.cables, cable]}), rail,
                   CLOS_MAPPING, write=False)
    assert [(p.path, p.reason) for p in caught.value.problems] == [(
        "dcim.cable x (id-x)", "joins su1-leaf1:swp60 (leaf) and p1-ss1:swp60 (superspine); "
        "flatfab cables super-spine to spine, spine to leaf and leaf to host (a NIC) only")]
    # a switch in the wrong pod (its custom field): check names it, import refuses it
    moved = snap.model_copy(update={"devices": [
        d.model_copy(update={"pod": 2}) if d.name == "su1-leaf1" else d
        for d in snap.devices]})
    assert "su1-leaf1: dcim.device su1-leaf1 (id-su1-leaf1): pod 2; the plan puts it in " \
           "pod 1" in [str(d) for d in run_check(moved, rail, CLOS_MAPPING)]
    with pytest.raises(InputError) as caught:
        run_import(moved, rail, CLOS_MAPPING, write=False)
    assert any(p.path == "dcim.device su1-leaf1 (id-su1-leaf1)" and "pod 2" in p.reason
               for p in caught.value.problems), caught.value.problems


def test_a_storage_server_recorded_as_gpu_is_named() -> None:
    snap = snapshot_of(RAIL)
    snap = snap.model_copy(update={"devices": [
        d.model_copy(update={"role": "gpu-host"}) if d.name == "store1" else d
        for d in snap.devices]})
    found = [str(d) for d in run_check(snap, ROOT / "intents" / "rail", CLOS_MAPPING)]
    assert found == ["store1: dcim.device store1 (id-store1): role 'gpu-host' (host); the "
                     "intent has a storage server"]


def test_audit_names_two_nics_swapped_between_rails_by_server_nic_leaf_and_port() -> None:
    observed = RAIL.model_copy(deep=True)
    observed.devices["su1-leaf1"].interfaces["swp1"].peer = Endpoint(device="su1-s1",
                                                                     port="eth2")
    observed.devices["su1-leaf2"].interfaces["swp1"].peer = Endpoint(device="su1-s1",
                                                                     port="eth1")
    assert sot_findings(snapshot_of(RAIL), RAIL, CLOS_MAPPING) == []
    found = [(f.device, f.port, f.message)
             for f in sot_findings(snapshot_of(RAIL), observed, CLOS_MAPPING)]
    assert found == [
        ("su1-leaf1", "swp1", "su1-leaf1:swp1 (rail 1): LLDP sees server su1-s1 NIC eth2, "
         "which the source of truth cables to su1-leaf2:swp1 (rail 2); dcim.cable "
         "su1-s1:eth1-su1-leaf1:swp1 (id-su1-s1:eth1-su1-leaf1:swp1) cables server su1-s1 "
         "NIC eth1 here"),
        ("su1-leaf2", "swp1", "su1-leaf2:swp1 (rail 2): LLDP sees server su1-s1 NIC eth1, "
         "which the source of truth cables to su1-leaf1:swp1 (rail 1); dcim.cable "
         "su1-s1:eth2-su1-leaf2:swp1 (id-su1-s1:eth2-su1-leaf2:swp1) cables server su1-s1 "
         "NIC eth2 here")]


# -- sot sync --create against the API double ------------------------------------------------


def _empty_nautobot() -> dict[str, list[dict[str, Any]]]:
    """A migrated Nautobot with the fabric's location and nothing else."""
    return {
        "extras/statuses/": [
            {"id": "s-active", "name": "Active", "content_types": ["dcim.device"]},
            {"id": "s-connected", "name": "Connected", "content_types": ["dcim.cable"]}],
        "ipam/namespaces/": [{"id": "n-global", "name": "Global"}],
        # Nautobot filters a location by name or id; the double by id: the same here
        "dcim/locations/": [{"id": "rail", "name": "rail"}],
    }


def _project(root: Path, url: str) -> Path:
    shutil.copytree(ROOT / "intents" / "rail", root / "intents" / "rail")
    (root / "inventory" / "rail").mkdir(parents=True)
    (root / "inventory" / "rail" / "source.yaml").write_text(
        f"nautobot:\n  url: {url}\n  token_env: FFS_TOKEN\n  filters: {{location: rail}}\n")
    return root


def _sync(root: Path, *args: str) -> Any:
    run = flatfab("--root", str(root), "--fabric", "rail", "sot", "sync", "--format", "json",
                  *args, env={"FFS_TOKEN": TOKEN})
    assert run.code == 0, run.stderr
    return json.loads(run.stdout)


def test_sync_create_writes_the_rail_fabric_its_nics_and_cables_once(tmp_path: Path) -> None:
    with serving(ApiDouble(_empty_nautobot())) as double:
        root = _project(tmp_path, double.url)
        plain = _sync(root)  # without --create: the devices are named and skipped
        assert "device p1-ss1: not in Nautobot" in plain["skipped"]
        dry = _sync(root, "--create")
        assert not [m for m, _ in double.requests if m != "GET"]  # a dry run sends no write
        wrote = _sync(root, "--create", "--write")
        assert sorted(wrote["changes"]) == sorted(dry["changes"]) and wrote["skipped"] == []
        objects = double.objects
        again = _sync(root, "--create", "--write")
    changes = set(dry["changes"])
    assert {"create roles: super-spine", "create roles: storage-host",
            "create custom fields: fabric_rail", "create devices: p1-ss1",
            "create devices: store1", "create interfaces: su1-s1:eth4",
            "create cables: su1-s1:eth4--su1-leaf4:swp1",
            "create cables: store1:eth2--su1-leaf3:swp3"} <= changes, sorted(changes)
    assert not [c for c in changes if "(new" in c]
    assert again["changes"] == []
    devices = {d["name"]: d for d in objects["dcim/devices/"]}
    assert set(devices) == set(RAIL.devices)
    roles = {r["id"]: r["name"] for r in objects["extras/roles/"]}
    assert {name: roles[d["role"]] for name, d in devices.items()
            if name in ("p1-ss1", "p1-pod1-spine1", "su1-leaf3", "su1-s1", "store1")} == {
        "p1-ss1": "super-spine", "p1-pod1-spine1": "spine", "su1-leaf3": "leaf",
        "su1-s1": "gpu-host", "store1": "storage-host"}
    assert devices["su2-leaf3"]["custom_fields"] == {
        "bgp_asn": RAIL.devices["su2-leaf3"].asn, "fabric_plane": 2, "fabric_pod": 2,
        "fabric_su": 2, "fabric_rail": 3}
    # a cable per NIC: every planned physical link, once
    physical = [link for link in RAIL.links if link.parent is None]
    assert len(objects["dcim/cables/"]) == len(physical)
    nics = [i for i in objects["dcim/interfaces/"] if i["device"] == devices["su1-s1"]["id"]]
    assert sorted(i["name"] for i in nics) == ["eth1", "eth2", "eth3", "eth4"]
    assert all(i.get("cable") for i in nics)


def _variant(tmp_path: Path, *edits: tuple[str, str, str]) -> Path:
    """intents/rail/ copied, with (file, old, new) replacements (old must be there)."""
    target = Path(shutil.copytree(ROOT / "intents" / "rail", tmp_path / "rail"))
    for name, old, new in edits:
        text = (target / name).read_text()
        assert old in text, (name, old)
        (target / name).write_text(text.replace(old, new, 1))
    return target


STORE1 = ("hosts.yaml", "servers:\n  - name: store1\n    profile: storage\n"
          "    cabling: [{leaf: su1-leaf1, port: 3}, {leaf: su1-leaf3, port: 3}]\n", "")
NO_STORE = ("tenants.yaml", ', "store*"]', "]")
RACK = [("fabric.yaml", "  attach: rail\n  rails: 4\n", "  attach: rack\n  leaves: 1\n"),
        ("fabric.yaml", "non_blocking: true\n", ""),
        ("fabric.yaml", "planes:\n  count: 2\n  max: 2\n  rails: {1: [1, 2], 2: [3, 4]}\n", ""),
        ("fabric.yaml", 'spine_name: "p{plane}-pod{pod}-spine{spine}"',
         'spine_name: "pod{pod}-spine{spine}"'),
        ("fabric.yaml", 'name: "p{plane}-ss{spine}"', 'name: "ss{spine}"'), STORE1, NO_STORE]


@pytest.mark.parametrize("edits", [
    pytest.param(RACK, id="rack"),
    pytest.param([("fabric.yaml", "non_blocking: true\n", ""),
                  ("fabric.yaml", "  max_spines: 20 ", "  max_spines: 16 "),
                  ("fabric.yaml", "pods:", "unused_pods:"),
                  ("fabric.yaml", "superspines:", "unused_superspines:"),
                  ("fabric.yaml", "planes:", "unused_planes:")], id="three-stage"),
])
def test_other_generated_forms_import_unchanged_and_grow_back(
        tmp_path: Path, edits: list[tuple[str, str, str]]) -> None:
    """Rack attachment (every NIC of a server on its rack leaf) and 3-stage SUs under listed
    spines: their own snapshot changes no file; an SU fewer in the intent comes back."""
    intent = _variant(tmp_path, *edits)
    if "unused_pods:" in (intent / "fabric.yaml").read_text():  # 3 stages: cut the blocks
        text = (intent / "fabric.yaml").read_text()
        head = text.split("unused_planes:")[0]
        tail = text.split("ports:")[1]
        (intent / "fabric.yaml").write_text(
            head + "spines:\n  - name: spine1\n  - name: spine2\nports:" + tail)
    state = _plan(intent)
    snap = snapshot_of(state)
    before = {p.name: p.read_bytes() for p in intent.iterdir()}
    assert run_import(snap, intent, CLOS_MAPPING, write=True).changed == []
    assert {p.name: p.read_bytes() for p in intent.iterdir()} == before
    text = (intent / "fabric.yaml").read_text()
    (intent / "fabric.yaml").write_text(text.replace("  count: 2\n  servers: 2\n",
                                                     "  count: 1\n  servers: 2\n"))
    report = run_import(snap, intent, CLOS_MAPPING, write=True)
    assert report.changed == ["fabric.yaml"], report.diff
    assert _plan(intent) == state


def test_a_one_nic_host_on_a_rail_leaf_stays_one_and_follows_its_cable(tmp_path: Path) -> None:
    intent = _variant(tmp_path, ("tenants.yaml", '"store*"]', '"store*", "mon*"]'))
    with (intent / "hosts.yaml").open("a") as hosts:
        hosts.write("leaves:\n  su2-leaf1:\n    hosts:\n      - {name: mon1, port: 5}\n")
    state = _plan(intent)
    snap = snapshot_of(state)
    assert run_import(snap, intent, CLOS_MAPPING, write=True).changed == []
    moved = _moved(snap, "mon1", "eth1", ("su2-leaf1", "swp6"))
    report = run_import(moved, intent, CLOS_MAPPING, write=True)
    assert report.changed == ["hosts.yaml"]
    assert "-      - {name: mon1, port: 5}\n+      - {name: mon1, port: 6}\n" in report.diff
    assert run_check(moved, intent, CLOS_MAPPING) == []
    assert _plan(intent).devices["mon1"].server_role is None


def test_a_plane_grown_in_the_source_is_inferred_with_its_rails_and_nics(
        tmp_path: Path) -> None:
    """Six NICs on six rails in three planes in the source (room reserved in the intent):
    the rail count, the planes' rails, the SU profile's NIC count come back from it."""
    reserved = (("fabric.yaml", "  max: 2\n  rails:", "  max: 4\n  rails:"),
                ("fabric.yaml", "  max_spines: 20 ", "  max_spines: 40 "))
    grown = _plan(_variant(tmp_path / "grown", *reserved,
                           ("fabric.yaml", "  rails: 4\n", "  rails: 6\n"),
                           ("fabric.yaml", "  count: 2\n  max: 4\n", "  count: 3\n  max: 4\n"),
                           ("fabric.yaml", "rails: {1: [1, 2], 2: [3, 4]}",
                            "rails: {1: [1, 2], 2: [3, 4], 3: [5, 6]}"),
                           ("hosts.yaml", "count: 4, name:", "count: 6, name:")))
    intent = _variant(tmp_path / "base", *reserved)
    report = run_import(snapshot_of(grown), intent, CLOS_MAPPING, write=True)
    assert report.changed == ["fabric.yaml", "hosts.yaml"], report.diff
    assert "+  gpu: {role: gpu, nics: {count: 6, name: \"eth{n}\"}}\n" in report.diff
    assert "+  rails: {1: [1, 2], 2: [3, 4], 3: [5, 6]}\n" in report.diff
    assert _plan(intent) == grown


def test_a_file_another_tool_wrote_stays_as_it_is_when_its_data_does(rail: Path) -> None:
    (rail / "tenants.yaml").write_text(
        "tenants:\n- name: train\n  vrf_id: 100\n  prefixes:\n  - 10.100.0.0/16\n"
        "  members:\n  - su*\n  - store*\n")
    before = (rail / "tenants.yaml").read_bytes()
    assert run_import(snapshot_of(RAIL), rail, CLOS_MAPPING, write=True).changed == []
    assert (rail / "tenants.yaml").read_bytes() == before
