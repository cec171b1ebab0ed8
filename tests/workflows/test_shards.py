"""Shards of a distributed run: every device in exactly one, ids that say what they hold,
and "by pod" taking what a runbook phase selecting that pod takes."""

from __future__ import annotations

import pytest

from benchmarks.scale import fabric_intent
from flatfab.errors import InputError
from flatfab.model.state import FabricState, Role
from flatfab.plan.planner import plan
from flatfab.runbook.model import Select
from flatfab.runbook.schedule import hosts_by_leaf, matches
from flatfab.workflows.project.layout import Project
from flatfab.workflows.sharding.shards import ShardBy, default_shard_by, parse_shard_by, shards
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def lab() -> FabricState:
    return Project(root=ROOT, fabric="lab").plan


@pytest.fixture(scope="module")
def rail() -> FabricState:
    return Project(root=ROOT, fabric="rail").plan


@pytest.fixture(scope="module")
def big() -> FabricState:
    return plan(fabric_intent(8, 256, 4))  # 1,288 devices


def _once(found_plan: FabricState, spec: str) -> dict[str, tuple[str, ...]]:
    found = shards(found_plan, parse_shard_by(spec))
    names = [d for s in found for d in s.devices]
    assert sorted(names) == sorted(found_plan.devices), "every device exactly once"
    assert len({s.id for s in found}) == len(found)
    assert all(s.devices for s in found)
    return {s.id: s.devices for s in found}


@pytest.mark.parametrize("spec", ["pod", "plane", "su", "leaves:1", "leaves:3", "leaves:100"])
def test_every_rail_device_is_in_exactly_one_shard(rail: FabricState, spec: str) -> None:
    _once(rail, spec)


def test_rail_by_pod_then_super_spines(rail: FabricState) -> None:
    found = _once(rail, "pod")
    assert list(found) == ["pod-1", "pod-2", "superspines"]
    assert found["superspines"] == ("p1-ss1", "p1-ss2", "p2-ss1", "p2-ss2")
    assert found["pod-2"] == ("p1-pod2-spine1", "p2-pod2-spine1", "su2-leaf1", "su2-s1",
                              "su2-s2", "su2-leaf2", "su2-leaf3", "su2-leaf4")
    assert "store1" in found["pod-1"]  # a storage server of pod 1, in no SU


@pytest.mark.parametrize(("spec", "field"), [("pod", "pods"), ("plane", "planes"),
                                             ("su", "sus")])
def test_a_unit_shard_is_what_a_phase_selecting_that_unit_takes(
        rail: FabricState, spec: str, field: str) -> None:
    found = _once(rail, spec)
    attached = hosts_by_leaf(rail)
    taken: set[str] = set()
    for shard_id, devices in found.items():
        if not shard_id.startswith(f"{spec}-"):
            continue
        select = Select(**{field: [int(shard_id.split("-")[1])]})
        selected = {n for n, d in rail.devices.items() if matches(select, d, ())} - taken
        riders = {h for leaf in selected for h in attached.get(leaf, [])} - taken
        assert set(devices) == selected | riders, shard_id
        taken |= set(devices)


def test_rail_by_plane_puts_a_server_with_the_leaf_of_its_first_nic(rail: FabricState) -> None:
    found = _once(rail, "plane")
    assert list(found) == ["plane-1", "plane-2"]
    # su1-s1's NICs 3 and 4 are on plane 2's rail leaves; NIC 1 decides
    assert "su1-s1" in found["plane-1"] and "su1-s1" not in found["plane-2"]
    assert all(rail.devices[d].plane == 2 for d in found["plane-2"])


def test_rail_by_su_leaves_pod_spines_and_super_spines_their_own_shards(
        rail: FabricState) -> None:
    found = _once(rail, "su")
    assert list(found) == ["su-1", "su-2", "superspines", "spines"]
    assert {rail.devices[d].role for d in found["spines"]} == {Role.SPINE}


def test_lab_by_leaves_with_their_hosts(lab: FabricState) -> None:
    assert _once(lab, "leaves:1") == {
        "leaves-001": ("leaf1", "leaf1-h1", "leaf1-h2"),
        "leaves-002": ("leaf2", "leaf2-h1", "leaf2-h2"),
        "leaves-003": ("leaf3", "leaf3-h1", "leaf3-h2"),
        "leaves-004": ("leaf4", "leaf4-h1", "leaf4-h2"),
        "spines": ("spine1", "spine2")}
    assert list(_once(lab, "leaves:3")) == ["leaves-001", "leaves-002", "spines"]
    assert default_shard_by(lab) == ShardBy("leaves", 8)


def test_shards_are_deterministic(rail: FabricState, lab: FabricState) -> None:
    for fabric_plan in (rail, lab):
        for spec in ("leaves:2", "leaves:5"):
            assert shards(fabric_plan, parse_shard_by(spec)) == \
                shards(fabric_plan.model_copy(deep=True), parse_shard_by(spec))
    assert default_shard_by(rail) == ShardBy("pod")


def test_a_big_fabric_by_sixteen_leaves(big: FabricState) -> None:
    found = _once(big, "leaves:16")
    leaf_shards = [s for s in found if s.startswith("leaves-")]
    assert leaf_shards == [f"leaves-{n:03d}" for n in range(1, 17)]
    assert list(found)[-1] == "spines" and len(found["spines"]) == 8
    attached = hosts_by_leaf(big)
    for shard_id in leaf_shards:
        leaves = [d for d in found[shard_id] if big.devices[d].role is Role.LEAF]
        assert len(leaves) == 16
        assert set(found[shard_id]) == {*leaves, *(h for leaf in leaves for h in attached[leaf])}
    wide = _once(big, "leaves:1")
    assert "leaves-256" in wide and len(wide) == 257


@pytest.mark.parametrize("text", ["", "pods", "leaves", "leaves:0", "leaves:x", "rack",
                                  "leaves:-1", "pod:2"])
def test_a_bad_shard_spec_names_the_option(text: str) -> None:
    with pytest.raises(InputError, match="--shard-by"):
        parse_shard_by(text)


def test_a_unit_the_fabric_lacks_is_refused(lab: FabricState) -> None:
    with pytest.raises(InputError, match="fabric lab has no pods"):
        shards(lab, parse_shard_by("pod"))
    assert str(parse_shard_by(" leaves:12 ")) == "leaves:12"
    assert str(parse_shard_by("su")) == "su"
