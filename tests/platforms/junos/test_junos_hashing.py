"""ECMP hashing on junos: `forwarding-options enhanced-hash-key` rendered from the plan's
`lb`, judged by Juniper's QFX YANG, pushed through NAPALM's JunOSDriver over the double, read
back from the configuration into `DeviceState.lb` for lb.roce_entropy and lb.intent; a hash
seed and the IPv6 flow label refused with the file, key and reason.

Every configuration collect reads here is the render's own tree, or that tree changed in code
the way an operator would change the switch: derived from Juniper's YANG (github.com/Juniper/
yang 24.4R1, `enhanced-hash-key`) and CLI reference, never captured from a switch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import (
    FIVE_TUPLE,
    FabricState,
    HashField,
    LbMode,
    LoadBalancing,
)
from flatfab.plan.planner import plan
from flatfab.platforms.junos import PLATFORM
from flatfab.platforms.junos import collect as junos_collect
from flatfab.platforms.junos.render import JunosRenderError
from flatfab.platforms.junos.text import REPLACE
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.junos import JunosDevice, healthy_outputs, napalm_driver
from tests.support.junos import (
    changed_outputs,
    collected,
    config_tree,
    hash_key,
    hash_key_violations,
    lb_findings,
)
from tests.support.on_platform import fabric_on, intent_on, switches_on
from tests.support.oracles import JUNOS, usable
from tests.support.paths import ROOT

FAMILY = "tomahawk-4"  # QFX5230-64CD
FIVE = list(FIVE_TUPLE)
CHECKS = ["lb.roce_entropy", "lb.intent"]
CAPS = PLATFORM.facts.capabilities
MODE = {"hash-mode": {"layer2-payload": [None]}}  # stated in every render


def _fabric(tmp_path: Path, balancing: dict[str, Any] | None) -> Path:
    """intents/lab on junos (tomahawk-4) with `balancing` as its load_balancing."""
    intent_on(ROOT / "intents" / "lab", tmp_path, "junos", FAMILY)
    fabric = yaml.safe_load((tmp_path / "fabric.yaml").read_text())
    fabric.pop("load_balancing", None)
    if balancing is not None:
        fabric["load_balancing"] = balancing
    (tmp_path / "fabric.yaml").write_text(yaml.safe_dump(fabric))
    return tmp_path


def _planned(tmp_path: Path, fields: list[str]) -> FabricState:
    return plan(load_intent(_fabric(tmp_path, {"hash_fields": fields}),
                            known_platforms=PLATFORMS))


# ---- render and read back -------------------------------------------------------------------


def test_the_lab_s_five_tuple_is_junos_s_default_stated_and_read_back() -> None:
    """intents/lab hashes on the 5-tuple: no field leaves the hash; the key flatfab owns holds
    the mode the field lists apply in, so it is never empty."""
    lab = fabric_on("lab", "junos", FAMILY)
    oracle = usable(JUNOS)
    for device in switches_on(lab, "junos"):
        assert device.lb == LoadBalancing(hash_fields=FIVE)
        options = config_tree(device)["forwarding-options"]
        assert options == {"enhanced-hash-key": {"@": REPLACE, **MODE}}
        text = PLATFORM.render(device)
        assert "forwarding-options {\n    replace: enhanced-hash-key {\n" in text
        assert oracle.validate(device.name, text, device) == []
        assert hash_key_violations(options) == []
        seen = collected(device, healthy_outputs(lab, device.name))
        assert seen.errors == [] and seen.lb == device.lb, device.name
        assert list(seen.not_modelled) == ["re0:mgmt-0"]
        assert lb_findings(lab, seen) == []


@pytest.mark.parametrize(("fields", "inet", "inet6"), [
    (["src_ip", "dst_ip", "protocol", "src_port"],
     ["no-l4-destination-port"], ["no-l4-destination-port"]),
    (["src_port", "dst_port"],
     ["no-ipv4-source-address", "no-ipv4-destination-address", "no-protocol"],
     ["no-ipv6-source-address", "no-ipv6-destination-address", "no-next-header"]),
    (["src_ip", "dst_ip"],
     ["no-protocol", "no-l4-source-port", "no-l4-destination-port"],
     ["no-next-header", "no-l4-source-port", "no-l4-destination-port"]),
], ids=["no-dst-port", "ports-only", "addresses-only"])
def test_a_field_out_of_the_hash_is_a_no_statement_per_family(
        tmp_path: Path, fields: list[str], inet: list[str], inet6: list[str]) -> None:
    fabric = _planned(tmp_path, fields)
    want = LoadBalancing(hash_fields=[f for f in HashField if f.value in fields])
    oracle = usable(JUNOS)
    for device in switches_on(fabric, "junos"):
        assert device.lb == want
        options = config_tree(device)["forwarding-options"]
        key = options["enhanced-hash-key"]
        assert key == {"@": REPLACE, **MODE, "inet": {s: [None] for s in inet},
                       "inet6": {s: [None] for s in inet6}}
        assert oracle.validate(device.name, PLATFORM.render(device), device) == []
        assert hash_key_violations(options) == []
        seen = collected(device, healthy_outputs(fabric, device.name))
        assert seen.errors == [] and seen.lb == want, device.name
        # live, the switch hashes as planned: drift is not named; a hash without the
        # source port is, as in the plan
        found = {c for c, _, _ in lb_findings(fabric, seen)}
        assert found == (set() if "src_port" in fields else {"lb.roce_entropy"})


def test_the_yang_check_catches_a_statement_of_another_platform() -> None:
    """MX routers take a port out as `family inet no-source-port`: not these switches'
    `inet` statements, and the grafted check names it."""
    found = hash_key_violations({"enhanced-hash-key": {
        "hash-mode": {"layer2-payload": [None]}, "inet": {"no-source-port": [None]}}})
    assert len(found) == 1 and "no-source-port" in found[0], found


def test_no_load_balancing_leaves_the_switch_s_hashing_alone() -> None:
    """intents/numbered has no load_balancing: nothing rendered, and collect reads the
    switch's own (Junos's default where it configures none), which only lb.roce_entropy
    judges."""
    numbered = fabric_on("numbered", "junos", FAMILY)
    device = numbered.devices["lf-a"]
    assert device.lb is None and "forwarding-options" not in config_tree(device)
    assert "forwarding-options" not in PLATFORM.render(device)
    seen = collected(device, healthy_outputs(numbered, "lf-a"))
    assert seen.lb == LoadBalancing(hash_fields=FIVE)
    assert lb_findings(numbered, seen) == []


# ---- refused -----------------------------------------------------------------------------


def test_a_seed_is_refused_at_load_with_file_key_and_reason(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_fabric(tmp_path, {"hash_fields": ["src_ip", "dst_ip", "src_port"],
                                       "seeds": {"leaf": 11, "spine": 23}}),
                    known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("fabric.yaml") and problem.path == "load_balancing.seeds"
    assert problem.reason == ("platform junos cannot do this (ecmp_hash_seed): "
                              + CAPS.unsupported["ecmp_hash_seed"])
    assert "QFX10000 only" in problem.reason
    assert "ecmp_hash" not in CAPS.unsupported  # the fields themselves render


def test_the_ipv6_flow_label_is_refused_at_load_with_its_reason(tmp_path: Path) -> None:
    """No statement on these switches puts the flow label in the hash: the data file names
    it (ecmp_hash_flow_label), and the load refuses it with file, key and reason."""
    reason = CAPS.unsupported["ecmp_hash_flow_label"]
    assert "ipv6-flow-label" in reason and "QFX10000 only" in reason
    folder = _fabric(tmp_path, {"hash_fields": [*(f.value for f in FIVE), "flow_label"]})
    with pytest.raises(InputError) as caught:
        load_intent(folder, known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("fabric.yaml") and problem.path == "load_balancing.hash_fields"
    assert problem.reason == ("platform junos cannot do this (ecmp_hash_flow_label): " + reason)


def test_a_flow_label_that_reaches_the_render_is_one_clear_error(tmp_path: Path) -> None:
    # planned without the platforms' capability check: the render still refuses it
    folder = _fabric(tmp_path, {"hash_fields": [*(f.value for f in FIVE), "flow_label"]})
    leaf1 = plan(load_intent(folder)).devices["leaf1"]
    with pytest.raises(JunosRenderError, match=r"^leaf1: ECMP hash field flow_label: Junos "
                                               r"OS Evolved has no `enhanced-hash-key inet6 "
                                               r"ipv6-flow-label`"):
        PLATFORM.render(leaf1)


def test_a_seed_that_reaches_the_render_is_one_clear_error() -> None:
    leaf1 = fabric_on("lab", "junos", FAMILY).devices["leaf1"].model_copy(deep=True)
    leaf1.lb = LoadBalancing(hash_fields=FIVE, seed=11)
    with pytest.raises(JunosRenderError, match=r"^leaf1: ECMP hash seed 11: no hash seed on "
                                               r"QFX52xx"):
        PLATFORM.render(leaf1)


# ---- push ----------------------------------------------------------------------------------

RUNNING = """system {
    host-name qfx;
}
forwarding-options {
    storm-control-profiles default {
        all;
    }
    enhanced-hash-key {
        inet {
            no-l4-source-port;
        }
        ecmp-resilient-hash;
    }
}
"""


def test_load_replace_owns_the_hash_key_and_keeps_the_rest(tmp_path: Path) -> None:
    """`replace: enhanced-hash-key`: what an operator (or a former plan) put in the key goes,
    the rest of forwarding-options stays."""
    device = JunosDevice(running_text=RUNNING)
    driver = PLATFORM.adapt(napalm_driver(device), read_only=False)
    leaf1 = _planned(tmp_path, ["src_ip", "dst_ip", "protocol", "src_port"]).devices["leaf1"]
    driver.load_replace_candidate(config=PLATFORM.render(leaf1))
    driver.commit_config()
    running = driver.get_config(retrieve="running")["running"]
    hierarchy = running[running.index("forwarding-options {"):]
    assert "storm-control-profiles default {" in hierarchy
    assert "no-l4-source-port" not in hierarchy and "ecmp-resilient-hash" not in hierarchy
    assert "no-l4-destination-port;" in hierarchy and "layer2-payload;" in hierarchy
    lab = fabric_on("lab", "junos", FAMILY).devices["leaf1"]
    driver.load_replace_candidate(config=PLATFORM.render(lab))
    assert "-            no-l4-destination-port;" in driver.compare_config()


# ---- what the switch has, read back and judged ---------------------------------------------


def test_a_switch_without_the_planned_key_is_drift(tmp_path: Path) -> None:
    """Planned without dst_port; the switch configures no hash key (Junos's 5-tuple)."""
    fabric = _planned(tmp_path, ["src_ip", "dst_ip", "protocol", "src_port"])
    seen = collected(fabric.devices["leaf1"], changed_outputs(
        fabric, "leaf1", lambda c: c.pop("forwarding-options")))
    assert seen.lb == LoadBalancing(hash_fields=FIVE)
    assert lb_findings(fabric, seen) == [("lb.intent", "leaf1", (
        "leaf1 hashes ECMP on src_ip, dst_ip, protocol, src_port, dst_port, the intent on "
        "src_ip, dst_ip, protocol, src_port"))]


def _no_source_port(config: dict[str, Any]) -> None:
    hash_key(config)["inet"] = {"no-l4-source-port": [None]}


def _layer2_header(config: dict[str, Any]) -> None:
    hash_key(config)["hash-mode"] = {"layer2-header": [None]}


def _ipv6_apart(config: dict[str, Any]) -> None:
    hash_key(config)["inet6"] = {"no-l4-source-port": [None]}


def _seeded(config: dict[str, Any]) -> None:
    hash_key(config)["hash-seed"] = {"seed-value": "7"}  # display json may print it as a string


@pytest.mark.parametrize(("change", "fields", "seed", "checks"), [
    (_no_source_port, [HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL,
                       HashField.DST_PORT], None, {"lb.roce_entropy", "lb.intent"}),
    (_layer2_header, [], None, {"lb.roce_entropy", "lb.intent"}),
    (_ipv6_apart, [HashField.SRC_IP, HashField.DST_IP, HashField.PROTOCOL,
                   HashField.DST_PORT], None, {"lb.roce_entropy", "lb.intent"}),
    (_seeded, FIVE, 7, {"lb.intent"}),
], ids=["ipv4-without-source-port", "layer2-header", "ipv6-apart", "a-seed-of-its-own"])
def test_a_hash_changed_on_the_switch_is_read_and_judged(
        change: Callable[[dict[str, Any]], None], fields: list[HashField], seed: int | None,
        checks: set[str]) -> None:
    lab = fabric_on("lab", "junos", FAMILY)
    seen = collected(lab.devices["leaf1"], changed_outputs(lab, "leaf1", change))
    assert seen.errors == []
    assert seen.lb == LoadBalancing(hash_fields=fields, seed=seed)
    found = lb_findings(lab, seen)
    assert {c for c, _, _ in found} == checks
    if seed is not None:
        assert ("lb.intent", "leaf1", "leaf1 hashes with seed 7, the intent sets none "
                "(random)") in found


def test_the_two_families_hashing_apart_is_said() -> None:
    lab = fabric_on("lab", "junos", FAMILY)
    seen = collected(lab.devices["leaf1"], changed_outputs(lab, "leaf1", _ipv6_apart))
    assert seen.not_modelled["forwarding-options enhanced-hash-key inet6"] == (
        "IPv4 hashes on src_ip, dst_ip, protocol, src_port, dst_port, IPv6 on src_ip, "
        "dst_ip, protocol, dst_port: flatfab models one list, the fields both hash on")


def test_hashing_beyond_the_model_is_named_not_dropped() -> None:
    def beyond(config: dict[str, Any]) -> None:
        key = hash_key(config)
        key["ecmp-resilient-hash"] = [None]
        key["inet"] = {"vlan-id": [None]}
        key["inet6"] = {"ipv6-flow-label": [None], "vlan-id": [None]}
        instance = config["routing-instances"]["instance"][0]
        instance["forwarding-options"] = {"enhanced-hash-key": {
            "inet": {"no-l4-destination-port": [None]}}}

    lab = fabric_on("lab", "junos", FAMILY)
    seen = collected(lab.devices["leaf1"], changed_outputs(lab, "leaf1", beyond))
    assert seen.errors == []
    # the flow label is read where a switch states it (Junos OS's QFX YANG has the statement),
    # and resilient hashing is a way of balancing flatfab models (junos/dlb.py)
    assert seen.lb == LoadBalancing(hash_fields=[*FIVE[:3], HashField.FLOW_LABEL, *FIVE[3:]],
                                    mode=LbMode.RESILIENT)
    assert sorted(seen.not_modelled) == [
        "forwarding-options enhanced-hash-key inet vlan-id",
        "forwarding-options enhanced-hash-key inet6 vlan-id",
        "re0:mgmt-0",
        "routing-instance blue forwarding-options enhanced-hash-key"]


def test_an_unread_configuration_claims_no_hash() -> None:
    lab = fabric_on("lab", "junos", FAMILY)
    outputs = healthy_outputs(lab, "leaf1")
    outputs[junos_collect.CONFIG] = "not json"
    seen = collected(lab.devices["leaf1"], outputs)
    assert seen.lb is None and any("show configuration" in e for e in seen.errors)
    # the switch whose hash was not read is named not judged, never passed
    assert [(c, d) for c, d, _ in lb_findings(lab, seen)] == [("lb.roce_entropy", "leaf1")]
