"""AI back-end intents (scalable units, rails, pods, super-spines, planes, multi-NIC
servers): each refusal names file, key path, line and reason; the plan of intents/rail/
follows the reference designs; growth renumbers nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState, IfKind, Role
from flatfab.plan.planner import plan
from tests.support.flatfab import flatfab
from tests.support.intent_cases import CABLES, PLANES_1, RAIL_REFUSALS, Refusal
from tests.support.paths import ROOT

RAIL = ROOT / "intents" / "rail"
FABRIC, HOSTS = "fabric.yaml", "hosts.yaml"


def _copy(tmp_path: Path, *edits: tuple[str, str, str]) -> Path:
    """intents/rail/ copied, with (file, old, new) replacements (old must be there)."""
    target = tmp_path / "rail"
    shutil.copytree(RAIL, target)
    for file, old, new in edits:
        path = target / file
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {file}"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return target


def _plan(tmp_path: Path, *edits: tuple[str, str, str]) -> FabricState:
    return plan(load_intent(_copy(tmp_path, *edits)))



@pytest.mark.parametrize("case", RAIL_REFUSALS, ids=[c.id for c in RAIL_REFUSALS])
def test_a_bad_ai_backend_intent_is_one_clear_error(tmp_path: Path, case: Refusal) -> None:
    directory = _copy(tmp_path, *case.edits)
    with pytest.raises(InputError) as info:
        load_intent(directory)
    problems = info.value.problems
    shown = "\n".join(f"{p.file}:{p.line}: {p.path}: {p.reason}" for p in problems)
    found = [p for p in problems if case.reason in p.reason]
    assert found, f"no problem says {case.reason!r}:\n{shown}"
    problem = found[0]
    assert Path(problem.file).name == case.file, shown
    assert problem.path == case.path, shown
    if case.marker is not None:
        lines = [n for n, text in enumerate(
            (directory / case.file).read_text(encoding="utf-8").splitlines(), 1)
            if case.marker in text]
        assert problem.line == lines[0], shown
    assert "\n" not in str(problem)


def test_the_cli_refuses_with_exit_2_and_no_traceback(tmp_path: Path) -> None:
    _copy(tmp_path / "intents", (FABRIC, "  rails: 4\n", "  rails: 3\n"))
    result = flatfab("--root", str(tmp_path), "--fabric", "rail", "plan")
    assert result.code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "scalable_units.rails" in result.stderr and "fabric.yaml:" in result.stderr


def test_rail_plan_follows_the_reference_designs() -> None:
    state = plan(load_intent(RAIL))
    roles = {r: [d.name for d in state.of_role(r)] for r in Role}
    assert roles[Role.SUPERSPINE] == ["p1-ss1", "p1-ss2", "p2-ss1", "p2-ss2"]
    assert roles[Role.SPINE] == ["p1-pod1-spine1", "p2-pod1-spine1", "p1-pod2-spine1",
                                 "p2-pod2-spine1"]
    assert roles[Role.LEAF] == [f"su{su}-leaf{k}" for su in (1, 2) for k in (1, 2, 3, 4)]
    devices = state.devices
    # RFC 7938: tier 1 shares one ASN, each pod's spines one, every leaf its own
    assert {devices[n].asn for n in roles[Role.SUPERSPINE]} == {65000}
    assert devices["p1-pod1-spine1"].asn == devices["p2-pod1-spine1"].asn == 65001
    assert devices["p1-pod2-spine1"].asn == 65002
    leaf_asns = [devices[n].asn for n in roles[Role.LEAF]]
    assert len(set(leaf_asns)) == len(leaf_asns)
    # rails: NIC k of server i on the SU's rail-k leaf, port i; rails 1-2 plane 1, 3-4 plane 2
    for su in (1, 2):
        for server in (1, 2):
            host = devices[f"su{su}-s{server}"]
            assert host.server_role == "gpu" and host.su == su
            for k in (1, 2, 3, 4):
                nic = host.interfaces[f"eth{k}"]
                assert nic.rail == k and nic.peer is not None
                assert (nic.peer.device, nic.peer.port) == (f"su{su}-leaf{k}", f"swp{server}")
                assert devices[nic.peer.device].plane == (1 if k <= 2 else 2)
    assert devices["store1"].server_role == "storage"
    # nothing joins two planes; super-spine links are their own, longer, link class
    for link in state.links:
        a, b = devices[link.a.device], devices[link.b.device]
        if a.plane is not None and b.plane is not None:
            assert a.plane == b.plane, link.id
        if Role.SUPERSPINE in (a.role, b.role):
            assert (link.link_class, link.cable_m) == ("superspine", 50)
    ss_port = devices["p1-ss1"].interfaces["swp1"]
    leaf_port = devices["su1-leaf1"].interfaces["swp1"]
    assert ss_port.qos is not None and leaf_port.qos is not None
    assert ss_port.qos.pgs[3] != leaf_port.qos.pgs[3]  # headroom per link class


def test_each_nic_is_routed_on_its_own() -> None:
    host = plan(load_intent(RAIL)).devices["su1-s1"]
    assert [(r.source, r.table, r.priority) for r in host.rules] == [
        (f"10.100.{k}.11", 100 + k, 100 + k) for k in (1, 2, 3, 4)]
    by_table = {(r.table, r.prefix): (r.via, r.interface, r.source) for r in host.static_routes}
    assert by_table[(None, "0.0.0.0/0")] == ("10.100.1.1", "eth1", None)
    assert by_table[(102, "0.0.0.0/0")] == ("10.100.2.1", "eth2", "10.100.2.11")
    assert by_table[(102, "10.100.2.0/24")] == (None, "eth2", "10.100.2.11")
    assert host.sysctls["net.ipv4.conf.eth2.arp_ignore"] == "1"
    assert host.sysctls["net.ipv4.conf.eth2.arp_announce"] == "2"
    assert host.sysctls["net.ipv4.conf.eth2.rp_filter"] == "2"
    assert not any(".all." in key or ".eth0." in key for key in host.sysctls)


def _numbers(state: FabricState) -> dict[str, object]:
    """What growth must never change: every device's ASN, loopback, addresses and ports."""
    out: dict[str, object] = {}
    for name, device in state.devices.items():
        out[name] = (device.asn, device.loopback,
                     sorted((i.name, tuple(i.addresses), str(i.peer))
                            for i in device.interfaces.values()))
    return out


@pytest.mark.parametrize(("grow", "edits"), [
    ("an SU", ((FABRIC, "  count: 2\n  servers: 2\n", "  count: 3\n  servers: 2\n"),)),
    ("a pod and its SUs", ((FABRIC, "  count: 2\n  servers: 2\n",
                            "  count: 4\n  servers: 2\n"),)),
    ("a super-spine", ((FABRIC, "superspines:\n  count: 2\n", "superspines:\n  count: 3\n"),
                       (FABRIC, "superspines:\n  count: 3\n  max: 2\n",
                        "superspines:\n  count: 3\n  max: 2\n"),)),
])
def test_growth_renumbers_nothing_that_exists(tmp_path: Path, grow: str,
                                              edits: tuple[tuple[str, str, str], ...]) -> None:
    before = _numbers(plan(load_intent(RAIL)))
    if grow == "a super-spine":
        # a third super-spine needs room reserved for it: max 4 from the start
        reserved = ((FABRIC, "  max: 2\n  name:", "  max: 4\n  name:"),
                    (FABRIC, "  max_spines: 20 ", "  max_spines: 40 "))
        before = _numbers(_plan(tmp_path / "a", *reserved))
        after = _numbers(_plan(tmp_path / "b", *reserved,
                               (FABRIC, "superspines:\n  count: 2\n",
                                "superspines:\n  count: 3\n")))
    else:
        after = _numbers(_plan(tmp_path, *edits))
    grown = set(after) - set(before)
    assert grown, f"adding {grow} added no device"
    for name, numbers in before.items():
        if name in after and numbers != after[name]:
            # an existing switch gains ports to new devices; nothing it had changes
            old_ports = set(numbers[2])  # type: ignore[index]
            new_ports = set(after[name][2])  # type: ignore[index]
            assert numbers[:2] == after[name][:2], name  # type: ignore[index]
            assert old_ports <= new_ports, (name, old_ports - new_ports)


def test_a_plane_added_where_it_was_reserved_renumbers_nothing(tmp_path: Path) -> None:
    """Six NICs, six rails, three planes: the first two planes keep every number."""
    base = ((FABRIC, "  max: 2\n  rails:", "  max: 4\n  rails:"),
            (FABRIC, "  max_spines: 20 ", "  max_spines: 40 "))
    before = _numbers(_plan(tmp_path / "a", *base))
    after = _numbers(_plan(tmp_path / "b", *base,
                           (FABRIC, "  rails: 4\n", "  rails: 6\n"),
                           (FABRIC, "  count: 2\n  max: 4\n", "  count: 3\n  max: 4\n"),
                           (FABRIC, PLANES_1, "rails: {1: [1, 2], 2: [3, 4], 3: [5, 6]}"),
                           (HOSTS, "count: 4, name:", "count: 6, name:")))
    assert {"p3-ss1", "p3-pod1-spine1", "su1-leaf5", "su2-leaf6"} <= set(after)
    for name, numbers in before.items():
        assert numbers[:2] == after[name][:2], name  # type: ignore[index]
        assert set(numbers[2]) <= set(after[name][2]), name  # type: ignore[index]


def test_rack_attachment_puts_every_nic_of_a_server_on_one_leaf(tmp_path: Path) -> None:
    state = _plan(tmp_path, (FABRIC, "  attach: rail\n  rails: 4\n",
                             "  attach: rack\n  leaves: 1\n"),
                  (FABRIC, "non_blocking: true\n", ""),
                  (FABRIC, "planes:\n  count: 2\n  max: 2\n  " + PLANES_1 + "\n", ""),
                  (FABRIC, 'spine_name: "p{plane}-pod{pod}-spine{spine}"',
                   'spine_name: "pod{pod}-spine{spine}"'),
                  (FABRIC, 'name: "p{plane}-ss{spine}"', 'name: "ss{spine}"'),
                  (HOSTS, "servers:\n  - name: store1\n    profile: storage\n" + CABLES + "\n", ""),
                  ("tenants.yaml", ', "store*"]', "]"))
    host = state.devices["su1-s2"]
    cabled = sorted((i.name, str(i.peer)) for i in host.interfaces.values()
                    if i.kind is IfKind.NIC)
    assert cabled == [(f"eth{k}", f"su1-leaf1:swp{4 + k}") for k in (1, 2, 3, 4)]
    assert all(i.rail is None for i in host.interfaces.values())


def test_three_stage_scalable_units_under_listed_spines(tmp_path: Path) -> None:
    text = (RAIL / FABRIC).read_text(encoding="utf-8")
    head = text.split("scalable_units:")[0].replace("  max_spines: 20 ", "  max_spines: 16 ")
    body = ("scalable_units:\n  count: 2\n  servers: 2\n  rails: 4\n"
            "spines:\n  - name: spine1\n  - name: spine2\n")
    target = tmp_path / "rail"
    shutil.copytree(RAIL, target)
    (target / FABRIC).write_text(head.replace("non_blocking: true\n", "") + body,
                                 encoding="utf-8")
    state = plan(load_intent(target))
    leaf = state.devices["su2-leaf1"]
    assert sorted(i.peer.device for i in leaf.interfaces.values()  # type: ignore[union-attr]
                  if i.kind is IfKind.FABRIC and i.parent is None) == ["spine1", "spine2"]
    assert not state.of_role(Role.SUPERSPINE)
