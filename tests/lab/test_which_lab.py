"""`lab down` and `lab status` act on the lab this fabric's `lab up` made, never another.

Labs are recorded states under a lab root of the test's own (never /run/flatfab): each names
the topology file it was brought up from, as `lab up` writes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flatfab.lab import netns, which
from flatfab.lab.system import LabError
from tests.support.flatfab import in_process
from tests.support.paths import ROOT

LAB = ROOT / "labs" / "lab.clab.yml"
RAIL = ROOT / "labs" / "rail.clab.yml"


def _up(root: Path, prefix: str, topology: Path) -> None:
    """A lab's recorded state, as `lab up` leaves it."""
    (root / prefix).mkdir(parents=True)
    state = netns.LabState(name=topology.name.split(".")[0], prefix=prefix,
                           topology=str(topology.resolve()), mgmt_subnet="172.31.255.0/24",
                           controller="172.31.255.1")
    (root / prefix / "state.json").write_text(json.dumps(state.__dict__), encoding="utf-8")


def test_the_fabric_s_lab_is_found_by_its_recorded_prefix(tmp_path: Path) -> None:
    _up(tmp_path, "ff", LAB)
    _up(tmp_path, "rl", RAIL)
    found = which.target(RAIL, "rail", "ff", None, root=tmp_path)
    assert found.paths.prefix == "rl"
    assert found.state is not None and found.state.name == "rail"


def test_another_fabric_s_lab_at_the_default_prefix_is_never_chosen(tmp_path: Path) -> None:
    _up(tmp_path, "ff", LAB)
    with pytest.raises(LabError, match=r"no lab of fabric rail is up; the lab with prefix 'ff' "
                                       r"is another fabric's .*left alone"):
        which.target(RAIL, "rail", "ff", None, root=tmp_path)
    with pytest.raises(LabError, match="prefix 'ff' is another fabric's"):
        which.target(RAIL, "rail", "ff", "ff", root=tmp_path)
    # --sweep with the prefix named: the operator's own order to clear it
    assert which.target(RAIL, "rail", "ff", "ff", sweep=True, root=tmp_path).paths.prefix == "ff"


def test_the_default_prefix_wins_and_several_elsewhere_are_named(tmp_path: Path) -> None:
    _up(tmp_path, "fa", LAB)
    _up(tmp_path, "fb", LAB)
    with pytest.raises(LabError, match=r"labs of fabric lab are up under prefixes fa, fb; say "
                                       r"which with --prefix"):
        which.target(LAB, "lab", "ff", None, root=tmp_path)
    _up(tmp_path, "ff", LAB)
    assert which.target(LAB, "lab", "ff", None, root=tmp_path).paths.prefix == "ff"
    assert which.target(LAB, "lab", "ff", "fb", root=tmp_path).paths.prefix == "fb"


def test_no_lab_up_is_the_default_prefix_with_no_state(tmp_path: Path) -> None:
    found = which.target(LAB, "lab", "ff", None, root=tmp_path / "absent")
    assert (found.paths.prefix, found.state) == ("ff", None)


def test_lab_down_of_another_fabric_leaves_the_demo_lab_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reported case: `--fabric rail lab down` while the demo's lab is up under `ff`."""
    monkeypatch.setattr(netns, "RUN_ROOT", tmp_path)
    _up(tmp_path, "ff", LAB)
    down = in_process("--fabric", "rail", "lab", "down")
    assert down.code != 0
    assert "no lab of fabric rail is up; the lab with prefix 'ff' is another fabric's" in (
        down.stderr + down.stdout)
    assert (tmp_path / "ff" / "state.json").exists()
    status = in_process("--fabric", "rail", "lab", "status")
    assert status.code != 0 and "another fabric's" in status.stderr + status.stdout
