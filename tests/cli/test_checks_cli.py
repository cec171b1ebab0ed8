"""`flatfab checks`: the one catalog as a table or JSON, one finding explained, an unknown id
one line naming the closest ones (exit 2); no project needed, nothing imported for --help;
the same ids, in the same order, as the documentation's catalog page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flatfab.catalog import entries
from flatfab.checks.base import Finding, Severity, not_judged
from flatfab.cli import output
from flatfab.cli.checks import _complete
from flatfab.docsite import check_catalog
from tests.support.inprocess import run

IDS = list(entries())


@pytest.fixture(autouse=True)
def _no_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog needs no project: every run here is from a folder that is none."""
    monkeypatch.chdir(tmp_path)


def test_the_list_names_every_id_with_its_severity_and_where_raised(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["checks"], capsys)
    assert code == 0 and not err
    assert f"every finding flatfab can raise: {len(IDS)} (" in out
    rows = re.findall(r"^│ (\S+) +│", out, flags=re.MULTILINE)
    assert rows == IDS
    reachable = next(line for line in out.splitlines() if "│ device.reachable " in line)
    assert "critical" in reachable and "verify, audit, rollout gate" in reachable
    assert out.rstrip().endswith("explain one: flatfab checks ID")


def test_the_list_as_json_holds_every_part_of_every_entry(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["checks", "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["count"] == len(IDS) == sum(data["by_source"].values())
    assert [e["id"] for e in data["entries"]] == IDS
    for item in data["entries"]:
        assert all(item[key] for key in ("title", "severity", "raised_by", "description",
                                         "reads", "expects", "fails_when", "fix")), item["id"]
    traffic = next(e for e in data["entries"] if e["id"] == "traffic.class")
    assert traffic["raised_by"] == ["verify --traffic"] and traffic["source"] == "traffic"


def test_one_finding_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    entry = entries()["telemetry.pause_storm"]
    code, out, err = run(["checks", "telemetry.pause_storm"], capsys)
    assert code == 0 and not err
    lines = out.splitlines()
    assert lines[0] == f"telemetry.pause_storm  {entry.title}"
    assert "raised by flatfab watch and a rollout gate's telemetry" in lines[1]
    text = " ".join(out.split())
    for label, part in (("Reads:", entry.reads), ("Expects:", entry.expects),
                        ("Fails when:", entry.fails_when), ("Fix:", entry.fix)):
        assert f"{label} {part}" in text
    code, out, _ = run(["checks", "sot.devices", "-f", "json"], capsys)
    assert code == 0 and json.loads(out) == entries()["sot.devices"].as_dict()


@pytest.mark.parametrize(("wanted", "named"), [
    ("bgp.sesion", "closest: bgp.session"), ("bgp", "bgp.session"),
    ("no-such-thing", "none is close"),
])
def test_an_unknown_id_is_one_line_naming_the_closest_and_exit_2(
        wanted: str, named: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["checks", wanted], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"error: no finding '{wanted}' in the catalog; ") and named in err
    assert "Traceback" not in err


def test_the_page_and_the_command_list_the_same_ids(capsys: pytest.CaptureFixture[str]) -> None:
    page = re.findall(r"^### `([^`]+)`", check_catalog.markdown(), flags=re.MULTILINE)
    code, out, _ = run(["checks", "-f", "json"], capsys)
    assert code == 0 and page == [e["id"] for e in json.loads(out)["entries"]] == IDS


def test_help_and_completion_do_not_load_the_catalog() -> None:
    """The command imports the catalog (every check, the workflows) when it runs, only."""
    probe = ("import sys; from flatfab.cli.app import app; "
             "assert 'flatfab.catalog' not in sys.modules, 'loaded'; "
             "assert 'flatfab.checks' not in sys.modules, 'checks loaded'")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def test_completion_offers_the_ids() -> None:
    assert _complete("sot.") == ["sot.cabling", "sot.devices"]
    assert set(_complete("")) == set(IDS)


def test_a_findings_table_points_to_the_catalog_once(capsys: pytest.CaptureFixture[str]) -> None:
    """verify, audit, watch, check and a rollout's gate print findings through it."""
    capsys.readouterr()
    output.findings_table([
        Finding("bgp.session", Severity.CRITICAL, "leaf1", "leaf1 swp51 is Idle"),
        not_judged("state.unknown", "leaf2", "it does not state it")], "findings on lab")
    out = capsys.readouterr().out
    assert out.count("explain a finding: flatfab checks <id>") == 1
    assert out.rstrip().endswith("(e.g. flatfab checks bgp.session)")
    output.findings_table([not_judged("state.unknown", "leaf2", "unstated")], "findings")
    assert "(e.g. flatfab checks state.unknown)" in capsys.readouterr().out
    output.findings_table([], "findings on lab")
    assert capsys.readouterr().out == ""
