"""ECMP hashing on the live lab: the rollout sets the intent's hash fields in every
namespace of every switch (the kernel's multipath sysctls, Documentation/networking/
ip-sysctl.rst), and a fault matrix where each switch made to hash otherwise is named by check,
device and VRF, then repaired by a rollout."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.lab import Lab

pytestmark = pytest.mark.live
FIELDS = "/proc/sys/net/ipv4/fib_multipath_hash_fields"
POLICY = "/proc/sys/net/ipv4/fib_multipath_hash_policy"
SEED = "/proc/sys/net/ipv4/fib_multipath_hash_seed"
FIVE_TUPLE = "55"  # src_ip, dst_ip, protocol, src_port, dst_port (intents/lab/fabric.yaml)


def _verify(lab: Lab) -> dict[str, Any]:
    result = lab.cli("verify", "--no-probes", "--format", "json")
    assert result.code in (0, 1), result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _rollout(lab: Lab) -> None:
    result = lab.cli("rollout", "--format", "json")
    assert result.code == 0, result.stdout[-2000:] + result.stderr


@pytest.fixture(scope="module")
def hashed(lab: Lab) -> Lab:
    _rollout(lab)
    return lab


def test_every_namespace_of_every_switch_hashes_on_the_five_tuple(hashed: Lab) -> None:
    for node in ("leaf1", "spine2"):
        for where in ("", "ip netns exec blue "):
            assert hashed.sh(node, f"{where}cat {POLICY} {FIELDS}").split() == [
                "3", FIVE_TUPLE], (node, where)
    data = _verify(hashed)
    assert data["passed"], data["findings"]
    assert {"lb.roce_entropy", "lb.intent"} <= set(data["checks"])


def test_switches_made_to_hash_otherwise_are_named_and_a_rollout_repairs_them(
        hashed: Lab) -> None:
    seeds = hashed.sh("leaf3", f"test -e {SEED} && echo yes || echo no").strip() == "yes"
    # leaf2 drops the ports from its hash; spine1's VRF blue alone hashes on addresses; leaf3
    # (where the kernel has seeds, Linux 6.11+) takes a seed of its own
    hashed.sh("leaf2", "sysctl -qw net.ipv4.fib_multipath_hash_fields=7")
    hashed.sh("spine1", "ip netns exec blue sysctl -qw net.ipv4.fib_multipath_hash_policy=0")
    if seeds:
        hashed.sh("leaf3", "sysctl -qw net.ipv4.fib_multipath_hash_seed=5")
    try:
        data = _verify(hashed)
        assert not data["passed"]
        named = {(f["check"], f["device"], f["vrf"]) for f in data["findings"]
                 if f["check"].startswith("lb.")}
        want = {("lb.roce_entropy", "leaf2", None), ("lb.intent", "leaf2", None),
                ("lb.roce_entropy", "spine1", "blue"), ("lb.intent", "spine1", "blue")}
        if seeds:
            want.add(("lb.intent", "leaf3", None))
        assert named == want, data["findings"]
    finally:
        _rollout(hashed)
    assert hashed.sh("leaf2", f"cat {FIELDS}").strip() == FIVE_TUPLE
    assert hashed.sh("spine1", f"ip netns exec blue cat {POLICY}").strip() == "3"
    if seeds:
        assert hashed.sh("leaf3", f"cat {SEED}").strip() == "0"
    data = _verify(hashed)
    assert data["passed"], data["findings"]
    if not seeds:
        pytest.skip("this kernel has no net.ipv4.fib_multipath_hash_seed (Linux 6.11+): the "
                    "seed fault was not injected")


def test_adaptive_routing_on_one_switch_only_is_named_and_a_rollout_repairs_it(
        hashed: Lab) -> None:
    # the virtual ASIC holds how a switch balances beyond the hash, as it holds PFC
    hashed.edit_asic("spine2", "d['FLATFAB_LOAD_BALANCE'] = {'GLOBAL': {'mode': 'adaptive'}}")
    try:
        data = _verify(hashed)
        assert not data["passed"]
        named = {(f["check"], f["device"]) for f in data["findings"]
                 if f["check"].startswith("lb.")}
        assert named == {("lb.mode", "spine2"), ("lb.intent", "spine2"),
                         ("lb.adaptive_ports", "spine2")}, data["findings"]
        mode = next(f for f in data["findings"] if f["check"] == "lb.mode")
        assert mode["message"] == ("spine2 balances by adaptive, the other spines of its "
                                   "tier by hash")
    finally:
        _rollout(hashed)
    data = _verify(hashed)
    assert data["passed"], data["findings"]
