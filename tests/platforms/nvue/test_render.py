"""The nvue platform's render: golden files, nvueschema as oracle, sections, refusals.

Golden files: tests/golden/platforms/nvue/<fabric>/<device>.conf of representative switches
(not-kept.sha256 holds the others'), regenerated with FLATFAB_REGEN_GOLDEN=1.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import DeviceState
from flatfab.platforms.nvue import PLATFORM
from flatfab.platforms.nvue.nvyaml import applied, load_ops
from flatfab.platforms.nvue.oracle import violations
from flatfab.platforms.nvue.render import (
    RELEASES,
    TARGET,
    NvueRenderError,
    render,
    sections,
    tree,
)
from flatfab.platforms.registry import PLATFORMS
from tests.support.golden import match_golden
from tests.support.nvue import FABRICS, copy_intent, fabric, switches
from tests.support.oracles import NVUE, usable
from tests.support.paths import ROOT

GOLDEN = ROOT / "tests" / "golden" / "platforms" / "nvue"
REGEN = bool(os.environ.get("FLATFAB_REGEN_GOLDEN"))


def _golden_texts(name: str) -> dict[str, str]:
    return {f"{name}/{d.name}.conf": PLATFORM.render(d) for d in switches(fabric(name))}


@pytest.mark.parametrize("name", FABRICS)
def test_render_matches_golden_files(name: str) -> None:
    """The representatives' renders as files, the others' sha256 (nvueschema judges every
    device's render: the test after this one)."""
    produced = _golden_texts(name)
    match_golden(GOLDEN, name, produced, ".conf",
                 {d.name: d.role.value for d in switches(fabric(name))},
                 "tests/platforms/nvue/test_render.py::"
                 "test_every_render_passes_nvueschema_key_for_key")


# ---- the oracle: nvueschema, strictly ----------------------------------------------------


def test_every_render_passes_nvueschema_key_for_key() -> None:
    """Each switch's render (of every fabric: the golden files keep representatives only),
    read back as `nv config patch` reads it, validates on every release of the target line
    and comes back from the models unchanged, key for key (nvueschema drops keys it does not
    know: a dropped key fails here)."""
    texts = {r: t for name in FABRICS for r, t in _golden_texts(name).items()}
    assert len(texts) >= 4 * 2
    oracle = usable(NVUE)  # tests/support/oracles.py: every TARGET model, and references
    assert oracle.load() == TARGET.models
    for relative, text in texts.items():
        found = oracle.validate(Path(relative).stem, text)
        assert found == [], f"{relative}: " + "\n".join(found)


@pytest.mark.parametrize("line", sorted(RELEASES))
def test_each_release_spelling_passes_its_own_models_only(line: str) -> None:
    release = RELEASES[line]
    device = fabric("lab").devices["leaf1"]
    nvue = tree(device, PLATFORM.names, release)
    for module in release.models:
        assert violations(nvue, module) == [], module
    other = next(r for r in RELEASES.values() if r is not release)
    assert violations(nvue, other.models[0]), "the other release line must refuse it"


def test_the_oracle_catches_what_nvueschema_drops(leaf1: DeviceState) -> None:
    nvue = tree(leaf1, PLATFORM.names)
    nvue["qos"]["roce"] = {"enable": "on"}  # the <= 5.14 spelling: 5.15 says state
    nvue["interface"]["swp1"]["ip"] = {"address": {"10.9.9.9/24": {}}}  # moved to ipv4 in 5.15
    found = violations(nvue, "v5_15")
    assert "/qos/roce/enable: dropped" in found and "/interface/swp1/ip: dropped" in found
    nvue = tree(leaf1, PLATFORM.names)
    nvue["qos"]["pfc-watchdog"]["polling-interval"] = 50  # NVUE: 100..5000 ms
    assert any("polling-interval" in v for v in violations(nvue, "v5_15"))


def test_the_text_reads_back_as_the_tree() -> None:
    """The hand-written YAML quotes what YAML would read as something else (on, 100G,
    addresses, numeric keys)."""
    for name in FABRICS:
        for device in switches(fabric(name))[:3]:
            assert applied(load_ops(PLATFORM.render(device))) == tree(device, PLATFORM.names)


# ---- sections, naming, determinism --------------------------------------------------------


@pytest.fixture(scope="module")
def leaf1() -> DeviceState:
    return fabric("lab").devices["leaf1"]


def test_render_is_byte_identical(leaf1: DeviceState) -> None:
    assert PLATFORM.render(leaf1) == PLATFORM.render(leaf1.model_copy(deep=True))


def test_sections_are_the_set_operations_and_lose_no_line(leaf1: DeviceState) -> None:
    text = PLATFORM.render(leaf1)
    split = sections(text)
    assert list(split) == list(PLATFORM.facts.sections)
    assert all(lines[0] == "- set:" for lines in split.values())
    assert sorted(line for lines in split.values() for line in lines) == sorted(
        line for line in text.splitlines() if line.strip())
    assert "      swp1:" in split["interface"] and "      bgp:" in split["router"]
    # an unset operation (what the driver prepends) is a section of its own object
    assert next(iter(sections("- unset:\n    qos: {}\n" + text))) == "qos"


def test_lab_leaf_renders_the_lossless_knobs(leaf1: DeviceState) -> None:
    nvue = tree(leaf1, PLATFORM.names)
    qos = nvue["qos"]
    mapping = qos["mapping"]["default-global"]
    assert mapping["trust"] == "l3"
    assert mapping["dscp"]["26"] == {"switch-priority": 3}
    assert mapping["dscp"]["48"] == {"switch-priority": 6}
    assert qos["pfc"]["lossless_100000_3m_mtu9216"] == {
        "switch-priority": {"3": {}}, "cable-length": 3, "tx": "enable", "rx": "enable",
        "port-buffer": 132096, "xoff-threshold": 112640, "xon-threshold": 19456}
    assert qos["congestion-control"]["default-global"]["traffic-class"] == {"3": {
        "ecn": "enable", "red": "disable", "min-threshold": 150000, "max-threshold": 1500000,
        "probability": 10}}
    scheduler = qos["egress-scheduler"]["default-global"]["traffic-class"]
    assert scheduler["6"] == {"mode": "strict"}
    assert scheduler["3"] == {"mode": "dwrr", "bw-percent": 50}
    assert scheduler["1"] == {"mode": "dwrr", "bw-percent": 0}
    assert qos["pfc-watchdog"] == {"polling-interval": 200, "robustness": 1}
    assert qos["traffic-pool"]["roce-lossless"] == {"memory-percent": 30,
                                                    "switch-priority": {"3": {}}}
    assert "roce" not in qos  # the one-knob mode is never used
    swp1 = nvue["interface"]["swp1"]
    assert swp1["bridge"] == {"domain": {"br_default": {"access": 100}}}
    assert swp1["qos"] == {"pfc": {"profile": "lossless_100000_2m_mtu9000"},
                           "pfc-watchdog": {"state": "enable"}}
    assert nvue["interface"]["vlan100"] == {
        "type": "svi", "vlan": 100, "link": {"mtu": 9000, "state": {"up": {}}},
        "ipv4": {"address": {"10.100.1.1/24": {}}}, "vrf": "blue"}
    assert nvue["interface"]["swp51.100"]["base-interface"] == "swp51"
    bgp = nvue["vrf"]["default"]["router"]["bgp"]
    assert bgp["neighbor"]["swp51"]["type"] == "unnumbered"
    assert bgp["address-family"]["ipv4-unicast"]["multipaths"] == {"ebgp": 64}
    assert nvue["vrf"]["blue"]["router"]["bgp"]["router-id"] == "10.0.0.17"
    assert nvue["router"]["bgp"] == {"state": "enabled", "autonomous-system": 65101,
                                     "router-id": "10.0.0.17"}


def test_naming_follows_nvue() -> None:
    names = PLATFORM.names
    assert names.physical(1) == "swp1" and names.physical(64) == "swp64"
    assert names.subinterface("swp64", 4094) == "swp64.4094"
    assert names.gateway(100) == "vlan100" and names.gateway(None) == "vlan4000"
    assert names.vrf_problem("blue") is None
    assert names.vrf_problem("mgmt") is not None and names.vrf_problem("default") is not None
    assert names.vrf_problem("a-very-long-tenant") is not None


# ---- refusals -------------------------------------------------------------------------------


def _load(tmp_path: Path, name: str, edit: dict[str, tuple[str, str]]) -> None:
    folder = copy_intent(name, tmp_path)
    for file, (pattern, replacement) in edit.items():
        path = folder / file
        path.write_text(re.sub(pattern, replacement, path.read_text(), flags=re.M))
    load_intent(folder, known_platforms=PLATFORMS)


def test_a_non_spectrum_family_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        _load(tmp_path, "lab", {"qos.yaml": (r"^  nvue: \{family: spectrum-4\}",
                                             "  nvue: {family: tomahawk-4}")})
    message = str(caught.value)
    assert "platform nvue on tomahawk-4 hardware cannot do this (pfc)" in message
    assert "Spectrum switches only" in message


@pytest.mark.parametrize("action", ["forward", "alert"])
def test_a_pfc_watchdog_that_does_not_drop_is_refused_at_load(tmp_path: Path,
                                                               action: str) -> None:
    """The data file says NVUE's watchdog only drops: the render checks no action."""
    with pytest.raises(InputError) as caught:
        _load(tmp_path, "lab", {"qos.yaml": (r"action: drop", f"action: {action}")})
    assert f"platform nvue cannot do this (pfc_watchdog_{action})" in str(caught.value)


def test_what_nvue_cannot_express_is_one_clear_render_error(leaf1: DeviceState) -> None:
    device = leaf1.model_copy(deep=True)
    qos = device.interfaces["swp51"].qos
    assert qos is not None and qos.watchdog is not None
    qos.watchdog.detect_ms = 250  # not a whole number of 200 ms polls
    with pytest.raises(NvueRenderError, match=r"^leaf1: NVUE sets the PFC watchdog once per"):
        render(device, PLATFORM.names)
    for iface in device.interfaces.values():
        if iface.qos and iface.qos.watchdog:
            iface.qos.watchdog.detect_ms = 250
    with pytest.raises(NvueRenderError, match="not a multiple of poll_ms 200"):
        render(device, PLATFORM.names)
    device = leaf1.model_copy(deep=True)
    device.interfaces["swp51"].speed_mbps = 123
    with pytest.raises(NvueRenderError, match="no link speed for 123 Mb/s"):
        render(device, PLATFORM.names)


def test_buffer_changes_carry_a_change_note(leaf1: DeviceState) -> None:
    running = PLATFORM.render(leaf1)
    assert PLATFORM.change_notes(running, running) == []
    changed = leaf1.model_copy(deep=True)
    assert changed.qos is not None
    changed.qos.profiles["lossless_100000_3m_mtu9216"].xoff += 1024
    changed.qos.pools["ingress_lossless"].size += 16_000_000
    notes = PLATFORM.change_notes(running, PLATFORM.render(changed))
    assert notes[0].startswith("qos traffic-pool changes: switchd reloads")
    assert notes[1].startswith("qos pfc lossless_100000_3m_mtu9216: xoff-threshold change")
    assert PLATFORM.change_notes("- set: [", running)[0].startswith("config unreadable")


def test_a_port_that_differs_gets_a_bound_profile(leaf1: DeviceState) -> None:
    device = leaf1.model_copy(deep=True)
    planned = device.interfaces["swp1"].qos
    assert planned is not None
    qos = planned.model_copy(deep=True)  # ports may share one planned object
    device.interfaces["swp1"].qos = qos
    assert qos.queues[3].ecn is not None
    qos.queues[3].ecn.min_bytes = 100_000  # one host port marks earlier than the rest
    nvue = tree(device, PLATFORM.names)
    bound = nvue["interface"]["swp1"]["qos"]["congestion-control"]["profile"]
    assert bound.startswith("flatfab-congestion-control-")
    profiles = nvue["qos"]["congestion-control"]
    assert profiles[bound]["traffic-class"]["3"]["min-threshold"] == 100_000
    assert profiles["default-global"]["traffic-class"]["3"]["min-threshold"] == 150_000
    assert "congestion-control" not in nvue["interface"]["swp51"]["qos"]
    assert violations(nvue, TARGET.models[-1]) == [] and NVUE.references(nvue) == []
    assert tree(device, PLATFORM.names) == nvue  # the name is the content's, stable


def test_every_fabric_also_spells_for_the_5_14_line() -> None:
    """The <= 5.14 spelling of every switch of every example fabric, on the first and last
    release that spelling serves (5.6: per-port PFC watchdog state; 5.14)."""
    release = RELEASES["5.14"]
    for name in FABRICS:
        for device in switches(fabric(name)):
            nvue = tree(device, PLATFORM.names, release)
            for module in (release.models[0], release.models[-1]):
                assert violations(nvue, module) == [], f"{name}/{device.name} on {module}"
