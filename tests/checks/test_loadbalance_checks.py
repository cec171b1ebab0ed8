"""Load balancing: the intent's `load_balancing`, the plan's hashing per tier, the checks that
name a hash without RoCE's entropy, adjacent tiers with one seed, and drift; refused at load on
a platform flatfab renders no hashing for."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState, HashField, LoadBalancing
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.support.paths import ROOT

FIVE = [HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL, HashField.SRC_PORT,
        HashField.DST_PORT]
CHECKS = ["lb.roce_entropy", "lb.seeds", "lb.intent"]


def _fabric(tmp_path: Path, balancing: str, source: str = "lab") -> Path:
    """intents/<source> with `balancing` for its load_balancing section."""
    target = tmp_path / source
    shutil.copytree(ROOT / "intents" / source, target)
    fabric = target / "fabric.yaml"
    fabric.write_text(re.sub(r"(?ms)^load_balancing:\n(?:[ #].*?\n|\n)*", "",
                             fabric.read_text()) + balancing)
    return target


def _static(fabric: FabricState) -> list[tuple[str, str | None, str | None]]:
    found = run_checks(CheckContext(state=fabric, plan=fabric, stage=Stage.STATIC),
                       only=CHECKS)
    return [(f.check, f.device, f.port) for f in found]


def _live(state: FabricState, planned: FabricState) -> list[tuple[str, str | None, str]]:
    found = run_checks(CheckContext(state=state, plan=planned, stage=Stage.LIVE), only=CHECKS)
    return [(f.check, f.device, f.message) for f in found]


def test_each_tier_gets_the_fields_and_its_seed(tmp_path: Path) -> None:
    fabric = plan(load_intent(_fabric(tmp_path, "load_balancing:\n  hash_fields: [dst_port, "
                                      "src_port, protocol, dst_ip, src_ip]\n  seeds: {leaf: "
                                      "11, spine: 23}\n")))
    assert fabric.devices["leaf1"].lb == LoadBalancing(hash_fields=FIVE, seed=11)
    assert fabric.devices["spine2"].lb == LoadBalancing(hash_fields=FIVE, seed=23)
    assert fabric.devices["leaf1-h1"].lb is None  # hosts hash nothing for the fabric
    assert _static(fabric) == []
    # without the section, flatfab leaves each switch's hashing alone
    assert plan(load_intent(ROOT / "intents" / "numbered")).devices["lf-a"].lb is None


def test_a_hash_without_the_source_port_and_a_shared_seed_are_named(tmp_path: Path) -> None:
    fabric = plan(load_intent(_fabric(tmp_path, "load_balancing:\n  hash_fields: [src_ip, "
                                      "dst_ip, protocol, dst_port]\n  seeds: {leaf: 7, "
                                      "spine: 7}\n")))
    found = _static(fabric)
    assert sorted({d for c, d, _ in found if c == "lb.roce_entropy"}) == [
        "leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]
    # one finding per adjacent pair, on the upper switch at its port to the lower
    seeds = sorted((d, p) for c, d, p in found if c == "lb.seeds")
    assert seeds == [("spine1", f"swp{n}") for n in range(1, 5)] + [
        ("spine2", f"swp{n}") for n in range(1, 5)]


def test_live_drift_a_vrf_apart_and_an_unread_hash_are_named(tmp_path: Path) -> None:
    planned = plan(load_intent(_fabric(tmp_path, "load_balancing:\n  seeds: {leaf: 11, "
                                       "spine: 23}\n")))
    state = planned.model_copy(deep=True)
    assert _live(state, planned) == []
    state.devices["leaf2"].lb = LoadBalancing(hash_fields=FIVE[:3], seed=11)  # no ports
    state.devices["spine1"].lb = LoadBalancing(hash_fields=FIVE, seed=23, vrfs={
        "blue": LoadBalancing(hash_fields=FIVE, seed=5)})
    state.devices["leaf3"].lb = None  # a platform that reads no hashing
    found = _live(state, planned)
    assert sorted((c, d) for c, d, _ in found) == [
        ("lb.intent", "leaf2"), ("lb.intent", "spine1"), ("lb.roce_entropy", "leaf2"),
        ("lb.roce_entropy", "leaf3")]
    messages = {(c, d): m for c, d, m in found}
    assert "leaf3's ECMP hash is not judged" in messages[("lb.roce_entropy", "leaf3")]
    assert "leaf2 hashes ECMP on src_ip, dst_ip, protocol, not the UDP source port" in (
        messages[("lb.roce_entropy", "leaf2")])
    assert messages[("lb.intent", "spine1")] == ("spine1 VRF blue hashes with seed 5, the "
                                                 "intent sets 23")


def test_a_seed_the_kernel_has_no_sysctl_for_is_a_limitation_not_drift(tmp_path: Path
                                                                        ) -> None:
    planned = plan(load_intent(_fabric(tmp_path, "load_balancing:\n  seeds: {leaf: 11}\n")))
    state = planned.model_copy(deep=True)
    leaf = state.devices["leaf1"]
    leaf.lb = LoadBalancing(hash_fields=FIVE)
    leaf.limitations["lb.seed"] = "this kernel has no seed"
    assert _live(state, planned) == []


@pytest.mark.parametrize(("text", "path", "reason"), [
    ("load_balancing:\n  hash_fields: []\n", "load_balancing.hash_fields", "at least 1"),
    ("load_balancing:\n  hash_fields: [src_ip, src_ip]\n", "load_balancing.hash_fields",
     "'src_ip' is listed twice"),
    ("load_balancing:\n  hash_fields: [qp]\n", "load_balancing.hash_fields[0]", "'src_ip'"),
    ("load_balancing:\n  seeds: {tor: 3}\n", "load_balancing.seeds.tor.[key]", "'leaf'"),
    ("load_balancing:\n  seeds: {leaf: 0}\n", "load_balancing.seeds.leaf", "greater than"),
])
def test_a_load_balancing_that_cannot_be_is_refused(tmp_path: Path, text: str, path: str,
                                                    reason: str) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path, text))
    problem = caught.value.problems[0]
    assert problem.file.endswith("fabric.yaml")
    assert problem.path == path and reason in problem.reason


def test_a_platform_that_cannot_hash_as_asked_refuses_it(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path, "load_balancing:\n  seeds: {leaf: 3, spine: 70000}\n",
                            source="multivendor"), known_platforms=PLATFORMS)
    reasons = {(p.path, p.reason) for p in caught.value.problems}
    eos = PLATFORMS["eos"].facts.capabilities.unsupported  # leaf2: no hashing rendered
    assert ("load_balancing.hash_fields",
            f"platform eos cannot do this (ecmp_hash): {eos['ecmp_hash']}") in reasons
    # nxos (spine2) hashes on the four fields its one rendered line covers, not the default
    # 5-tuple; its seed range (1..4294967295) is the intent's own
    nxos = PLATFORMS["nxos"].facts.capabilities.hash_fields
    assert nxos is not None
    assert ("load_balancing.hash_fields",
            "platform nxos hashes on [src_ip, dst_ip, src_port, dst_port] only, not [src_ip, "
            f"dst_ip, protocol, src_port, dst_port]: {nxos.why}") in reasons
    assert not any("platform nxos" in reason and "ecmp_hash_seed" in reason
                   for _, reason in reasons), reasons
