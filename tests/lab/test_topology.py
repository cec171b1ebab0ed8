"""labs/<fabric>.clab.yml: a genuine containerlab topology that the embedded runtime reads."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.lab import topology
from flatfab.plan.planner import plan
from tests.support.flatfab import flatfab
from tests.support.paths import ROOT, SHARED

SCHEMA = SHARED / "schemas" / "clab.schema.json"
KIND_ALIASES = {"ceos": "arista_ceos", "srl": "nokia_srlinux", "cvx": "cumulus_cvx"}


def _validator() -> jsonschema.Draft7Validator:
    if not SCHEMA.exists():
        pytest.skip(f"containerlab's schema not found at {SCHEMA} (set FLATFAB_SHARED)")
    # Python's re has no \p{..}: rewrite the ECMAScript letter/number class
    text = SCHEMA.read_text(encoding="utf-8").replace(r"[\\p{N}\\p{L}]", r"[^\\W_]")
    return jsonschema.Draft7Validator(json.loads(text))


def _doc(fabric: str = "lab", **options: str) -> dict[str, Any]:
    state = plan(load_intent(ROOT / "intents" / fabric))
    doc, _ = topology.generate(state, topology.LabOptions(**options))
    return doc


@pytest.mark.parametrize("path", sorted((ROOT / "labs").glob("*.clab.yml")), ids=lambda p: p.name)
def test_committed_topologies_validate_against_containerlab_schema(path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    for node in doc["topology"]["nodes"].values():
        node["kind"] = KIND_ALIASES.get(node["kind"], node["kind"])
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors]


@pytest.mark.parametrize("fabric", ["lab", "numbered", "lab4x16", "mixed", "rail"])
def test_generated_topologies_validate(fabric: str) -> None:
    assert list(_validator().iter_errors(_doc(fabric))) == []


@pytest.mark.parametrize("breakage", ["kind", "top-level key", "mgmt address"])
def test_schema_catches_a_broken_topology(breakage: str) -> None:
    """The validator is live: each of these is an error."""
    doc = _doc()
    if breakage == "kind":
        doc["topology"]["nodes"]["spine1"]["kind"] = "no-such-kind"
    elif breakage == "top-level key":
        doc["topologee"] = {}
    else:
        doc["topology"]["nodes"]["spine1"]["mgmt-ipv4"] = "300.1.2.3"
    assert list(_validator().iter_errors(doc)) != []


def test_switches_bind_frr_files_and_carry_their_vrfs() -> None:
    doc = _doc()
    leaf = doc["topology"]["nodes"]["leaf1"]
    assert leaf["kind"] == "linux" and leaf["image"] == "quay.io/frrouting/frr:8.4.4"
    assert "lab/leaf1/frr.conf:/etc/frr/frr.conf" in leaf["binds"]
    assert leaf["labels"] == {"flatfab.role": "leaf", "flatfab.platform": "frr",
                              "flatfab.vrfs": "blue:100,red:200"}
    assert "ip link add link swp51 name swp51.100 type vlan id 100" in leaf["exec"]
    host = doc["topology"]["nodes"]["leaf1-h1"]
    # a host binds only the modules in its NIC ports (the lab's stand-in for hardware)
    assert host["binds"] == ["lab/leaf1-h1/phy.json:/var/lib/flatfab/phy.json"]
    assert host["labels"]["flatfab.role"] == "host"
    endpoints = [tuple(link["endpoints"]) for link in doc["topology"]["links"]]
    assert ("leaf1:swp51", "spine1:swp1") in endpoints
    assert ("leaf1:swp1", "leaf1-h1:eth1") in endpoints
    assert len(endpoints) == 16  # 8 fabric + 8 host links; VRF sub-links are not cables


def test_read_round_trip_and_overrides(tmp_path: Path) -> None:
    state = plan(load_intent(ROOT / "intents" / "lab"))
    doc, files = topology.generate(state, topology.LabOptions())
    path = topology.write(doc, files, tmp_path)
    spec = topology.read(path)
    assert spec.prefix == "ff" and str(spec.mgmt_subnet) == "172.31.255.0/24"
    assert spec.nodes["leaf1"].vrfs == {"blue": 100, "red": 200}
    assert spec.nodes["leaf1"].binds["/etc/frr/daemons"] == tmp_path / "lab/leaf1/daemons"
    moved = topology.read(path, prefix="zz", mgmt_subnet="10.99.0.0/24")
    assert moved.prefix == "zz"
    assert moved.nodes["spine1"].mgmt_ipv4 == "10.99.0.11"
    assert [n.mgmt_ipv4.rsplit(".", 1)[1] for n in moved.nodes.values()] == \
        [n.mgmt_ipv4.rsplit(".", 1)[1] for n in spec.nodes.values()]


def test_a_node_the_fabric_no_longer_has_leaves_no_bound_files(tmp_path: Path) -> None:
    """Renaming a switch regenerates its folder under the new name and removes the old one;
    a folder that holds more than generated files (an operator's notes) is left alone."""
    state = plan(load_intent(ROOT / "intents" / "lab"))
    doc, files = topology.generate(state, topology.LabOptions())
    (tmp_path / "lab" / "spine9").mkdir(parents=True)
    (tmp_path / "lab" / "spine9" / "frr.conf").write_text("old\n", encoding="utf-8")
    (tmp_path / "lab" / "notes" / "keep").mkdir(parents=True)
    topology.write(doc, files, tmp_path)
    assert not (tmp_path / "lab" / "spine9").exists()
    assert (tmp_path / "lab" / "notes" / "keep").is_dir()
    assert (tmp_path / "lab" / "spine1" / "frr.conf").is_file()


@pytest.mark.parametrize(("prefix", "subnet", "reason"), [
    ("Bad-Prefix", "172.31.255.0/24", "not a valid lab prefix"),
    ("toolongprefix", "172.31.255.0/24", "not a valid lab prefix"),
    ("ff", "172.31.255.0/28", "too small"),
    ("ff", "172.31.255.1/24", "not an IPv4 subnet"),
])
def test_bad_lab_parameters_are_one_clear_error(prefix: str, subnet: str, reason: str) -> None:
    state = plan(load_intent(ROOT / "intents" / "lab"))
    with pytest.raises(InputError) as info:
        topology.generate(state, topology.LabOptions(prefix=prefix, mgmt_subnet=subnet))
    assert reason in str(info.value)


def test_topology_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.clab.yml"
    path.write_text("name: bad\ntopology:\n  nodes:\n    a:\n      kind: linux\n"
                    "      mgmt-ipv4: 172.20.20.5\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        topology.read(path)
    problem = info.value.problems[0]
    assert problem.path in {"topology.nodes.a.labels", "topology.nodes.a"}
    assert problem.line == 4 and "flatfab.role" in problem.reason


def test_lab_up_refuses_a_stale_topology(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "intents").mkdir(parents=True)
    (project / "intents" / "lab").symlink_to(ROOT / "intents" / "lab")
    assert flatfab("--root", str(project), "lab", "generate").code == 0
    path = project / "labs" / "lab.clab.yml"
    path.write_text(path.read_text().replace("172.31.255.13", "172.31.255.99"))
    result = flatfab("--root", str(project), "lab", "up")
    assert result.code == 2
    assert "out of date" in result.stderr and "lab generate" in result.stderr


def test_clab_runtime_hands_the_same_file_to_containerlab(tmp_path: Path) -> None:
    """With containerlab on PATH, `lab up --runtime clab` runs it on labs/<fabric>.clab.yml."""
    fake = tmp_path / "bin" / "containerlab"
    fake.parent.mkdir()
    log = tmp_path / "calls"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env_path = f"{fake.parent}:{os.environ['PATH']}"
    os.environ["PATH"], saved = env_path, os.environ["PATH"]
    try:
        up = flatfab("lab", "up", "--runtime", "clab")
        down = flatfab("lab", "down", "--runtime", "clab")
    finally:
        os.environ["PATH"] = saved
    assert up.code == 0 and down.code == 0, up.stderr + down.stderr
    calls = log.read_text().splitlines()
    topo = str(ROOT / "labs" / "lab.clab.yml")
    assert calls[0] == f"deploy --topo {topo} --reconfigure"
    assert calls[1] == f"destroy --topo {topo} --cleanup"
    assert re.search(r"lab\.clab\.yml", calls[0])
