"""ECMP hashing on EOS: refused at load, because AVD's schema (the oracle every EOS render
passes) has no key for `ip load-sharing`; left alone by a replace; read back from the running
config into `lb`, so the live checks judge the switch's own hash.

The hashing lines are tests/fixtures/eos/variants/running_load_sharing.cfg (derived from
documentation, never captured) or the edits of it each test names."""

from __future__ import annotations

import re
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

import pytest

from flatfab.checks import CheckContext, Stage, run_checks
from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState, FabricState, HashField, LoadBalancing
from flatfab.platforms.eos import PLATFORM
from flatfab.platforms.eos.sections import merge_into
from flatfab.platforms.registry import PLATFORMS
from tests.support.eos import derived_text, eos_collect, eos_double, eos_fabric
from tests.support.on_platform import intent_on
from tests.support.oracles import EOS, usable
from tests.support.paths import ROOT

SNIPPET = ROOT / "tests" / "fixtures" / "eos" / "variants" / "running_load_sharing.cfg"
FAMILIES = ["generic", "trident-4", "tomahawk-5", "jericho-2"]
CHECKS = ["lb.roce_entropy", "lb.seeds", "lb.intent"]
IP_LINE = "ip load-sharing trident fields ip source-ip destination-ip source-port " \
          "destination-port"
AS_WRITTEN = LoadBalancing(hash_fields=[HashField.SRC_IP, HashField.DST_IP,
                                        HashField.FLOW_LABEL, HashField.SRC_PORT,
                                        HashField.DST_PORT], seed=3)
UNSUPPORTED = PLATFORM.facts.capabilities.unsupported
FIELDS_REFUSED = ("fabric.yaml", "load_balancing.hash_fields",
                  f"platform eos cannot do this (ecmp_hash): {UNSUPPORTED['ecmp_hash']}")
SEEDS_REFUSED = ("fabric.yaml", "load_balancing.seeds",
                 f"platform eos cannot do this (ecmp_hash_seed): {UNSUPPORTED['ecmp_hash_seed']}")


def snippet() -> str:
    return derived_text(SNIPPET)


def collect(planned: DeviceState, hashing: str) -> DeviceState:
    """leaf1 holding flatfab's render plus `hashing`, read back through the eAPI double."""
    return eos_collect(eos_double(PLATFORM.render(planned) + hashing), planned)


def live(lab: FabricState, seen: DeviceState,
         plan: FabricState | None = None) -> list[tuple[str, str | None, str]]:
    state = lab.model_copy(update={"devices": {**lab.devices, seen.name: seen}})
    found = run_checks(CheckContext(state=state, plan=plan or lab, stage=Stage.LIVE),
                       only=CHECKS)
    return [(f.check, f.device, f.message) for f in found]


# ---- refused at load --------------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("balancing", "refused"), [
    (None, [FIELDS_REFUSED]),  # the lab's own: the 5-tuple, the switches' own seeds
    ("load_balancing:\n  hash_fields: [src_ip, dst_ip, flow_label, src_port]\n",
     [FIELDS_REFUSED]),
    ("load_balancing:\n  hash_fields: [src_ip, dst_ip, src_port]\n"
     "  seeds: {leaf: 11, spine: 23}\n", [FIELDS_REFUSED, SEEDS_REFUSED]),
])
def test_hashing_is_refused_at_load_with_where_and_why(tmp_path: Path, family: str,
                                                       balancing: str | None,
                                                       refused: list[tuple[str, ...]]) -> None:
    """Whatever the family: no ASIC keyword helps while AVD prints no `ip load-sharing`."""
    intent_on(ROOT / "intents" / "lab", tmp_path, "eos", family)  # drops load_balancing
    fabric = tmp_path / "fabric.yaml"
    if balancing is None:
        source = (ROOT / "intents" / "lab" / "fabric.yaml").read_text()
        found = re.search(r"(?ms)^load_balancing:\n(?:[ #].*?\n|\n)*", source)
        assert found is not None
        balancing = found[0]
        assert "hash_fields: [src_ip, dst_ip, protocol, src_port, dst_port]" in balancing
    fabric.write_text(fabric.read_text() + balancing)
    with pytest.raises(InputError) as caught:
        load_intent(tmp_path, known_platforms=PLATFORMS)
    assert sorted((Path(p.file).name, p.path, p.reason)
                  for p in caught.value.problems) == sorted(refused)


def test_the_refusal_is_what_avd_lacks() -> None:
    """No template of the installed AVD prints `ip load-sharing`: the day one does, render the
    hashing through its key and drop the refusal (the reason names the version it holds for)."""
    usable(EOS)  # the oracle's package, present only where it runs
    spec = find_spec("pyavd")
    assert spec is not None and spec.origin is not None
    templates = Path(spec.origin).parent / "_eos_cli_config_gen" / "j2templates"
    printed = sorted(templates.rglob("eos__*.py"))
    assert printed, "pyavd's compiled templates moved: look again for what AVD prints"
    assert [p.name for p in printed if "load-sharing" in p.read_text(encoding="utf-8")] == []
    for reason in (UNSUPPORTED["ecmp_hash"], UNSUPPORTED["ecmp_hash_seed"]):
        assert f"pyavd {version('pyavd')}" in reason


@pytest.mark.parametrize("family", FAMILIES)
def test_without_hashing_the_render_is_avds_and_states_none(family: str) -> None:
    fabric = eos_fabric("lab", family)
    for name in ("leaf1", "spine1"):
        state = fabric.devices[name]
        assert state.lb is None  # the load dropped load_balancing: the switch's own hash
        text = PLATFORM.render(state)
        assert "load-sharing" not in text and "load-balance" not in text
        assert usable(EOS).validate(name, text, state) == []


def test_a_replace_keeps_the_switchs_own_hashing(planned: DeviceState) -> None:
    """lb None leaves the hashing alone: flatfab owns no `ip load-sharing` line, so drift
    shows none and a replace carries them over."""
    running = snippet() + PLATFORM.render(planned)
    management = PLATFORM.facts.management_interfaces
    candidate = merge_into(running, PLATFORM.render(planned), management).splitlines()
    hashing = [line for line in snippet().splitlines() if not line.startswith("!")]
    assert len(hashing) == 3 and all(line in candidate for line in hashing)
    sections = PLATFORM.sections(running)
    assert not any("load-sharing" in line for lines in sections.values() for line in lines)


# ---- read back --------------------------------------------------------------------------------

def test_the_switchs_hashing_reads_back(lab: FabricState, planned: DeviceState) -> None:
    seen = collect(planned, snippet())
    assert seen.errors == []
    assert seen.lb == AS_WRITTEN
    assert not [k for k in seen.not_modelled if "load-sharing" in k]
    assert live(lab, seen) == []  # the source port is hashed; no other switch reads a seed
    # were the plan to carry it (a render that lands), the switch is as planned ...
    planned_lb = lab.model_copy(update={"devices": {
        **lab.devices, "leaf1": planned.model_copy(update={"lb": AS_WRITTEN})}})
    assert live(lab, seen, planned_lb) == []
    # ... and a seed of its own is drift
    other = planned_lb.model_copy(deep=True)
    other.devices["leaf1"].lb = AS_WRITTEN.model_copy(update={"seed": 4})
    assert live(lab, seen, other) == [
        ("lb.intent", "leaf1", "leaf1 hashes with seed 3, the intent sets 4")]


def test_a_hash_without_the_source_port_is_named(lab: FabricState,
                                                 planned: DeviceState) -> None:
    seen = collect(planned, "ip load-sharing trident fields ip source-ip destination-ip\n")
    assert seen.lb == LoadBalancing(hash_fields=[HashField.SRC_IP, HashField.DST_IP])
    assert live(lab, seen) == [
        ("lb.roce_entropy", "leaf1", "leaf1 hashes ECMP on src_ip, dst_ip, not the UDP source "
         "port: every queue pair between two hosts takes one path")]


def test_inputs_flatfab_has_no_field_for_are_named_not_read(planned: DeviceState) -> None:
    seen = collect(planned, IP_LINE + " ingress-interface protocol\n")
    assert seen.lb == LoadBalancing(hash_fields=[HashField.SRC_IP, HashField.DST_IP,
                                                 HashField.SRC_PORT, HashField.DST_PORT])
    notes = {k: v for k, v in seen.not_modelled.items() if "load-sharing" in k}
    assert notes == {
        "ip load-sharing fields ip ingress-interface":
            "EOS also hashes IPv4 on the port a packet came in on; flatfab's hash fields have "
            "no such input",
        "ip load-sharing fields ip protocol":
            "a hash input flatfab does not know: not read as one of its fields"}


@pytest.mark.parametrize(("hashing", "note"), [
    ("", None),  # EOS's default hash: stated nowhere flatfab reads
    ("ip load-sharing trident 3\n", "no `fields ip` line"),
    ("ip load-sharing trident fields ipv6 source-ip flow-label\n", "no `fields ip` line"),
    (IP_LINE + "\nip load-sharing sand 1\n", "lines for several hardware (sand, trident)"),
])
def test_a_hash_not_stated_whole_is_unknown(planned: DeviceState, hashing: str,
                                            note: str | None) -> None:
    seen = collect(planned, hashing)
    assert seen.lb is None
    notes = [v for k, v in seen.not_modelled.items() if "load-sharing" in k]
    if note is None:
        assert notes == []
    else:
        [only] = notes
        assert only.startswith(note) and only.endswith("the hashing is not read")


def test_a_form_flatfab_does_not_read_is_named(planned: DeviceState) -> None:
    seen = collect(planned, IP_LINE + "\nip load-sharing trident fields mpls label\n")
    assert seen.lb is not None and HashField.SRC_PORT in seen.lb.hash_fields
    assert seen.not_modelled["ip load-sharing trident fields mpls label"] == (
        "an `ip load-sharing` form flatfab does not read")
