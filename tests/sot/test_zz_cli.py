"""flatfab against a real Nautobot: import of the seeded lab is the same plan as intents/lab
with no change to a file; a host recabled in Nautobot is named by `sot check` and imported
as a reviewable edit; bad data and a bad URL or token are one line naming the object or URL.

Runs after test_server.py (whose last test restarts the service empty): it seeds its own."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tasks.sot.client import Nautobot
from tests.conftest import ROOT, Run, flatfab
from tests.sot.conftest import Service, sot

pytestmark = pytest.mark.nautobot


@pytest.fixture(scope="module")
def seeded(nautobot: Service) -> Service:
    run = sot("seed", "--fabric", "lab", timeout=600)
    assert run.code == 0, run.stderr
    return nautobot


@pytest.fixture
def project(tmp_path: Path, seeded: Service) -> Path:
    """A project root with the lab intent and a source.yaml pointing at the service."""
    shutil.copytree(ROOT / "intents" / "lab", tmp_path / "intents" / "lab")
    inventory = tmp_path / "inventory" / "lab"
    inventory.mkdir(parents=True)
    (inventory / "source.yaml").write_text(
        f"nautobot:\n  url: {seeded.url}/\n  token_env: FFT_NAUTOBOT_TOKEN\n"
        "  filters: {location: lab}\n")
    return tmp_path


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


def _api(service: Service) -> Nautobot:
    return Nautobot(service.url, service.token)


def _one(api: Nautobot, path: str, **params: Any) -> dict[str, Any]:
    found = api.request("GET", path, params=params)["results"]
    assert len(found) == 1, (path, params, found)
    result: dict[str, Any] = found[0]
    return result


def test_a_host_recabled_in_nautobot_is_named_and_imported_as_an_edit(
        project: Path, seeded: Service) -> None:
    with _api(seeded) as api:
        nic = _one(api, "dcim/interfaces/", device="leaf1-h1", name="eth1")
        old = _one(api, "dcim/cables/", device="leaf1-h1")
        port1 = _one(api, "dcim/interfaces/", device="leaf1", name="swp1")
        status = port1["status"]["id"] if isinstance(port1["status"], dict) else port1["status"]
        leaf = port1["device"]["id"] if isinstance(port1["device"], dict) else port1["device"]
        port3 = api.request("POST", "dcim/interfaces/", body={
            "device": leaf, "name": "swp3", "type": "100gbase-x-qsfp28", "status": status})
        api.request("DELETE", f"dcim/cables/{old['id']}/")
        new = api.request("POST", "dcim/cables/", body={
            "termination_a_type": "dcim.interface", "termination_a_id": nic["id"],
            "termination_b_type": "dcim.interface", "termination_b_id": port3["id"],
            "status": _one(api, "extras/statuses/", name="Connected")["id"]})
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
        with _api(seeded) as api:
            api.request("DELETE", f"dcim/cables/{new['id']}/")
            api.request("DELETE", f"dcim/interfaces/{port3['id']}/")
        assert sot("seed", "--fabric", "lab", timeout=600).code == 0  # the cable back


def _counts(service: Service) -> dict[str, int]:
    with _api(service) as api:
        return {path: api.request("GET", path, params={"limit": 1})["count"]
                for path in ("dcim/devices/", "dcim/cables/", "dcim/interfaces/",
                             "ipam/vrfs/", "ipam/ip-addresses/")}


def test_sync_writes_what_the_planner_allocated_once_and_deletes_nothing(
        project: Path, seeded: Service) -> None:
    before = _counts(seeded)
    dry = cli(project, seeded, "sot", "sync", "--format", "json")
    assert dry.code == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert planned["written"] is False and planned["skipped"] == []
    assert "create VRFs: blue" in planned["changes"]
    assert "create interfaces: " in " ".join(planned["changes"])
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
    with _api(seeded) as api:
        sub = _one(api, "dcim/interfaces/", device="leaf1", name="swp51.100")
        assert sub["parent_interface"] and sub["vrf"]
        assert [t["id"] if isinstance(t, dict) else t for t in sub["tags"]]
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
    assert refused == f"error: {seeded.url}/api/: extras.roles: the token is refused"
    source = project / "inventory" / "lab" / "source.yaml"
    source.write_text(source.read_text().replace(seeded.url, "http://127.0.0.1:9"))
    silent = _error_line(cli(project, seeded, "sot", "check"))
    assert silent.startswith("error: http://127.0.0.1:9/api/: extras.roles: no answer")


def test_bad_data_in_nautobot_names_the_object(project: Path, seeded: Service) -> None:
    with _api(seeded) as api:
        spine = _one(api, "dcim/devices/", name="spine2")
        api.request("PATCH", f"dcim/devices/{spine['id']}/", body={"platform": None})
    try:
        line = _error_line(cli(project, seeded, "sot", "import"))
        assert line == (f"error: {seeded.url}/api/: dcim.device spine2 ({spine['id']}): has no "
                        "platform")
    finally:
        assert sot("seed", "--fabric", "lab", timeout=600).code == 0
