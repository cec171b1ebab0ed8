"""Congestion profiles (qos.yaml `profile`): what each plans, what each refuses at load, the
lossy fabric's own invariant, and a fabric between two profiles judged device by device."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.checks import CATALOG, CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState, Role, Trimming
from flatfab.model.transition import source_plan
from flatfab.plan.planner import plan
from flatfab.platforms import configdb
from tests.support.paths import ROOT

LOSSLESS = [c for c, item in CATALOG.items() if item.lossless] + ["congestion.transition"]


def _intent(tmp_path: Path, head: str, *, drop: tuple[str, ...] = ()) -> Path:
    """intents/lab with `head` before its qos.yaml, less the lines containing `drop`."""
    target = tmp_path / "lab"
    shutil.copytree(ROOT / "intents" / "lab", target)
    qos = target / "qos.yaml"
    lines = [line for line in qos.read_text().splitlines()
             if not any(word in line for word in drop)]
    qos.write_text(head + "\n".join(lines) + "\n")
    return target


# the lab's qos.yaml spells out the lossless keys a profile changes
LOSSY = ("priorities:",)
NO_DCQCN = ("ecn_np:", "ecn_rp:", "dcqcn:")


def _static(fabric: FabricState) -> list[tuple[str, str | None, str | None]]:
    found = run_checks(CheckContext(state=fabric, plan=fabric, stage=Stage.STATIC))
    return [(f.check, f.device, f.port) for f in found if f.severity.fails]


def test_a_lossy_fabric_pauses_nothing_and_marks_the_roce_queue(tmp_path: Path) -> None:
    fabric = plan(load_intent(_intent(tmp_path, "profile: lossy\n", drop=LOSSY)))
    assert fabric.lossless is not None and fabric.lossless.lossless == []
    port = fabric.devices["leaf1"].interfaces["swp51"].qos
    assert port is not None
    assert port.pfc == [] and port.watchdog is None and set(port.pgs.values()) == {
        "ingress_lossy"}
    assert port.queues[3].ecn is not None and port.queues[0].ecn is None
    assert port.queues[3].profile == "egress_lossy"
    nic = fabric.devices["leaf1-h1"].interfaces["eth1"].nic
    assert nic is not None and nic.pfc == [] and nic.ecn_np == [3] and nic.ecn_rp == [3]
    assert _static(fabric) == []


def test_lossless_without_dcqcn_turns_the_nics_points_off(tmp_path: Path) -> None:
    fabric = plan(load_intent(_intent(tmp_path, "profile: lossless-no-dcqcn\n", drop=NO_DCQCN)))
    nic = fabric.devices["leaf1-h1"].interfaces["eth1"].nic
    assert nic is not None and (nic.dcqcn, nic.ecn_np, nic.ecn_rp, nic.pfc) == (
        False, [], [], [3])
    port = fabric.devices["leaf1"].interfaces["swp1"].qos
    assert port is not None and port.pfc == [3] and port.queues[3].ecn is not None
    assert _static(fabric) == []


@pytest.mark.parametrize(("head", "drop", "path", "reason"), [
    ("profile: lossy\n", (), "pfc.priorities", "[3] in profile lossy, which pauses no "
     "priority"),
    ("profile: lossy\n", ("priorities:",), "hosts.pfc", "pauses no priority, on the NICs"),
    ("profile: lossless-no-dcqcn\n", ("ecn_np:", "ecn_rp:"), "hosts.dcqcn",
     "runs no DCQCN on the NICs"),
    ("profile: lossy\ntransition_from: lossy\n", ("priorities:",), "transition_from",
     "lossy is the profile itself"),
    ("profile: lossier\n", (), "profile", "'lossless', 'lossless-no-dcqcn', 'lossy' or "
     "'lossy-trimming'"),
])
def test_a_key_set_against_the_profile_is_refused_with_its_path(
        tmp_path: Path, head: str, drop: tuple[str, ...], path: str, reason: str) -> None:
    extra = "  pfc: [3]\n" if path == "hosts.pfc" else ""
    target = _intent(tmp_path, head, drop=drop)
    if extra:
        qos = target / "qos.yaml"
        qos.write_text(qos.read_text().replace("hosts:\n", "hosts:\n" + extra))
    with pytest.raises(InputError) as caught:
        load_intent(target)
    problem = caught.value.problems[0]
    assert problem.file.endswith("qos.yaml")
    assert problem.path == path and reason in problem.reason, problem


def test_pfc_left_on_a_port_of_a_lossy_fabric_is_named(tmp_path: Path) -> None:
    target = _intent(tmp_path, "profile: lossy\n", drop=LOSSY)
    qos = target / "qos.yaml"
    qos.write_text(qos.read_text() + "overrides:\n  - {devices: [leaf2], ports: [swp52], "
                   "pfc: [3]}\n")
    found = _static(plan(load_intent(target)))
    assert ("pfc.lossy_fabric", "leaf2", "swp52") in found
    assert {c for c, _, _ in found} <= {"pfc.lossy_fabric", "pfc.link_symmetry"}, found


def _moving(tmp_path: Path, head: str, drop: tuple[str, ...] = ()) -> FabricState:
    fabric = plan(load_intent(_intent(tmp_path, head, drop=drop)))
    assert fabric.transition is not None
    return fabric


def _observed(fabric: FabricState, leaving: set[str]) -> FabricState:
    """The fabric read with the `leaving` devices still in the profile it moves from."""
    assert fabric.transition is not None
    old = source_plan(fabric, fabric.transition, leaving).devices
    return fabric.model_copy(update={"devices": {n: old.get(n, d)
                                                 for n, d in fabric.devices.items()},
                                     "transition": None})


def _live(state: FabricState, fabric: FabricState) -> list[tuple[str, str | None, str | None]]:
    found = run_checks(CheckContext(state=state, plan=fabric, stage=Stage.LIVE), only=LOSSLESS)
    return sorted((f.check, f.device, f.port) for f in found if f.severity.fails)


def _edge(fabric: FabricState) -> set[str]:
    return {n for n, d in fabric.devices.items() if d.role in (Role.HOST, Role.LEAF)}


def test_towards_lossy_the_edge_may_go_first_never_the_core(tmp_path: Path) -> None:
    fabric = _moving(tmp_path, "profile: lossy\ntransition_from: lossless\n", drop=LOSSY)
    every = set(fabric.devices)
    spines = every - _edge(fabric)
    # before, after, and with the leaves and their hosts moved: each device is judged
    # against its own profile's plan, and the links between them accept the mix
    for leaving in (every, set(), spines):
        assert _live(_observed(fabric, leaving), fabric) == [], leaving
    # spine1 moved before leaf1: leaf1 is lossless below a hop that no longer pauses
    early = _live(_observed(fabric, every - {"spine1"}), fabric)
    assert early == [("congestion.transition", f"leaf{i}", "swp51") for i in (1, 2, 3, 4)]


def test_towards_lossless_the_core_goes_first(tmp_path: Path) -> None:
    fabric = _moving(tmp_path, "transition_from: lossy\n")
    assert fabric.transition is not None and fabric.transition.profile.lossless == []
    edge = _edge(fabric)
    assert _live(_observed(fabric, edge), fabric) == []  # spines lossless first
    found = _live(_observed(fabric, edge - {"leaf2", "leaf2-h1", "leaf2-h2"}), fabric)
    assert found == []  # leaf2 and its hosts next: lossless below lossless spines
    # leaf3 lossless below spines still lossy
    wrong = _live(_observed(fabric, (set(fabric.devices) - edge) | {"leaf1", "leaf1-h1",
                                                                     "leaf1-h2", "leaf2",
                                                                     "leaf2-h1", "leaf2-h2",
                                                                     "leaf4", "leaf4-h1",
                                                                     "leaf4-h2"}), fabric)
    assert wrong == [("congestion.transition", "leaf3", "swp51"),
                     ("congestion.transition", "leaf3", "swp52")]


def test_a_half_changed_switch_is_named_at_its_ports(tmp_path: Path) -> None:
    fabric = _moving(tmp_path, "profile: lossy\ntransition_from: lossless\n", drop=LOSSY)
    # spine2 moved to lossy but for swp1, which still pauses
    state = _observed(fabric, {"spine1"})
    spine = state.devices["spine2"]
    assert fabric.transition is not None
    old = fabric.transition.devices["spine2"].ports["swp1"]
    ports = {**spine.interfaces, "swp1": spine.interfaces["swp1"].model_copy(update={"qos": old})}
    state = state.model_copy(update={"devices": {**state.devices, "spine2": spine.model_copy(
        update={"interfaces": ports})}})
    found = _live(state, fabric)
    assert ("congestion.transition", "spine2", "swp1") in found
    # judged against the profile it moves to, spine2's swp1 is PFC left on in a lossy fabric
    assert ("pfc.lossy_fabric", "spine2", "swp1") in found


# the lab's qos.yaml spells out ets.strict [6], which would leave the trim TC weighted
TRIMMING = ("priorities:", "strict:")


def test_a_trimming_fabric_trims_the_roce_queue_into_a_strict_tc(tmp_path: Path) -> None:
    fabric = plan(load_intent(_intent(tmp_path, "profile: lossy-trimming\n", drop=TRIMMING)))
    leaf = fabric.devices["leaf1"]
    assert leaf.qos is not None and leaf.qos.trimming == Trimming(size=256, tc=7, queue=7)
    assert leaf.qos.profiles["egress_lossy_trim"].discard == "trim"
    host_port, uplink = (leaf.interfaces[p].qos for p in ("swp1", "swp51"))
    assert host_port is not None and uplink is not None
    assert (host_port.trim_dscp, uplink.trim_dscp) == (44, 45)  # towards hosts, the fabric
    assert host_port.queues[3].profile == "egress_lossy_trim" and host_port.queues[7].strict
    assert host_port.maps.dscp_to_tc[44] == host_port.maps.dscp_to_tc[45] == 7
    # the virtual ASIC holds it as SONiC's CONFIG_DB does, and reads back as planned
    device, ports = configdb.from_config_db(
        configdb.load(configdb.dump(configdb.to_config_db(leaf))), virtual=True)
    assert device is not None and device.trimming == leaf.qos.trimming
    assert ports["swp1"] == host_port and ports["swp51"] == uplink
    assert _static(fabric) == []


def test_a_trim_dscp_of_a_data_class_and_a_weighted_trim_queue_are_named(
        tmp_path: Path) -> None:
    fabric = plan(load_intent(_intent(
        tmp_path, "profile: lossy-trimming\ntrimming: {dscp_to_fabric: 26}\n", drop=TRIMMING)))
    found = _static(fabric)
    assert ("trim.dscp", "spine1", "swp1") in found and ("trim.dscp", "leaf1", "swp1") in found
    assert {c for c, _, _ in found} == {"trim.dscp"}, found
    weighted = plan(load_intent(_intent(tmp_path / "w", "profile: lossy-trimming\n",
                                        drop=("priorities:",))))
    found = _static(weighted)
    assert {(c, d) for c, d, _ in found} == {("trim.queue", n) for n in weighted.devices
                                              if not n.startswith(("leaf1-", "leaf2-",
                                                                   "leaf3-", "leaf4-"))}


def test_trimming_outside_its_profile_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_intent(tmp_path, "profile: lossy\ntrimming: {size: 512}\n", drop=LOSSY))
    problem = caught.value.problems[0]
    assert problem.path == "trimming" and "belongs to profile lossy-trimming" in problem.reason
