"""Resilient hashing on srlinux: fabric.yaml `load_balancing.mode: resilient` rendered as
`ip-load-balancing resilient-hash-prefix` 0.0.0.0/0 and ::/0 in every routed
network-instance (tasks/platforms/srlinux/resilient.py), judged by Nokia's SR Linux YANG
with a 7220 IXR-D5 (Trident 4) feature set, pushed to the JSON-RPC double, read back by
collect into `DeviceState.lb.mode`; refused at load on the Tomahawk 7220s, whose models have
no such container; what flatfab cannot map (resilient on some instances or prefixes only)
named in `not_modelled`, the mode not read.

The box's running configuration here is the render as the double keeps it
(tests/doubles/srlinux.py `running_of`), changed per test: derived from Nokia's YANG, never
captured from a device.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import (
    FIVE_TUPLE,
    SWITCH_ROLES,
    BgpPeer,
    DeviceState,
    FabricState,
    LbMode,
    LoadBalancing,
)
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.srlinux import PLATFORM
from flatfab.platforms.srlinux.render import RenderError, as_tree, config_tree
from flatfab.platforms.srlinux.resilient import PATTERN, buckets
from flatfab.platforms.srlinux.sections import entries_of, normalized_running
from tests.doubles.srlinux import SrlinuxDouble, running_of, state_outputs
from tests.support.checks import live_findings
from tests.support.oracles import ORACLES, SRLINUX, SRLINUX_YANG, usable
from tests.support.srlinux import balanced_intent

D5 = "trident-4"  # 7220 IXR-D4/D5: PFC and resilient hashing
RESILIENT = "load_balancing:\n  mode: resilient\n"
CHECKS = ["lb.roce_entropy", "lb.mode", "lb.intent", "device.not_modelled"]
EVERY_ROUTE = ["0.0.0.0/0", "::/0"]


@pytest.fixture(scope="module")
def tmp_intents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("srlinux-resilient")


def _intent(tmp: Path, example: str, balancing: str, family: str = D5) -> Path:
    """intents/<example> on srlinux switches of `family`, its load_balancing `balancing`."""
    return balanced_intent(tmp, example, balancing, family)


@cache
def _fabric(tmp: Path, example: str, balancing: str = RESILIENT) -> FabricState:
    return plan(load_intent(_intent(tmp, example, balancing), known_platforms=PLATFORMS))


def _switches(state: FabricState) -> list[DeviceState]:
    return [d for d in state.devices.values() if d.role in SWITCH_ROLES]


def _one_per_role(state: FabricState) -> list[DeviceState]:
    return list({d.role: d for d in sorted(_switches(state), key=lambda d: d.name)}.values())


def _instances(device: DeviceState) -> dict[str, dict[str, Any]]:
    replaces = json.loads(PLATFORM.render(device))["replaces"]
    return {e["value"]["name"]: e["value"] for e in replaces
            if e["path"].startswith("/network-instance[")}


# ---- Nokia's YANG with a 7220 IXR-D5 feature set ---------------------------------------------
# The shared oracle compiles the models for a 7220 IXR-H4 (Tomahawk 4), where
# `ip-load-balancing` does not exist (if-feature ixr-dnx, trident3, trident4 or fpcx). The
# same models and the same list of features off, with Trident 4 / 7220 IXR-D5 on in place of
# Tomahawk 4 / IXR-H4, judge a D5's render; /system is in its scope (the hash options).
SWAP_ON = {"trident4", "platform-7220-d5"}
SWAP_OFF = ["tomahawk4", "platform-7220-h4"]


@cache
def _d5_oracle(folder: Path) -> Any:
    usable(SRLINUX)
    lines = (SRLINUX_YANG / "features-off.txt").read_text().splitlines()
    kept = [line for line in lines if line.split("#", 1)[0].strip() not in SWAP_ON]
    features = folder / "features-off-7220-d5.txt"
    features.write_text("\n".join([*kept, "# a 7220 IXR-D5 (Trident 4)", *SWAP_OFF]) + "\n")
    spec = importlib.util.spec_from_file_location("srlinux_yang_validate_d5",
                                                  SRLINUX_YANG / "validate.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.SCOPE = {*module.SCOPE, ("srl_nokia-system", "system")}
    return module.Oracle(SRLINUX_YANG / "yang", features)


def _d5_violations(tmp: Path, text_or_tree: str | dict[str, Any]) -> list[str]:
    tree = (as_tree(entries_of(json.loads(text_or_tree))) if isinstance(text_or_tree, str)
            else text_or_tree)
    violations, _ = _d5_oracle(tmp).validate(tree)
    return list(violations)


# ---- load ---------------------------------------------------------------------------------------


def test_resilient_is_refused_on_the_tomahawk_7220s_with_file_key_and_reason(
        tmp_intents: Path) -> None:
    for family in ("tomahawk-4", "tomahawk-5", "tomahawk-3"):
        with pytest.raises(InputError) as caught:
            load_intent(_intent(tmp_intents, "lab", RESILIENT, family),
                        known_platforms=PLATFORMS)
        found = [p for p in caught.value.problems if "(lb_resilient)" in p.reason]
        assert len(found) == 1, caught.value.problems
        assert found[0].file.endswith("fabric.yaml")
        assert found[0].path == "load_balancing.mode"
        assert found[0].reason.startswith(f"platform srlinux on {family} hardware cannot do "
                                          "this (lb_resilient): ")
        assert "7220 IXR-H2..H5 (Tomahawk)" in found[0].reason


def test_resilient_loads_on_a_7220_ixr_d5_and_the_other_modes_stay_refused(
        tmp_intents: Path) -> None:
    caps = PLATFORMS["srlinux"].facts.capabilities
    assert "lb_resilient" not in caps.unsupported
    assert {"lb_flowlet", "lb_adaptive", "lb_spray"} <= set(caps.unsupported)
    assert "lb_resilient" not in caps.family_limits(D5)
    assert "lb_resilient" in caps.family_limits("generic")
    state = _fabric(tmp_intents, "lab")
    assert all(d.lb == LoadBalancing(hash_fields=list(FIVE_TUPLE), mode=LbMode.RESILIENT)
               for d in _switches(state))
    for mode, extra in (("flowlet", "  flowlet_us: 200\n"), ("adaptive", ""), ("spray", "")):
        with pytest.raises(InputError) as caught:
            load_intent(_intent(tmp_intents, "lab", f"load_balancing:\n  mode: {mode}\n"
                                                    f"{extra}"), known_platforms=PLATFORMS)
        assert any(f"(lb_{mode})" in p.reason and p.path == "load_balancing.mode"
                   for p in caught.value.problems), caught.value.problems


# ---- render -------------------------------------------------------------------------------------


@pytest.mark.parametrize("example", ["lab", "numbered", "rail"])
def test_every_routed_instance_hashes_every_route_resiliently(tmp_intents: Path,
                                                              example: str) -> None:
    state = _fabric(tmp_intents, example)
    for device in _switches(state):
        instances = _instances(device)
        routed = {n: ni for n, ni in instances.items() if ni["type"] in ("default", "ip-vrf")}
        assert "default" in routed and len(routed) > 1, device.name  # tenants' ip-vrfs too
        for name, ni in instances.items():
            if name not in routed:  # mac-vrfs have no routes: none there (the model's must)
                assert "ip-load-balancing" not in ni
                continue
            entries = ni["ip-load-balancing"]["resilient-hash-prefix"]
            assert [e["ip-prefix"] for e in entries] == EVERY_ROUTE
            bgp = device.bgp.get(name)
            paths = min(bgp.maximum_paths or 64, 64) if bgp is not None else 64
            for entry in entries:
                # max-paths covers BGP's multipath, which the load keeps >= the uplinks
                assert entry["max-paths"] == paths
                if bgp is not None and bgp.maximum_paths is not None:
                    assert entry["max-paths"] >= len({p.peer_device for p in bgp.peers.values()
                                                      if p.peer_device}) or paths == 64
                assert entry["hash-buckets-per-path"] == buckets(paths)
                assert entry["max-paths"] * entry["hash-buckets-per-path"] <= PATTERN


def test_the_buckets_fill_a_pattern_of_at_most_64(tmp_intents: Path) -> None:
    assert [(m, buckets(m)) for m in (1, 2, 3, 4, 16, 33, 64)] == [
        (1, 32), (2, 32), (3, 21), (4, 16), (16, 4), (33, 1), (64, 1)]
    # the numbered example sets underlay.maximum_paths 16: 16 paths x 4 buckets
    leaf = next(d for d in _switches(_fabric(tmp_intents, "numbered")) if d.role.value == "leaf")
    entry = _instances(leaf)["default"]["ip-load-balancing"]["resilient-hash-prefix"][0]
    assert leaf.bgp["default"].maximum_paths == 16
    assert (entry["max-paths"], entry["hash-buckets-per-path"]) == (16, 4)


@pytest.mark.parametrize("example", ["lab", "numbered", "rail"])
def test_the_render_passes_nokia_s_yang_for_a_7220_ixr_d5(tmp_intents: Path,
                                                          example: str) -> None:
    for device in _one_per_role(_fabric(tmp_intents, example)):
        assert _d5_violations(tmp_intents, PLATFORM.render(device)) == [], device.name


def test_the_oracle_judges_the_resilient_entries(tmp_intents: Path) -> None:
    """The D5 models catch what SR Linux refuses; the H4 models (the shared oracle) have no
    ip-load-balancing at all: the reason the Tomahawk families are refused at load."""
    leaf1 = _fabric(tmp_intents, "lab").devices["leaf1"]
    tree = as_tree(config_tree(leaf1, PLATFORM.names))
    entry = tree["network-instance"][0]["ip-load-balancing"]["resilient-hash-prefix"][0]
    entry["max-paths"], entry["hash-buckets-per-path"] = 65, 33
    bridge = next(ni for ni in tree["network-instance"] if ni["type"] == "mac-vrf")
    bridge["ip-load-balancing"] = {"resilient-hash-prefix": [{"ip-prefix": "0.0.0.0/0"}]}
    found = _d5_violations(tmp_intents, tree)
    assert any("max-paths" in v and "range" in v for v in found), found
    assert any("hash-buckets-per-path" in v and "range" in v for v in found), found
    assert any("not possible on network-instance of types other than ip-vrf or default" in v
               for v in found), found
    h4 = usable(ORACLES["srlinux"]).validate("leaf1", PLATFORM.render(leaf1), leaf1)
    assert any('"ip-load-balancing" not found' in v for v in h4), h4


def test_hash_mode_renders_no_resilient_entries(tmp_intents: Path) -> None:
    state = _fabric(tmp_intents, "lab", "load_balancing:\n  mode: hash\n")
    for device in _switches(state):
        assert all("ip-load-balancing" not in ni for ni in _instances(device).values())


def test_more_equal_cost_paths_than_64_is_one_clear_render_error(tmp_intents: Path) -> None:
    """BGP may install more next hops than SR Linux's resilient table uses (max-paths 1..64):
    never rendered with the rest silently idle."""
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"].model_copy(deep=True)
    bgp = leaf.bgp["default"]
    bgp.maximum_paths = 128
    for n in range(70):
        bgp.peers[f"10.99.{n}.1"] = BgpPeer(key=f"10.99.{n}.1", address=f"10.99.{n}.1",
                                            remote_asn=65000)
    with pytest.raises(RenderError, match=r"network-instance default: BGP default may install "
                                          r"up to 72 equal-cost next hops \(maximum_paths "
                                          r"128, 72 peers\).* at most 64"):
        PLATFORM.render(leaf)
    bgp.maximum_paths = 64  # what the error asks: rendered
    assert _instances(leaf)["default"]["ip-load-balancing"]["resilient-hash-prefix"][0][
        "max-paths"] == 64


def test_a_mode_sr_linux_lacks_is_one_clear_render_error(tmp_intents: Path) -> None:
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"].model_copy(deep=True)
    leaf.lb = LoadBalancing(hash_fields=list(FIVE_TUPLE), mode=LbMode.SPRAY)
    with pytest.raises(RenderError, match="load balancing mode spray: SR Linux has none"):
        PLATFORM.render(leaf)


# ---- read back ----------------------------------------------------------------------------------

MGMT = {"name": "mgmt", "type": "srl_nokia-network-instance:ip-vrf", "admin-state": "enable",
        "interface": [{"name": "mgmt0.0"}]}


def _box(device: DeviceState,
         change: Callable[[list[dict[str, Any]]], None] | None = None) -> SrlinuxDouble:
    """A double running the device's render, with SR Linux's mgmt instance, its
    network-instances changed by `change`."""
    tree = as_tree(config_tree(device, PLATFORM.names))
    running = running_of(tree)
    instances = running["srl_nokia-network-instance:network-instance"]
    instances.append(json.loads(json.dumps(MGMT)))
    if change is not None:
        change(instances)
    return SrlinuxDouble(running=running, outputs=state_outputs(device, tree))


def _collect(double: SrlinuxDouble, planned: DeviceState) -> DeviceState:
    driver = double.driver()
    driver.open()
    return PLATFORM.collect(PLATFORM.read_only(driver), planned, [])


def _live(state: FabricState, *seen: DeviceState) -> list[tuple[str, str, str]]:
    return [(f.check, str(f.device), f.message)
            for f in live_findings(state, *seen, only=CHECKS)]


def _routed(instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [ni for ni in instances if ni["name"] != "mgmt"
            and str(ni["type"]).endswith((":default", ":ip-vrf"))]


@pytest.mark.parametrize("example", ["lab", "rail"])
def test_collect_reads_resilient_back_and_the_live_checks_pass(tmp_intents: Path,
                                                               example: str) -> None:
    state = _fabric(tmp_intents, example)
    seen = []
    for device in _one_per_role(state):
        got = _collect(_box(device), device)
        assert got.errors == [] and got.not_modelled == {}, (device.name, got.errors,
                                                             got.not_modelled)
        assert got.lb is not None and got.lb.mode is LbMode.RESILIENT
        assert got.lb == device.lb, device.name
        seen.append(got)
    assert _live(state, *seen) == []


def _only_default(instances: list[dict[str, Any]]) -> None:
    for ni in _routed(instances):
        if ni["name"] != "default":
            del ni["ip-load-balancing"]


def _ipv4_only(instances: list[dict[str, Any]]) -> None:
    for ni in _routed(instances):
        ni["ip-load-balancing"]["resilient-hash-prefix"].pop()  # ::/0


def _some_prefixes(instances: list[dict[str, Any]]) -> None:
    for ni in _routed(instances):
        ni["ip-load-balancing"] = {"resilient-hash-prefix": [
            {"ip-prefix": "10.0.0.0/8", "max-paths": 64}]}


PARTIAL = {
    "some instances": (_only_default, {
        "network-instance blue ip-load-balancing": "no resilient hashing here, while "
        "default hash every route resiliently: flatfab's load_balancing.mode is one way for "
        "every network-instance of the switch; the mode is not read",
        "network-instance red ip-load-balancing": "no resilient hashing here, while default "
        "hash every route resiliently: flatfab's load_balancing.mode is one way for every "
        "network-instance of the switch; the mode is not read"}),
    "IPv4 only": (_ipv4_only, {
        f"network-instance {ni} resilient-hash-prefix": "resilient hashing for 0.0.0.0/0 "
        "only, not every IPv4 and IPv6 route (0.0.0.0/0 and ::/0): flatfab's "
        "load_balancing.mode is one way for every route of the switch; the mode is not read"
        for ni in ("blue", "default", "red")}),
    "some prefixes": (_some_prefixes, {
        f"network-instance {ni} resilient-hash-prefix": "resilient hashing for 10.0.0.0/8 "
        "only, not every IPv4 and IPv6 route (0.0.0.0/0 and ::/0): flatfab's "
        "load_balancing.mode is one way for every route of the switch; the mode is not read"
        for ni in ("blue", "default", "red")}),
}


@pytest.mark.parametrize("case", sorted(PARTIAL))
def test_resilient_on_part_of_the_switch_is_named_never_guessed(tmp_intents: Path,
                                                                case: str) -> None:
    state = _fabric(tmp_intents, "lab")
    spine = state.devices["spine1"]
    change, named = PARTIAL[case]
    got = _collect(_box(spine, change), spine)
    assert got.errors == []
    assert got.lb is None  # no way of balancing flatfab has: not read as hash or resilient
    assert got.not_modelled == named
    found = _live(state, got)
    checks = sorted({c for c, d, _ in found if d == "spine1"})
    # the hash is named not judged; each unmapped instance is named with why
    assert checks == ["device.not_modelled", "lb.roce_entropy"], found
    assert all(m.endswith("the mode is not read") for c, _, m in found
               if c == "device.not_modelled")


def test_a_switch_that_hashes_plainly_is_named_by_the_live_checks(tmp_intents: Path) -> None:
    state = _fabric(tmp_intents, "lab")
    spine = state.devices["spine1"]

    def none_at_all(instances: list[dict[str, Any]]) -> None:
        for ni in _routed(instances):
            del ni["ip-load-balancing"]

    got = _collect(_box(spine, none_at_all), spine)
    assert got.lb == LoadBalancing(hash_fields=list(FIVE_TUPLE)) and got.not_modelled == {}
    found = _live(state, got)
    assert sorted((c, d) for c, d, _ in found) == [("lb.intent", "spine1"),
                                                   ("lb.mode", "spine1")]
    messages = {c: m for c, _, m in found}
    assert messages["lb.intent"] == "spine1 balances by hash, the intent by resilient"


def test_what_resilient_leaves_unmapped_is_named_and_the_mode_still_read(
        tmp_intents: Path) -> None:
    """A longer prefix beside the /0 entries, and a max-paths below BGP's multipath (here the
    YANG default 1: the entry states none) are named; every route is resilient still."""
    state = _fabric(tmp_intents, "lab")
    leaf = state.devices["leaf1"]

    def extra(instances: list[dict[str, Any]]) -> None:
        default = next(ni for ni in instances if ni["name"] == "default")
        entries = default["ip-load-balancing"]["resilient-hash-prefix"]
        entries.append({"ip-prefix": "10.0.0.0/8", "max-paths": 8})
        del entries[1]["max-paths"]  # ::/0 at the default, 1

    got = _collect(_box(leaf, extra), leaf)
    assert got.errors == [] and got.lb == leaf.lb
    assert got.not_modelled == {
        "network-instance default resilient-hash-prefix 10.0.0.0/8": "an entry within "
        "0.0.0.0/0 or ::/0, which already make its routes resilient: flatfab renders only "
        "those two and does not read this one's settings",
        "network-instance default resilient-hash-prefix ::/0 max-paths 1": "a route with more "
        "than 1 equal-cost next hops uses only the first 1 (BGP installs up to 64 here): its "
        "other paths stay idle"}


@pytest.mark.parametrize(("value", "why"), [
    ({"ip-prefix": "0.0.0.0/0", "max-paths": 65},
     "resilient-hash-prefix '0.0.0.0/0': max-paths reads 65, not 1..64"),
    ({"ip-prefix": "0.0.0.0/0", "hash-buckets-per-path": "many"},
     "resilient-hash-prefix '0.0.0.0/0': hash-buckets-per-path reads 'many', not 1..32"),
    ({"ip-prefix": "everything"}, "resilient-hash-prefix key 'everything' is not an IP prefix"),
])
def test_entries_that_do_not_read_are_named_not_guessed(tmp_intents: Path,
                                                        value: dict[str, Any], why: str) -> None:
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"]

    def odd(instances: list[dict[str, Any]]) -> None:
        instances[0]["ip-load-balancing"]["resilient-hash-prefix"][0] = value

    got = _collect(_box(leaf, odd), leaf)
    assert got.lb is None
    assert got.errors == [f"load-balancing: unexpected output ({why})"]


# ---- push and drift -----------------------------------------------------------------------------


def test_push_to_a_d5_and_read_back_resilient(tmp_intents: Path) -> None:
    spine = _fabric(tmp_intents, "lab").devices["spine1"]
    double = SrlinuxDouble(running={"interface": [{"name": "mgmt0", "admin-state": "enable"}]})
    _d5_oracle(tmp_intents)
    double.validator = lambda tree: _d5_violations(tmp_intents, tree)  # the box's YANG
    driver = PLATFORM.adapt(double.driver(), read_only=False)
    driver.open()
    driver.load_replace_candidate(config=PLATFORM.render(spine))
    driver.commit_config()
    double.outputs = state_outputs(spine, as_tree(config_tree(spine, PLATFORM.names)))
    got = _collect(double, spine)
    assert got.errors == [] and got.lb == spine.lb


def test_drift_sees_resilient_entries_in_the_network_instance_section(
        tmp_intents: Path) -> None:
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"]
    intended = PLATFORM.render(leaf)
    running = running_of(as_tree(config_tree(leaf, PLATFORM.names)))
    assert normalized_running(json.dumps(running), intended) == intended
    del running["srl_nokia-network-instance:network-instance"][0]["ip-load-balancing"]
    now = PLATFORM.sections(normalized_running(json.dumps(running), intended))
    wanted = PLATFORM.sections(intended)
    assert [s for s in wanted if now.get(s) != wanted[s]] == ["network-instance"]
