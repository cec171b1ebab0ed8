"""`flatfab sot sync --write` against an API double whose VRF endpoint fails mid-way: the
error is one line that says where the journal of what was already written is, the journal
holds each write before it was sent (an update with the value it replaced) and the error;
a failure before the first write is one plain line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.doubles.nautobot import TOKEN, ApiDouble, serving
from tests.support.flatfab import flatfab
from tests.support.paths import ROOT

SWITCHES = ("spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4")


def _objects() -> dict[str, list[dict[str, Any]]]:
    return {
        "extras/statuses/": [{"id": "s-active", "name": "Active"}],
        "ipam/namespaces/": [{"id": "n-global", "name": "Global"}],
        "dcim/devices/": [{"id": f"d-{name}", "name": name, "location": "lab",
                           "custom_fields": {"bgp_asn": 1}} for name in SWITCHES],
    }


def _project(root: Path, url: str) -> Path:
    shutil.copytree(ROOT / "intents" / "lab", root / "intents" / "lab")
    (root / "inventory" / "lab").mkdir(parents=True)
    (root / "inventory" / "lab" / "source.yaml").write_text(
        f"nautobot:\n  url: {url}\n  token_env: FFS_TOKEN\n  filters: {{location: lab}}\n")
    return root


def test_a_write_that_fails_midway_names_the_journal_of_what_was_written(
        tmp_path: Path) -> None:
    with serving(ApiDouble(_objects(), fail_writes_to="ipam/vrfs/")) as double:
        root = _project(tmp_path, double.url)
        run = flatfab("--root", str(root), "sot", "sync", "--write", env={"FFS_TOKEN": TOKEN})
    [journal] = (root / ".flatfab" / "runs").iterdir()
    assert run.code == 2 and run.stderr.splitlines() == [
        f"error: {double.url}/api/: ipam/vrfs/: POST HTTP 500: detail: the database is gone; "
        f"what was written before is journalled in {journal}"], run.stderr
    events = [json.loads(line) for line in (journal / "events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == [
        "start", "source",
        "nautobot.create", "nautobot.created",  # the tag
        "nautobot.create", "nautobot.created",  # the ASN custom field
        "nautobot.update",  # the ASNs
        "nautobot.create",  # the VRFs: sent, and failed
        "error"]
    update = events[6]
    assert update["before"] == [{"id": f"d-{n}", "custom_fields": {"bgp_asn": 1}}
                                for n in SWITCHES]
    assert [c["custom_fields"]["bgp_asn"] for c in update["changes"]] == [
        65000, 65000, 65101, 65102, 65103, 65104]
    assert TOKEN not in (journal / "events.jsonl").read_text()


def test_a_failure_before_any_write_is_one_plain_line(tmp_path: Path) -> None:
    objects = _objects()
    del objects["ipam/namespaces/"]
    with serving(ApiDouble(objects)) as double:
        root = _project(tmp_path, double.url)
        run = flatfab("--root", str(root), "sot", "sync", "--write", env={"FFS_TOKEN": TOKEN})
    assert run.code == 2 and run.stderr.splitlines() == [
        f"error: {double.url}/api/: ipam/namespaces/: no 'Global'"], run.stderr
    assert not [m for m, _ in double.requests if m != "GET"]
