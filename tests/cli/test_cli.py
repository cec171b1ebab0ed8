"""The CLI contract: formats, files written, exit codes, one-line errors (no lab needed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flatfab.lab import system
from flatfab.lab.system import LabError
from flatfab.workflows.project.layout import Project
from tests.support.flatfab import flatfab
from tests.support.inventory import lab_like
from tests.support.paths import ROOT


def _no_traceback(*texts: str) -> None:
    assert all("Traceback" not in t for t in texts)


def test_plan_json_is_the_state_model_and_deterministic() -> None:
    first, second = flatfab("plan", "--format", "json"), flatfab("plan", "--format", "json")
    assert first.code == 0 and first.stdout == second.stdout
    data = first.json()
    assert data["fabric"] == "lab" and data["source"] == "planned"
    assert data["devices"]["leaf2"]["asn"] == 65102
    assert data["devices"]["leaf2-h1"]["interfaces"]["eth1"]["addresses"] == ["10.100.2.11/24"]


def test_plan_table_names_every_device() -> None:
    result = flatfab("plan")
    assert result.code == 0
    for name in ("spine1", "leaf4", "leaf4-h2", "blue", "red"):
        assert name in result.stdout


def test_render_writes_one_config_per_device(tmp_path: Path) -> None:
    result = flatfab("render", "--out", str(tmp_path / "a"))
    assert result.code == 0, result.stderr
    again = flatfab("render", "--out", str(tmp_path / "b"))
    assert again.code == 0
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(files) == 14 and "spine1.conf" in files
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    only = flatfab("render", "--out", str(tmp_path / "c"), "--device", "leaf1")
    assert only.code == 0 and [p.name for p in (tmp_path / "c").iterdir()] == ["leaf1.conf"]
    bad = flatfab("render", "--out", str(tmp_path / "d"), "--device", "leaf9")
    assert bad.code == 2 and "leaf9" in bad.stderr


def _faulty_project(tmp_path: Path, edit: tuple[str, str, str]) -> Path:
    project = tmp_path / "p"
    shutil.copytree(ROOT / "intents" / "lab", project / "intents" / "lab")
    name, old, new = edit
    path = project / "intents" / "lab" / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return project


def test_static_check_passes_on_lab_and_json_says_so() -> None:
    result = flatfab("check", "--format", "json")
    assert result.code == 0 and result.json()["passed"] is True


def test_static_check_fails_on_an_inconsistent_intent(tmp_path: Path) -> None:
    # host NICs at 9000 behind switch ports at 8000 is a load error (host above link);
    # ports above the hosts load fine but break "both ends equal" (I-17)
    project = _faulty_project(tmp_path, ("fabric.yaml", "host: {speed: 100G, cable_m: 2, "
                                         "mtu: 9000}", "host: {speed: 100G, cable_m: 2, "
                                         "mtu: 9216}"))
    result = flatfab("--root", str(project), "check", "--format", "json")
    assert result.code == 1
    findings = result.json()["findings"]
    assert {f["check"] for f in findings} == {"link.mtu_match"}
    assert len(findings) == 8 and all(f["expected"] == "9216" for f in findings)
    table = flatfab("--root", str(project), "check")
    assert table.code == 1 and "link.mtu_match" in table.stdout


def test_missing_inventory_is_one_clear_error(tmp_path: Path) -> None:
    result = flatfab("--inventory", str(tmp_path / "none"), "verify")
    assert result.code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "hosts.yaml" in lines[0] and "inventory file not found" in lines[0]
    _no_traceback(result.stdout, result.stderr)


def test_inventory_missing_a_planned_device_is_named(tmp_path: Path) -> None:
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yaml").write_text("spine1:\n  hostname: 192.0.2.1\n  platform: frr\n")
    (inv / "groups.yaml").write_text("{}\n")
    (inv / "defaults.yaml").write_text("{}\n")
    result = flatfab("--inventory", str(inv), "verify")
    assert result.code == 2
    assert "'spine2' is not in the inventory" in result.stderr
    _no_traceback(result.stdout, result.stderr)


@pytest.mark.parametrize(("address", "pool"), [
    ("10.0.0.40", "fabric.yaml underlay.loopback_pool 10.0.0.0/24"),
    ("10.200.7.9", "tenants.yaml tenants.1.prefixes.0 10.200.0.0/16"),
])
def test_a_management_address_inside_a_fabric_pool_is_refused(tmp_path: Path, address: str,
                                                              pool: str) -> None:
    plan = Project(root=ROOT, fabric="lab").plan
    addresses = {name: f"192.0.2.{n}" for n, name in enumerate(sorted(plan.devices), 10)}
    inv = lab_like(tmp_path / "inv", plan, {**addresses, "leaf3": address})
    text = (inv / "hosts.yaml").read_text().splitlines()
    line = next(n for n, t in enumerate(text, 1) if t.strip() == f"hostname: {address}")
    result = flatfab("--inventory", str(inv), "verify")
    assert result.code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"error: {inv / 'hosts.yaml'}:{line}: leaf3.hostname: management "
                     f"address {address} lies in the fabric's {pool}"]
    _no_traceback(result.stdout, result.stderr)


def test_unknown_check_and_bad_format_are_usage_errors() -> None:
    unknown = flatfab("verify", "--check", "no.such.check")
    assert unknown.code == 2 and "no.such.check" in unknown.stderr
    bad = flatfab("plan", "--format", "yaml")
    assert bad.code == 2 and "yaml" in bad.stderr
    _no_traceback(unknown.stderr, bad.stderr)


def test_unknown_fabric_is_one_clear_error() -> None:
    result = flatfab("--fabric", "nope", "plan")
    assert result.code == 2 and "intents/nope" in result.stderr
    assert "intent directory not found" in result.stderr


def test_lab_commands_need_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system.os, "geteuid", lambda: 1000)
    with pytest.raises(LabError, match="needs root"):
        system.require_root("up")


def test_lab_status_when_no_lab_is_up() -> None:
    result = flatfab("lab", "status", "--prefix", "nolab", "--format", "json")
    assert result.code == 0 and json.loads(result.stdout) == {"up": False, "healthy": False,
                                                              "nodes": []}


def test_a_taken_file_name_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "intents" / "lab", tmp_path / "intents" / "lab")
    (tmp_path / "out" / "leaf3.conf").mkdir(parents=True)
    run = flatfab("--root", str(tmp_path), "render", "--out", str(tmp_path / "out"))
    assert run.code == 2 and run.stderr.strip() == (
        f"error: --out: {tmp_path / 'out' / 'leaf3.conf'} is a directory; it is where leaf3's "
        "config goes (nothing was written)")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["leaf3.conf"]
    (tmp_path / "labs" / "lab" / "leaf2").mkdir(parents=True)
    (tmp_path / "labs" / "lab" / "leaf2" / "frr.conf").mkdir()
    run = flatfab("--root", str(tmp_path), "lab", "generate")
    assert run.code == 2 and run.stderr.strip() == (
        f"error: {tmp_path / 'labs' / 'lab' / 'leaf2' / 'frr.conf'}: is a directory where "
        "`lab generate` writes a file (nothing was written)")
    assert sorted(p.name for p in (tmp_path / "labs").rglob("*")) == ["frr.conf", "lab",
                                                                      "leaf2"]
    _no_traceback(run.stdout, run.stderr)
