"""Each congestion profile rendered on every switch platform and judged by its oracle: a lossy
fabric's switches pause nothing and still mark ECN on the RoCE queue; lossless without DCQCN
renders the switches exactly as lossless and turns the hosts' DCQCN off. nxos has no oracle
here (tests/support/oracles.py): its renders are held to the same markers only."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
import yaml

from flatfab.errors import InputError
from flatfab.intent.loader import load_intent
from flatfab.model.state import FabricState
from flatfab.plan.planner import plan
from flatfab.platforms.registry import PLATFORMS
from tests.support.on_platform import intent_on
from tests.support.oracles import ORACLES, usable
from tests.support.paths import ROOT

# per platform: its ASIC family here, a line that makes a port pause, a line that marks ECN
SWITCHES = {
    "frr": ("spectrum-4", r'"pfc_enable"', r'"wred_profile": "ECN_'),
    "sonic": ("tomahawk-4", r'"pfc_enable"', r'"wred_profile": "ECN_'),
    "eos": ("tomahawk-4", r"priority-flow-control priority \d no-drop",
            r"random-detect ecn minimum-threshold"),
    "nvue": ("spectrum-4", r"^\s+profile: lossless_", r"^\s+ecn: enable"),
    "junos": ("tomahawk-4", r"pfc-priority \d;|no-loss;", r"explicit-congestion-notification;"),
    "nxos": ("trident-4", r"priority-flow-control mode on|pause pfc-cos",
             r"random-detect minimum-threshold .* ecn$"),
    "srlinux": ("tomahawk-4", r'"enable-pfc": true', r'"enable-ecn": true'),
}
PROFILES = ("lossless", "lossless-no-dcqcn", "lossy")


@cache
def _fabric(platform: str, profile: str) -> FabricState:
    family = SWITCHES[platform][0]
    with TemporaryDirectory() as tmp:
        target = Path(tmp)
        intent_on(ROOT / "intents" / "lab", target, platform, family)
        qos = yaml.safe_load((target / "qos.yaml").read_text())
        qos["profile"] = profile
        if profile == "lossy":
            qos["pfc"].pop("priorities")  # the lab spells out lossless's [3]
        if profile == "lossless-no-dcqcn":
            for key in ("ecn_np", "ecn_rp", "dcqcn"):
                qos["hosts"].pop(key)
        if platform == "srlinux":
            qos["pfc"]["watchdog"]["action"] = "forward"  # the only action SR Linux has
        if platform == "nxos" and profile != "lossy":
            qos["pfc"]["watchdog"]["enabled"] = False  # none on Trident Nexus line cards
        (target / "qos.yaml").write_text(yaml.safe_dump(qos))
        return plan(load_intent(target, known_platforms=PLATFORMS))


def _render(platform: str, profile: str, device: str) -> str:
    return PLATFORMS[platform].render(_fabric(platform, profile).devices[device])


def _lines(pattern: str, text: str) -> list[str]:
    return [line for line in text.splitlines() if re.search(pattern, line)]


@pytest.mark.parametrize("device", ["leaf1", "spine1"])
@pytest.mark.parametrize("platform", sorted(SWITCHES))
def test_a_lossy_fabric_renders_no_pause_and_keeps_ecn(platform: str, device: str) -> None:
    _, pauses, marks = SWITCHES[platform]
    lossless, lossy = (_render(platform, p, device) for p in ("lossless", "lossy"))
    assert _lines(pauses, lossless), "the marker must find the lossless render's PFC"
    assert _lines(pauses, lossy) == []
    assert _lines(marks, lossy), "the RoCE queue marks ECN in a lossy fabric"
    if platform in ORACLES:
        planned = _fabric(platform, "lossy").devices[device]
        assert usable(ORACLES[platform]).validate(device, lossy, planned) == []


@pytest.mark.parametrize("platform", sorted(SWITCHES))
def test_lossless_without_dcqcn_changes_the_hosts_only(platform: str) -> None:
    assert _render(platform, "lossless-no-dcqcn", "leaf1") == _render(platform, "lossless",
                                                                      "leaf1")
    host = PLATFORMS["linux_host"]
    text = host.render(_fabric(platform, "lossless-no-dcqcn").devices["leaf1-h1"])
    assert " ecn-np - ecn-rp - dcqcn off " in text
    planned = _fabric(platform, "lossless-no-dcqcn").devices["leaf1-h1"]
    assert usable(ORACLES["linux_host"]).validate("leaf1-h1", text, planned) == []


def _trimming_intent(platform: str, target: Path) -> Path:
    intent_on(ROOT / "intents" / "lab", target, platform, SWITCHES[platform][0])
    qos = yaml.safe_load((target / "qos.yaml").read_text())
    qos["profile"] = "lossy-trimming"
    qos["pfc"].pop("priorities")
    qos["ets"].pop("strict")  # the profile's own: CNP's and the trim TC
    (target / "qos.yaml").write_text(yaml.safe_dump(qos))
    return target


@pytest.mark.parametrize("platform", sorted(set(SWITCHES) - {"frr", "sonic", "nvue"}))
def test_trimming_is_refused_where_flatfab_renders_none(platform: str, tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_intent(_trimming_intent(platform, tmp_path), known_platforms=PLATFORMS)
    [problem] = caught.value.problems
    assert problem.file.endswith("qos.yaml") and problem.path == "profile"
    assert problem.reason.startswith(f"platform {platform} cannot do this (packet_trimming): ")


def test_trimming_renders_on_frr_as_its_virtual_asic_holds_it(tmp_path: Path) -> None:
    fabric = plan(load_intent(_trimming_intent("frr", tmp_path), known_platforms=PLATFORMS))
    for device in ("leaf1", "spine1"):
        text = PLATFORMS["frr"].render(fabric.devices[device])
        assert '"SWITCH_TRIMMING": {' in text and '"packet_discard_action": "trim"' in text
        assert _lines(SWITCHES["frr"][1], text) == []  # and, lossy, no pause
        planned = fabric.devices[device]
        assert usable(ORACLES["frr"]).validate(device, text, planned) == []
