"""The EOS platform: render (checked against the pyavd oracle), sections, capabilities.

Golden files: tests/golden/platforms/eos/<fabric>/<device>.cfg of representative switches
(not-kept.sha256 holds the others'; pyavd judges every switch's render), regenerated with
FLATFAB_REGEN_GOLDEN=1."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from flatfab.errors import FlatfabError, InputError
from flatfab.intent.loader import load_intent
from flatfab.platforms.eos import PLATFORM
from flatfab.platforms.eos.avd import EosRenderError, capability_problems
from flatfab.platforms.registry import PLATFORMS
from tests.support.eos import eos_fabric, eos_switches
from tests.support.golden import NOT_KEPT, differences, fail_on, not_kept, regenerate, represented
from tests.support.on_platform import intent_on
from tests.support.oracles import EOS, usable
from tests.support.paths import ROOT

GOLDEN = ROOT / "tests" / "golden" / "platforms" / "eos"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))
FABRICS = ("lab", "numbered", "rail")


def _devices(fabric: str) -> list[str]:
    return [d.name for d in eos_switches(eos_fabric(fabric))]


CASES = [(f, d) for f in FABRICS for d in _devices(f)]


def test_eos_is_registered_with_its_facts() -> None:
    assert PLATFORMS["eos"] is PLATFORM
    facts = PLATFORM.facts
    assert facts.connection.plugin == "napalm" and facts.connection.driver == "eos"
    assert facts.capabilities.commit_confirm == "native"
    assert facts.capabilities.read_only == "driver"
    assert facts.lab.kind == "arista_ceos"
    names = PLATFORM.names
    assert names.physical(1) == "Ethernet1" and names.gateway(100) == "Vlan100"
    assert all(names.is_port(p) for p in ("Ethernet1", "Ethernet1/1", "Ethernet3/1/1"))
    assert not names.is_port("swp1")


@pytest.mark.parametrize(("fabric", "device"), CASES)
def test_render_equals_the_pyavd_oracle(fabric: str, device: str) -> None:
    """flatfab's own templates print exactly what AVD prints for the same structured config,
    and AVD's schema accepts that config without a violation."""
    state = eos_fabric(fabric).devices[device]
    _, schema = usable(EOS).structured(state)
    assert schema == []  # no violation, no deprecation
    found = EOS.validate(device, PLATFORM.render(state), state)
    assert found == [], "\n".join(found)  # byte for byte what pyavd prints


@cache
def _goldens(fabric: str) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """The fabric's renders (<device>.cfg -> text), its golden files (the representatives'
    renders and not-kept.sha256: pyavd judges every device's render, above) and the kept."""
    switches = eos_switches(eos_fabric(fabric))
    texts = {f"{d.name}.cfg": PLATFORM.render(d) for d in switches}
    files, kept = represented(texts, {d.name: d.role.value for d in switches}, ".cfg",
                              "tests/platforms/eos/test_platform_eos.py::"
                              "test_render_equals_the_pyavd_oracle")
    if REGEN:
        regenerate(GOLDEN / fabric, files, ("*.cfg", NOT_KEPT))
    return texts, files, kept


@pytest.mark.parametrize(("fabric", "device"), CASES)
def test_render_matches_golden_file(fabric: str, device: str) -> None:
    """A representative's render is its golden file; another's, its sha256 line."""
    texts, _, kept = _goldens(fabric)
    relative = f"{device}.cfg"
    fail_on(differences(GOLDEN / fabric, {relative: texts[relative]}, kept, f"eos/{fabric}"))


def test_every_golden_file_is_rendered() -> None:
    expected = {f"{f}/{r}" for f in FABRICS for r in _goldens(f)[1]}
    if REGEN:  # a fabric no longer rendered
        for stale in [*GOLDEN.rglob("*.cfg"), *GOLDEN.rglob(NOT_KEPT)]:
            if str(stale.relative_to(GOLDEN)) not in expected:
                stale.unlink()
    on_disk = {str(p.relative_to(GOLDEN)) for p in [*GOLDEN.rglob("*.cfg"),
                                                    *GOLDEN.rglob(NOT_KEPT)]}
    assert on_disk == expected, "golden files differ in number: `make golden`"
    for fabric in FABRICS:
        texts, files, _ = _goldens(fabric)
        assert set(not_kept(GOLDEN / fabric)) == set(texts) - set(files), fabric


def test_render_is_deterministic() -> None:
    device = eos_fabric("lab").devices["leaf1"]
    first = PLATFORM.render(device)
    assert PLATFORM.render(device.model_copy(deep=True)) == first


def test_leaf_render_holds_the_fabric() -> None:
    text = PLATFORM.render(eos_fabric("lab").devices["leaf1"])
    for line in ("ip routing ipv6 interfaces", "vrf instance blue",
                 "   encapsulation dot1q vlan 100", "   switchport access vlan 100",
                 "interface Vlan100", "   ip address 10.100.1.1/24",
                 "   neighbor interface Ethernet51 peer-group FABRIC remote-as 65000",
                 "      neighbor FABRIC next-hop address-family ipv6 originate",
                 "   maximum-paths 64 ecmp 64", "   bgp bestpath as-path multipath-relax",
                 "qos map dscp 26 to traffic-class 3",
                 "   priority-flow-control priority 3 no-drop",
                 "      priority strict", "      bandwidth percent 50",
                 "priority-flow-control pause watchdog default timeout 0.2",
                 "platform trident mmu queue profile flatfab apply"):
        assert line in text.splitlines(), line
    assert "random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes" \
        " max-mark-probability 10" in text


def test_numbered_render_has_addressed_neighbors() -> None:
    text = PLATFORM.render(eos_fabric("numbered").devices["sp-a"])
    assert "   neighbor 10.254.0.1 remote-as 64701" in text.splitlines()
    assert "ip routing ipv6 interfaces" not in text


def test_a_family_eos_never_runs_on_is_refused_at_load(tmp_path: Path) -> None:
    """The data file names the families EOS runs on: the load refuses another, so the
    render never meets one (and checks no family itself)."""
    intent_on(ROOT / "intents" / "lab", tmp_path, "eos", "spectrum-4")
    with pytest.raises(InputError) as caught:
        load_intent(tmp_path, known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert (Path(problem.file).name, problem.path) == ("qos.yaml", "asics.eos.family")
    assert problem.reason == ("platform eos does not run on ASIC family 'spectrum-4'; it runs "
                              "on generic, trident, tomahawk, jericho")


def test_a_plan_eos_cannot_write_is_one_clear_render_error() -> None:
    device = eos_fabric("lab").devices["leaf1"].model_copy(deep=True)
    port = next(i for i in device.interfaces.values() if i.qos is not None)
    assert port.qos is not None
    port.qos = port.qos.model_copy(update={"trust": "none"})
    with pytest.raises(EosRenderError, match=rf"^leaf1: {port.name} trusts 'none'") as caught:
        PLATFORM.render(device)
    assert isinstance(caught.value, FlatfabError)


@pytest.mark.parametrize("family", ["tomahawk-5", "jericho-2", "generic"])
def test_families_without_buffer_knobs_keep_the_switch_defaults(family: str) -> None:
    """The lossless plane is rendered; buffers are not (the oracle agrees byte for byte)."""
    state = eos_fabric("numbered", family=family).devices["lf-a"]
    assert state.qos is not None and state.qos.asic.family == family
    text = PLATFORM.render(state)
    assert "platform trident" not in text and "priority-flow-control priority 3 no-drop" in text
    assert usable(EOS).expected(state) == text
    assert EOS.validate(state.name, text, state) == []


def test_trident_family_has_no_problems() -> None:
    assert capability_problems(eos_fabric("lab").devices["leaf1"], PLATFORM.facts) == []


def test_sections_split_rendered_and_running_alike() -> None:
    text = PLATFORM.render(eos_fabric("lab").devices["leaf1"])
    sections = PLATFORM.sections(text)
    assert set(sections) <= set(PLATFORM.facts.sections)
    assert sections["system"] == ["!", "hostname leaf1"]
    running = ("! Command: show running-config\nusername admin privilege 15\n"
               "management api http-commands\n   no shutdown\n" + text + "end\n")
    assert PLATFORM.sections(running) == sections


def test_drift_texts_ignore_separators() -> None:
    class Running:
        def get_config(self, retrieve: str = "all") -> dict[str, str]:
            return {"running": "! device banner\nhostname leaf1\n!\nend\n"}

    running, intended = PLATFORM.drift_texts(Running(), "!\nhostname leaf1\n")  # type: ignore[arg-type]
    assert running == intended == "hostname leaf1\n"
