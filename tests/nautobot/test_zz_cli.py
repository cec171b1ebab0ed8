"""flatfab against a real Nautobot: import of the seeded lab is the same plan as intents/lab
with no change to a file; a host recabled in Nautobot is named by `sot check` and imported
as a reviewable edit; bad data and a bad URL or token are one line naming the object or URL.

Runs after test_server.py (whose last test restarts the service empty): it seeds its own."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.flatfab import Run, flatfab
from tests.support.nautobot_service import Service, api_of, one, sot
from tests.support.paths import ROOT

pytestmark = pytest.mark.nautobot
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-")


@pytest.fixture(scope="module")
def seeded(nautobot: Service) -> Service:
    run = sot("seed", "--fabric", "lab", timeout=600)
    assert run.code == 0, run.stderr
    return nautobot


def project_of(root: Path, fabric: str, service: Service) -> Path:
    """A project root with the fabric's intent and a source.yaml pointing at the service."""
    shutil.copytree(ROOT / "intents" / fabric, root / "intents" / fabric)
    inventory = root / "inventory" / fabric
    inventory.mkdir(parents=True)
    (inventory / "source.yaml").write_text(
        f"nautobot:\n  url: {service.url}/\n  token_env: FFT_NAUTOBOT_TOKEN\n"
        f"  filters: {{location: {fabric}}}\n")
    return root


@pytest.fixture
def project(tmp_path: Path, seeded: Service) -> Path:
    return project_of(tmp_path, "lab", seeded)


def cli(project: Path, service: Service, *args: str, token: str | None = None) -> Run:
    return flatfab("--root", str(project), *args,
                   env={"FFT_NAUTOBOT_TOKEN": token if token is not None else service.token})


def _plan(root: Path) -> Any:
    run = flatfab("--root", str(root), "plan", "--format", "json")
    assert run.code == 0, run.stderr
    return json.loads(run.stdout)


def test_import_of_the_seeded_lab_is_the_same_plan_and_changes_no_file(
        project: Path, seeded: Service) -> None:
    before = {p.name: p.read_bytes() for p in (project / "intents" / "lab").iterdir()}
    started = time.monotonic()
    run = cli(project, seeded, "sot", "import", "--write")
    took = time.monotonic() - started
    assert run.code == 0, run.stderr
    assert "no changes: the intent already says what the source holds" in run.stderr
    assert {p.name: p.read_bytes() for p in (project / "intents" / "lab").iterdir()} == before
    assert _plan(project) == _plan(ROOT)
    check = cli(project, seeded, "sot", "check", "--format", "json")
    assert check.code == 0 and json.loads(check.stdout)["agree"] is True, check.stdout
    print(f"\nsot import of the lab fabric: {took:.2f} s (CLI, incl. start-up)")


def test_a_host_recabled_in_nautobot_is_named_and_imported_as_an_edit(
        project: Path, seeded: Service) -> None:
    with api_of(seeded) as api:
        nic = one(api, "dcim/interfaces/", device="leaf1-h1", name="eth1")
        old = one(api, "dcim/cables/", device="leaf1-h1")
        port1 = one(api, "dcim/interfaces/", device="leaf1", name="swp1")
        status = port1["status"]["id"] if isinstance(port1["status"], dict) else port1["status"]
        leaf = port1["device"]["id"] if isinstance(port1["device"], dict) else port1["device"]
        port3 = api.request("POST", "dcim/interfaces/", body={
            "device": leaf, "name": "swp3", "type": "100gbase-x-qsfp28", "status": status})
        api.request("DELETE", f"dcim/cables/{old['id']}/")
        new = api.request("POST", "dcim/cables/", body={
            "termination_a_type": "dcim.interface", "termination_a_id": nic["id"],
            "termination_b_type": "dcim.interface", "termination_b_id": port3["id"],
            "status": one(api, "extras/statuses/", name="Connected")["id"]})
    try:
        check = cli(project, seeded, "sot", "check", "--format", "json")
        assert check.code == 1, check.stderr
        found = {(d["device"], d["object"], d["message"])
                 for d in json.loads(check.stdout)["disagreements"]}
        assert ("leaf1", f"dcim.cable leaf1-h1:eth1 - leaf1:swp3 ({new['id']})",
                "cables leaf1:swp3 to leaf1-h1:eth1, which the plan does not; the plan cables "
                "leaf1-h1:eth1 to leaf1:swp1") in found
        dry = cli(project, seeded, "sot", "import")
        assert dry.code == 0, dry.stderr
        assert "+  leaf1:\n+    hosts:\n+      - {port: 2}\n+      - {name: leaf1-h1, port: 3}" \
            in dry.stdout, dry.stdout
        assert "would change hosts.yaml (--write to write)" in dry.stderr
        wrote = cli(project, seeded, "sot", "import", "--write")
        assert wrote.code == 0 and "wrote hosts.yaml" in wrote.stderr
        assert cli(project, seeded, "sot", "check").code == 0
        again = cli(project, seeded, "sot", "import", "--write")
        assert "no changes" in again.stderr
    finally:
        with api_of(seeded) as api:
            api.request("DELETE", f"dcim/cables/{new['id']}/")
            api.request("DELETE", f"dcim/interfaces/{port3['id']}/")
        assert sot("seed", "--fabric", "lab", timeout=600).code == 0  # the cable back


def _counts(service: Service) -> dict[str, int]:
    with api_of(service) as api:
        return {path: api.request("GET", path, params={"limit": 1})["count"]
                for path in ("dcim/devices/", "dcim/cables/", "dcim/interfaces/",
                             "ipam/vrfs/", "ipam/ip-addresses/")}


def test_sync_writes_what_the_planner_allocated_once_and_deletes_nothing(
        project: Path, seeded: Service) -> None:
    with api_of(seeded) as api:  # an ASN that differs: sync corrects it, the journal keeps it
        spine1 = one(api, "dcim/devices/", name="spine1")
        api.request("PATCH", f"dcim/devices/{spine1['id']}/",
                    body={"custom_fields": {"bgp_asn": 64999}})
    before = _counts(seeded)
    dry = cli(project, seeded, "sot", "sync", "--format", "json")
    assert dry.code == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert planned["written"] is False and planned["skipped"] == []
    # every change names its objects by name, also those that depend on new objects
    assert {"update devices: spine1 (custom_fields)", "create VRFs: blue",
            "create VRF assignments: blue on leaf1",
            "create VRF assignments: red on spine2",
            "create interfaces: leaf1:swp51.100"} <= set(planned["changes"]), planned
    assert not [c for c in planned["changes"] if "(new" in c or UUID.search(c)], planned
    assert _counts(seeded) == before  # a dry run sends no write
    started = time.monotonic()
    wrote = cli(project, seeded, "sot", "sync", "--write", "--format", "json")
    took = time.monotonic() - started
    assert wrote.code == 0, wrote.stderr
    # the same changes (a dry run names objects still to be created by placeholders)
    kinds = [c.split(":")[0] for c in planned["changes"]]
    assert [c.split(":")[0] for c in json.loads(wrote.stdout)["changes"]] == kinds
    after = _counts(seeded)
    # 2 VRFs; a sub-interface per VRF on each end of each of the 8 fabric links
    assert after["ipam/vrfs/"] == before["ipam/vrfs/"] + 2
    assert after["dcim/interfaces/"] == before["dcim/interfaces/"] + 2 * 2 * 8
    assert (after["dcim/devices/"], after["dcim/cables/"]) == (before["dcim/devices/"],
                                                               before["dcim/cables/"])
    with api_of(seeded) as api:
        sub = one(api, "dcim/interfaces/", device="leaf1", name="swp51.100")
        assert sub["parent_interface"] and sub["vrf"]
        assert [t["id"] if isinstance(t, dict) else t for t in sub["tags"]]
    # every write was journalled before it was sent; an update with what it replaced
    journal = min((project / ".flatfab" / "runs").iterdir())
    assert f"journal: {journal}" in wrote.stderr
    text = (journal / "events.jsonl").read_text()
    events = [json.loads(line) for line in text.splitlines()]
    sent = [e for e in events if e["event"] in ("nautobot.create", "nautobot.update")]
    assert sum(len(e.get("objects", e.get("changes", []))) for e in sent) == len(kinds)
    [update] = [e for e in sent if e["event"] == "nautobot.update"]
    assert update["before"] == [{"id": spine1["id"], "custom_fields": {"bgp_asn": 64999}}]
    assert events[-1]["event"] == "end" and seeded.token not in text
    again = cli(project, seeded, "sot", "sync", "--write", "--format", "json")
    assert json.loads(again.stdout)["changes"] == [], again.stdout
    assert _counts(seeded) == after
    print(f"\nsot sync --write of the lab fabric: {took:.2f} s "
          f"({len(planned['changes'])} changes)")


def _error_line(run: Run) -> str:
    assert run.code == 2, run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    return lines[0]


def test_a_refused_token_and_a_silent_url_are_one_line_naming_the_url(
        project: Path, seeded: Service) -> None:
    refused = _error_line(cli(project, seeded, "sot", "check", token="0" * 40))
    assert refused == (f"error: {seeded.url}/api/: extras/roles/: the token is refused "
                       "(HTTP 403)")
    wrote = cli(project, seeded, "sot", "sync", "--write", token="0" * 40)
    assert _error_line(wrote).endswith("the token is refused (HTTP 403)")
    source = project / "inventory" / "lab" / "source.yaml"
    source.write_text(source.read_text().replace(seeded.url, "http://127.0.0.1:9"))
    silent = _error_line(cli(project, seeded, "sot", "check"))
    assert silent == "error: http://127.0.0.1:9/api/: extras/roles/: no answer (Connection " \
                     "refused)"


def test_bad_data_in_nautobot_names_the_object(project: Path, seeded: Service) -> None:
    with api_of(seeded) as api:
        spine = one(api, "dcim/devices/", name="spine2")
        api.request("PATCH", f"dcim/devices/{spine['id']}/", body={"platform": None})
    try:
        line = _error_line(cli(project, seeded, "sot", "import"))
        assert line == (f"error: {seeded.url}/api/: dcim.device spine2 ({spine['id']}): has no "
                        "platform")
    finally:
        assert sot("seed", "--fabric", "lab", timeout=600).code == 0


def _id(value: Any) -> str:
    return str(value["id"] if isinstance(value, dict) else value)


def test_a_cable_to_nowhere_and_an_unmapped_role_name_the_cable(
        project: Path, seeded: Service) -> None:
    """A leaf port cabled to a storage box in another location, then the box moved into the
    fabric's location with a role flatfab does not map: one line naming the cable, each."""
    with api_of(seeded) as api:
        leaf = one(api, "dcim/devices/", name="leaf1")
        lab = one(api, "dcim/locations/", name="lab")
        active = one(api, "extras/statuses/", name="Active")["id"]
        elsewhere = api.request("POST", "dcim/locations/", body={
            "name": "elsewhere", "location_type": _id(lab["location_type"]), "status": active})
        role = api.request("POST", "extras/roles/", body={
            "name": "storage", "color": "795548", "content_types": ["dcim.device"]})
        box = api.request("POST", "dcim/devices/", body={
            "name": "storage1", "location": elsewhere["id"], "status": active,
            "role": role["id"], "device_type": _id(leaf["device_type"])})
        port = api.request("POST", "dcim/interfaces/", body={
            "device": box["id"], "name": "p1", "type": "100gbase-x-qsfp28", "status": active})
        swp9 = api.request("POST", "dcim/interfaces/", body={
            "device": leaf["id"], "name": "swp9", "type": "100gbase-x-qsfp28", "status": active})
        cable = api.request("POST", "dcim/cables/", body={
            "termination_a_type": "dcim.interface", "termination_a_id": swp9["id"],
            "termination_b_type": "dcim.interface", "termination_b_id": port["id"],
            "status": one(api, "extras/statuses/", name="Connected")["id"]})
    where = f"error: {seeded.url}/api/: dcim.cable leaf1:swp9 - storage1:p1 ({cable['id']}): "
    try:
        line = _error_line(cli(project, seeded, "sot", "import"))
        assert line == where + ("cables leaf1:swp9 to storage1:p1, but storage1 is not among "
                                "the devices the source's filters select")
        with api_of(seeded) as api:
            api.request("PATCH", f"dcim/devices/{box['id']}/", body={"location": lab["id"]})
        line = _error_line(cli(project, seeded, "sot", "check"))
        assert line == where + ("cables leaf1:swp9 to storage1:p1, but storage1 has role "
                                "'storage', which is not mapped to a flatfab role (mapped: "
                                "gpu-host, leaf, spine, storage-host, super-spine)")
    finally:
        with api_of(seeded) as api:
            api.request("DELETE", f"dcim/cables/{cable['id']}/")
            api.request("DELETE", f"dcim/interfaces/{swp9['id']}/")
            api.request("DELETE", f"dcim/devices/{box['id']}/")
            api.request("DELETE", f"extras/roles/{role['id']}/")
            api.request("DELETE", f"dcim/locations/{elsewhere['id']}/")
    assert cli(project, seeded, "sot", "check").code == 0


def test_a_duplicate_device_name_names_both_devices(project: Path, seeded: Service) -> None:
    """Nautobot keeps names unique per location and tenant: a second leaf2 with a tenant."""
    with api_of(seeded) as api:
        leaf2 = one(api, "dcim/devices/", name="leaf2")
        blue = one(api, "tenancy/tenants/", name="blue")
        twin = api.request("POST", "dcim/devices/", body={
            "name": "leaf2", "location": _id(leaf2["location"]), "tenant": blue["id"],
            "status": _id(leaf2["status"]), "role": _id(leaf2["role"]),
            "device_type": _id(leaf2["device_type"]), "platform": _id(leaf2["platform"])})
    try:
        line = _error_line(cli(project, seeded, "sot", "import", "--write"))
        first, second = sorted([leaf2["id"], twin["id"]])
        assert line == (f"error: {seeded.url}/api/: dcim.device leaf2 ({second}): duplicate "
                        f"device name 'leaf2' (also dcim.device leaf2 ({first}))")
        assert cli(project, seeded, "sot", "import").code == 2  # nothing was written
        counts = _counts(seeded)
        line = _error_line(cli(project, seeded, "sot", "sync", "--write"))
        assert line == (f"error: {seeded.url}/api/: dcim/devices/: duplicate device name "
                        f"'leaf2' ({first}, {second}): nothing written")
        assert _counts(seeded) == counts
        assert {p.name: p.read_bytes() for p in (project / "intents" / "lab").iterdir()} \
            == {p.name: p.read_bytes() for p in (ROOT / "intents" / "lab").iterdir()}
    finally:
        with api_of(seeded) as api:
            api.request("DELETE", f"dcim/devices/{twin['id']}/")


@pytest.fixture(scope="module")
def numbered_service(seeded: Service) -> Service:
    """The numbered example fabric beside the lab (its own location, pools and subnet)."""
    run = sot("seed", "--fabric", "numbered", "--mgmt-subnet", "172.31.254.0/24", timeout=600)
    assert run.code == 0, run.stderr
    return seeded


@pytest.fixture
def numbered(tmp_path: Path, numbered_service: Service) -> Service:
    project_of(tmp_path, "numbered", numbered_service)
    return numbered_service


def test_sync_of_a_numbered_fabric_writes_its_link_addresses(
        tmp_path: Path, numbered: Service) -> None:
    run = cli(tmp_path, numbered, "--fabric", "numbered", "sot", "import")
    assert run.code == 0 and "no changes" in run.stderr, run.stdout + run.stderr
    dry = cli(tmp_path, numbered, "--fabric", "numbered", "sot", "sync", "--format", "json")
    assert dry.code == 0, dry.stderr
    changes = json.loads(dry.stdout)["changes"]
    assert {"create prefixes: 10.254.0.0/23", "create prefixes: 10.253.0.0/23",
            "create IP addresses: 10.254.0.1/31",
            "create IP assignments: 10.254.0.1/31 on lf-a:swp51",
            "create IP assignments: 10.253.0.0/31 on sp-a:swp1.10",
            "create VRF assignments: train on lf-b"} <= set(changes), changes
    # 4 links, each end addressed in the underlay and in VRF train
    assert sum(c.startswith("create IP assignments: ") for c in changes) == 4 * 2 * 2
    started = time.monotonic()
    wrote = cli(tmp_path, numbered, "--fabric", "numbered", "sot", "sync", "--write",
                "--format", "json")
    took = time.monotonic() - started
    assert wrote.code == 0 and json.loads(wrote.stdout)["changes"] == changes, wrote.stderr
    with api_of(numbered) as api:
        swp51 = one(api, "dcim/interfaces/", device="lf-a", name="swp51")
        [assigned] = api.fetch("ipam/ip-address-to-interface/", interface=swp51["id"])
        address = api.request("GET", f"ipam/ip-addresses/{_id(assigned['ip_address'])}/")
        assert address["address"] == "10.254.0.1/31"
    again = cli(tmp_path, numbered, "--fabric", "numbered", "sot", "sync", "--write",
                "--format", "json")
    assert json.loads(again.stdout)["changes"] == [], again.stdout
    assert cli(tmp_path, numbered, "--fabric", "numbered", "sot", "check").code == 0
    print(f"\nsot sync --write of the numbered fabric: {took:.2f} s ({len(changes)} changes)")


def test_a_cable_longer_than_its_link_class_is_named_by_check(
        tmp_path: Path, numbered: Service) -> None:
    """The long class sizes PFC headroom for 100 m: a 150 m cable in Nautobot is named."""
    with api_of(numbered) as api:
        swp52 = one(api, "dcim/interfaces/", device="lf-a", name="swp52")
        cable = api.request("GET", f"dcim/cables/{_id(swp52['cable'])}/")
        assert (cable["length"], _id(cable["length_unit"]) if isinstance(
            cable["length_unit"], str) else cable["length_unit"]["value"]) == (100, "m")
        api.request("PATCH", f"dcim/cables/{cable['id']}/", body={"length": 150})
    try:
        check = cli(tmp_path, numbered, "--fabric", "numbered", "sot", "check",
                    "--format", "json")
        assert check.code == 1, check.stderr
        assert json.loads(check.stdout)["disagreements"] == [{
            "device": "lf-a", "object": f"dcim.cable lf-a:swp52 - sp-b:swp1 ({cable['id']})",
            "message": "cable length 150 m; the plan sizes headroom for 100 m (link class "
                       "long)"}]
        imported = cli(tmp_path, numbered, "--fabric", "numbered", "sot", "import")
        assert imported.code == 0 and "choose a link class that fits" in imported.stderr
    finally:
        with api_of(numbered) as api:
            api.request("PATCH", f"dcim/cables/{cable['id']}/", body={"length": 100})


def test_a_link_through_patch_panels_agrees_and_a_broken_trunk_is_named(
        project: Path, seeded: Service) -> None:
    """leaf1:swp51 - spine1:swp1 re-cabled through two patch panels (front port, rear-port
    trunk, front port), as structured cabling does: the same link. Without the trunk, each
    end's path stops at a front port, and each is named."""
    with api_of(seeded) as api:
        leaf = one(api, "dcim/devices/", name="leaf1")
        active = one(api, "extras/statuses/", name="Active")["id"]
        connected = one(api, "extras/statuses/", name="Connected")["id"]
        kind = api.request("POST", "dcim/device-types/", body={
            "model": "panel-1u", "manufacturer": _id(api.request(
                "GET", f"dcim/device-types/{_id(leaf['device_type'])}/")["manufacturer"])})
        role = api.request("POST", "extras/roles/", body={
            "name": "patch-panel", "color": "9e9e9e", "content_types": ["dcim.device"]})
        rear, front = [], []
        for name in ("pp-a", "pp-b"):
            panel = api.request("POST", "dcim/devices/", body={
                "name": name, "location": _id(leaf["location"]), "status": active,
                "role": role["id"], "device_type": kind["id"]})
            rear.append(api.request("POST", "dcim/rear-ports/", body={
                "device": panel["id"], "name": "rp1", "type": "mpo", "positions": 1,
                "status": active}))
            front.append(api.request("POST", "dcim/front-ports/", body={
                "device": panel["id"], "name": "fp1", "type": "lc", "status": active,
                "rear_port": rear[-1]["id"], "rear_port_position": 1}))
        swp51 = one(api, "dcim/interfaces/", device="leaf1", name="swp51")
        swp1 = one(api, "dcim/interfaces/", device="spine1", name="swp1")
        api.request("DELETE", f"dcim/cables/{_id(swp51['cable'])}/")

        def cable(a_type: str, a: str, b_type: str, b: str) -> dict[str, Any]:
            return dict(api.request("POST", "dcim/cables/", body={
                "termination_a_type": a_type, "termination_a_id": a,
                "termination_b_type": b_type, "termination_b_id": b, "status": connected}))

        first = cable("dcim.interface", swp51["id"], "dcim.frontport", front[0]["id"])
        trunk = cable("dcim.rearport", rear[0]["id"], "dcim.rearport", rear[1]["id"])
        last = cable("dcim.frontport", front[1]["id"], "dcim.interface", swp1["id"])
    try:
        assert cli(project, seeded, "sot", "check").code == 0
        imported = cli(project, seeded, "sot", "import")
        assert imported.code == 0 and "no changes" in imported.stderr, imported.stderr
        with api_of(seeded) as api:
            api.request("DELETE", f"dcim/cables/{trunk['id']}/")
        broken = cli(project, seeded, "sot", "check")
        assert broken.code == 2 and broken.stderr.splitlines() == [
            f"error: {seeded.url}/api/: dcim.cable {where} - dcim.frontport ({cable_id}): the "
            f"cable path from {where} ends at a dcim.frontport, not at an interface (a patch "
            "panel or circuit with nothing connected beyond)"
            for where, cable_id in (("leaf1:swp51", first["id"]), ("spine1:swp1", last["id"]))
        ], broken.stderr
    finally:
        with api_of(seeded) as api:
            for made in api.fetch("dcim/cables/", id=[first["id"], trunk["id"], last["id"]]):
                api.request("DELETE", f"dcim/cables/{made['id']}/")
            for panel in api.fetch("dcim/devices/", role=role["id"]):
                api.request("DELETE", f"dcim/devices/{panel['id']}/")
            api.request("DELETE", f"extras/roles/{role['id']}/")
            api.request("DELETE", f"dcim/device-types/{kind['id']}/")
        assert sot("seed", "--fabric", "lab", timeout=600).code == 0  # the direct cable back
    assert cli(project, seeded, "sot", "check").code == 0
