"""The pings verify plans: bounded fan-out that still covers every pair of leaves."""

from __future__ import annotations

import itertools

from flatfab.intent.loader import load_intent
from flatfab.model.state import Probe, Role
from flatfab.plan.planner import plan
from flatfab.plan.probes import plan_probes
from tests.support.paths import ROOT

LAB = plan(load_intent(ROOT / "intents" / "lab"))
BIG = plan(load_intent(ROOT / "intents" / "lab4x16"))


def _leaf(state, host):  # type: ignore[no-untyped-def]
    return state.devices[host].interfaces["eth1"].peer.device


def test_default_fanout_covers_every_leaf_pair_of_each_tenant() -> None:
    for state in (LAB, BIG):
        probes = plan_probes(state)
        covered = {frozenset((_leaf(state, src), _leaf(state, p.target)))
                   for src, mine in probes.items() for p in mine
                   if p.expect_reply and p.dont_fragment}
        leaves = [d.name for d in state.of_role(Role.LEAF)]
        assert covered == {frozenset(pair) for pair in itertools.combinations(leaves, 2)}


def test_probe_count_grows_with_hosts_times_fanout_not_hosts_squared() -> None:
    hosts = len(BIG.of_role(Role.HOST))
    assert sum(len(p) for p in plan_probes(BIG).values()) <= hosts * (2 * 8 + 1 + 2)
    assert sum(len(p) for p in plan_probes(BIG, fanout=2).values()) <= hosts * (2 * 2 + 1 + 2)
    everything = plan_probes(BIG, fanout=0)
    assert all(sum(p.dont_fragment for p in mine) == 15 for mine in everything.values())


def test_jumbo_probe_fills_the_host_mtu_and_isolation_expects_silence() -> None:
    mine = plan_probes(LAB)["leaf1-h1"]
    jumbo = [p for p in mine if p.dont_fragment]
    assert jumbo and all(p.size == 9000 - 28 for p in jumbo)
    cross = [p for p in mine if not p.expect_reply]
    assert [(p.target, p.address) for p in cross] == [("leaf1-h2", "10.200.1.12"),
                                                      ("leaf2-h2", "10.200.2.12")]


def test_isolation_is_tried_for_every_tenant_pair_at_every_leaf() -> None:
    """From every leaf, each tenant's hosts probe each other tenant beside them and behind
    another leaf (the lab: blue and red on all four leaves)."""
    leaf_of = {h.name: next(iter(h.interfaces.values())).peer.device  # type: ignore[union-attr]
               for h in LAB.of_role(Role.HOST)}
    tenant_of = {h.name: h.tenant for h in LAB.of_role(Role.HOST)}
    tried = {(leaf_of[src], tenant_of[src], tenant_of[p.target], leaf_of[p.target] ==
              leaf_of[src]) for src, mine in plan_probes(LAB).items() for p in mine
             if not p.expect_reply}
    want = {(leaf, a, b, same) for leaf in set(leaf_of.values()) for a in ("blue", "red")
            for b in ("blue", "red") if a != b for same in (True, False)}
    assert tried == want
    assert plan_probes(LAB) == plan_probes(LAB)


def test_probes_made_as_copies_are_what_validation_makes() -> None:
    """Probes are copies of one validated prototype (memory): each must be the model a full
    validation of its values gives, multi-NIC sources and NICs included."""
    for state in (LAB, BIG, plan(load_intent(ROOT / "intents" / "rail"))):
        for mine in plan_probes(state).values():
            for probe in mine:
                assert Probe.model_validate(probe.model_dump()) == probe
