"""The rollout's telemetry source as `flatfab rollout` builds it from the project: only for a
plan whose gates watch telemetry; gNMI targets from the inventory, a poller for the devices
without one (switches' class counters, hosts' NIC counters), the intent's thresholds; a bad
gNMI entry is refused with its file and key before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from flatfab.cli.rollout_telemetry import source_for
from flatfab.errors import InputError
from flatfab.runbook.loader import load_runbook
from flatfab.runbook.model import RolloutPlan
from flatfab.workflows.commands.watch import NornirPoller
from flatfab.workflows.project.layout import Project
from tests.support.inventory import lab_like
from tests.support.paths import ROOT

GATED, _ = load_runbook(ROOT / "runbooks" / "lossless-change.yaml")


def _project(tmp_path: Path, gnmi: dict[str, object] | None) -> Project:
    where = lab_like(tmp_path / "inventory", Project(root=ROOT, fabric="lab").plan)
    hosts = yaml.safe_load((where / "hosts.yaml").read_text())
    # the test's own target on leaf1 is the only one (lab up's live under a lab's /run)
    if gnmi is not None:
        hosts["leaf1"].setdefault("connection_options", {})["gnmi"] = gnmi
    (where / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    return Project(root=ROOT, fabric="lab", inventory_override=where)


def test_a_plan_without_telemetry_gates_needs_no_source(tmp_path: Path) -> None:
    plain = RolloutPlan.model_validate({"name": "x", "phases": [{"name": "a"}]})
    assert source_for(_project(tmp_path, None), plain, 4) is None


def test_targets_pollers_and_thresholds_come_from_the_project(tmp_path: Path) -> None:
    project = _project(tmp_path, {"port": 57400, "extras": {"insecure": True}})
    source = source_for(project, GATED, 4)
    assert source is not None
    assert list(source.targets) == ["leaf1"] and source.targets["leaf1"].port == 57400
    assert source.thresholds.interval_s == project.intent.qos.telemetry.interval_s
    poller = source.poller(["spine1", "leaf1-h1"])
    assert isinstance(poller, NornirPoller) and poller.devices == ["leaf1-h1", "spine1"]
    poller.close()
    hosts = source.poller(["leaf1-h1"])  # a GPU host: its NIC counters
    assert isinstance(hosts, NornirPoller) and hosts.devices == ["leaf1-h1"]
    hosts.close()


def test_a_bad_gnmi_entry_is_refused_naming_file_and_key(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        source_for(_project(tmp_path, {"port": "x"}), GATED, 4)
    assert "hosts.yaml" in str(caught.value)
    assert "leaf1.connection_options.gnmi.port" in str(caught.value)
