"""ECMP hashing on srlinux: the intent's `load_balancing` rendered as
`/system/load-balancing/hash-options` (Nokia's srl_nokia-load-balancing.yang, v25.3.1),
judged by the SR Linux YANG oracle, pushed through napalm-srlinux to the JSON-RPC double,
read back by collect into `DeviceState.lb` and judged by the live checks `lb.roce_entropy`
and `lb.intent`; what SR Linux cannot hold is refused with file, key path and reason.

The box's running configuration in these tests is the render as the double keeps it
(tests/doubles/srlinux.py `running_of`): derived from Nokia's YANG, never captured.
"""

from __future__ import annotations

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
    DeviceState,
    FabricState,
    HashField,
    LoadBalancing,
)
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from flatfab.platforms.srlinux import PLATFORM
from flatfab.platforms.srlinux.hashing import DEFAULTS, LEAVES, PATH
from flatfab.platforms.srlinux.render import RenderError, as_tree, config_tree
from flatfab.platforms.srlinux.sections import normalized_running
from tests.doubles.srlinux import SrlinuxDouble, running_of, state_outputs
from tests.support.checks import live_findings
from tests.support.oracles import ORACLES, SRLINUX, usable
from tests.support.srlinux import balanced_intent, system_violations

CHECKS = ["lb.roce_entropy", "lb.seeds", "lb.intent"]
FIVE = list(FIVE_TUPLE)


@pytest.fixture(scope="module")
def tmp_intents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("srlinux-hashing")


def _balanced(tmp: Path, example: str, balancing: str | None) -> Path:
    """intents/<example> on srlinux (tests/support/srlinux.py: watchdog `forward`, a 7220
    IXR-H4), its `load_balancing` replaced by `balancing` (None: as the example has it)."""
    return balanced_intent(tmp, example, balancing)


@cache
def _fabric(tmp: Path, example: str, balancing: str | None = None) -> FabricState:
    return plan(load_intent(_balanced(tmp, example, balancing), known_platforms=PLATFORMS))


def _switches(state: FabricState) -> list[DeviceState]:
    return [d for d in state.devices.values() if d.role in SWITCH_ROLES]


def _hash_options(device: DeviceState) -> dict[str, Any]:
    replaces = json.loads(PLATFORM.render(device))["replaces"]
    [entry] = [e for e in replaces if e["path"] == PATH]
    value: dict[str, Any] = entry["value"]
    return value


def _oracle_verdict(device: DeviceState) -> list[str]:
    """The shared oracle on the whole render (it judges interface, network-instance,
    routing-policy and qos, and leaves /system out), plus the same YANG on /system."""
    text = PLATFORM.render(device)
    return [*usable(ORACLES["srlinux"]).validate(device.name, text, device),
            *system_violations(text)]


# ---- render ----------------------------------------------------------------------------------

VARIANTS = {
    # every field SR Linux has a boolean for, a seed per tier of a 3-stage fabric
    "all-fields": ("lab", "load_balancing:\n  hash_fields: [src_ip, dst_ip, protocol, "
                          "flow_label, src_port, dst_port]\n  seeds: {leaf: 11, spine: 23}\n"),
    # addresses, flow label and RoCE's entropy; the leaves keep their own seed
    "no-protocol": ("lab", "load_balancing:\n  hash_fields: [src_ip, dst_ip, flow_label, "
                           "src_port]\n  seeds: {spine: 1}\n"),
    # a 5-stage fabric: three tiers, the top seed at SR Linux's uint16 maximum
    "rail-tiers": ("rail", "load_balancing:\n  seeds: {leaf: 101, spine: 202, "
                           "superspine: 65535}\n"),
}


def test_the_lab_intent_renders_the_5_tuple_and_the_switch_s_own_seed(
        tmp_intents: Path) -> None:
    switches = _switches(_fabric(tmp_intents, "lab"))
    assert {d.platform for d in switches} == {"srlinux"}
    for device in switches:
        assert device.lb == LoadBalancing(hash_fields=FIVE)
        # every option flatfab models explicitly on or off; the seed the box's own
        assert _hash_options(device) == {
            "source-address": True, "destination-address": True, "protocol": True,
            "ipv6-flow-label": False, "source-port": True, "destination-port": True,
            "hash-seed": "generate-from-mac"}
        assert _oracle_verdict(device) == [], device.name
    # the replace is the last entry, in its own section; /system itself is never replaced
    text = PLATFORM.render(switches[0])
    paths = [e["path"] for e in json.loads(text)["replaces"]]
    assert paths[-1] == PATH and "/system" not in paths
    assert PLATFORM.sections(text)["system"][0].startswith(f'{{"path": "{PATH}"')


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_other_fields_and_per_tier_seeds_render_and_pass_the_oracle(
        tmp_intents: Path, variant: str) -> None:
    example, balancing = VARIANTS[variant]
    state = _fabric(tmp_intents, example, balancing)
    seeds = {"all-fields": {"leaf": 11, "spine": 23},
             "no-protocol": {"spine": 1},
             "rail-tiers": {"leaf": 101, "spine": 202, "superspine": 65535}}[variant]
    roles = set()
    for device in _switches(state):
        assert device.lb is not None
        options = _hash_options(device)
        assert {f for f, leaf in LEAVES.items() if options[leaf]} == set(device.lb.hash_fields)
        assert all(options[leaf] is False for f, leaf in LEAVES.items()
                   if f not in device.lb.hash_fields)
        assert options["hash-seed"] == seeds.get(device.role.value, "generate-from-mac")
        roles.add(device.role.value)
    assert roles >= set(seeds)
    # the oracle on one switch of each role (the models load once; every switch renders alike)
    for role in sorted(roles):
        device = next(d for d in _switches(state) if d.role.value == role)
        assert _oracle_verdict(device) == [], device.name


def test_the_oracle_judges_the_hash_options(tmp_intents: Path) -> None:
    """A seed beyond uint16 and a leaf SR Linux has no such name for are caught: the /system
    tree is validated, not dropped."""
    leaf1 = _fabric(tmp_intents, "lab").devices["leaf1"]
    tree = as_tree(config_tree(leaf1, PLATFORM.names))
    options = tree["system"]["load-balancing"]["hash-options"]
    options["hash-seed"], options["udp-source-port"] = 70000, True
    text = json.dumps({"replaces": [{"path": PATH, "value": options}]})
    found = system_violations(text)
    assert any("hash-seed" in v and "uint16" in v for v in found), found
    assert any('"udp-source-port" not found' in v for v in found), found


def test_no_load_balancing_leaves_the_switch_s_hashing_alone(tmp_intents: Path) -> None:
    leaf = _fabric(tmp_intents, "numbered").devices["lf-a"]
    assert leaf.lb is None
    text = PLATFORM.render(leaf)
    assert "load-balancing" not in text and "system" not in PLATFORM.sections(text)


def test_a_seed_beyond_sr_linux_s_range_is_one_clear_render_error(tmp_intents: Path) -> None:
    """The intent's seeds go to 2^32-1, SR Linux's hash-seed to 65535: a plan that still
    carries a wider one (see the load refusal below) never renders."""
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"].model_copy(deep=True)
    leaf.lb = LoadBalancing(hash_fields=FIVE, seed=70000)
    with pytest.raises(RenderError, match=r"ECMP hash seed 70000 is outside SR Linux's "
                                          r"0\.\.65535 \(hash-seed is a uint16\)"):
        PLATFORM.render(leaf)


def test_a_seed_above_65535_is_refused_at_load_with_file_key_and_reason(
        tmp_intents: Path) -> None:
    """platform.yaml lists `ecmp_hash_seed_32bit`, which the load asks of a tier's seed above
    65535: refused before any plan, at that seed's key."""
    folder = _balanced(tmp_intents, "lab", "load_balancing:\n  seeds: {leaf: 11, "
                                           "spine: 70000}\n")
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("fabric.yaml") and problem.path == "load_balancing.seeds.spine"
    assert problem.reason == ("platform srlinux cannot do this (ecmp_hash_seed_32bit): SR "
                              "Linux's hash-seed is a 16-bit number: give each tier a seed of "
                              "1..65535")


def test_what_the_intent_asks_of_hashing_is_no_longer_refused(tmp_intents: Path) -> None:
    caps = PLATFORMS["srlinux"].facts.capabilities
    assert "ecmp_hash" not in caps.unsupported and "ecmp_hash_seed" not in caps.unsupported
    # every field the intent can name has SR Linux's boolean: none is refused
    assert set(LEAVES) == set(HashField)
    state = _fabric(tmp_intents, *VARIANTS["all-fields"])
    assert state.devices["spine1"].lb == LoadBalancing(hash_fields=list(HashField), seed=23)


# ---- read back --------------------------------------------------------------------------------


def _box(device: DeviceState, change: Callable[[dict[str, Any]], None] | None = None
         ) -> SrlinuxDouble:
    """A double running the device's render (hash options changed by `change`)."""
    tree = as_tree(config_tree(device, PLATFORM.names))
    if change is not None:
        change(tree["system"]["load-balancing"]["hash-options"])
    return SrlinuxDouble(running=running_of(tree), outputs=state_outputs(device, tree))


def _collect(double: SrlinuxDouble, planned: DeviceState) -> DeviceState:
    driver = double.driver()
    driver.open()
    return PLATFORM.collect(PLATFORM.read_only(driver), planned, [])


def _live(state: FabricState, seen: dict[str, DeviceState]) -> list[tuple[str, str, str]]:
    return [(f.check, str(f.device), f.message)
            for f in live_findings(state, *seen.values(), only=CHECKS)]


@pytest.mark.parametrize("variant", [None, *sorted(VARIANTS)])
def test_collect_reads_the_plan_back_and_the_live_checks_pass(tmp_intents: Path,
                                                              variant: str | None) -> None:
    state = (_fabric(tmp_intents, "lab") if variant is None
             else _fabric(tmp_intents, *VARIANTS[variant]))
    by_role = {d.role: d for d in _switches(state)}  # one switch of each tier
    seen = {}
    for device in by_role.values():
        got = _collect(_box(device), device)
        assert got.errors == [], (device.name, got.errors)
        assert got.lb == device.lb, device.name
        seen[device.name] = got
    assert _live(state, seen) == []


def test_a_box_that_drifted_is_named_by_the_live_checks(tmp_intents: Path) -> None:
    state = _fabric(tmp_intents, *VARIANTS["all-fields"])
    leaf, spine = state.devices["leaf1"], state.devices["spine1"]

    def no_source_port(options: dict[str, Any]) -> None:
        options["source-port"] = False

    def own_seed(options: dict[str, Any]) -> None:
        options["hash-seed"] = "generate-from-mac"

    seen = {"leaf1": _collect(_box(leaf, no_source_port), leaf),
            "spine1": _collect(_box(spine, own_seed), spine)}
    assert seen["leaf1"].lb is not None and HashField.SRC_PORT not in seen["leaf1"].lb.hash_fields
    found = _live(state, seen)
    assert sorted((c, d) for c, d, _ in found) == [
        ("lb.intent", "leaf1"), ("lb.intent", "spine1"), ("lb.roce_entropy", "leaf1")]
    messages = {(c, d): m for c, d, m in found}
    assert messages[("lb.intent", "leaf1")] == (
        "leaf1 hashes ECMP on src_ip, dst_ip, protocol, flow_label, dst_port, the intent on "
        "src_ip, dst_ip, protocol, flow_label, src_port, dst_port")
    assert messages[("lb.intent", "spine1")] == ("spine1 hashes with seed random, the intent "
                                                 "sets 23")


def _running(options: dict[str, Any] | None) -> dict[str, Any]:
    """A running tree whose /system states these hash options (None: no load-balancing)."""
    system: dict[str, Any] = {"srl_nokia-lldp:lldp": {"admin-state": "enable"}}
    if options is not None:
        system["srl_nokia-load-balancing:load-balancing"] = {"hash-options": options}
    return {"srl_nokia-system:system": system}


@pytest.mark.parametrize(("options", "expected"), [
    # a box that was never configured hashes on the models' defaults: the 5-tuple, its own seed
    (None, LoadBalancing(hash_fields=FIVE)),
    ({}, LoadBalancing(hash_fields=FIVE)),
    # a box that prints only what differs from the defaults
    ({"source-port": False, "ipv6-flow-label": True, "hash-seed": 4242},
     LoadBalancing(hash_fields=[HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL,
                                HashField.FLOW_LABEL, HashField.DST_PORT], seed=4242)),
    # RFC 7951 numbers and booleans as strings, and leaves flatfab does not model
    ({"destination-port": "false", "hash-seed": "7", "vlan": False, "mpls-label-stack": True},
     LoadBalancing(hash_fields=FIVE[:4], seed=7)),
])
def test_hash_options_as_boxes_state_them(tmp_intents: Path, options: dict[str, Any] | None,
                                          expected: LoadBalancing) -> None:
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"]
    double = _box(leaf)
    double.running["srl_nokia-system:system"] = _running(options)["srl_nokia-system:system"]
    got = _collect(double, leaf)
    assert got.errors == [] and got.lb == expected


@pytest.mark.parametrize(("options", "why"), [
    ({"source-port": "yes"}, "source-port reads 'yes', not a boolean"),
    ({"hash-seed": 70000}, "hash-seed reads 70000, neither generate-from-mac nor a uint16"),
])
def test_hash_options_that_do_not_read_are_named_not_guessed(
        tmp_intents: Path, options: dict[str, Any], why: str) -> None:
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"]
    double = _box(leaf)
    double.running["srl_nokia-system:system"] = _running(options)["srl_nokia-system:system"]
    got = _collect(double, leaf)
    assert got.lb is None
    assert got.errors == [f"load-balancing: unexpected output ({why})"]


def test_an_unread_running_config_leaves_the_hashing_unknown(
        tmp_intents: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"]
    tree = as_tree(config_tree(leaf, PLATFORM.names))
    double = SrlinuxDouble(running=running_of(tree), outputs=state_outputs(leaf, tree))
    driver = double.driver()
    driver.open()
    monkeypatch.setattr(driver.device, "get_paths", _refuse)  # the JSON-RPC `get` of / fails
    got = PLATFORM.collect(PLATFORM.read_only(driver), leaf, [])
    assert got.lb is None and any(e.startswith("running config:") for e in got.errors)
    state = _fabric(tmp_intents, "lab")
    found = _live(state, {"leaf1": got})
    assert [(c, d) for c, d, _ in found] == [("lb.roce_entropy", "leaf1")]
    assert "leaf1's ECMP hash is not judged" in found[0][2]


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise OSError("connection reset")


# ---- push and drift ---------------------------------------------------------------------------


def test_push_sets_only_the_hash_options_and_reads_back_as_planned(tmp_intents: Path) -> None:
    state = _fabric(tmp_intents, *VARIANTS["all-fields"])
    spine = state.devices["spine1"]
    double = SrlinuxDouble(running={
        "interface": [{"name": "mgmt0", "admin-state": "enable"}],
        "srl_nokia-system:system": {"srl_nokia-aaa:aaa": {"authentication": {}},
                                    "srl_nokia-load-balancing:load-balancing": {
                                        "hash-options": {"hash-seed": 9, "vlan": False}}}})
    usable(SRLINUX)
    double.validator = SRLINUX.tree_violations  # the box refuses what its YANG refuses
    driver = PLATFORM.adapt(double.driver(), read_only=False)
    driver.open()
    driver.load_replace_candidate(config=PLATFORM.render(spine))
    driver.commit_config()
    system = double.running["srl_nokia-system:system"]
    assert system["srl_nokia-aaa:aaa"] == {"authentication": {}}  # the rest of /system stays
    # the container is replaced: an option flatfab does not model goes back to its default
    assert system["srl_nokia-load-balancing:load-balancing"]["hash-options"] == _hash_options(
        spine)
    double.outputs = state_outputs(spine, as_tree(config_tree(spine, PLATFORM.names)))
    assert _collect(double, spine).lb == spine.lb


def test_drift_compares_hash_options_with_the_models_defaults(tmp_intents: Path) -> None:
    leaf = _fabric(tmp_intents, "lab").devices["leaf1"]
    intended = PLATFORM.render(leaf)
    running = running_of(as_tree(config_tree(leaf, PLATFORM.names)))
    assert normalized_running(json.dumps(running), intended) == intended
    # a box that states none of them hashes as the lab intends: no drift
    del running["srl_nokia-system:system"]["srl_nokia-load-balancing:load-balancing"]
    assert normalized_running(json.dumps(running), intended) == intended
    # a seed of its own is drift of the system section only
    running["srl_nokia-system:system"]["srl_nokia-load-balancing:load-balancing"] = {
        "hash-options": {"hash-seed": 77}}
    now = PLATFORM.sections(normalized_running(json.dumps(running), intended))
    wanted = PLATFORM.sections(intended)
    assert [s for s in wanted if now.get(s) != wanted[s]] == ["system"]
    assert DEFAULTS["hash-seed"] == "generate-from-mac"
