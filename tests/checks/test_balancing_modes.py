"""Load balancing beyond the hash (fabric.yaml `load_balancing.mode`): the intent's rules, the
plan on every switch, the lab's virtual ASIC holding it, and the checks that name a switch of
a tier balancing otherwise, spraying towards NICs that want packets in order, and adaptive
routing on ports it cannot steer; refused at load where a platform cannot."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState, LbMode
from flatfab.plan.planner import plan
from flatfab.platforms import configdb
from flatfab.platforms.frr import ecmp
from flatfab.platforms.frr.render import render_qos
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

CHECKS = ["lb.mode", "lb.spray_hosts", "lb.adaptive_ports", "lb.intent"]


def _fabric(tmp_path: Path, balancing: str, *, qos: str = "", source: str = "lab",
            tenants: bool = True) -> Path:
    target = tmp_path / source
    shutil.copytree(ROOT / "intents" / source, target)
    fabric = target / "fabric.yaml"
    fabric.write_text(re.sub(r"(?ms)^load_balancing:\n(?:[ #].*?\n|\n)*", "",
                             fabric.read_text()) + balancing)
    if qos:
        path = target / "qos.yaml"
        path.write_text(path.read_text().replace("hosts:\n", "hosts:\n" + qos))
    if not tenants:  # the hosts in the default VRF: no VRF sub-interfaces on fabric links
        (target / "tenants.yaml").write_text("tenants: []\n")
        hosts = target / "hosts.yaml"
        hosts.write_text(hosts.read_text() + "host_pool: 10.30.0.0/16\n")
    return target


def _found(state: FabricState, planned: FabricState,
           stage: Stage = Stage.STATIC) -> list[tuple[str, str | None, str | None]]:
    found = run_checks(CheckContext(state=state, plan=planned, stage=stage), only=CHECKS)
    return sorted((f.check, f.device, f.port) for f in found)


@pytest.mark.parametrize(("text", "path", "reason"), [
    ("load_balancing:\n  mode: flowlet\n", "load_balancing", "mode flowlet needs `flowlet_us`"),
    ("load_balancing:\n  flowlet_us: 16\n", "load_balancing",
     "`flowlet_us` is for mode flowlet, not hash"),
    ("load_balancing:\n  mode: ecmp\n", "load_balancing.mode", "'hash'"),
    ("load_balancing:\n  tiers:\n    spine: {flowlet_us: 16}\n", "load_balancing",
     "tiers.spine: `flowlet_us` is for mode flowlet, not hash"),
    ("load_balancing:\n  tiers:\n    spine: {mode: flowlet}\n", "load_balancing",
     "tiers.spine: mode flowlet needs `flowlet_us`"),
    ("load_balancing:\n  planes:\n    1: {mode: adaptive}\n", "",
     "load_balancing.planes: plane 1 is not one of the fabric's planes (it has none)"),
    ("load_balancing:\n  tiers:\n    core: {mode: hash}\n", "load_balancing.tiers.core.[key]",
     "Input should be 'leaf', 'spine' or 'superspine'"),
])
def test_a_mode_that_cannot_be_is_refused(tmp_path: Path, text: str, path: str,
                                          reason: str) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path, text))
    problem = caught.value.problems[0]
    assert problem.path == path and reason in problem.reason, problem


def test_every_switch_balances_the_intent_s_way_and_the_virtual_asic_holds_it(
        tmp_path: Path) -> None:
    fabric = plan(load_intent(_fabric(tmp_path, "load_balancing:\n  mode: flowlet\n"
                                      "  flowlet_us: 16\n")))
    for name in ("leaf1", "spine2"):
        lb = fabric.devices[name].lb
        assert lb is not None and (lb.mode, lb.flowlet_us) == (LbMode.FLOWLET, 16)
    leaf = fabric.devices["leaf1"]
    text = render_qos(leaf)
    assert text is not None
    rows = configdb.load(text)[ecmp.MODE_TABLE]
    assert rows == {"GLOBAL": {"mode": "flowlet", "flowlet_us": "16"}}
    assert leaf.lb is not None
    assert ecmp.with_mode(leaf.lb.model_copy(update={"mode": LbMode.HASH, "flowlet_us": None}),
                          rows) == leaf.lb
    assert _found(fabric, fabric) == []
    hashed = plan(load_intent(_fabric(tmp_path / "h", "load_balancing: {}\n")))
    assert ecmp.MODE_TABLE not in configdb.load(render_qos(hashed.devices["leaf1"]) or "")


def test_spraying_towards_nics_that_want_order_is_named(tmp_path: Path) -> None:
    fabric = plan(load_intent(_fabric(tmp_path, "load_balancing:\n  mode: spray\n")))
    found = _found(fabric, fabric)
    assert found == [("lb.spray_hosts", f"leaf{n}-h{h}", "eth1") for n in range(1, 5)
                     for h in (1, 2)]
    accepted = plan(load_intent(_fabric(tmp_path / "a", "load_balancing:\n  mode: spray\n",
                                        qos="  out_of_order: true\n")))
    assert _found(accepted, accepted) == []


def test_adaptive_routing_on_ports_with_vrf_sub_interfaces_is_named(tmp_path: Path) -> None:
    fabric = plan(load_intent(_fabric(tmp_path, "load_balancing:\n  mode: adaptive\n")))
    found = _found(fabric, fabric)
    assert ("lb.adaptive_ports", "leaf1", "swp51") in found
    assert ("lb.adaptive_ports", "spine2", "swp4") in found
    assert {c for c, _, _ in found} == {"lb.adaptive_ports"}
    plain = plan(load_intent(_fabric(tmp_path / "p", "load_balancing:\n  mode: adaptive\n",
                                     tenants=False)))
    assert _found(plain, plain) == []


def test_one_switch_of_a_tier_balancing_otherwise_is_named_live(tmp_path: Path) -> None:
    planned = plan(load_intent(_fabric(tmp_path, "load_balancing: {}\n")))
    state = planned.model_copy(deep=True)
    spine = state.devices["spine2"]
    assert spine.lb is not None
    spine.lb = spine.lb.model_copy(update={"mode": LbMode.ADAPTIVE})
    found = _found(state, planned, Stage.LIVE)
    assert found == [("lb.adaptive_ports", "spine2", f"swp{n}") for n in range(1, 5)] + [
        ("lb.intent", "spine2", None), ("lb.mode", "spine2", None)]


def test_a_mode_is_refused_where_a_platform_cannot(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path, "load_balancing:\n  mode: adaptive\n",
                            source="multivendor"), known_platforms=PLATFORMS)
    reasons = {(p.path, p.reason) for p in caught.value.problems}
    assert ("load_balancing.mode", "platform eos cannot do this (lb_adaptive): flatfab does "
            "not render adaptive routing for EOS yet") in reasons


def test_a_tier_balances_otherwise_and_only_its_platforms_are_asked(tmp_path: Path) -> None:
    fabric = plan(load_intent(_fabric(
        tmp_path, "load_balancing:\n  seeds: {leaf: 3, spine: 5}\n"
        "  tiers:\n    spine: {mode: flowlet, flowlet_us: 40}\n")))
    ways = {n: (d.lb.mode, d.lb.flowlet_us, d.lb.seed) for n, d in fabric.devices.items()
            if d.lb is not None}
    assert ways["leaf1"] == (LbMode.HASH, None, 3)
    assert ways["spine2"] == (LbMode.FLOWLET, 40, 5)
    assert _found(fabric, fabric) == []  # one way per tier, each tier its own
    # NX-OS (spine2) cannot balance by flowlets: named at the tier's key; the leaves' EOS,
    # which could not either, is not asked
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path / "m", "load_balancing:\n  tiers:\n"
                            "    spine: {mode: flowlet, flowlet_us: 40}\n",
                            source="multivendor"), known_platforms=PLATFORMS)
    refused = {(p.path, p.reason.split(":")[0]) for p in caught.value.problems}
    assert ("load_balancing.tiers.spine.mode", "platform nxos cannot do this (lb_flowlet)") \
        in refused
    assert not any("eos cannot do this (lb_flowlet)" in r for _, r in refused), refused


def test_a_tier_s_own_mode_drops_the_fabric_s_flowlet_timer(tmp_path: Path) -> None:
    text = "load_balancing:\n  mode: flowlet\n  flowlet_us: 16\n  tiers:\n    leaf: {mode: hash}\n"
    leaf = plan(load_intent(_fabric(tmp_path, text))).devices["leaf1"].lb
    assert leaf is not None and (leaf.mode, leaf.flowlet_us) == (LbMode.HASH, None)


def test_each_plane_balances_its_own_way_and_sprays_towards_its_own_nics(
        tmp_path: Path) -> None:
    text = ("load_balancing:\n  seeds: {leaf: 3, spine: 5, superspine: 7}\n  planes:\n"
            "    2:\n      mode: spray\n      seeds: {spine: 9}\n"
            "      tiers:\n        superspine: {mode: flowlet, flowlet_us: 24}\n")
    fabric = plan(load_intent(_fabric(tmp_path, text, source="rail")))
    by_plane: dict[tuple[int | None, str], set[tuple[LbMode, int | None]]] = {}
    for device in fabric.devices.values():
        if device.lb is not None:
            by_plane.setdefault((device.plane, device.role.value), set()).add(
                (device.lb.mode, device.lb.seed))
    assert by_plane[(1, "spine")] == {(LbMode.HASH, 5)}
    assert by_plane[(2, "spine")] == {(LbMode.SPRAY, 9)}
    assert by_plane[(2, "leaf")] == {(LbMode.SPRAY, 3)}
    assert by_plane[(2, "superspine")] == {(LbMode.FLOWLET, 7)}
    found = _found(fabric, fabric)
    assert found and {c for c, _, _ in found} == {"lb.spray_hosts"}
    sprayed = {(d, p) for _, d, p in found}
    for host, port in sprayed:  # only NICs of plane 2's rails (3 and 4) receive sprayed packets
        link = next(k for k in fabric.links if (k.b.device, k.b.port) == (host, port)
                    or (k.a.device, k.a.port) == (host, port))
        leaf = link.a.device if link.b.device == host else link.b.device
        assert fabric.devices[leaf].plane == 2, (host, port, leaf)
    planes = {fabric.devices[n].plane for n, d in fabric.devices.items()
              if d.lb is not None and d.lb.mode is LbMode.SPRAY}
    assert planes == {2}


def test_queue_pairs_per_connection_are_planned_per_nic(tmp_path: Path) -> None:
    source = _fabric(tmp_path, "load_balancing: {}\n", qos="  queue_pairs: 4\n")
    qos = source / "qos.yaml"
    qos.write_text(qos.read_text() + "overrides:\n  - devices: [leaf2-h1]\n"
                   "    nic: {queue_pairs: 8}\n")
    fabric = plan(load_intent(source))
    nics = {n: d.interfaces["eth1"].nic for n, d in fabric.devices.items()
            if n in ("leaf1-h1", "leaf2-h1")}
    assert {n: nic.queue_pairs for n, nic in nics.items() if nic is not None} == {
        "leaf1-h1": 4, "leaf2-h1": 8}
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path / "z", "", qos="  queue_pairs: 0\n"))
    assert caught.value.problems[0].path == "hosts.queue_pairs"
