"""ECMP hashing on nxos: the global `ip load-sharing` line (tasks/platforms/nxos/hashing.py),
rendered from a switch's `DeviceState.lb`, read back by collect from the running config,
kept or replaced by `configure replace`; and at load, any hash field list but the four fields
the one rendered line hashes refused with file, key path and reason (platform.yaml
`hash_fields`).

No oracle exists for NX-OS: every line here is written from Cisco's documented syntax (N9K
Interfaces guide 10.3(x), "Configuring ECMP Load Balancing"; N9K Unicast Routing guide,
"Configuring Load Sharing in the Unicast FIB"), or is a render as the double keeps it:
derived from documentation, never captured from a switch.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FIVE_TUPLE, DeviceState, HashField, LbMode, LoadBalancing
from flatfab.platforms.nxos import PLATFORM, hashing
from flatfab.platforms.nxos.render import NxosRenderError
from flatfab.platforms.nxos.sections import merge_into, owned, split_sections
from flatfab.platforms.registry import PLATFORMS
from tests.doubles.nxos import FACTORY, NxosDouble
from tests.support.nxos import nxos_balanced, nxos_fabric

LINE = "ip load-sharing address source-destination port source-destination"
FOUR = [HashField.SRC_IP, HashField.DST_IP, HashField.SRC_PORT, HashField.DST_PORT]
REASONS = PLATFORMS["nxos"].facts.capabilities.unsupported
SETS = PLATFORMS["nxos"].facts.capabilities.hash_fields
_LINES = re.compile(r"(?m)^ip load-sharing .*$")


def _lines(config: str) -> list[str]:
    return _LINES.findall(config)


def _leaf1(lb: LoadBalancing | None) -> DeviceState:
    """The lab's leaf1 on nxos with `lb` for its hashing."""
    return nxos_fabric("lab").devices["leaf1"].model_copy(update={"lb": lb})


def _seen(running: str, planned: DeviceState) -> DeviceState:
    double = NxosDouble(running)
    return PLATFORM.collect(PLATFORM.read_only(PLATFORM.adapt(double, read_only=True)),
                            planned, [])


# ---- renders ----------------------------------------------------------------------------

def test_the_four_documented_fields_render_as_the_one_line() -> None:
    assert tuple(FOUR) == hashing.FIELDS
    assert hashing.render(LoadBalancing(hash_fields=FOUR)) == LINE


@pytest.mark.parametrize("seed", [1, 11, 65536, 2**32 - 1])
def test_a_seed_of_the_documented_range_renders(seed: int) -> None:
    assert hashing.render(LoadBalancing(hash_fields=FOUR, seed=seed)) == (
        f"{LINE} universal-id {seed}")


@pytest.mark.parametrize("seed", [0, 2**32])
def test_a_seed_beyond_the_documented_range_is_not_rendered(seed: int) -> None:
    with pytest.raises(hashing.HashingError, match=r"universal-id is 1\.\.4294967295"):
        hashing.render(LoadBalancing(hash_fields=FOUR, seed=seed))


def test_the_line_is_global_config_in_the_system_section() -> None:
    text = PLATFORM.render(_leaf1(LoadBalancing(hash_fields=FOUR, seed=11)))
    assert _lines(text) == [f"{LINE} universal-id 11"]
    assert split_sections(text)["system"][-1] == f"{LINE} universal-id 11"
    assert text.index(LINE) < text.index("class-map ")  # not inside any block


@pytest.mark.parametrize("fields", [
    list(FIVE_TUPLE),  # Cisco names no mode that hashes on the IP protocol
    [*FOUR[:2], HashField.PROTOCOL],
    [*FOUR[:2], HashField.FLOW_LABEL, *FOUR[2:]],
    FOUR[:2],
    [HashField.DST_IP, HashField.DST_PORT],
    [HashField.SRC_IP, HashField.SRC_PORT],
])
def test_a_list_other_than_the_four_fields_is_not_rendered(fields: list[HashField]) -> None:
    """The render's own guard: the load refuses these first (ecmp_hash)."""
    with pytest.raises(NxosRenderError, match=r"leaf1: ECMP hash fields \[.*\]: flatfab "
                       r"renders only \[src_ip, dst_ip, src_port, dst_port\] on NX-OS"):
        PLATFORM.render(_leaf1(LoadBalancing(hash_fields=fields)))


def test_the_protocol_refusal_says_why() -> None:
    with pytest.raises(hashing.HashingError, match="no NX-OS load-sharing mode that hashes "
                       "on the IP protocol"):
        hashing.render(LoadBalancing(hash_fields=list(FIVE_TUPLE)))


def test_a_mode_beyond_hashing_is_not_rendered() -> None:
    with pytest.raises(hashing.HashingError, match="mode flowlet"):
        hashing.render(LoadBalancing(hash_fields=FOUR, mode=LbMode.FLOWLET, flowlet_us=50))


def test_the_plan_s_hashing_renders_on_every_switch() -> None:
    """The example's intent, on nxos, asks for the four fields (tests.support.on_platform
    sets them): every switch renders the one line."""
    for device in nxos_fabric("lab").devices.values():
        if device.platform == "nxos":
            assert device.lb is not None and device.lb.hash_fields == FOUR
            assert _lines(PLATFORM.render(device)) == [LINE], device.name


def test_no_hashing_renders_no_line() -> None:
    assert _lines(PLATFORM.render(_leaf1(None))) == []


# ---- refusals at load -------------------------------------------------------------------

def _refusals(tmp: Path, balancing: dict[str, object]) -> set[tuple[str, str, str]]:
    with pytest.raises(InputError) as caught:
        load_intent(nxos_balanced(tmp, balancing), known_platforms=PLATFORMS)
    return {(Path(p.file).name, p.path, p.reason) for p in caught.value.problems}


def test_the_four_fields_load_and_any_other_list_is_refused_with_the_reason(
        tmp_path: Path) -> None:
    assert SETS is not None and "ecmp_hash" not in REASONS
    intent = load_intent(nxos_balanced(tmp_path / "four", {
        "hash_fields": [f.value for f in FOUR], "seeds": {"leaf": 11}}),
        known_platforms=PLATFORMS)
    assert intent.fabric.load_balancing is not None
    reasons = _refusals(tmp_path / "five", {"hash_fields": [f.value for f in FIVE_TUPLE]})
    assert reasons == {("fabric.yaml", "load_balancing.hash_fields",
                        "platform nxos hashes on [src_ip, dst_ip, src_port, dst_port] only, "
                        f"not [src_ip, dst_ip, protocol, src_port, dst_port]: {SETS.why}")}
    # a tier of other switches may hash otherwise: only the NX-OS tier's list is judged
    tiered = _refusals(tmp_path / "tier", {"hash_fields": [f.value for f in FOUR],
                                           "tiers": {"spine": {"hash_fields": ["src_ip"]}}})
    assert {p for _, p, _ in tiered} == {"load_balancing.tiers.spine.hash_fields"}


def test_the_flow_label_is_refused_with_its_reason(tmp_path: Path) -> None:
    reasons = _refusals(tmp_path, {"hash_fields": ["src_ip", "dst_ip", "flow_label"]})
    assert ("fabric.yaml", "load_balancing.hash_fields", "platform nxos cannot do this "
            f"(ecmp_hash_flow_label): {REASONS['ecmp_hash_flow_label']}") in reasons


def test_a_32_bit_seed_is_no_nx_os_limit(tmp_path: Path) -> None:
    """Cisco documents universal-id as 1..4294967295: no seed of the intent is refused."""
    assert "ecmp_hash_seed" not in REASONS and "ecmp_hash_seed_32bit" not in REASONS
    intent = load_intent(nxos_balanced(tmp_path, {
        "hash_fields": [f.value for f in FOUR],
        "seeds": {"leaf": 11, "spine": 4_000_000_000}}), known_platforms=PLATFORMS)
    assert intent.fabric.load_balancing is not None


# ---- read back --------------------------------------------------------------------------

def test_the_render_reads_back_as_set() -> None:
    lb = LoadBalancing(hash_fields=FOUR, seed=4_000_000_000)
    leaf1 = _leaf1(lb)
    seen = _seen(merge_into(FACTORY, PLATFORM.render(leaf1)), leaf1)
    assert seen.lb == lb
    assert not any(k.startswith("ip load-sharing") for k in seen.not_modelled)


@pytest.mark.parametrize(("line", "lb", "named"), [
    (LINE, LoadBalancing(hash_fields=FOUR), []),
    (f"{LINE} universal-id 4711", LoadBalancing(hash_fields=FOUR, seed=4711), []),
    # the other documented modes, as exactly their documented fields
    ("ip load-sharing address source-destination",
     LoadBalancing(hash_fields=FOUR[:2]), []),
    ("ip load-sharing address destination port destination universal-id 9",
     LoadBalancing(hash_fields=[HashField.DST_IP, HashField.DST_PORT], seed=9), []),
    # options that keep the fields, named as beyond the model
    (f"{LINE} rotate 43 universal-id 7", LoadBalancing(hash_fields=FOUR, seed=7),
     ["ip load-sharing rotate"]),
    (f"{LINE} universal-id 12 concatenation", LoadBalancing(hash_fields=FOUR, seed=12),
     ["ip load-sharing concatenation"]),
    (f"{LINE} symmetric", LoadBalancing(hash_fields=FOUR), ["ip load-sharing symmetric"]),
    (f"{LINE} inner all", LoadBalancing(hash_fields=FOUR), ["ip load-sharing inner"]),
    # options that change the fields: the line is named, its fields not stated
    ("ip load-sharing address source-destination ipv6-flowlabel",
     LoadBalancing(hash_fields=[]),
     ["ip load-sharing ipv6-flowlabel",
      "ip load-sharing address source-destination ipv6-flowlabel"]),
    ("ip load-sharing address source-destination udf offset 8 length 8 universal-id 3",
     LoadBalancing(hash_fields=[], seed=3),
     ["ip load-sharing udf",
      "ip load-sharing address source-destination udf offset 8 length 8 universal-id 3"]),
    # a mode flatfab cannot map, and a seed it cannot read
    ("ip load-sharing address source hardware lb-keyshift 1", LoadBalancing(hash_fields=[]),
     ["ip load-sharing address source hardware lb-keyshift 1", "ip load-sharing hardware"]),
    (f"{LINE} universal-id 0", LoadBalancing(hash_fields=FOUR),
     ["ip load-sharing universal-id"]),
])
def test_a_running_line_reads_into_lb(line: str, lb: LoadBalancing,
                                      named: list[str]) -> None:
    read, beyond = hashing.read([line])
    assert read == lb
    assert sorted(beyond) == sorted(named)


def test_no_line_leaves_the_hashing_unstated() -> None:
    assert hashing.read([]) == (None, {})
    seen = _seen(merge_into(FACTORY, PLATFORM.render(_leaf1(None))), _leaf1(None))
    assert seen.lb is None


def test_collect_reads_an_operator_s_line_and_names_what_it_cannot_model() -> None:
    """A plan without hashing leaves the switch's line; collect still reads it."""
    leaf1 = _leaf1(None)
    running = merge_into(f"{LINE} universal-id 12 rotate 40\n" + FACTORY,
                         PLATFORM.render(leaf1))
    seen = _seen(running, leaf1)
    assert seen.lb == LoadBalancing(hash_fields=FOUR, seed=12)
    assert "ip load-sharing rotate" in seen.not_modelled


# ---- configure replace and drift --------------------------------------------------------

def test_a_plan_without_hashing_keeps_the_operator_s_line() -> None:
    intended = PLATFORM.render(_leaf1(None))
    running = f"{LINE} universal-id 99\n" + intended
    assert _lines(merge_into(running, intended)) == [f"{LINE} universal-id 99"]
    assert _lines(owned(running, load_sharing=False)) == []


def test_a_plan_with_hashing_replaces_the_running_line_and_shows_no_drift() -> None:
    intended = PLATFORM.render(_leaf1(LoadBalancing(hash_fields=FOUR, seed=11)))
    running = merge_into(f"{LINE} universal-id 99\n" + FACTORY, intended)
    assert _lines(running) == [f"{LINE} universal-id 11"]
    double = NxosDouble(running)
    have, want = PLATFORM.drift_texts(PLATFORM.adapt(double, read_only=True), intended)
    assert have == want
